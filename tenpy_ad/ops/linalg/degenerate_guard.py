"""The second-order checks of the dense ``svd``/``eigh`` VJP and of their JVPs.

A VJP that may be differentiated again is written to be exact at every order when its
cotangents show which triplets (pairs) the loss uses (:mod:`.truncation`).  When they do
not, the dense rule runs over all of them, and its derivative differentiates each
singular vector (eigenvector) on its own: inside a degenerate group, or for a zero
singular value of a rectangular matrix, that is the broadened 0 in place of a divided
difference.  That is right for the triplets the loss uses (the documented first-order
semantics), but silently wrong for triplets whose cotangent is zero -- a loss truncated in
a way the rule cannot see.  So the dense VJP's result passes through :func:`guarded`, an
identity whose derivative rules insert a check: when the derivative runs, it raises
:class:`~tenpy_ad.errors.GaugeError` (or warns, ``tp.linalg.config.gauge_check``) if a
triplet with a zero cotangent is exactly degenerate (to rounding) with another one (or
zero, rectangular).  First-order results never run the check.  Near-degenerate values
(gaps down to about sqrt(eps)) are not flagged: the broadened rule is close to the
divided difference there.

The JVP has the same limit for every triplet, as forward mode does not know which ones the
loss uses: its tangents of the vectors pass through :func:`guarded_tangent`, whose
derivatives refuse any exactly degenerate (or zero, rectangular) value.
"""
from __future__ import annotations

import warnings

import numpy as np

from ... import dtypes
from ...errors import GaugeError, GaugeWarning
from ...param_schema import BOOL, SIZE, Exactly, Int, Maybe, Struct, TupleOf
from ...primitive import bind, concrete_value, primitive
from ...rules import defjvp, defrules, defvjp, zero_rule
from .config import GAUGE_MODES, config


def _same_as_first(params, x, *others):
    return x


def _unused(params, values, cotangents) -> np.ndarray:
    """Per value, whether its triplet (pair) has a zero cotangent: of the ones the params'
    ``axes`` describe (the axis each cotangent's columns run along; None for a vector of
    values), in matrices that use some; every value for a forward-mode check."""
    if params[3]:
        return np.ones(np.shape(values), bool)
    used = np.zeros(np.shape(values), bool)
    for g, axis in zip(cotangents, params[4]):
        g = np.asarray(g) != 0
        used |= g if axis is None else g.any(axis=g.ndim + axis)
    return ~used & used.any(axis=-1, keepdims=True)


def degenerate_values(values, zero: bool) -> np.ndarray:
    """Per value (s or w, the last axis of a stack), whether it equals another one of its
    matrix to rounding (1e3 roundoffs of the largest), or is zero to rounding (``zero``:
    a singular value of a non-square or complex matrix, whose vectors then carry 1/s)."""
    values = np.asarray(values)
    if values.size == 0 or values.shape[-1] == 0:
        return np.zeros(values.shape, bool)
    scale = float(np.max(np.abs(values)))
    tol = 1e3 * np.finfo(values.dtype).eps * scale      # exact, up to rounding
    gaps = np.abs(values[..., :, None] - values[..., None, :])
    np.einsum("...ii->...i", gaps)[...] = np.inf
    close = gaps.min(axis=-1) <= tol
    if zero:
        close |= np.abs(values) <= tol
    return close


def _check(params, x, values, *cotangents):
    """``x``, after checking that no unused value is degenerate (see above)."""
    mode, name, rectangular = params[:3]
    values = np.asarray(values)
    unused = _unused(params, values, cotangents)
    if mode == "off" or not unused.any():
        return x
    if (degenerate_values(values, rectangular) & unused).any():
        vectors = "singular vectors" if name == "svd" else "eigenvectors"
        message = (_forward_message if params[3] else _reverse_message)(name, vectors,
                                                                          rectangular)
        if mode == "raise":
            raise GaugeError(message)
        warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _reverse_message(name: str, vectors: str, rectangular: bool) -> str:
    return (f"{name}: the second derivative is not defined by this rule: the loss uses some "
            f"{vectors} and not others (a zero cotangent) among degenerate"
            f"{' or zero' if rectangular else ''} values, and its truncation is not visible "
            f"to the rule. Slice the outputs (u[:, :k], s[:k], vh[:k], v[:, lo:hi]) so that "
            f"the rule sees the kept ones, or use tp.linalg.svds/eigsh.")


def _forward_message(name: str, vectors: str, rectangular: bool) -> str:
    return (f"{name}: the derivative of a forward-mode derivative (a JVP differentiated "
            f"again) is not defined by this rule at exactly degenerate"
            f"{' or zero' if rectangular else ''} values: the JVP gives the tangents of all "
            f"{vectors}, and those of a degenerate group have no derivative. Take second "
            f"derivatives in reverse mode (a gradient of a gradient) with the kept outputs "
            f"sliced, or use tp.linalg.svds/eigsh.")


def _format(params) -> str:
    return f"{params[1]} mode={params[0]}"


def _pass_through(params, g, out, x, values, *cotangents):
    return g


def _checked(params, g, out, x, values, *cotangents):
    return bind(second_order_check_p, params, g, values, *cotangents)


def _zeros(count: int) -> tuple:
    return (zero_rule,) * count


# The guard and the check take the values and the cotangents whose sizes decide (their
# number varies: up to five operands); the rules of every operand count are registered.
#: (mode, name, rectangular, forward, axes): axes -2 / -1 or None, one per cotangent
_PARAMS = Struct(Exactly(*GAUGE_MODES), Exactly("svd", "eigh"), BOOL, BOOL,
                 TupleOf(Maybe(Int(-2, -1)), max_length=3))
second_order_check_p = primitive("second_order_check", _check, _same_as_first,
                                 format_params=_format, static_shapes=True, params=_PARAMS)
defjvp(second_order_check_p, _pass_through, *_zeros(4))
defvjp(second_order_check_p, _pass_through, *_zeros(4))


def _guard(params, x, values, *rest):
    """``x``; with ``params[5]`` = (mode, lo, hi) also the first-order degeneracy check
    (:func:`checked_use`), whose products j, k follow the cotangents: one node for both."""
    first = params[5]
    if first is not None:
        n = len(params[4])
        _first_order_check((first[0], params[1], 0, first[1], first[2], False), x, values,
                           rest[n], rest[n + 1])
    return x


def _guard_checked(params, g, out, x, values, *rest):
    return bind(second_order_check_p, params[:5], g, values, *rest[:len(params[4])])


#: _PARAMS and the first-order check's (mode, lo, hi), or None
_GUARD_PARAMS = Struct(*_PARAMS.fields, Maybe(Struct(Exactly(*GAUGE_MODES), SIZE,
                                                     Maybe(SIZE))))
guard_p = primitive("second_order_guard", _guard, _same_as_first, format_params=_format,
                    static_shapes=True, params=_GUARD_PARAMS)
defjvp(guard_p, _guard_checked, *_zeros(6))
defvjp(guard_p, _guard_checked, *_zeros(6))


def guarded(ct_a, values, name: str, rectangular: bool, *cotangents, first=None):
    """``ct_a``, whose derivatives check ``values`` (s or w) against the cotangents
    ``(g, axis)`` of the triplets (pairs): ``axis`` the one their columns run along, None
    for a vector of values, g None for a zero cotangent.  At first order the guard is an
    identity that computes nothing (see the module docstring), but for ``first = (j, k,
    lo, hi)``: the first-order degeneracy check of :func:`checked_use`, in the same node."""
    mode = config.gauge_check
    operands, axes = [ct_a, values], []
    for g, axis in cotangents:
        if g is not None:
            operands.append(g)
            axes.append(axis)
    check = None
    if first is not None and config.degeneracy_check != "off" and \
            (first[0] is not None or first[1] is not None):
        check = (config.degeneracy_check, int(first[2]),
                 None if first[3] is None else int(first[3]))
    if mode == "off" or not axes:
        return ct_a if first is None else checked_use(ct_a, values, name, *first)
    if check is not None:
        operands += [_NONE if m is None else m for m in first[:2]]
    return bind(guard_p, (mode, name, bool(rectangular), False, tuple(axes), check),
                *operands)


def guarded_tangent(tangent, values, name: str, rectangular: bool):
    """A JVP's tangent of the singular vectors (eigenvectors), whose derivatives check that
    no value is exactly degenerate (or zero, ``rectangular``): which ones the loss uses is
    not known in forward mode."""
    if config.gauge_check == "off" or tangent is None:
        return tangent
    return bind(guard_p, (config.gauge_check, name, bool(rectangular), True, (), None),
                tangent, values)


# ------------------------------------------------------------------ first order
# At an exactly repeated value the broadened 1/(s_j - s_i) factor is 0, and the VJP takes
# the numerator it multiplies, the rotation part X_ij of the cotangents (A + B of the SVD,
# J - J^H of eigh), as if it were zero.  For a loss invariant under rotations of the
# degenerate vectors it is (to rounding): that is the documented derivative.  For a loss
# that depends on the basis within the degenerate subspace it is not, and the derivative
# is infinite there (X / 0): the broadened rule would return a finite number that is no
# derivative at all.  So the VJP checks X on the exactly degenerate pairs of the values
# the loss uses and raises (``tp.linalg.config.degeneracy_check``).


#: the rotation part, relative to the cotangent products' largest entry, above which a loss
#: depends on a degenerate basis: a basis-dependent loss has it of order 1; an invariant
#: one has rounding, amplified where the values are only nearly equal (TRG's near-zero
#: kept values at low temperature reach 1e-7)
RESIDUE_RTOL = 1e-5


def _residues(name: str, j, k):
    """The rotation parts X whose factor is the broadened 1/(s_j - s_i), from the
    cotangent products ``j = U^H gU``, ``k = V^H gV`` (square; None for none).  For
    ``eig``: ``j`` is X itself (v^-1-normalised) and ``k`` the eigenvalue cotangents
    ``gw``, whose differences inside a degenerate group are such a part too: the values
    of a non-Hermitian degenerate group split nonlinearly (as the eigenvalues of the
    projected perturbation), so only their symmetric functions are differentiable."""
    def skew(m):
        return m - np.conj(np.swapaxes(m, -1, -2))
    if name == "eig":
        spread = None if k is None else k[..., :, None] - k[..., None, :]
        parts = [m for m in (j, spread) if m is not None]
        return None if not parts else sum(parts)
    parts = [skew(m) for m in (j, k) if m is not None]
    return None if not parts else sum(parts)


def _square(j, n: int, column: int):
    """A cotangent product (rows: every value; columns: those from ``column`` on) as
    n x n, zero for the columns the loss does not use; None stays None."""
    if j is None or np.ndim(j) == 0:
        return None
    j = np.asarray(j)
    if j.shape[-1] == n:
        return j
    pad = (column, n - column - j.shape[-1])
    return np.pad(j, [(0, 0)] * (j.ndim - 1) + [pad])


def _basis_dependent(params, values, j, k) -> bool:
    """Whether the loss depends on the basis of an exactly degenerate group of the used
    values ``lo:hi``: a rotation part above ``gauge_rtol`` of the cotangents' scale."""
    _, name, column, lo, hi, factored = params
    values = np.asarray(values)
    n = values.shape[-1] if values.ndim else 0
    if n < 2 or not any_degenerate(values, name, lo, hi):
        return False
    pairs = degenerate_pairs(values)
    pairs[..., :lo, :] = False
    if hi is not None:
        pairs[..., hi:, :] = False
    if not pairs.any():
        return False
    if factored:                  # j = left^H right, formed only now that it is needed
        j, k = np.swapaxes(np.asarray(j), -1, -2).conj() @ np.asarray(k), None
    j = _square(j, n, column)
    k = _square(k, n, column) if name != "eig" else (None if np.ndim(k) == 0 else
                                                      np.asarray(k))
    residue = _residues(name, j, k)
    if residue is None:
        return False
    scale = max(float(np.max(np.abs(m))) for m in (j, k) if m is not None)
    return bool((np.abs(residue)[pairs] > RESIDUE_RTOL * scale).any())


#: the decompositions whose values come sorted (descending s, ascending w); not eigsh's,
#: whose dense rule checks its kept values followed by the discarded ones
_SORTED = ("svd", "svds", "eigh")


_ROUNDOFFS = {np.dtype(t): 1e3 * np.finfo(t).eps for t in (np.float32, np.float64,
                                                           np.complex64, np.complex128)}


def _tolerance(values) -> float:
    return _ROUNDOFFS[values.dtype] * float(np.max(np.abs(values)))


def any_degenerate(values, name: str, lo: int = 0, hi: int | None = None) -> bool:
    """Whether one of ``values[lo:hi]`` (per matrix) equals another value to rounding:
    neighbours for the sorted values of svd/eigh (in Python for one matrix: a backward
    pass asks for every decomposition), every pair for eig's."""
    values = np.asarray(values)
    if values.ndim == 0 or values.shape[-1] < 2 or values.size == 0:
        return False
    if name == "eigsh" and values.ndim == 1:   # real, unsorted: count the values within
        ordered, tol = np.sort(values), _tolerance(values)    # tol of each of lo:hi
        used = values[lo:hi]
        near = np.searchsorted(ordered, used + tol, "right") - \
            np.searchsorted(ordered, used - tol, "left")
        return bool((near > 1).any())
    if name not in _SORTED:
        return bool(degenerate_pairs(values)[..., lo:hi, :].any())
    n = values.shape[-1]
    hi = n if hi is None else hi
    start, stop = max(lo - 1, 0), min(hi, n - 1)     # the pairs (i, i + 1) touching lo:hi
    if values.ndim == 1:
        v = values.tolist()
        tol = _ROUNDOFFS[values.dtype] * max(abs(v[0]), abs(v[-1]))   # sorted: the ends
        return any(abs(v[i] - v[i + 1]) <= tol for i in range(start, stop))
    gaps = np.abs(np.diff(values, axis=-1))[..., start:stop]
    return bool((gaps <= _tolerance(values)).any())


def degenerate_pairs(values) -> np.ndarray:
    """Per matrix, which pairs i != j of ``values`` are equal to rounding (1e3 roundoffs
    of the largest)."""
    values = np.asarray(values)
    tol = _tolerance(values) if values.size else 0.0
    pairs = np.abs(values[..., :, None] - values[..., None, :]) <= tol
    return pairs & ~np.eye(values.shape[-1], dtype=bool)


def _first_order_check(params, x, values, j, k):
    """``x``, unless the loss depends on the basis of a degenerate group (see above)."""
    mode, name = params[:2]
    if not _basis_dependent(params, values, j, k):
        return x
    vectors = "singular vectors" if name in ("svd", "svds") else "eigenvectors"
    eigenvalues = (" or the eigenvalues of a group enter other than through symmetric "
                   "functions such as their sum (they split nonlinearly)") if name == "eig" \
        else ""
    message = (f"{name}: the loss depends on the basis of a degenerate subspace (its "
               f"{vectors} for exactly repeated values enter other than through the whole "
               f"subspace{eigenvalues}), so it has no derivative there; the broadened rule "
               f"would return a finite number that is not the derivative. Use functions of "
               f"whole degenerate subspaces (projectors, u @ vh, u s vh) or of the values, "
               f"or break the degeneracy; tp.linalg.config.degeneracy_check = 'warn'/'off' "
               f"returns the broadened value.")
    if mode == "raise":
        raise GaugeError(message)
    warnings.warn(message, GaugeWarning, stacklevel=2)
    return x


def _flagged_check(params, x, flag, values, j, k):
    """:func:`_first_order_check` where ``flag`` (:data:`degenerate_flag_p`) says that a
    used value is degenerate; else ``x`` at once."""
    return _first_order_check(params, x, values, j, k) if flag else x


def _same_check(params, g, out, x, flag, values, j, k):
    return bind(first_order_check_p, params, g, flag, values, j, k)


_NAMES = Exactly("svd", "eigh", "eig", "svds", "eigsh")
#: (mode, name, column, lo, hi, factored): the used values lo:hi, the products' first
#: column, whether the operands j, k are the factors of j = left^H right
first_order_check_p = primitive(
    "degeneracy_check", _flagged_check, _same_as_first, format_params=_format,
    static_shapes=True,
    params=Struct(Exactly(*GAUGE_MODES), _NAMES, SIZE, SIZE, Maybe(SIZE), BOOL))
defjvp(first_order_check_p, _same_check, *_zeros(4))
defvjp(first_order_check_p, _same_check, *_zeros(4))


def degenerate_flag(params, values) -> np.bool_:
    """Whether one of the values ``lo:hi`` equals another to rounding (params ``(name, lo,
    hi)``, :func:`any_degenerate`): the degeneracy check's decision, a node of its own so
    that a solve whose values are fixed takes it once (staging computes it with what the
    solve keeps) and its iterations skip the check."""
    return np.bool_(any_degenerate(values, *params))


def _degenerate_flag_rule(params, values):
    return dtypes.BOOL, ()


degenerate_flag_p = primitive("degenerate_flag", degenerate_flag, _degenerate_flag_rule,
                              static_shapes=True, params=Struct(_NAMES, SIZE, Maybe(SIZE)))
defrules(degenerate_flag_p, lambda params, tangents, out, xs: None,
         lambda params, cts, out, xs, active: (None,))
_NONE = np.zeros(())


def checked_use(ct_a, values, name: str, j=None, k=None, lo: int = 0, hi: int | None = None,
                column: int = 0, factors=None):
    """A VJP's result ``ct_a``, checked at run time that the loss does not depend on the
    basis of an exactly degenerate group of the values ``lo:hi`` (see above), from the
    cotangent products ``j = U^H gU``, ``k = V^H gV`` (rows: every value, columns: the
    values from ``column`` on; None for none).  ``factors = (U, gU)`` in place of ``j``
    (``k`` None): the check forms ``j`` only at a degeneracy, so that a program does not
    pay for the product where the values are distinct."""
    mode = config.degeneracy_check
    if mode == "off" or ct_a is None or (j is None and k is None and factors is None):
        return ct_a
    known = concrete_value(values)      # values known now (eager): decided now, for
    if known is not None and not any_degenerate(known, name, lo, hi):    # every order
        return ct_a
    if factors is not None:
        j, k = factors
    lo, hi = int(lo), None if hi is None else int(hi)
    flag = bind(degenerate_flag_p, (name, lo, hi), values)
    return bind(first_order_check_p, (mode, name, int(column), lo, hi, factors is not None),
                ct_a, flag, values, _NONE if j is None else j, _NONE if k is None else k)

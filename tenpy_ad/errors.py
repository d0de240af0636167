"""The exception hierarchy of tenpy_ad.

Every error the engine raises on purpose derives from :class:`TenpyAdError`, and also from
the built-in class a NumPy user would expect (``ValueError`` for shapes, ``TypeError`` for
dtypes), so ``except ValueError`` keeps working.

* :class:`ShapeError`          an operation was built with incompatible shapes
* :class:`IndexingError`       an index out of bounds (or too many indices) for the
                               array it indexes; also an ``IndexError``, as NumPy raises
* :class:`DTypeError`          an unsupported or incompatible dtype
* :class:`ArgumentError`       an argument of the wrong kind (a tensor where a scalar is due,
                               a string where an axis is due); also a ``TypeError``
* :class:`ArgumentValueError`  an argument of the right kind with a value the function does
                               not accept (an unknown mode, a negative count); also a
                               ``ValueError``, as NumPy raises
* :class:`ParamError`          a primitive bound with static params that do not fit its
                               schema (``tenpy_ad.param_schema``)
* :class:`ConcretizationError` a traced placeholder was asked for a value (``bool(x)``)
* :class:`ProgramInputError`   a Program was called with inputs of the wrong count/shape/dtype
* :class:`NonFiniteError`      ``tp.debug_nans()`` caught a NaN/Inf, naming the primitive
* :class:`NotDifferentiableError` a value would leave the computation without its gradient
                               (an unsupported NumPy function, ``np.asarray`` of a tensor
                               that requires grad)
* :class:`GraphError`          a graph is malformed for the request (unbound input, ...)
* :class:`TapeError`           the eager tape cannot serve the request (a second backward
                               through values a backward freed, ``requires_grad = False``
                               on a non-leaf); also a ``RuntimeError``, as PyTorch raises
* :class:`MissingRuleError`    a primitive has no JVP/VJP rule for the derivative asked for;
                               also a ``NotImplementedError``
* :class:`UnsupportedError`    a SciPy option tenpy_ad does not support for tensors
                               (``qr(..., pivoting=True)``); also a ``NotImplementedError``
* :class:`GaugeError`          a complex loss depends on the arbitrary phase of singular
                               vectors/eigenvectors, so its derivative is ill-defined
  (:class:`GaugeWarning` instead when ``tp.linalg.config.gauge_check = "warn"``)
* :class:`SaveFormatError`     a saved program is corrupt, truncated, of another version or
                               beyond the loading limits; names the member and the limit
* :class:`ConvergenceError`    an iterative solve (partial SVD/eigh and their derivatives,
                               ``tp.fixed_point`` and its derivative) did not reach its
                               tolerance; carries the residual and the iteration count
  (:class:`ConvergenceWarning` instead when the caller accepts what the solve reached:
  ``tp.fixed_point(..., on_stall="warn")``)
* :class:`InternalError`       a rule broke an engine invariant (a bug: please report it)
"""


class TenpyAdError(Exception):
    """Base class of all errors raised by tenpy_ad."""


class ShapeError(TenpyAdError, ValueError):
    """Incompatible shapes for an operation; the message names the op and the shapes."""


class IndexingError(ShapeError, IndexError):
    """An index that does not fit the array it indexes (out of bounds, too many indices, a
    boolean mask of the wrong shape): an ``IndexError`` as in NumPy, and a ShapeError."""


class DTypeError(TenpyAdError, TypeError):
    """Unsupported or incompatible dtypes; the message names the op and the dtypes."""


class ArgumentError(TenpyAdError, TypeError):
    """An argument of the wrong kind for the function it was passed to."""


class ArgumentValueError(TenpyAdError, ValueError):
    """An argument of the right kind whose value the function does not accept (an unknown
    mode string, a negative count); the message names the function and the value."""


class ParamError(TenpyAdError, ValueError):
    """A primitive was bound with static params that do not fit its schema (an unknown
    mode, a negative axis, a string where an int is due); the message names the primitive
    and the part of the params."""


class ConcretizationError(TenpyAdError, TypeError):
    """A traced value was used where a concrete value is needed."""


class ProgramInputError(TenpyAdError, ValueError):
    """A compiled Program was called with inputs of the wrong number, shape or dtype."""


class NonFiniteError(TenpyAdError, FloatingPointError):
    """A primitive produced NaN or Inf while ``tp.debug_nans()`` was active."""


class NotDifferentiableError(TenpyAdError, TypeError):
    """A value would leave the computation without its gradient: a NumPy function that
    tenpy_ad does not implement, or an implicit conversion of a tensor that requires grad
    to an ndarray or a Python float.  ``.detach()`` / ``.numpy()`` / ``.item()`` leave it
    explicitly."""


class GraphError(TenpyAdError, ValueError):
    """The graph does not fit the request (an unbound input, a non-scalar loss, ...)."""


class TapeError(GraphError, RuntimeError):
    """The eager tape cannot serve the request: a backward through values that an earlier
    backward freed, or ``requires_grad = False`` on a tensor that is not a leaf.  Also a
    ``RuntimeError``, which PyTorch raises in these cases."""


class MissingRuleError(TenpyAdError, NotImplementedError):
    """A primitive has no JVP or VJP rule for the derivative that was asked for."""


class UnsupportedError(TenpyAdError, NotImplementedError):
    """A combination of arguments that tenpy_ad does not support for tensors (a SciPy
    option without a derivative, such as ``qr(..., pivoting=True)``); the message names
    the function and the alternative."""


class GaugeError(TenpyAdError, ValueError):
    """The derivative asked for depends on an arbitrary gauge (phase) choice."""


class GaugeWarning(UserWarning):
    """Like :class:`GaugeError`, reported as a warning (``gauge_check = "warn"``)."""


class SaveFormatError(TenpyAdError, ValueError):
    """A saved program could not be read: corrupt, truncated, of another version, with
    params that do not fit their primitive, or beyond a loading limit
    (``tenpy_ad.compiler.saved_programs.LIMITS``).  The message names the archive member
    (``program.json``, ``constant_12.npy``) and, for a limit, the limit and its value."""


class ConvergenceError(TenpyAdError, RuntimeError):
    """An iterative method stopped before reaching its tolerance.  ``residual`` is the
    relative residual it reached and ``iterations`` how many it made (``None`` when the
    method gave none)."""

    def __init__(self, message: str, residual: float | None = None,
                 iterations: int | None = None):
        super().__init__(message)
        self.residual = residual
        self.iterations = iterations

    def __reduce__(self):              # keep the attributes across processes (sweeps)
        return type(self), (str(self), self.residual, self.iterations)


class ConvergenceWarning(UserWarning):
    """Like :class:`ConvergenceError`, reported as a warning by a solve told to return what
    it reached (``on_stall="warn"``); the message gives the residual achieved."""


class InternalError(TenpyAdError, RuntimeError):
    """An engine invariant was broken; this is a bug in tenpy_ad."""


ALL = {cls.__name__: cls for cls in (
    TenpyAdError, ShapeError, IndexingError, DTypeError, ArgumentError, ArgumentValueError,
    ParamError, ConcretizationError, ProgramInputError, NonFiniteError,
    NotDifferentiableError, GraphError, TapeError, MissingRuleError, UnsupportedError,
    GaugeError,
    SaveFormatError, ConvergenceError,
    InternalError)}

"""Spec entries of the first primitives: elementwise, structural, contractions, the
decompositions, checkpoint, and composites of them as models write them."""
import numpy as np

import tenpy_ad as tp
from tenpy_ad.ops import elementwise as ew

from .table import BOTH, INF, NAN, REAL, Spec, SpecialPoint, flat

# complex points on the negative real axis, above and below NumPy's branch cut
ABOVE_CUT, BELOW_CUT = complex(-1.0, 0.0), complex(-1.0, -0.0)

SPECS = [
    # elementwise binary
    Spec("add", lambda x, y: x + y, ((3, 4), (3, 4))),
    Spec("sub", lambda x, y: x - y, ((3, 4), (3, 4))),
    Spec("mul", lambda x, y: x * y, ((3, 4), (3, 4))),
    Spec("mul_same", lambda x: x * x, ((3, 3),)),
    Spec("div", lambda x, y: x / y, ((3, 4), (3, 4)), domain="away_from_zero", special=(
        SpecialPoint((1.0, 0.0), (INF, -INF), ((0.0, -INF), (-INF, INF)),
                     "x / +0: the IEEE infinities of 1/y, -x/y^2 and of -1/y^2, 2x/y^3"),
    )),
    Spec("broadcast_add", lambda x, y: x + y, ((3, 1), (4,))),
    Spec("broadcast_mul_scalar_tensor", lambda x, y: x * y.sum(), ((2, 3), (3,))),
    # elementwise unary
    Spec("neg", lambda x: -x, ((5,),)),
    Spec("scale_real", lambda x: x.scale_real(0.5), ((2, 3),)),
    Spec("scale_complex", lambda x: x * (0.5 - 2j), ((2, 3),)),
    Spec("pow2", lambda x: x ** 2, ((4,),)),
    Spec("pow3", lambda x: x ** 3, ((4,),)),
    Spec("pow_half", lambda x: x ** 0.5, ((4,),), domain="positive", dtypes=REAL, special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "x ** 0.5 at 0: infinite derivatives"),
    )),
    Spec("exp", tp.exp, ((3, 2),)),
    Spec("log", tp.log, ((3, 2),), domain="positive", special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "log at 0: 1/x and -1/x^2 at +0"),
        SpecialPoint((ABOVE_CUT,), (-1.0, 0.0), ((-1.0, 0.0), (0.0, 1.0)),
                     "on the branch cut: 1/z, the derivative of NumPy's branch (the real "
                     "part log|z| is smooth across the cut)"),
    )),
    Spec("sqrt", tp.sqrt, ((3, 2),), domain="positive", special=(
        SpecialPoint((0.0,), (INF,), ((-INF,),), "sqrt at 0: 1/(2 sqrt x) and its "
                     "derivative, infinite"),
        SpecialPoint((0j,), (NAN, NAN), ((NAN, NAN), (NAN, NAN)),
                     "complex sqrt at 0: no derivative in any direction: NaN"),
        SpecialPoint((ABOVE_CUT,), (0.0, 0.5), ((0.0, 0.25), (0.25, 0.0)),
                     "on the cut from above (+0j): sqrt = i, the derivatives of that branch"),
        SpecialPoint((BELOW_CUT,), (0.0, -0.5), ((0.0, -0.25), (-0.25, 0.0)),
                     "on the cut from below (-0j): sqrt = -i, the other branch's"),
    )),
    Spec("sin", tp.sin, ((4,),)),
    Spec("cos", tp.cos, ((4,),)),
    Spec("tanh", tp.tanh, ((4,),)),
    Spec("abs", tp.abs, ((6,),), domain="away_from_zero", special=(
        SpecialPoint((0.0,), (0.0,), flat(1), "|x| at 0: the subgradient 0"),
        SpecialPoint((0j,), (0.0, 0.0), flat(2),
                     "|z| at 0: the subgradient 0, with second derivatives 0 (the cone's "
                     "vertex), as for real x"),
    )),
    Spec("conj", tp.conj, ((3,),)),
    Spec("real", lambda x: x.real, ((3,),)),
    Spec("imag", lambda x: x.imag + x.real, ((3,),)),
    Spec("complex", lambda x, y: ew.make_complex(x, y * x) * (2 - 1j), ((3,), (3,)),
         dtypes=REAL),
    Spec("astype_complex", lambda x: x.astype("complex128") * (1 + 2j), ((3,),), dtypes=REAL),
    Spec("astype_f32_f64", lambda x: x.astype("float32").astype("float64"), ((3,),),
         dtypes=REAL, tol={"rtol": 1e-5, "atol": 1e-6, "step": 0.5}),
    # structural
    Spec("reshape", lambda x: x.reshape(2, 6), ((3, 4),)),
    Spec("transpose", lambda x: x.transpose(2, 0, 1), ((2, 3, 4),)),
    Spec("T", lambda x: x.T, ((2, 3),)),
    Spec("broadcast_in_dim", lambda x: tp.broadcast_in_dim(x, (3, 4, 2), (1,)), ((4,),)),
    Spec("broadcast_in_dim_size1", lambda x: tp.broadcast_in_dim(x, (3, 4), (0, 1)), ((1, 4),)),
    Spec("sum_all", lambda x: x.sum(), ((3, 4),)),
    Spec("sum_axis", lambda x: x.sum(axis=1), ((3, 4),)),
    Spec("sum_keepdims", lambda x: x.sum(axis=0, keepdims=True) * x, ((3, 4),)),
    Spec("max_all", lambda x: x.max(), ((3, 4),), domain="distinct", dtypes=REAL, special=(
        SpecialPoint(([1.0, 1.0, 0.0],), (0.5, 0.5, 0.0), flat(3),
                     "tied maxima share the derivative evenly"),
    )),
    Spec("max_axis", lambda x: tp.amax(x, axis=0), ((3, 4),), domain="distinct", dtypes=REAL,
         special=(SpecialPoint(([[1.0, 2.0], [1.0, 0.0]],), (0.5, 1.0, 0.5, 0.0), flat(4),
                               "a tie in one column only"),)),
    Spec("slice", lambda x: x[:, 1:3], ((3, 4),)),
    Spec("slice_step", lambda x: x[::2, ::-1], ((5, 4),)),
    Spec("index_int", lambda x: x[1, ...], ((3, 4),)),
    Spec("index_newaxis", lambda x: x[None, :, -1], ((3, 4),)),
    # contractions
    Spec("matmul", lambda x, y: x @ y, ((3, 4), (4, 2))),
    Spec("matmul_vec", lambda x, y: x @ y, ((3, 4), (4,))),
    Spec("matmul_batched", lambda x, y: x @ y, ((2, 3, 4), (2, 4, 5))),
    Spec("einsum_unary", lambda x: tp.einsum("ijk->ki", x), ((2, 3, 4),)),
    Spec("einsum_trace", lambda x: tp.einsum("ii->", x), ((3, 3),)),
    Spec("einsum_outer", lambda x, y: tp.einsum("i,j->ij", x, y), ((3,), (2,))),
    Spec("einsum_sum_only_one", lambda x, y: tp.einsum("ij,k->k", x, y), ((2, 3), (4,))),
    Spec("einsum_trg", lambda a, b, c, d: tp.einsum("xwu,yxl,yzd,wzr->uldr", a, b, c, d),
         ((2, 2, 3),) * 4),
    Spec("einsum_trace4", lambda x: tp.einsum("xyxy->", x), ((2, 3, 2, 3),)),
    Spec("tensordot", lambda x, y: tp.tensordot(x, y, axes=([0, 2], [1, 0])),
         ((2, 3, 4), (4, 2, 5))),
    # linear algebra (losses invariant under the decompositions' gauge freedom)
    *[Spec(f"svd_values_{m}x{n}", lambda x: tp.linalg.svd(x)[1], ((m, n),))
      for m, n in ((4, 4), (5, 3), (3, 5))],
    *[Spec(f"svd_all_outputs_{m}x{n}", lambda x: _svd_invariants(x), ((m, n),))
      for m, n in ((4, 4), (5, 3), (3, 5))],
    Spec("svd_truncated", lambda x: _svd_truncated(x, 2), ((5, 4),)),
    *[Spec(f"qr_{m}x{n}", lambda x: _qr_sum(x), ((m, n),)) for m, n in ((4, 4), (5, 3), (3, 5))],
    Spec("eigh_values", lambda x: tp.linalg.eigh(x)[0], ((4, 4),)),
    Spec("eigh_projector", lambda x: _eigh_projector(x, 2), ((4, 4),)),
    Spec("solve_matrix", tp.linalg.solve, ((4, 4), (4, 2))),
    Spec("solve_vector", tp.linalg.solve, ((3, 3), (3,))),
    Spec("norm_fro", tp.linalg.norm, ((3, 4),), special=(
        SpecialPoint(([0.0, 0.0],), (0.0, 0.0), flat(2),
                     "x = 0: the subgradient 0, second derivatives 0"),
        SpecialPoint(([0j, 0j],), (0.0,) * 4, flat(4), "complex x = 0: the same"),
    )),
    Spec("norm_axis", lambda x: tp.linalg.norm(x, axis=0), ((3, 4),)),
    Spec("norm_vector_1_inf", lambda x: tp.linalg.norm(x, 1) + tp.linalg.norm(x, np.inf),
         ((5,),), domain="distinct", dtypes=REAL, special=(
             SpecialPoint(([0.0, 1.0, -1.0],), (0.0, 1.5, -1.5), flat(3),
                          "1-norm: sign(x), 0 at 0; inf-norm: |x| tied at 1 and -1, split"),
             SpecialPoint(([0.0, 0.0],), (0.0, 0.0), flat(2), "x = 0: 0"),
             SpecialPoint(([0.0, 0.0],), (0.0, 0.0), flat(2), "p-norm at x = 0: 0, not "
                          "inf * 0", fn=lambda x: tp.linalg.norm(x, 3)),
         )),
    Spec("norm_nuclear_spectral", lambda x: tp.linalg.norm(x, "nuc") + tp.linalg.norm(x, 2),
         ((3, 4),)),
    # rematerialisation
    Spec("checkpoint_one_output",
         lambda x, y: tp.checkpoint(lambda a, b: tp.sin(a) * b + a @ b)(x, y), ((3, 3), (3, 3))),
    Spec("checkpoint_two_outputs",
         lambda x: (lambda pair: pair[0] @ pair[1])(
             tp.checkpoint(lambda a: (tp.exp(a), a.T * 2.0))(x)), ((3, 3),)),
    # composites of the above, as models write them
    Spec("normalise_by_max", lambda x: x / tp.amax(tp.abs(x)), ((3, 3),), domain="distinct",
         dtypes=REAL),
    Spec("log_sum_exp", lambda x: tp.log(tp.exp(x).sum()), ((5,),), dtypes=REAL),
]


def _svd_invariants(x):
    """Depends on all three outputs, but not on the phase of the singular vectors."""
    u, s, vh = tp.linalg.svd(x)
    return (u * s) @ vh + u @ tp.conj(u).T @ x @ tp.conj(vh).T @ vh


def _svd_truncated(x, k):
    u, s, vh = tp.linalg.svd(x)
    return (u[:, :k] * s[:k]) @ vh[:k] @ (tp.conj(vh[:k]).T @ vh[:k]) + u[:, :k] @ tp.conj(
        u[:, :k]).T @ x


def _qr_sum(x):
    q, r = tp.linalg.qr(x)
    return q.sum() + r.sum()


def _eigh_projector(x, k):
    w, v = tp.linalg.eigh(x)
    return v[:, :k] @ tp.conj(v[:, :k]).T * w[0]

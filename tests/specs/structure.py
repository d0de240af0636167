"""Shape, structure and building functions of tenpy_ad.numpy: the primitives ``tril``,
``triu``, ``repeat`` (its transpose ``segment_sum``), ``scatter_slice`` as diagonal
embedding and padding, and the compositions whose derivative is not simply another
entry's (strided diagonals, gathers by runs of slices, linspace, tensor fill values)."""
import tenpy_ad.numpy as tnp

from .table import Spec

SPECS = [
    # primitives
    Spec("tril", lambda x: tnp.tril(x), ((3, 4),)),
    Spec("triu_stack_offset", lambda x: tnp.triu(x, -1), ((2, 3, 3),)),
    Spec("tril_of_vector", lambda x: tnp.tril(x, 1), ((3,),)),
    Spec("repeat_counts", lambda x: tnp.repeat(x, [2, 0, 3], axis=0), ((3, 2),)),
    Spec("repeat_counts_last_axis", lambda x: x.repeat([1, 2], axis=-1), ((2, 2),)),
    # reshapes, broadcasts and slices arranged by the surface
    Spec("repeat_uniform_flat", lambda x: tnp.repeat(x, 2), ((2, 3),)),
    Spec("tile", lambda x: tnp.tile(x, (2, 1, 3)), ((2, 3),)),
    Spec("roll_axes", lambda x: tnp.roll(x, (1, -2), (0, 1)), ((3, 4),)),
    Spec("roll_flat", lambda x: tnp.roll(x, 5), ((2, 3),)),
    Spec("flip_rot90", lambda x: tnp.rot90(tnp.flip(x, 1), 3, axes=(2, 0)), ((2, 3, 4),)),
    Spec("diag_embed_offset", lambda x: tnp.diag(x, -1), ((3,),)),
    Spec("diagflat", lambda x: tnp.diagflat(x, 2), ((2, 2),)),
    Spec("diagonal_offset_axes", lambda x: tnp.diagonal(x, 1, 2, 0), ((3, 2, 4),)),
    Spec("diagonal_method", lambda x: x.diagonal(-1), ((4, 3),)),
    Spec("trace_offset", lambda x: tnp.trace(x, -1), ((4, 3),)),
    Spec("trace_method_axes", lambda x: x.trace(0, 1, 2), ((2, 3, 3),)),
    Spec("pad_zeros", lambda x: tnp.pad(x, ((1, 2), (0, 1))), ((2, 3),)),
    Spec("pad_constant_tensor_values",
         lambda x, c: tnp.pad(x, ((1, 2), (2, 1)), constant_values=c), ((2, 3), (2, 2))),
    Spec("pad_edge", lambda x: tnp.pad(x, ((2, 1), (1, 3)), mode="edge"), ((2, 3),)),
    Spec("pad_reflect_wide", lambda x: tnp.pad(x, (5, 4), mode="reflect"), ((3,),)),
    Spec("pad_symmetric", lambda x: tnp.pad(x, ((1, 3), (2, 0)), mode="symmetric"),
         ((2, 3),)),
    Spec("pad_wrap", lambda x: tnp.pad(x, (4, 2), mode="wrap"), ((3, 2),)),
    Spec("pad_reflect_odd", lambda x: tnp.pad(x, (4, 5), mode="reflect", reflect_type="odd"),
         ((3,),)),
    Spec("linspace_endpoints", lambda a, b: tnp.linspace(a, b, 5, axis=-1), ((3,), (2, 3))),
    Spec("linspace_open", lambda a, b: tnp.linspace(a, b, 4, endpoint=False),
         ((2,), (2,))),
    Spec("full_tensor_value", lambda x: tnp.full((2, 3), x), ((3,),)),
    Spec("full_like_tensor_value", lambda x, v: tnp.full_like(x, v) * x, ((2, 3), ())),
    # joins and splits
    Spec("split_reordered",
         lambda x: tnp.concatenate(tnp.split(x, [1, 3], axis=1)[::-1], axis=1), ((2, 4),)),
    Spec("array_split_pieces", lambda x: tnp.array_split(x, 3)[0] * 2.0, ((5,),)),
    Spec("stacks", lambda x, y: tnp.vstack([tnp.hstack([x, y]), tnp.column_stack([y, x])]),
         ((2, 1), (2, 1))),
    Spec("dstack_append", lambda x: tnp.append(tnp.dstack([x, x * x]), x), ((2,),)),
    Spec("r_c_", lambda x, y: tnp.r_[x, 1.5, tnp.c_[x, y][:, 1]], ((3,), (3,))),
    Spec("unstack_expand_squeeze",
         lambda x: tnp.squeeze(tnp.expand_dims(tnp.unstack(x, axis=1)[1], (0, 2)), 0),
         ((2, 3),)),
    Spec("moveaxis_swapaxes", lambda x: tnp.swapaxes(tnp.moveaxis(x, 0, -1), 0, 1),
         ((2, 3, 4),)),
]

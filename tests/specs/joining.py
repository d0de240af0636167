"""Joining and building arrays from tensors."""
import tenpy_ad.numpy as tnp

from .table import Spec

SPECS = [
    Spec("concatenate_axis0", lambda x, y: tnp.concatenate([x, y]), ((2, 3), (4, 3))),
    Spec("concatenate_axis1_three", lambda x, y: tnp.concatenate((y, x, y), axis=-1),
         ((2, 3), (2, 1))),
    Spec("stack_axis1", lambda x, y: tnp.stack([x, y, x * y], axis=1), ((2, 3), (2, 3))),
    Spec("array_of_scalars", lambda x: tnp.array([x[0], x[1] * 2.0, x[0] + 2.5]), ((2,),)),
    Spec("array_nested", lambda x: tnp.array([[x, 2.0 * x], [x * x, x]]), ((3,),)),
]

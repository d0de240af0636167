"""Primitive families.  Each module defines its primitives with the implementation, the
shape/dtype rule, the JVP rule and the VJP rule side by side, plus the strict functions
(``mul``, ``reshape``, ...) that rules and the numpy-like surface call.  Strict functions
expect operands that already agree in shape and dtype; broadcasting and promotion happen
one level up, in :mod:`tenpy_ad.numpy`."""

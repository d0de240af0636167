# The numpy-like operator surface shared by TracedTensor and the eager Tensor.
#
# Operators forward to the Python functions of tenpy_ad.numpy_api, handed over at import
# through ``install(surface=...)``, so one implementation serves both tensor kinds.

cdef class ArraySurface:
    """Operators and methods common to traced and eager tensors."""

    # ndarray binary operators return NotImplemented for operands that set this, so
    # ``ndarray * tensor`` reaches ``tensor.__rmul__``.
    __array_ufunc__ = None

    def __add__(self, other):
        return _surface["add"](self, other)

    def __radd__(self, other):
        return _surface["add"](other, self)

    def __sub__(self, other):
        return _surface["subtract"](self, other)

    def __rsub__(self, other):
        return _surface["subtract"](other, self)

    def __mul__(self, other):
        return _surface["multiply"](self, other)

    def __rmul__(self, other):
        return _surface["multiply"](other, self)

    def __truediv__(self, other):
        return _surface["divide"](self, other)

    def __rtruediv__(self, other):
        return _surface["divide"](other, self)

    def __matmul__(self, other):
        return _surface["matmul"](self, other)

    def __rmatmul__(self, other):
        return _surface["matmul"](other, self)

    def __pow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return _surface["power"](self, other)

    def __neg__(self):
        return _surface["negative"](self)

    def __pos__(self):
        return self

    def __abs__(self):
        return _surface["abs"](self)

    def __getitem__(self, index):
        return _surface["getitem"](self, index)

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d tensor")
        return shape[0]

    def sum(self, axis=None, keepdims=False):
        """Sum over ``axis`` (all axes by default), like ``ndarray.sum``."""
        return _surface["sum"](self, axis, keepdims)

    def max(self, axis=None, keepdims=False):
        """Maximum over ``axis``; its derivative splits evenly among tied maxima."""
        return _surface["amax"](self, axis, keepdims)

    amax = max

    def reshape(self, *shape):
        """Reshape (one ``-1`` allowed), like ``ndarray.reshape``."""
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return _surface["reshape"](self, shape)

    def transpose(self, *axes):
        """Permute axes (reverse them by default), like ``ndarray.transpose``."""
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return _surface["transpose"](self, axes if axes else None)

    @property
    def T(self):
        return _surface["transpose"](self, None)

    def scale_real(self, factor):
        """Multiply by a Python/NumPy scalar held as a static parameter of the graph."""
        return _surface["scale"](self, factor)

    def conj(self):
        return _surface["conj"](self)

    @property
    def real(self):
        return _surface["real"](self)

    @property
    def imag(self):
        return _surface["imag"](self)

    def astype(self, dtype):
        return _surface["astype"](self, dtype)

    def broadcast_in_dim(self, shape, broadcast_dimensions):
        """Broadcast with an explicit map of operand axes to output axes (XLA semantics)."""
        return _surface["broadcast_in_dim"](self, shape, broadcast_dimensions)

    @property
    def size(self):
        cdef Py_ssize_t n = 1
        for d in self.shape:
            n *= d
        return n

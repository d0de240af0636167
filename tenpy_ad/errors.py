"""The exception hierarchy of tenpy_ad.

Every error the engine raises on purpose derives from :class:`TenpyAdError`, and also from
the built-in class a NumPy user would expect (``ValueError`` for shapes, ``TypeError`` for
dtypes), so ``except ValueError`` keeps working.

* :class:`ShapeError`          an operation was built with incompatible shapes
* :class:`DTypeError`          an unsupported or incompatible dtype
* :class:`ArgumentError`       an argument of the wrong kind (a tensor where a scalar is due)
* :class:`ConcretizationError` a traced placeholder was asked for a value (``bool(x)``)
* :class:`ProgramInputError`   a Program was called with inputs of the wrong count/shape/dtype
* :class:`NonFiniteError`      ``tp.debug_nans()`` caught a NaN/Inf, naming the primitive
* :class:`GraphError`          a graph is malformed for the request (unbound input, ...)
* :class:`GaugeError`          a complex loss depends on the arbitrary phase of singular
                               vectors/eigenvectors, so its derivative is ill-defined
  (:class:`GaugeWarning` instead when ``tp.linalg.config.gauge_check = "warn"``)
* :class:`SaveFormatError`     a saved program is corrupt, truncated or of another version
* :class:`ConvergenceError`    an iterative solve (``tp.fixed_point``, its derivative) did not
                               converge; the message gives the residual and iteration count
* :class:`InternalError`       a rule broke an engine invariant (a bug: please report it)
"""


class TenpyAdError(Exception):
    """Base class of all errors raised by tenpy_ad."""


class ShapeError(TenpyAdError, ValueError):
    """Incompatible shapes for an operation; the message names the op and the shapes."""


class DTypeError(TenpyAdError, TypeError):
    """Unsupported or incompatible dtypes; the message names the op and the dtypes."""


class ArgumentError(TenpyAdError, TypeError):
    """An argument of the wrong kind for the function it was passed to."""


class ConcretizationError(TenpyAdError, TypeError):
    """A traced value was used where a concrete value is needed."""


class ProgramInputError(TenpyAdError, ValueError):
    """A compiled Program was called with inputs of the wrong number, shape or dtype."""


class NonFiniteError(TenpyAdError, FloatingPointError):
    """A primitive produced NaN or Inf while ``tp.debug_nans()`` was active."""


class GraphError(TenpyAdError, ValueError):
    """The graph does not fit the request (an unbound input, a non-scalar loss, ...)."""


class GaugeError(TenpyAdError, ValueError):
    """The derivative asked for depends on an arbitrary gauge (phase) choice."""


class GaugeWarning(UserWarning):
    """Like :class:`GaugeError`, reported as a warning (``gauge_check = "warn"``)."""


class SaveFormatError(TenpyAdError, ValueError):
    """A saved program could not be read."""


class ConvergenceError(TenpyAdError, RuntimeError):
    """An iterative solve did not converge within its iteration budget."""


class InternalError(TenpyAdError, RuntimeError):
    """An engine invariant was broken; this is a bug in tenpy_ad."""


ALL = {cls.__name__: cls for cls in (
    TenpyAdError, ShapeError, DTypeError, ArgumentError, ConcretizationError, ProgramInputError,
    NonFiniteError, GraphError, GaugeError, SaveFormatError, ConvergenceError,
    InternalError)}

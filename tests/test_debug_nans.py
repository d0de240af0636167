"""``tp.debug_nans()``: the first non-finite value is reported with the name of the
primitive (or VJP) that made it, in compiled programs, eager ops and eager backward
passes; outside the context NumPy's semantics hold.
"""
import warnings

import numpy as np
import pytest

import tenpy_ad as tp
from tenpy_ad.errors import NonFiniteError

# the tests make log(0) and 1/0 on purpose: NumPy's RuntimeWarning precedes the error
numpy_warns = pytest.mark.filterwarnings("ignore:divide by zero:RuntimeWarning",
                                         "ignore:invalid value:RuntimeWarning")


@numpy_warns
def test_debug_nans_names_the_primitive_in_a_compiled_program():
    x = tp.input((3,), name="x")
    program = tp.compile(tp.log(x) * 2.0, inputs=[x])
    with tp.debug_nans():
        np.testing.assert_allclose(program(np.array([1.0, 2.0, 3.0])),
                                   2 * np.log([1.0, 2.0, 3.0]))
        with pytest.raises(NonFiniteError) as excinfo:
            program(np.array([1.0, 0.0, 3.0]))
    assert "'log'" in str(excinfo.value) and "inf" in str(excinfo.value).lower()
    assert isinstance(excinfo.value, FloatingPointError)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = program(np.array([1.0, 0.0, 3.0]))            # outside: NumPy semantics
    assert result[1] == -np.inf and np.isfinite(result[[0, 2]]).all()


@numpy_warns
def test_debug_nans_names_the_primitive_of_an_eager_op():
    with tp.debug_nans():
        assert tp.sqrt(tp.tensor(4.0)).item() == 2.0
        with pytest.raises(NonFiniteError) as excinfo:
            tp.sqrt(tp.tensor(-1.0))
    assert "'sqrt'" in str(excinfo.value) and "nan" in str(excinfo.value).lower()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.isnan(tp.sqrt(tp.tensor(-1.0)).item())


@numpy_warns
def test_debug_nans_names_the_vjp_in_an_eager_backward():
    with tp.debug_nans():
        b = tp.tensor(1e-300, requires_grad=True)
        out = tp.sqrt(b * b)            # b*b underflows to 0: the forward pass is finite
        assert out.item() == 0.0
        with pytest.raises(NonFiniteError) as excinfo:
            out.backward()
    message = str(excinfo.value)
    assert "vjp" in message.lower() and "'sqrt'" in message, message
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        b = tp.tensor(1e-300, requires_grad=True)
        tp.sqrt(b * b).backward()
    assert not np.isfinite(b.grad.item())


def test_debug_nans_reports_inputs_that_were_already_non_finite():
    x = tp.input((2,), name="x")
    program = tp.compile(tp.sin(x), inputs=[x])
    with tp.debug_nans():
        with pytest.raises(NonFiniteError) as excinfo:
            program(np.array([0.5, np.nan]))
        assert "already non-finite" in str(excinfo.value)
        assert "'sin'" in str(excinfo.value)
        with pytest.raises(NonFiniteError) as excinfo:
            tp.exp(tp.tensor([np.inf, 1.0]))
        assert "already non-finite" in str(excinfo.value)
    result = program(np.array([0.5, np.nan]))
    assert np.isnan(result[1]) and result[0] == np.sin(0.5)


@numpy_warns
def test_debug_nans_switches_off_after_an_error_and_nests():
    x = tp.input((), name="x")
    program = tp.compile(tp.log(x), inputs=[x])
    with pytest.raises(NonFiniteError):
        with tp.debug_nans():
            with tp.debug_nans():
                pass
            program(np.array(0.0))          # the outer context is still active
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert program(np.array(0.0)) == -np.inf

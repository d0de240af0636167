"""Fuzzed op sequences (``tests/fuzzing.py``): random sequences of surface ops on random
inputs (NaN/Inf/±0 included, ndarrays and scalars of every kind mixed in) either raise a
TenpyAdError (ShapeErrors name the op) or evaluate to exactly what NumPy computes, values
and dtype, traced and eager.  Derandomized: the same examples in every run.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from fuzzing import EXAMPLES, FAMILIES, NO_SHRINK, fuzz_op_sequence


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_fuzzed_traced_op_sequences_fail_clearly_or_match_numpy(family):
    @settings(max_examples=EXAMPLES[family], **NO_SHRINK)
    @given(data=st.data())
    def fuzz(data):
        fuzz_op_sequence(data, "traced", family)
    fuzz()


@pytest.mark.parametrize("family", sorted(FAMILIES))
def test_fuzzed_eager_op_sequences_fail_clearly_or_match_numpy(family):
    @settings(max_examples=EXAMPLES[family] // 3, **NO_SHRINK)
    @given(data=st.data())
    def fuzz(data):
        fuzz_op_sequence(data, "eager", family)
    fuzz()

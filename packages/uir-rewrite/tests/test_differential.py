"""Differential tests: a random verified program gives the same output, bit for bit, before and
after each pass and after the whole pipeline (architecture.md, Tests)."""

import os

import numpy as np
from hypothesis import given, settings

from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.output import format_value
from uir.core.parse import Program, parse
from uir.core.printer import print_program
from uir.core.strategies import programs
from uir.core.uop import UOp
from uir.core.verify import verify
from uir.rewrite.passes import fold, inline, simplify

# UIR_HYPOTHESIS_SCALE=10 runs ten times the cases (see conftest.py).
SCALE = int(os.environ.get("UIR_HYPOTHESIS_SCALE", "1"))


def pipeline(sink: UOp) -> UOp:
    return simplify(fold(inline(sink)))


def assert_same_outputs(before: UOp, after: UOp) -> None:
    """Equal printed output and equal bits; a NaN need only stay a NaN (uir.md section 3 leaves
    its sign and payload unspecified)."""
    old, new = evaluate(before), evaluate(after)
    assert len(old) == len(new)
    for a, b, source in zip(old, new, before.src, strict=True):
        dtype = source.dtype
        assert format_value(a, dtype) == format_value(b, dtype), print_program(before)
        a, b = np.ravel(a), np.ravel(b)
        if dtype.is_float:
            a_nan, b_nan = np.isnan(a), np.isnan(b)
            assert (a_nan == b_nan).all(), print_program(before)
            a, b = a[~a_nan], b[~b_nan]
        assert a.tobytes() == b.tobytes(), print_program(before)


def assert_still_valid(sink: UOp) -> None:
    """The optimized program is itself a verified program (every INDEX still provable), and its
    printed text parses back to the very same graph (folded constants included)."""
    verify(Program(sink, {}))
    assert parse(print_program(sink)).sink is sink


@settings(max_examples=600 * SCALE)
@given(programs())
def test_pipeline_keeps_every_output_bit(sink):
    optimized = pipeline(sink)
    assert_same_outputs(sink, optimized)
    assert_still_valid(optimized)
    assert not any(u.op is Op.CALL for u in optimized.toposort())


@settings(max_examples=200 * SCALE)
@given(programs())
def test_inline_keeps_every_output_bit(sink):
    assert_same_outputs(sink, inline(sink))


@settings(max_examples=200 * SCALE)
@given(programs())
def test_fold_keeps_every_output_bit(sink):
    folded = fold(sink)
    assert_same_outputs(sink, folded)
    assert_still_valid(folded)


@settings(max_examples=1000 * SCALE)
@given(programs())
def test_simplify_alone_keeps_every_output_bit(sink):
    # without inlining first, the rules also run inside CALL bodies
    simplified = simplify(sink)
    assert_same_outputs(sink, simplified)
    assert_still_valid(simplified)


@settings(max_examples=200 * SCALE)
@given(programs())
def test_passes_reach_a_fixpoint(sink):
    once = pipeline(sink)
    assert pipeline(once) is once

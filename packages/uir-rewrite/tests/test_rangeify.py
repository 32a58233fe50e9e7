"""Rangeify: shaped values become loops, and the loops compute what the shapes meant.

Each result is worked out independently (by hand, by numpy and Python loops written here, or, for
random programs, by the independent model of uir.testing) and compared with the interpreter's run
of rangeify's output, which must verify as a week-3 program.
Programs with REDUCE, EXPAND, STAGE and whole-buffer LOAD/STORE are parsed without verifying
(week 4's verifier lands on another branch); their rangeified form verifies today.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings

from uir.core.dtypes import VOID, Type, f32, i32
from uir.core.elements import Elements
from uir.core.errors import BackendError
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.parse import parse
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.rewrite.rangeify import rangeify as rangeify_graph
from uir.testing import model
from uir.testing.compare import same_outputs
from uir.testing.programs import programs
from uir.testing.shaped import check_lowered


def lowered(sink: UOp) -> UOp:
    """rangeify's result, checked to be a week-3 program with no shaped value left to lower."""
    return check_lowered(rangeify(sink))


def run(text: str, inputs: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    return evaluate(lowered(parse(text).sink), inputs)


def count(sink: UOp, op: Op) -> int:
    return sum(u.op is op for u in sink.toposort())


def f32_fold(op, values) -> np.float32:
    """A left fold from the first element, one f32 rounding per step: the order uir.md 8 fixes."""
    acc = np.float32(values[0])
    for v in values[1:]:
        acc = np.float32(op(acc, np.float32(v)))
    return acc


SUM_TEXT = """
%x = BUFFER f32[{n}] 0
%l = LOAD f32[{n}] %x
%s = REDUCE f32 %l ({op}, (0))
%out = SINK void %s
"""


def reduce_f32(op: str, values: list[float]) -> np.float32:
    data = np.array(values, dtype=np.float32)
    (result,) = run(SUM_TEXT.format(n=len(values), op=op), {0: data})
    return np.float32(result)


# --- REDUCE ------------------------------------------------------------------------------------


def test_a_sum_of_negative_zeros_is_negative_zero():
    # from +0.0 it would be +0.0: the identity of float ADD is -0.0
    result = reduce_f32("ADD", [-0.0, -0.0, -0.0])
    assert result == 0 and math.copysign(1, result) == -1


def test_a_sum_folds_from_the_first_element_in_order():
    # 1e8 + 1 rounds back to 1e8 in f32 (its ulp there is 8), then - 1e8 gives 0, then + 1 gives 1;
    # summing the two ones first would give 2
    assert reduce_f32("ADD", [1e8, 1.0, -1e8, 1.0]) == 1.0


def test_a_long_sum_matches_a_sequential_fold_not_a_pairwise_one():
    values = np.random.default_rng(7).standard_normal(10_000).astype(np.float32) * 1000
    expected = f32_fold(lambda a, b: a + b, values)
    assert reduce_f32("ADD", list(values)) == expected
    assert np.sum(values) != expected  # numpy's pairwise order differs here: the test has teeth


def test_max_propagates_nan_and_orders_zeros():
    assert math.isnan(reduce_f32("MAX", [1.0, math.nan, 2.0]))
    zero = reduce_f32("MAX", [-0.0, 0.0, -0.0])
    assert zero == 0 and math.copysign(1, zero) == 1
    low = reduce_f32("MIN", [0.0, -0.0, 3.0])
    assert low == 0 and math.copysign(1, low) == -1
    assert reduce_f32("MIN", [4.0, -math.inf, 2.0]) == -math.inf
    assert reduce_f32("MAX", [-3.0, -1.5, -2.0]) == -1.5  # a start at 0 would give 0
    assert reduce_f32("MIN", [3.0, 1.5, 2.0]) == 1.5


def test_int_max_and_min_start_from_the_extremes():
    text = """
    %v = CONST i32[2] (-2147483648, -2147483648)
    %w = CONST i32[2] (2147483647, 2147483647)
    %mx = REDUCE i32 %v (MAX, (0))
    %mn = REDUCE i32 %w (MIN, (0))
    %out = SINK void %mx %mn
    """
    assert [int(v) for v in run(text)] == [-(2**31), 2**31 - 1]


def test_products_and_int_sums_wrap():
    assert reduce_f32("MUL", [1.5, -2.0, 4.0]) == -12.0
    text = """
    %v = CONST i32[3] (2147483647, 1, 5)
    %s = REDUCE i32 %v (ADD, (0))
    %m = REDUCE i32 %v (MUL, (0))
    %lo = REDUCE i32 %v (MIN, (0))
    %out = SINK void %s %m %lo
    """
    total, product, low = run(text)
    assert int(total) == -2147483648 + 5  # 2^31 - 1 + 1 wraps to -2^31
    assert int(product) == np.int32(np.int64(2147483647 * 5) % 2**32 - 2**32)  # 2^31*5 - 5 mod 2^32
    assert int(low) == 1


def shaped_const(values: np.ndarray, dtype=f32) -> UOp:
    flat = tuple(float(v) for v in values.reshape(-1))
    return UOp(Op.CONST, Type(dtype, values.shape), (), Elements(flat))


def program(*outputs: UOp) -> UOp:
    return UOp(Op.SINK, VOID, outputs)


@pytest.mark.parametrize(("axes", "reduce"), [((0,), 0), ((1,), 1), ((0, 1), None)])
def test_a_rank_two_reduce_folds_the_listed_axes(axes, reduce):
    x = np.arange(1, 7, dtype=np.float32).reshape(2, 3)  # small integers: every sum is exact
    shape = tuple(d for a, d in enumerate(x.shape) if a not in axes)
    value = UOp(Op.REDUCE, Type(f32, shape), (shaped_const(x),), (Op.ADD, axes))
    (result,) = evaluate(lowered(program(value)))
    expected = x.sum(axis=reduce) if reduce is not None else x.sum()
    assert np.array_equal(np.asarray(result).reshape(-1), np.asarray(expected).reshape(-1))


def test_a_reduce_reads_its_accumulator_through_a_carried_after():
    text = SUM_TEXT.format(n=8, op="ADD")
    after = lowered(parse(text).sink)
    carried = [
        u for u in after.toposort() if u.op is Op.AFTER and Op.RANGE in {s.op for s in u.src}
    ]
    assert len(carried) == 1 and carried[0].src[0].op is Op.LOCAL


# --- EXPAND ------------------------------------------------------------------------------------


def test_expand_of_a_scalar_and_of_a_one_element_vector():
    text = """
    %two = CONST f32 2
    %e = EXPAND f32[4] %two
    %v = CONST f32[1] (3)
    %w = EXPAND f32[4] %v
    %x = CONST f32[4] (1, 2, 3, 4)
    %a = MUL f32[4] %x %e
    %b = ADD f32[4] %a %w
    %out = SINK void %b
    """
    (result,) = run(text)
    assert result.tolist() == [5.0, 7.0, 9.0, 11.0]  # 2x + 3


def test_expand_broadcasts_at_any_rank_as_numpy_does():
    row = np.array([1, 2, 3], dtype=np.float32)
    column = np.array([[10], [20]], dtype=np.float32)
    a = UOp(Op.EXPAND, Type(f32, (2, 3)), (shaped_const(row),))
    b = UOp(Op.EXPAND, Type(f32, (2, 3)), (shaped_const(column),))
    total = UOp(Op.ADD, Type(f32, (2, 3)), (a, b))
    (result,) = evaluate(lowered(program(total)))
    assert np.array_equal(result.reshape(-1), (row + column).reshape(-1))


# --- fuse or materialize -----------------------------------------------------------------------

TWO_USES = """
%a = CONST f32[4] (1, 2, 3, 4)
%b = CONST f32[4] (5, 6, 7, 8)
%m = MUL f32[4] %a %b
%v = {value}
%one = CONST f32[4] (1, 1, 1, 1)
%p = ADD f32[4] %v %one
%q = SUB f32[4] %v %one
%out = SINK void %p %q
"""


def test_elementwise_values_fuse_and_a_stage_materializes_once():
    fused = lowered(parse(TWO_USES.format(value="ADD f32[4] %m %m")).sink)
    staged = lowered(parse(TWO_USES.format(value="STAGE f32[4] %m")).sink)
    # fused: each output's loop recomputes a*b; no scratch buffer
    assert count(fused, Op.MUL) == 2 and count(fused, Op.LOCAL) == 0
    assert count(fused, Op.STORE) == 2  # one per output
    # staged: a*b computed once into a LOCAL, which both output loops read
    assert count(staged, Op.MUL) == 1 and count(staged, Op.LOCAL) == 1
    assert count(staged, Op.STORE) == 3
    p, q = evaluate(staged)
    products = [5.0, 12.0, 21.0, 32.0]
    assert p.tolist() == [x + 1 for x in products] and q.tolist() == [x - 1 for x in products]
    p, q = evaluate(fused)
    assert p.tolist() == [2 * x + 1 for x in products]


def test_a_scalar_stage_is_its_value():
    text = "%a = CONST i32 4\n%s = STAGE i32 %a\n%b = ADD i32 %s %s\n%out = SINK void %b\n"
    assert [int(v) for v in run(text)] == [8]


def test_a_loaded_buffer_fuses_into_the_loop_that_reads_it():
    text = """
    %x = BUFFER f32[5] 0
    %y = BUFFER f32[5] 1
    %lx = LOAD f32[5] %x
    %ly = LOAD f32[5] %y
    %p = MUL f32[5] %lx %ly
    %out = SINK void %p
    """
    after = lowered(parse(text).sink)
    assert count(after, Op.RANGE) == 1 and count(after, Op.LOCAL) == 0
    x, y = np.arange(5, dtype=np.float32), np.full(5, 0.5, dtype=np.float32)
    (result,) = evaluate(after, {0: x, 1: y})
    assert result.tolist() == (x * y).tolist()


def test_an_in_place_update_reads_a_snapshot_of_what_it_overwrites():
    # x = x + x[reversed]: element i needs the old x[3-i], which the loop would already have
    # overwritten for i >= 2 had it read x itself
    text = """
    %d = CONST i32[4] (1, 2, 3, 4)
    %x = BUFFER i32[4] %d 0
    %l = LOAD i32[4] %x
    %s = REDUCE i32 %l (ADD, (0))
    %e = EXPAND i32[4] %s
    %t = ADD i32[4] %l %e
    %w = STORE void %x %t
    %x1 = AFTER i32[4] %x %w
    %out = SINK void %x1 %s
    """
    after = lowered(parse(text).sink)
    result, total = evaluate(after)
    assert result.tolist() == [11, 12, 13, 14] and int(total) == 10
    assert count(after, Op.LOCAL) == 2  # the snapshot and the accumulator


def test_a_load_before_an_accumulator_loop_reads_a_snapshot():
    # the loop adds 1 three times to b through an AFTER carried across it, so no STORE names
    # b's first version; the LOAD of that version (5) is negated and stored after the loop. A
    # fused LOAD would have to run both before the loop (which overwrites what it reads) and
    # after it (its STORE needs the loop's result): the C backend rejected this valid program
    # with a memory-order cycle (found by week-5 random programs)
    text = """
    %d = CONST i32[1] (5)
    %b = BUFFER i32[1] %d 0
    %l = LOAD i32[1] %b
    %n = CONST i32 3
    %i = RANGE i32 %n 0
    %c = AFTER i32[1] %b %i
    %z = CONST i32 0
    %p = INDEX i32 %c %z
    %x = LOAD i32 %p
    %one = CONST i32 1
    %y = ADD i32 %x %one
    %s = STORE void %p %y
    %e = END void %s %i
    %b1 = AFTER i32[1] %b %e
    %m = NEG i32[1] %l
    %t = STORE void %b1 %m
    %b2 = AFTER i32[1] %b1 %t
    %out = SINK void %b2
    """
    after = lowered(parse(text).sink)
    # evaluate schedules the lowered program: the fused form raised the cycle here too
    (stored,) = evaluate(after)
    assert stored.tolist() == [-5]
    assert count(after, Op.LOCAL) == 1  # the snapshot


def test_a_whole_buffer_store_writes_its_window():
    text = """
    %x = BUFFER i32[6] 0
    %w = SHRINK i32[3] %x ((2, 5))
    %v = CONST i32[3] (7, 8, 9)
    %d = MUL i32[3] %v %v
    %s = STORE void %w %d
    %x1 = AFTER i32[6] %x %s
    %out = SINK void %x1
    """
    (result,) = run(text)
    assert result.tolist() == [0, 0, 49, 64, 81, 0]


def test_new_ranges_and_buffers_take_ids_the_program_does_not_use():
    text = """
    %n = CONST i32 4
    %k = RANGE i32 %n 0
    %o = BUFFER i32[4] 0
    %i = INDEX i32 %o %k
    %st = STORE void %i %k
    %e = END void %st %k
    %o1 = AFTER i32[4] %o %e
    %a = CONST i32[4] (1, 2, 3, 4)
    %b = ADD i32[4] %a %a
    %out = SINK void %o1 %b
    """
    after = lowered(parse(text).sink)
    ranges = {u.arg for u in after.toposort() if u.op is Op.RANGE}
    slots = [u.arg for u in after.toposort() if u.op is Op.BUFFER]
    # the program's own loop keeps its id; the one rangeify makes over an output is parallel
    assert ranges == {0, (1, "PARALLEL")} and sorted(slots) == [0, 1]
    counter, doubled = evaluate(after)
    assert counter.tolist() == [0, 1, 2, 3] and doubled.tolist() == [2, 4, 6, 8]


def test_a_program_without_shapes_comes_back_unchanged():
    sink = parse("%a = CONST i32 2\n%b = ADD i32 %a %a\n%out = SINK void %b\n").sink
    assert rangeify(sink) is sink


def test_an_unlowered_call_is_an_internal_error():
    body = UOp(Op.STACK, Type(i32, (2,)), (UOp(Op.PARAM, Type(i32), (), 0),) * 2)
    call = UOp(Op.CALL, body.type, (body, UOp(Op.CONST, Type(i32), (), 3)))
    with pytest.raises(BackendError, match="inlined"):
        rangeify_graph(program(call))
    assert evaluate(lowered(program(call)))[0].tolist() == [3, 3]  # the pass inlines first


# --- every week 1-3 program, and random ones ---------------------------------------------------


@pytest.mark.slow
@settings(max_examples=100, deadline=None)
@given(programs(week=3))
def test_random_programs_print_the_same_after_rangeify(sink):
    # week 1's vector arithmetic among them; test_differential.py runs rangeify in the pipeline
    assert same_outputs(evaluate(lowered(sink)), evaluate(sink)), print_program(sink)


# --- random week-4 programs: the project's one generator, against its independent model ------


@pytest.mark.slow
@settings(max_examples=150, deadline=None)
@given(programs(week=4, approximate=False))
def test_random_shaped_programs_compute_what_the_model_computes(sink):
    # the model holds shaped values as tuples and folds REDUCE left to right in plain Python
    assert same_outputs(evaluate(lowered(sink)), model.run(sink)), print_program(sink)

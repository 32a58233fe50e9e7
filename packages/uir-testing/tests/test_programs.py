"""The random program generator: everything it draws verifies, and it draws every op of its weeks,
nested calls, and every kind of memory access."""

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings

from uir.core.bounds import bounds
from uir.core.dtypes import DTYPES
from uir.core.loops import ranges_inside
from uir.core.memory import Kind, kind
from uir.core.ops import ALU, MOVEMENT, Op
from uir.core.parse import Program
from uir.core.uop import UOp
from uir.core.verify import verify
from uir.testing import model
from uir.testing.programs import MAX_ELEMENTS, programs

ALL_DTYPES = tuple(d for d in DTYPES.values() if not d.is_void)
WEEK1_OPS = ALU | {Op.CONST, Op.PARAM, Op.CALL, Op.STACK, Op.INDEX, Op.SINK}
WEEK2_OPS = WEEK1_OPS | {Op.BUFFER, Op.LOCAL, Op.SHRINK, Op.LOAD, Op.STORE, Op.AFTER}
WEEK3_OPS = WEEK2_OPS | {Op.RANGE, Op.END}


def drawn(strategy, count: int) -> list[UOp]:
    """`count` programs drawn from `strategy`, the same ones every run (so that the coverage
    tests are not flaky)."""
    sinks = []

    @settings(
        max_examples=count,
        phases=[Phase.generate],  # no shrinking: we only look at what is drawn
        derandomize=True,
        database=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(strategy)
    def draw(sink):
        sinks.append(sink)

    draw()
    return sinks


def ops_of(sinks: list[UOp]) -> set[Op]:
    return {u.op for sink in sinks for u in sink.toposort()}


@pytest.mark.slow
@settings(max_examples=200)
@given(programs())
def test_every_drawn_week1_program_verifies(sink):
    assert sink.op is Op.SINK
    verify(Program(sink, {}))


@pytest.mark.slow
@settings(max_examples=200)
@given(programs(week=2, dtypes=ALL_DTYPES))
def test_every_drawn_week2_program_in_every_dtype_verifies(sink):
    verify(Program(sink, {}))


@pytest.mark.slow
@settings(max_examples=300)
@given(programs(week=3, dtypes=ALL_DTYPES))
def test_every_drawn_week3_program_in_every_dtype_verifies(sink):
    verify(Program(sink, {}))
    assert ops_of([sink]) <= WEEK3_OPS


def find_drawn(strategy, condition) -> UOp:
    """A program drawn from `strategy` that meets `condition`. hypothesis steers its search
    towards it, so a rare op is still found however the generator's weights change; a count of
    fixed draws missed one op after another as the generator grew."""
    return find(
        strategy,
        condition,
        settings=settings(
            max_examples=5000,
            phases=[Phase.generate],
            derandomize=True,
            database=None,
            suppress_health_check=list(HealthCheck),
        ),
    )


@pytest.mark.slow
@pytest.mark.parametrize("op", sorted(WEEK1_OPS, key=lambda op: op.name))
def test_the_generator_draws_every_week1_op(op):
    assert op in ops_of([find_drawn(programs(), lambda sink: op in ops_of([sink]))])


def test_the_generator_draws_nested_calls():
    def nested(sink: UOp) -> bool:
        return any(
            u.op is Op.CALL
            for call in sink.toposort()
            if call.op is Op.CALL
            for u in call.src[0].toposort(bodies=False)
        )

    assert nested(find_drawn(programs(), nested))


@pytest.mark.slow
def test_week2_programs_draw_every_memory_op_and_every_kind_of_access():
    sinks = drawn(programs(week=2), 500)
    assert WEEK2_OPS - WEEK1_OPS <= ops_of(sinks) <= WEEK2_OPS
    uops = [u for sink in sinks for u in sink.toposort()]
    places = [u for u in uops if u.op is Op.INDEX and u.src[0].op is not Op.STACK]
    assert any(len(u.src) == 3 for u in places)  # gated
    assert any(u.src[0].op is Op.SHRINK for u in places)  # through a window
    # a load of a version that a later store replaced
    replaced = {u.src[0] for u in uops if u.op is Op.AFTER}
    assert any(u.op is Op.LOAD and u.src[0].src[0] in replaced for u in uops)
    assert any(u.op is Op.BUFFER and u.src for u in uops)  # initialised from a CONST
    assert any(u.op is Op.BUFFER and not u.src for u in uops)  # zeroed
    assert any(u.op is Op.AFTER and len(u.src) > 2 for u in uops)  # after several stores
    outputs = {s.op for sink in sinks for s in sink.src}
    assert {Op.AFTER, Op.BUFFER, Op.SHRINK} <= outputs


@pytest.mark.slow
def test_without_approximate_ops_no_exp2_log2_or_sin_is_drawn():
    assert not ops_of(drawn(programs(week=2, approximate=False), 200)) & {Op.EXP2, Op.LOG2, Op.SIN}


@pytest.mark.slow
def test_the_generator_draws_in_every_dtype_it_is_given():
    values = {u.dtype for sink in drawn(programs(dtypes=ALL_DTYPES), 200) for u in sink.toposort()}
    assert set(ALL_DTYPES) <= values


# --- week 3: each kind of loop, found by hypothesis.find ---


def uops(sink: UOp) -> list[UOp]:
    return sink.toposort(bodies=False)


def nested(sink: UOp) -> bool:
    """Two ranges closed by one END, or an END closing an END (the inner loop first)."""
    return any(u.op is Op.END and (len(u.src) > 2 or u.src[0].op is Op.END) for u in uops(sink))


def triangular(sink: UOp) -> bool:
    """A RANGE whose end is computed from another RANGE's counter."""
    inside = ranges_inside(sink)
    return any(u.op is Op.RANGE and inside[u.src[0]] for u in uops(sink))


def accumulator(sink: UOp) -> bool:
    """An AFTER over an init STORE and a RANGE, a STORE in the loop writing that AFTER, and an
    AFTER over the END that closes the loop."""
    found = uops(sink)
    carried = [
        u for u in found if u.op is Op.AFTER and {s.op for s in u.src[1:]} == {Op.STORE, Op.RANGE}
    ]
    updates = [u for u in found if u.op is Op.STORE and u.src[0].src[0] in carried]
    return any(
        u.op is Op.AFTER and any(d.op is Op.END and d.src[0] in updates for d in u.src[1:])
        for u in found
    )


def carried_across_two_ranges(sink: UOp) -> bool:
    return any(
        u.op is Op.AFTER and sum(d.op is Op.RANGE for d in u.src[1:]) == 2 for u in uops(sink)
    )


def two_ends_of_one_loop(sink: UOp) -> bool:
    listed = [r for u in uops(sink) if u.op is Op.END for r in u.src[1:]]
    return len(listed) > len(set(listed))


def gated_in_loop(sink: UOp) -> bool:
    inside = ranges_inside(sink)
    return any(u.op is Op.INDEX and len(u.src) == 3 and inside[u] for u in uops(sink))


def later_iteration_wins(sink: UOp) -> bool:
    """A STORE in a loop of constant trip count, to a version from before the loop, ungated, at an
    index with fewer possible values than the trip count: two iterations must write one element."""
    inside = ranges_inside(sink)
    for u in uops(sink):
        place = u.src[0] if u.op is Op.STORE else None
        if place is None or len(place.src) == 3 or len(inside[u]) != 1 or inside[place.src[0]]:
            continue
        (rng,) = inside[u]
        low, high = bounds(place.src[1])
        if rng.src[0].op is Op.CONST and rng.src[0].arg > high - low + 1:
            return True
    return False


def zero_trip(sink: UOp) -> bool:
    return any(
        u.op is Op.RANGE and u.src[0].op is Op.CONST and u.src[0].arg <= 0 for u in uops(sink)
    )


def end_loaded(sink: UOp) -> bool:
    return any(
        u.op is Op.RANGE and any(s.op is Op.LOAD for s in u.src[0].toposort()) for u in uops(sink)
    )


@pytest.mark.parametrize(
    "feature",
    [
        nested,
        triangular,
        accumulator,
        carried_across_two_ranges,
        two_ends_of_one_loop,
        gated_in_loop,
        later_iteration_wins,
        zero_trip,
        end_loaded,
    ],
    ids=lambda f: f.__name__,
)
@pytest.mark.slow
def test_the_generator_draws_every_kind_of_loop(feature):
    sink = find_drawn(programs(week=3), feature)
    assert feature(sink)
    verify(Program(sink, {}))


@pytest.mark.slow
def test_week2_programs_have_no_loops():
    assert not ops_of(drawn(programs(week=2), 200)) & {Op.RANGE, Op.END}


# --- week 4: shaped values ---

WEEK4_OPS = WEEK3_OPS | {Op.REDUCE, Op.EXPAND, Op.STAGE}


@pytest.mark.slow
@settings(max_examples=300)
@given(programs(week=4, dtypes=ALL_DTYPES))
def test_every_drawn_week4_program_in_every_dtype_verifies(sink):
    verify(Program(sink, {}))
    assert ops_of([sink]) <= WEEK4_OPS


def shaped_alu(sink: UOp) -> bool:
    return any(u.op in ALU and u.type.shape for u in uops(sink))


def whole_load_of_window(sink: UOp) -> bool:
    return any(u.op is Op.LOAD and u.src[0].op is Op.SHRINK and u.type.shape for u in uops(sink))


def whole_store(sink: UOp) -> bool:
    return any(u.op is Op.STORE and u.src[0].type.shape for u in uops(sink))


def expand_of_one_element(sink: UOp) -> bool:
    return any(u.op is Op.EXPAND and u.src[0].type.shape == (1,) for u in uops(sink))


def shaped_call_body(sink: UOp) -> bool:
    return any(
        u.op is Op.CALL and any(b.op is Op.REDUCE for b in u.src[0].toposort(bodies=False))
        for u in uops(sink)
    )


def drawing(op: Op):
    def feature(sink: UOp) -> bool:
        return op in ops_of([sink])

    feature.__name__ = f"draws_{op.name.lower()}"
    return feature


@pytest.mark.slow
def test_week3_programs_have_no_shaped_arithmetic():
    sinks = drawn(programs(week=3), 200)
    assert not ops_of(sinks) & {Op.REDUCE, Op.EXPAND, Op.STAGE}
    assert not any(shaped_alu(sink) for sink in sinks)


@pytest.mark.slow
def test_the_generator_draws_an_effect_only_an_unused_call_argument_reaches():
    # Such an effect is dead (spec/uir-week1.md section 8.3): the differential tests then check
    # that the model, which skips unused arguments, and the interpreter, which inlines, agree.
    def dead_effect(sink: UOp) -> bool:
        live = model.reached(sink)
        return any(u.op in (Op.STORE, Op.END) and u not in live for u in uops(sink))

    assert dead_effect(find_drawn(programs(week=2), dead_effect))


# --- week 5: movement ops at any rank ---

WEEK5_OPS = WEEK4_OPS | MOVEMENT


@pytest.mark.slow
@settings(max_examples=300)
@given(programs(week=5, dtypes=ALL_DTYPES))
def test_every_drawn_week5_program_in_every_dtype_verifies(sink):
    verify(Program(sink, {}))
    assert ops_of([sink]) <= WEEK5_OPS
    shaped = [u.type for u in sink.toposort() if u.type.shape and kind(u) is Kind.VALUE]
    assert all(t.size <= MAX_ELEMENTS for t in shaped)


def movement_of_rank(rank: int):
    def feature(sink: UOp) -> bool:
        return any(u.op in MOVEMENT and len(u.type.shape) == rank for u in uops(sink))

    feature.__name__ = f"movement_at_rank_{rank}"
    return feature


def reduce_to_shaped(sink: UOp) -> bool:
    """A REDUCE that keeps some axes, over more than one axis or not the last one."""
    return any(
        u.op is Op.REDUCE and u.type.shape and u.arg[1] != (len(u.src[0].type.shape) - 1,)
        for u in uops(sink)
    )


def reduce_of_rank3_to_scalar(sink: UOp) -> bool:
    return any(
        u.op is Op.REDUCE and len(u.src[0].type.shape) >= 3 and not u.type.shape for u in uops(sink)
    )


def stack_of_values(sink: UOp) -> bool:
    return any(u.op is Op.STACK and u.src[0].type.shape for u in uops(sink))


def shrink_of_value(sink: UOp) -> bool:
    return any(u.op is Op.SHRINK and kind(u.src[0]) is Kind.VALUE for u in uops(sink))


def load_reshaped(sink: UOp) -> bool:
    return any(u.op is Op.RESHAPE and u.src[0].op is Op.LOAD for u in uops(sink))


def store_of_reshape(sink: UOp) -> bool:
    return any(
        u.op is Op.STORE and u.src[1].op is Op.RESHAPE and len(u.src[1].src[0].type.shape) > 1
        for u in uops(sink)
    )


def elementwise_on_moved(sink: UOp) -> bool:
    """An elementwise op of rank 2 or more with a movement op among its sources."""
    return any(
        u.op in ALU and len(u.type.shape) > 1 and any(s.op in MOVEMENT for s in u.src)
        for u in uops(sink)
    )


def movement_in_call_body(sink: UOp) -> bool:
    return any(
        u.op is Op.CALL and any(b.op in MOVEMENT for b in u.src[0].toposort(bodies=False))
        for u in uops(sink)
    )


WEEK4_FEATURES = [shaped_alu, whole_load_of_window, whole_store, expand_of_one_element]
WEEK4_FEATURES += [shaped_call_body] + [drawing(op) for op in (Op.REDUCE, Op.EXPAND, Op.STAGE)]
WEEK5_FEATURES = [movement_of_rank(rank) for rank in (1, 2, 3, 4, 5, 8)]
WEEK5_FEATURES += [reduce_to_shaped, reduce_of_rank3_to_scalar, stack_of_values, shrink_of_value]
WEEK5_FEATURES += [load_reshaped, store_of_reshape, elementwise_on_moved, movement_in_call_body]
WEEK5_FEATURES += [drawing(op) for op in sorted(MOVEMENT - {Op.SHRINK}, key=lambda op: op.name)]


@pytest.mark.slow
@pytest.mark.parametrize(
    ("week", "feature"),
    [(4, f) for f in WEEK4_FEATURES] + [(5, f) for f in WEEK5_FEATURES],
    ids=lambda v: f"week{v}" if isinstance(v, int) else v.__name__,
)
def test_the_generator_draws_every_kind_of_shaped_value(week, feature):
    sink = find_drawn(programs(week=week), feature)
    assert feature(sink)
    verify(Program(sink, {}))


@pytest.mark.slow
def test_week4_programs_stay_rank_1_without_movement():
    sinks = drawn(programs(week=4), 200)
    assert not ops_of(sinks) & (MOVEMENT - {Op.SHRINK, Op.EXPAND})
    assert all(len(u.type.shape) <= 1 for sink in sinks for u in sink.toposort())

"""The passes on loop programs: index expressions simplify with RANGE bounds, a STORE stays in the
loops its END lists even when its values no longer depend on them, and an expression the
simplifier makes loop-invariant is placed outside the loop (spec/uir-week3.md section 9)."""

from __future__ import annotations

from uir.core import parse, verify
from uir.core.dtypes import I32
from uir.core.interpret import evaluate
from uir.core.loops import ranges_inside
from uir.core.ops import Op
from uir.core.parse import Program
from uir.core.schedule import Block, loop_schedule
from uir.core.uop import UOp
from uir.rewrite.passes import fold, inline, simplify


def const(v: int) -> UOp:
    return UOp(Op.CONST, I32, (), v)


def optimized(text: str) -> UOp:
    program = parse(text, "test.uir")
    verify(program)
    sink = simplify(fold(inline(program.sink)))
    verify(Program(sink, {}))
    return sink


def outputs(sink: UOp) -> list[list[int]]:
    return [[int(v) for v in value] for value in evaluate(sink)]


i = UOp(Op.RANGE, I32, (const(3),), 0)
j = UOp(Op.RANGE, I32, (const(4),), 1)
flat = i.alu(Op.MUL, const(4)).alu(Op.ADD, j)  # i*4 + j, j in [0, 3]


def test_division_and_remainder_of_a_flattened_index_by_range_bounds():
    assert simplify(flat.alu(Op.IDIV, const(4))) is i
    assert simplify(flat.alu(Op.MOD, const(4))) is j


# o[(i*4 + j)/4] = i*10 + j/4 over i < 3, j < 4: each o[i] is written 4 times with i*10
ROW_OWNER = """
%o = BUFFER i32[3] 0
%three = CONST i32 3
%four = CONST i32 4
%ten = CONST i32 10
%i = RANGE i32 %three 0
%j = RANGE i32 %four 1
%i4 = MUL i32 %i %four
%f = ADD i32 %i4 %j
%row = IDIV i32 %f %four
%jq = IDIV i32 %j %four
%i10 = MUL i32 %i %ten
%v = ADD i32 %i10 %jq
%p = INDEX i32 %o %row
%s = STORE void %p %v
%e = END void %s %i %j
%o1 = AFTER i32[3] %o %e
%out = SINK void %o1
"""


def test_a_store_whose_index_and_value_lose_a_range_stays_in_its_loop():
    sink = optimized(ROW_OWNER)
    assert outputs(sink) == [[0, 10, 20]]
    store = next(u for u in sink.toposort() if u.op is Op.STORE)
    assert {r.arg for r in ranges_inside(sink)[store]} == {0, 1}  # still inside i and j
    index = store.src[0].src[1]
    assert index.op is Op.RANGE and index.arg == 0  # (i*4 + j)/4 became i


# o[i*0] = 7 in a loop of end 0: it runs no iteration, so o keeps its 5
ZERO_TRIP = """
%od = CONST i32[1] (5)
%o = BUFFER i32[1] %od 0
%z = CONST i32 0
%seven = CONST i32 7
%i = RANGE i32 %z 0
%at = MUL i32 %i %z
%p = INDEX i32 %o %at
%s = STORE void %p %seven
%e = END void %s %i
%o1 = AFTER i32[1] %o %e
%out = SINK void %o1
"""


def test_a_store_that_loses_its_zero_trip_loop_still_runs_no_iteration():
    assert outputs(optimized(ZERO_TRIP)) == [[5]]


# In each of 3 iterations of k: a[0] = 7 (through a[k*0]: inside k), v = a[0], a[0] = v + 1,
# o[k] = v. a[0] is 7 again at the start of every iteration, so o is 7 7 7 and a ends as 8. The
# first store reaches its loop only through the AFTER the other two read: no END lists it.
REWRITTEN_EACH_ITERATION = """
%a = BUFFER i32[1] 1
%o = BUFFER i32[3] 0
%z = CONST i32 0
%one = CONST i32 1
%seven = CONST i32 7
%three = CONST i32 3
%k = RANGE i32 %three 0
%kz = MUL i32 %k %z
%p = INDEX i32 %a %kz
%st1 = STORE void %p %seven
%ak = AFTER i32[1] %a %st1 %k
%q = INDEX i32 %ak %z
%v = LOAD i32 %q
%v1 = ADD i32 %v %one
%st3 = STORE void %q %v1
%e3 = END void %st3 %k
%pk = INDEX i32 %o %k
%st2 = STORE void %pk %v
%e = END void %st2 %k
%o1 = AFTER i32[3] %o %e
%a1 = AFTER i32[1] %a %e3
%out = SINK void %o1 %a1
"""


def test_a_store_no_end_lists_still_runs_in_every_iteration_of_its_loop():
    assert outputs(optimized(REWRITTEN_EACH_ITERATION)) == [[7, 7, 7], [8]]


# o[i][j] = x[0]*3 + (i*4 + j)/4 + j: x[0]*3 is the same in every iteration, and the division is
# i, the same in every iteration of j
INVARIANT = """
%xd = CONST i32[1] (2)
%x = BUFFER i32[1] %xd 0
%o = BUFFER i32[12] 1
%z = CONST i32 0
%three = CONST i32 3
%four = CONST i32 4
%x0 = INDEX i32 %x %z
%xv = LOAD i32 %x0
%i = RANGE i32 %three 0
%j = RANGE i32 %four 1
%scaled = MUL i32 %xv %three
%i4 = MUL i32 %i %four
%f = ADD i32 %i4 %j
%row = IDIV i32 %f %four
%a = ADD i32 %scaled %row
%v = ADD i32 %a %j
%p = INDEX i32 %o %f
%s = STORE void %p %v
%e = END void %s %i %j
%o1 = AFTER i32[12] %o %e
%out = SINK void %o1
"""


def _depth_of(block: Block, uop: UOp, depth: int = 0) -> int | None:
    for item in block.body:
        if item is uop:
            return depth
        if isinstance(item, Block):
            found = _depth_of(item, uop, depth + 1)
            if found is not None:
                return found
    return None


def test_loop_invariant_expressions_run_outside_the_loops_they_do_not_depend_on():
    sink = optimized(INVARIANT)
    assert outputs(sink) == [[6 + i + j for i in range(3) for j in range(4)]]
    top = loop_schedule(sink)
    scaled = next(u for u in sink.toposort() if u.op is Op.MUL and Op.LOAD in {s.op for s in u.src})
    assert _depth_of(top, scaled) == 0  # x[0]*3: once, before both loops
    i4 = next(u for u in sink.toposort() if u.op is Op.MUL and u.src[0].op is Op.RANGE)
    assert i4.src[0].arg == 0 and _depth_of(top, i4) == 1  # i*4: once per i, not per j
    assert all(u.op is not Op.IDIV for u in sink.toposort())  # (i*4 + j)/4 became i


def test_two_chained_stores_that_both_lose_their_loop_both_keep_it():
    # Both loops run once, so simplify turns each index `counter*5` into 0. Re-gating the first
    # store rebuilds the second (it writes the version after the first loop): the second must be
    # re-gated as the pass left it, or it runs outside the loop its END lists. b[0] = 1, then 2.
    text = """
%b = BUFFER i32[2] 0
%one = CONST i32 1
%i = RANGE i32 %one 0
%five = CONST i32 5
%i5 = MUL i32 %i %five
%p = INDEX i32 %b %i5
%s1 = STORE void %p %one
%e1 = END void %s1 %i
%b1 = AFTER i32[2] %b %e1
%j = RANGE i32 %one 1
%j5 = MUL i32 %j %five
%q = INDEX i32 %b1 %j5
%two = CONST i32 2
%s2 = STORE void %q %two
%e2 = END void %s2 %j
%b2 = AFTER i32[2] %b1 %e2
%out = SINK void %b2
"""
    program = parse(text)
    verify(program)
    optimized = simplify(program.sink)
    verify(Program(optimized, {}))
    assert [list(v) for v in evaluate(optimized)] == [[2, 0]]

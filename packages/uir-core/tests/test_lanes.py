"""Loops run in numpy lanes (uir.core.lanes): which loops may, and that the lanes give the bits
one iteration at a time gives. Every suite program is compared both ways in
packages/uir-rewrite/tests/test_suites.py; these are the cases worked out by hand."""

from __future__ import annotations

import numpy as np

from uir.core import parse, verify
from uir.core.interpret import lane_plans, load
from uir.core.schedule import loop_schedule

# acc = 100, then acc = acc - x[i] (or x[i] - acc) for x = 1, 2, 4, 8: SUB does not commute,
# so a fold that took its operands the other way round, or out of order, prints another number.
FOLD = """
%xd = CONST f32[4] (1, 2, 4, 8)
%x = BUFFER f32[4] %xd 0
%acc = LOCAL f32[1] 0
%z = CONST i32 0
%n = CONST i32 4
%start = CONST f32 100
%a0 = INDEX f32 %acc %z
%init = STORE void %a0 %start
%i = RANGE i32 %n 0
%accI = AFTER f32[1] %acc %init %i
%ai = INDEX f32 %accI %z
%old = LOAD f32 %ai
%px = INDEX f32 %x %i
%vx = LOAD f32 %px
%new = SUB f32 OPERANDS
%upd = STORE void %ai %new
%e = END void %upd %i
%done = AFTER f32[1] %acc %e
%r = INDEX f32 %done %z
%v = LOAD f32 %r
%out = SINK void %v
"""

# prev = L[0]; sum += prev; L[0] = x[i]: each iteration reads what the one before wrote into L,
# so L is no iteration's own scratch and the loop runs one iteration at a time. sum = 5 + 1 + 2,
# and L ends holding x[2].
PREVIOUS = """
%xd = CONST f32[3] (1, 2, 4)
%x = BUFFER f32[3] %xd 0
%l = LOCAL f32[1] 0
%acc = LOCAL f32[1] 1
%z = CONST i32 0
%n = CONST i32 3
%zero = CONST f32 0
%five = CONST f32 5
%l0 = INDEX f32 %l %z
%linit = STORE void %l0 %five
%a0 = INDEX f32 %acc %z
%init = STORE void %a0 %zero
%i = RANGE i32 %n 0
%lI = AFTER f32[1] %l %linit %i
%li = INDEX f32 %lI %z
%prev = LOAD f32 %li
%accI = AFTER f32[1] %acc %init %i
%ai = INDEX f32 %accI %z
%old = LOAD f32 %ai
%sum = ADD f32 %old %prev
%upd = STORE void %ai %sum
%px = INDEX f32 %x %i
%vx = LOAD f32 %px
%put = STORE void %li %vx
%e = END void %upd %i
%e2 = END void %put %i
%done = AFTER f32[1] %acc %e
%r = INDEX f32 %done %z
%v = LOAD f32 %r
%last = AFTER f32[1] %l %e2
%lr = INDEX f32 %last %z
%lv = LOAD f32 %lr
%out = SINK void %v %lv
"""


def _both_ways(text: str) -> tuple[list[np.ndarray], list[np.ndarray], int]:
    program = parse(text, "test.uir")
    verify(program)
    plans = lane_plans(loop_schedule(program.sink))
    lanes = load(program.sink, lanes=True).run()[0]
    one_by_one = load(program.sink, lanes=False).run()[0]
    return lanes, one_by_one, len(plans)


def test_a_fold_of_a_non_commuting_op_keeps_its_operand_order_and_iteration_order():
    # ((((100 - 1) - 2) - 4) - 8) = 85; and 8 - (4 - (2 - (1 - 100))) = 8 - (4 - (2 + 99)) = 105
    for operands, expected in (("%old %vx", 85.0), ("%vx %old", 105.0)):
        lanes, one_by_one, planned = _both_ways(FOLD.replace("OPERANDS", operands))
        assert planned == 1  # the loop runs in lanes: its only store is the fold's
        assert lanes[0].item() == one_by_one[0].item() == expected


def test_a_local_read_before_an_iteration_writes_it_keeps_the_loop_one_iteration_at_a_time():
    lanes, one_by_one, planned = _both_ways(PREVIOUS)
    assert planned == 0
    assert lanes[0].item() == one_by_one[0].item() == 5.0 + 1.0 + 2.0
    assert lanes[1].item() == one_by_one[1].item() == 4.0


def test_loops_run_in_lanes_unless_told_not_to():
    # the default (None) plans lanes as `lanes=True` does: `uir run` runs the big programs so
    program = parse(FOLD.replace("OPERANDS", "%old %vx"), "test.uir")
    verify(program)
    assert [load(program.sink, lanes=on).in_lanes for on in (None, True, False)] == [1, 1, 0]

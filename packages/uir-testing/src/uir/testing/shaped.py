"""Week-4 programs over N elements that tests and benchmarks share, as `.uir` text templates
(`.format(n=N)`): the benchmark measures the very programs the tests check. And the check that a
lowered program is what rangeify promises."""

from __future__ import annotations

from uir.core.memory import Kind, kind
from uir.core.ops import WEEK_INTRODUCES, Op
from uir.core.parse import Program
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.core.verify import verify


def check_lowered(after: UOp) -> UOp:
    """`after`, checked to be a week-3 program with no shaped value left to lower (rangeify's
    promise, spec/rangeify.md): it verifies, and only week 1's small vectors stay shaped."""
    verify(Program(after, {}))
    for uop in after.toposort():
        if uop.op in WEEK_INTRODUCES[4] | WEEK_INTRODUCES[5]:
            raise AssertionError(f"a {uop.op} is left:\n{print_program(after)}")
        if uop.type.shape and kind(uop) is Kind.VALUE and uop.op not in (Op.CONST, Op.STACK):
            raise AssertionError(f"a shaped {uop.op} is left:\n{print_program(after)}")
        if uop.op is Op.STACK and uop.src[0].type.shape:
            raise AssertionError(f"a STACK of shaped values is left:\n{print_program(after)}")
    return after


A_TIMES_B_PLUS_C = """
%a = BUFFER f32[{n}] 0
%b = BUFFER f32[{n}] 1
%c = BUFFER f32[{n}] 2
%la = LOAD f32[{n}] %a
%lb = LOAD f32[{n}] %b
%lc = LOAD f32[{n}] %c
%m = MUL f32[{n}] %la %lb
%s = ADD f32[{n}] %m %lc
%out = SINK void %s
"""

SUM = """
%a = BUFFER f32[{n}] 0
%la = LOAD f32[{n}] %a
%s = REDUCE f32 %la (ADD, (0))
%out = SINK void %s
"""

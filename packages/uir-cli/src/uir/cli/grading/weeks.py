"""The course week a program needs, judged by what it uses (spec/grading.md section 13).

An op belongs to the week that introduces it (`uir.core.ops.WEEK_INTRODUCES`), but some uses of
an op arrive later than the op: SHRINK of memory is week 2 and SHRINK of a value week 5, REDUCE
over one axis week 4 and over several week 5. `USES` is the one table of those later uses, each
with the week that brings it and what it is applied to (or its rank).

Later uses count only in a test that expects its program to run. A test that expects a rejection
may misuse an op in a way a later week gives a meaning to: the suites reject a SHRINK of a value
in week 2, a whole-buffer LOAD inside a loop in week 3, and use a rank-2 CONST or a REDUCE over
repeated axes to break week 4's axis rules (spec/uir-week4.md section 1). Ops count in every test.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from uir.core.loops import is_fast, range_arg
from uir.core.memory import Kind, kind
from uir.core.ops import ALU, FAST, Op, week_of
from uir.core.uop import UOp


@dataclass(frozen=True)
class Use:
    """A use of an op that a later week brings than the op itself."""

    week: int
    what: str
    applies: Callable[[UOp], bool]


def _reduce_axes(uop: UOp) -> int:
    arg = uop.arg  # the program need not verify: count only a well-formed (OP, (axes...)[, FAST])
    return (
        len(arg[1])
        if isinstance(arg, tuple) and len(arg) in (2, 3) and isinstance(arg[1], tuple)
        else 0
    )


def _fast(uop: UOp) -> bool:
    arg = uop.arg
    return isinstance(arg, tuple) and len(arg) == 3 and arg[2] == FAST


def _parallel(uop: UOp) -> bool:
    read = range_arg(uop.arg)
    return read is not None and read[1]


USES: tuple[Use, ...] = (
    Use(4, "an elementwise op on shaped values", lambda u: u.op in ALU and bool(u.type.shape)),
    Use(
        4,
        "a whole-buffer LOAD or STORE",
        lambda u: u.op in (Op.LOAD, Op.STORE) and bool(u.src) and kind(u.src[0]) is Kind.MEMORY,
    ),
    Use(5, "a SHRINK of a value", lambda u: u.op is Op.SHRINK and kind(u) is Kind.VALUE),
    Use(
        5,
        "a STACK of shaped values",
        lambda u: u.op is Op.STACK and any(s.type.shape for s in u.src),
    ),
    Use(5, "a REDUCE over several axes", lambda u: u.op is Op.REDUCE and _reduce_axes(u) > 1),
    Use(5, "a shape of rank 2 or more", lambda u: len(u.type.shape) >= 2),
    Use(7, "a PARALLEL RANGE", lambda u: u.op is Op.RANGE and _parallel(u)),
    Use(8, "a FAST REDUCE", lambda u: u.op is Op.REDUCE and _fast(u)),
    Use(8, "a FAST RANGE", lambda u: u.op is Op.RANGE and is_fast(u)),
)


@dataclass(frozen=True)
class Feature:
    """One thing a program uses, as a rejection names it, and the week that brings it: an op, or
    a later use of one (`USES`)."""

    what: str
    week: int
    is_op: bool


def features(uops: Iterable[UOp]) -> frozenset[Feature]:
    """What the UOps use: each op, and each later use of an op that `USES` lists."""
    found = set()
    for uop in uops:
        week = week_of(uop.op)
        found.add(Feature(f"{uop.op.name}, an op of week {week}", week, is_op=True))
        for use in USES:
            if use.week > week and use.applies(uop):
                found.add(Feature(f"{use.what}, of week {use.week}", use.week, is_op=False))
    return frozenset(found)


def later_than(found: Iterable[Feature], week: int, rejected: bool) -> list[Feature]:
    """The features of a program that week `week` does not allow, sorted by their names.
    `rejected`: the test expects the program to be rejected (exit 3)."""
    return sorted(
        (f for f in found if f.week > week and (f.is_op or not rejected)),
        key=lambda f: f.what,
    )

"""Loops (uir.md section 7): the ranges each UOp is inside, the nest they form, and its rules.

`ranges_inside` is the one analysis of "inside" that the verifier and the schedule share: for
each UOp, in one walk from the sources up, the RANGEs it reaches through its sources without
passing an END that lists them. The ENDs then fix the nest: an END
listing `r1 .. rn` puts `r1` directly inside the ranges the END is still inside, and each `rk`
inside `r(k-1)`. Every END of one RANGE must agree, so each RANGE has one place in one tree of
loops, and each UOp is placed in the loop of the deepest range it is inside (`LoopNest.path`;
hoisting: a value runs at the shallowest depth its ranges allow). The schedule's placement
(uir.core.schedule) puts each statement there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .errors import VerifyError
from .memory import version_of
from .ops import FAST, PARALLEL, Op
from .uop import UOp

LineOf = Callable[[UOp], "int | None"]
Ranges = frozenset[UOp]
_NONE: Ranges = frozenset()


def range_arg(arg: Any) -> tuple[int, bool] | None:
    """A RANGE's argument read as `(id, parallel)`: `id` is a sequential loop, `(id, PARALLEL)`
    one whose iterations are independent (spec/uir-week7.md), `(id, FAST)` a sequential loop
    folding a FAST REDUCE (spec/uir-week8.md section 1.1). None when it is none of these forms or
    the id is not an int >= 0."""
    if isinstance(arg, tuple) and len(arg) == 2 and arg[1] == FAST:
        arg = arg[0]  # a FAST range is a sequential loop: it reads as its id alone
    parallel = isinstance(arg, tuple) and len(arg) == 2 and arg[1] == PARALLEL
    rid = arg[0] if parallel else arg
    if not isinstance(rid, int) or isinstance(rid, bool) or rid < 0:
        return None
    return rid, parallel


def range_id(rng: UOp) -> int:
    """The id of a verified RANGE."""
    read = range_arg(rng.arg)
    assert read is not None, f"not a verified RANGE argument: {rng.arg!r}"
    return read[0]


def is_parallel(rng: UOp) -> bool:
    """Whether a verified RANGE is marked PARALLEL: its iterations may run in any order, or at
    once (spec/uir-week7.md)."""
    read = range_arg(rng.arg)
    return read is not None and read[1]


def is_fast(rng: UOp) -> bool:
    """Whether a RANGE is marked FAST: it runs in order, but the accumulator it carries folds a
    FAST REDUCE, so a backend may split its iterations over threads and combine the partial
    folds in any grouping (spec/uir-week8.md section 1.1)."""
    arg = rng.arg
    return isinstance(arg, tuple) and len(arg) == 2 and arg[1] == FAST


def carried_across(ref: UOp) -> frozenset[UOp]:
    """The RANGEs listed by the loop-carried AFTERs in the version chain of a memory reference,
    place or STORE: the loops across which the version it names is carried."""
    found: set[UOp] = set()
    version = version_of(ref)
    while version.op is Op.AFTER:
        found.update(d for d in version.src[1:] if d.op is Op.RANGE)
        version = version_of(version.src[0])
    return frozenset(found)


def ranges_inside(sink: UOp) -> dict[UOp, Ranges]:
    """Each UOp under `sink` -> the RANGEs it is inside, in an order with sources first.

    A RANGE is inside itself and the ranges its `end` is inside; an END is inside the ranges of
    its sources minus the ones it lists; every other UOp is inside the ranges of its sources. A
    CALL body is inside nothing (it holds no RANGE, and a call's arguments are not its sources'
    business): its UOps are recorded too, with no ranges. Each UOp only changes what its
    sources give, so one walk from the sources up computes them all.
    """
    inside: dict[UOp, Ranges] = {}
    for uop in sink.toposort():
        src = uop.src[1:] if uop.op is Op.CALL else uop.src  # a body is not inside the call
        found = _NONE
        for s in src:
            if inside[s]:  # most sources are inside nothing: skip building a new set
                found = found | inside[s] if found else inside[s]
        if uop.op is Op.RANGE:
            found = found | {uop}
        elif uop.op is Op.END:
            found = found - set(uop.src[1:])
        inside[uop] = found
    return inside


@dataclass
class LoopNest:
    """Where every UOp of a program runs: the loops around it, outermost first."""

    inside: dict[UOp, Ranges]
    # Each RANGE -> the ranges around its loop, outermost first.
    around: dict[UOp, tuple[UOp, ...]]

    # Each UOp -> its path, once asked: the scheduler asks again for each UOp's every user.
    _paths: dict[UOp, tuple[UOp, ...]] = field(default_factory=dict, repr=False, compare=False)

    def path(self, uop: UOp) -> tuple[UOp, ...]:
        """The loops `uop` is placed in, outermost first: those of its deepest range."""
        found = self._paths.get(uop)
        if found is not None:
            return found
        ranges = self.inside[uop]
        if not ranges:
            found = ()
        else:
            deepest = max(ranges, key=lambda r: len(self.around[r]))
            found = (*self.around[deepest], deepest)
        self._paths[uop] = found
        return found

    def outermost(self, ranges: Ranges) -> UOp:
        """The outermost loop among `ranges` (the one an error message names)."""
        return min(ranges, key=lambda r: len(self.around[r]))


def naming(line_of: LineOf) -> Callable[[UOp], str]:
    """How loop error messages name a statement: `the RANGE on line 4`."""

    def at(uop: UOp) -> str:
        line = line_of(uop)
        return f"the {uop.op} on line {line}" if line is not None else f"a {uop.op}"

    return at


class _Rules:
    def __init__(self, line_of: LineOf) -> None:
        self.line_of = line_of
        self.at = naming(line_of)

    def fail(self, uop: UOp, message: str) -> VerifyError:
        return VerifyError(message, self.line_of(uop))


def loop_nest(sink: UOp, line_of: LineOf, inside: dict[UOp, Ranges] | None = None) -> LoopNest:
    """The loop nest of a program that passed the per-op checks; raises VerifyError for every
    loop rule of uir.md section 7 that is not a memory rule (those live in schedule.py).
    `inside` is `ranges_inside(sink)` where the caller has it already."""
    r = _Rules(line_of)
    if inside is None:
        inside = ranges_inside(sink)
    if not any(inside.values()):
        return LoopNest(inside, {})  # loop-free: nothing to nest (and no END: ENDs need ranges)
    around: dict[UOp, tuple[UOp, ...]] = {}
    placed_by: dict[UOp, UOp] = {}  # each RANGE -> the first END that placed it
    order = sink.toposort(bodies=False)
    # Each RANGE -> the position in `order` of the last UOp inside it. Past that position no UOp
    # is inside the range, so a closed range is forgotten there: without this, every UOp after n
    # sequential loops would carry all n closed ranges, n^2 in all.
    last: dict[UOp, int] = {}
    for i, uop in enumerate(order):
        for rng in inside[uop]:
            last[rng] = i
    # Each UOp -> the ranges of the ENDs it depends on, as far as a later UOp may be inside them.
    closed: dict[UOp, Ranges] = {}
    for i, uop in enumerate(order):
        src = uop.src[1:] if uop.op is Op.CALL else uop.src
        done = _NONE
        for s in src:
            if closed[s]:
                done = done | closed[s] if done else closed[s]
        reopened = done & inside[uop]
        if reopened:
            again = next(iter(reopened))
            raise r.fail(
                uop,
                f"this statement is inside the loop of {r.at(again)} but depends on an END that "
                "closes that loop: a second loop over the same values needs a RANGE with "
                "another id",
            )
        if uop.op is Op.END:
            _check_end(r, uop, inside)
            done = done | set(uop.src[1:])
        if done and any(last[rng] <= i for rng in done):
            done = frozenset(rng for rng in done if last[rng] > i)
        closed[uop] = done
    for s in sink.src:
        if inside[s]:
            outer = min(inside[s], key=lambda x: len(inside[x]))
            raise r.fail(
                sink,
                f"this SINK source is inside the loop of {r.at(outer)}: close the loop with an "
                "END and SINK an AFTER that waits for that END",
            )
    # Placed from the SINK inwards: the ENDs around an END come after it in source order.
    for uop in reversed(order):
        if uop.op is Op.END:
            _place(r, uop, inside, around, placed_by)
    nest = LoopNest(inside, around)
    for uop, ranges in inside.items():
        path = nest.path(uop)
        if not ranges <= set(path):
            a, b = sorted(ranges - set(path), key=id)[0], path[-1]
            raise r.fail(
                uop,
                f"this statement is inside {r.at(a)} and {r.at(b)}, but no END nests one of "
                "those loops inside the other",
            )
    return nest


def _check_end(r: _Rules, end: UOp, inside: dict[UOp, Ranges]) -> None:
    """An END lists ranges its effect is inside, outer before inner, and leaves no
    range open whose `end` is inside one it closes."""
    effect, listed = end.src[0], end.src[1:]
    for k, rng in enumerate(listed):
        if rng not in inside[effect]:
            raise r.fail(
                end,
                f"the effect of this END is not inside {r.at(rng)}: an END closes only loops its "
                "effect runs in",
            )
        for later in listed[k + 1 :]:
            if later in inside[rng]:
                raise r.fail(
                    end,
                    f"this END lists {r.at(rng)} before {r.at(later)}, whose end is inside it: "
                    "list the outer loop first",
                )
    for still in inside[end]:
        for rng in listed:
            if rng in inside[still]:
                raise r.fail(
                    end,
                    f"this END closes {r.at(rng)} but not {r.at(still)}, whose end is inside it: "
                    "close both, the outer first",
                )


def _place(
    r: _Rules,
    end: UOp,
    inside: dict[UOp, Ranges],
    around: dict[UOp, tuple[UOp, ...]],
    placed_by: dict[UOp, UOp],
) -> None:
    """Give each range the END lists its place in the nest; every END of a range must agree."""
    # Every range the END is still inside is closed by an END nearer the SINK, placed already.
    chain = tuple(sorted(inside[end], key=lambda x: len(around[x])))
    for depth, rng in enumerate(chain):
        if around[rng] != chain[:depth]:
            raise r.fail(
                end,
                f"this END runs inside {r.at(rng)}, which other ENDs put inside other loops than "
                "the ones around this END: every END of one loop must sit in the same loops",
            )
    for rng in end.src[1:]:
        known = around.get(rng)
        if known is None:
            around[rng] = chain
            placed_by[rng] = end
        elif known != chain:
            other = placed_by[rng]
            opposite = [x for x in chain if rng in around.get(x, ())]
            opposite += [x for x in end.src[1:] if x in known and x not in chain]
            if opposite:
                raise r.fail(
                    end,
                    f"this END and {r.at(other)} nest {r.at(rng)} and {r.at(opposite[0])} "
                    "in opposite orders",
                )
            raise r.fail(
                end,
                f"this END closes {r.at(rng)} inside other loops than {r.at(other)} does: "
                "every END of one loop must sit in the same loops",
            )
        chain = (*chain, rng)


def end_stores(end: UOp, inside: dict[UOp, Ranges]) -> list[UOp]:
    """The STOREs an END waits for: its effect's, and every store inside the loops it closes
    that the END reaches (through inner ENDs too), in no particular order. `inside` is
    `ranges_inside` of a graph holding the END (computed once per program, not once per END)."""
    listed = set(end.src[1:])
    stores: list[UOp] = []
    seen: set[UOp] = set()
    effect = end.src[0]
    stack = [effect]
    while stack:
        uop = stack.pop()
        if uop in seen or (uop is not effect and not inside[uop] & listed):
            continue
        seen.add(uop)
        if uop.op is Op.STORE:
            stores.append(uop)
        stack.extend(uop.src[1:] if uop.op is Op.CALL else uop.src)  # bodies run no effects
    return stores

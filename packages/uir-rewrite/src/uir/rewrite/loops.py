"""Rewrites keep every STORE in the loops it ran in (spec/uir-week3.md section 9).

An effect is inside a RANGE only through data dependence (uir.md section 7), and a value rewrite
may remove that dependence: `i*5` with `i` in [0, 0] folds to 0, `(i*4 + j)/4` becomes `i`. The
rewrite is right about the value, but a STORE that no longer reaches `j` runs once instead of
once per iteration of `j`: outside the loop its END lists (the program is rejected), or, when it
reaches its END through another store, silently outside a loop whose other effects it interleaved
with. `in_loops` runs a pass and then gives each STORE back every range the STORE it stands for
was inside, as a gate: `r < end` holds in every iteration of `r`, so the STORE writes what it
wrote, as often. Only STOREs need this: a value or LOAD that loses a range is the same in every
iteration (a LOAD inside a loop that reads what the loop writes reaches the range through a
loop-carried AFTER), so it may run once, before the loop: that is hoisting.
"""

from __future__ import annotations

from collections.abc import Callable

from uir.core.dtypes import BOOL
from uir.core.engine import Origins, graph_rewrite
from uir.core.loops import ranges_inside
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.uop import UOp

Rewrite = Callable[[UOp, Origins], UOp]
"""A pass's rewrite: the new graph, each UOp it builds recorded in the origins it is given."""

Lost = dict[UOp, tuple[UOp, ...]]
"""Each STORE of the rewritten graph -> the RANGEs it must be put back inside."""


def _lost_ranges(before: UOp, after: UOp, origins: Origins) -> Lost:
    was_inside = ranges_inside(before)
    if not any(was_inside.values()):
        return {}  # no loops: nothing to lose
    now_inside = ranges_inside(after)
    order = {u: n for n, u in enumerate(after.toposort(bodies=False))}
    # A RANGE whose end was rewritten is a new UOp: the old one's place is taken by it.
    renamed = {origins.get(u, u): u for u in order if u.op is Op.RANGE}
    lost: Lost = {}
    for store in (u for u in order if u.op is Op.STORE):
        ranges = {renamed.get(r, r) for r in was_inside.get(origins.get(store, store), ())}
        missing = ranges - now_inside[store]
        if missing:
            lost[store] = tuple(sorted(missing, key=lambda r: order.get(r, -1)))
    return lost


def _gated(store: UOp, ctx: Lost) -> UOp | None:
    ranges = ctx.get(store)
    if not ranges:
        return None
    place, value = store.src
    gate = place.src[2] if len(place.src) > 2 else None
    if gate is not None and gate.op is Op.CONST and gate.arg is True:
        gate = None  # a gate a pass folded: replaced, not stacked up
    for r in ranges:
        running = UOp(Op.CMPLT, BOOL, (r, r.src[0]))  # true in every iteration of r
        gate = running if gate is None else UOp(Op.AND, BOOL, (gate, running))
    return store.replace(src=(place.replace(src=(*place.src[:2], gate)), value))


_gate_rules = Rules([(P(Op.STORE, name="store"), _gated)])


def in_loops(rewrite: Rewrite, sink: UOp) -> UOp:
    """`rewrite(sink)` with every STORE put back inside the ranges it was inside (a gate
    `r < end` for each it lost); the very same object when the rewrite changed nothing."""
    origins: Origins = {}
    new = rewrite(sink, origins)
    if new is sink:
        return sink
    lost = _lost_ranges(sink, new, origins)
    # Top-down: each STORE is looked up as the pass left it, before re-gating an earlier STORE
    # rebuilds the ones that read through its AFTER (bottom-up, those would be new objects).
    return graph_rewrite(new, _gate_rules, lost, bottom_up=False) if lost else new

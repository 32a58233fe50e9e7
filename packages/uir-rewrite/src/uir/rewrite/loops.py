"""Rewrites keep every effect in the loops its END closes (spec/uir-week3.md section 9).

An effect is inside a RANGE only through data dependence (uir.md section 7), and a value rewrite
may remove that dependence: `i*5` with `i` in [0, 0] folds to 0, `(i*4 + j)/4` becomes `i`. The
rewrite is right about the value, but a STORE that no longer reaches `j` would leave the loop its
END lists. `keep_loops` runs after every pass and gives each such STORE its loop back as a gate:
`r < end` holds in every iteration of `r`, so the STORE writes exactly what it wrote before, and
it is inside `r` again. Only effects need this: a value or LOAD that loses a range is the same in
every iteration (a load inside a loop reads a version not written there, or it would reach the
range through a loop-carried AFTER), so it runs once, before the loop: that is hoisting.
"""

from __future__ import annotations

from uir.core.dtypes import BOOL
from uir.core.engine import graph_rewrite
from uir.core.loops import ranges_inside
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.uop import UOp

Lost = dict[UOp, tuple[UOp, ...]]
"""Each STORE -> the RANGEs that an END around it lists but that it is no longer inside."""


def _store_under(end: UOp) -> UOp:
    """The STORE an END closes loops around (through inner ENDs)."""
    effect = end.src[0]
    while effect.op is Op.END:
        effect = effect.src[0]
    return effect


def lost_ranges(sink: UOp) -> Lost:
    """The STOREs that an END lists a range for that the STORE is not inside."""
    inside = ranges_inside(sink)
    lost: Lost = {}
    for end in (u for u in sink.toposort(bodies=False) if u.op is Op.END):
        store = _store_under(end)
        known = lost.get(store, ())
        missing = tuple(r for r in end.src[1:] if r not in inside[store] and r not in known)
        if missing:
            lost[store] = (*known, *missing)
    return lost


def _in_loops(store: UOp, ctx: Lost) -> UOp | None:
    ranges = ctx.get(store)
    if not ranges:
        return None
    place, value = store.src
    gate = place.src[2] if len(place.src) > 2 else None
    if gate is not None and gate.op is Op.CONST and gate.arg is True:
        gate = None  # the gate a previous pass folded: replaced, not stacked up
    for r in ranges:
        running = UOp(Op.CMPLT, BOOL, (r, r.src[0]))  # true in every iteration of r
        gate = running if gate is None else UOp(Op.AND, BOOL, (gate, running))
    return store.replace(src=(place.replace(src=(*place.src[:2], gate)), value))


_keep_rules = Rules([(P(Op.STORE, name="store"), _in_loops)])


def keep_loops(sink: UOp) -> UOp:
    """`sink` with every STORE put back inside the ranges its ENDs list (a gate `r < end` each);
    the same object when none left one."""
    lost = lost_ranges(sink)
    return graph_rewrite(sink, _keep_rules, lost) if lost else sink

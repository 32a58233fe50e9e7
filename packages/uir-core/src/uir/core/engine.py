"""The graph rewrite engine: apply a rule table over a graph to a fixpoint, without recursion.

Every lowering and every optimization is a `Rules` table run by `graph_rewrite`. The walk visits
each UOp once and gives it a final form; the rules are tried on a UOp at one of two moments:

- bottom-up (the default): after its sources reached their final forms, so a rule always sees
  sources that are already rewritten (simplification: `x*1 + 0` becomes `x` in one walk);
- top-down: before its sources are visited, so a rule sees the UOp as it was written and can
  act on a whole subtree at once (CALL inlining substitutes a body still holding its inner CALLs).

Either way, what a rule builds is rewritten in turn, and a UOp rebuilt on rewritten sources is
tried again, until no rule applies anywhere: that is the fixpoint. Results are memoized per UOp,
so a DAG with shared subexpressions is rewritten once per distinct UOp, and the walk uses an
explicit stack, so a graph 100,000 UOps deep needs no deep Python recursion. When no rule applies
anywhere, nothing is rebuilt and the root comes back as the very same object.

A replacement may not contain the UOp it replaces (its final form would depend on itself): such
rules, and rules that rewrite in a circle, raise BackendError instead of looping.

CALL bodies are sources like any other, so rules apply inside them too. That is sound for every
rule that holds for all values of its variables: a PARAM has the full range of its dtype.
"""

from __future__ import annotations

import operator
from typing import Any

from .errors import BackendError
from .pattern import Rules
from .trace import current_trace
from .uop import UOp

Origins = dict[UOp, UOp]
"""A UOp built by a rewrite -> the UOp of the input graph it stands for (to report lines)."""

# The states of a UOp on the work stack.
_VISIT = 0  # first meeting: try the rules (top-down), then rewrite its sources
_REBUILD = 1  # sources done: rebuild on them, or try the rules (bottom-up)
_ADOPT = 2  # replaced: its final form is the replacement's, once that is done


def graph_rewrite(
    root: UOp,
    rules: Rules,
    ctx: Any = None,
    *,
    bottom_up: bool = True,
    change_types: bool = False,
    origins: Origins | None = None,
) -> UOp:
    """`root` with `rules` applied everywhere until no rule applies.

    ctx:          passed to every rewrite that declares a `ctx` parameter; rules may read and
                  change it (an allocator, a table of facts), in the order the walk meets UOps
    bottom_up:    try the rules on a UOp after its sources (True) or before them (False)
    change_types: let a rule replace a UOp by one of another type, as a lowering does when a
                  value changes form; off, a type change raises, since a pass that keeps the
                  program's meaning keeps every type
    origins:      when given, each UOp the walk builds in place of another is recorded there
                  with the input UOp it stands for (rules record what they build inside)

    While a trace is active (uir.core.trace.tracing), each rule that fires is recorded in it.

    Raises BackendError when a rule changes a type it may not, or when the rules loop.
    """
    return _Walk(rules, ctx, bottom_up, change_types, origins).run(root)


class _Walk:
    def __init__(
        self, rules: Rules, ctx: Any, bottom_up: bool, change_types: bool, origins: Origins | None
    ) -> None:
        self.rules, self.ctx = rules, ctx
        self.bottom_up, self.change_types, self.origins = bottom_up, change_types, origins
        self.done: dict[UOp, UOp] = {}  # a UOp -> its final form
        self.active: set[UOp] = set()  # UOps on the stack, to catch rules that loop
        self.stack: list[tuple[UOp, int, UOp | None]] = []
        self.trace = current_trace()  # looked up once per walk: untraced walks pay nothing

    def run(self, root: UOp) -> UOp:
        done, stack, active, bottom_up = self.done, self.stack, self.active, self.bottom_up
        stack.append((root, _VISIT, None))
        while stack:
            uop, state, replacement = stack.pop()
            if state == _VISIT:
                if uop in done:
                    continue
                if uop in active:
                    raise BackendError(f"rewrite rules loop on {uop}: its rewriting needs itself")
                active.add(uop)
                if not bottom_up and self._try_rules(uop):
                    continue
                if not uop.src:  # a leaf: what _REBUILD would do at once, without the trip
                    if not bottom_up or not self._try_rules(uop):
                        done[uop] = uop
                        active.discard(uop)
                    continue
                stack.append((uop, _REBUILD, None))
                stack.extend((s, _VISIT, None) for s in reversed(uop.src) if s not in done)
            elif state == _REBUILD:
                src = tuple(map(done.__getitem__, uop.src))
                if not all(map(operator.is_, src, uop.src)):
                    # The rebuilt UOp is new: the rules get to see it, as they see what they build.
                    self._replace(uop, UOp(uop.op, uop.type, src, uop.arg))
                elif not bottom_up or not self._try_rules(uop):
                    done[uop] = uop  # _finish, inline: this is the walk's commonest step
                    active.discard(uop)
            else:
                assert replacement is not None
                self._finish(uop, done[replacement])
        return done[root]

    def _try_rules(self, uop: UOp) -> bool:
        """Replace `uop` by what the first rule that applies gives; False when none applies."""
        new = self.rules.rewrite(uop, self.ctx, self.trace)
        if new is None:
            return False
        if new.type != uop.type and not self.change_types:
            raise BackendError(f"a rewrite rule changed {uop} into {new}: types differ")
        self._replace(uop, new)
        return True

    def _replace(self, uop: UOp, new: UOp) -> None:
        """Give `uop` the final form of `new`, rewriting `new` first if it is not done yet."""
        if self.origins is not None:
            self.origins.setdefault(new, self.origins.get(uop, uop))
        if self.trace is not None:
            self.trace.origins.setdefault(new, self.trace.origins.get(uop, uop))
        if new in self.done:
            self._finish(uop, self.done[new])
        else:
            self.stack.append((uop, _ADOPT, new))
            self.stack.append((new, _VISIT, None))

    def _finish(self, uop: UOp, final: UOp) -> None:
        self.done[uop] = final
        self.active.discard(uop)

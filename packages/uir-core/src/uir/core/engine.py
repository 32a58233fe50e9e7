"""The graph rewrite engine: apply a rule table bottom-up to a fixpoint, without recursion.

Every UOp is rewritten after its sources (bottom-up), so a rule always sees sources that are
already in their final form. When a rule replaces a UOp, the replacement is rewritten in turn
(its new sources first) until no rule applies to it: that is the fixpoint. Results are memoized
per UOp, so a DAG with shared subexpressions is rewritten once per distinct UOp, and the walk uses
an explicit stack, so a graph 100,000 UOps deep needs no deep Python recursion. When no rule
applies anywhere, hash-consing rebuilds every UOp as itself and the root comes back unchanged.

CALL bodies are sources like any other, so rules apply inside them too. That is sound for every
rule that holds for all values of its variables: a PARAM has the full range of its dtype.
"""

from __future__ import annotations

import operator

from .errors import BackendError
from .pattern import Rules
from .uop import UOp

# The states of a UOp on the work stack.
_VISIT = 0  # rewrite its sources first
_REBUILD = 1  # sources done: rebuild on them and try the rules
_ADOPT = 2  # a rule replaced it: take the replacement's final form once that is done


def graph_rewrite(root: UOp, rules: Rules) -> UOp:
    """`root` with `rules` applied everywhere, bottom-up, until no rule applies.

    Raises BackendError when a rule changes a UOp's type or when the rules rewrite in a circle
    (a UOp whose rewriting needs its own result).
    """
    done: dict[UOp, UOp] = {}  # a UOp -> its final form
    active: set[UOp] = set()  # UOps on the stack, to catch rules that rewrite in a circle
    stack: list[tuple[UOp, int, UOp | None]] = [(root, _VISIT, None)]
    while stack:
        uop, state, replacement = stack.pop()
        if state == _VISIT:
            if uop in done:
                continue
            if uop in active:
                raise BackendError(f"rewrite rules loop on {uop}: it rewrites to itself")
            active.add(uop)
            stack.append((uop, _REBUILD, None))
            stack.extend((s, _VISIT, None) for s in reversed(uop.src) if s not in done)
        elif state == _REBUILD:
            src = tuple(done[s] for s in uop.src)
            rebuilt = uop if all(map(operator.is_, src, uop.src)) else uop.replace(src=src)
            if rebuilt is not uop and rebuilt in done:
                _finish(done, active, uop, done[rebuilt])
                continue
            new = rules.rewrite(rebuilt)
            if new is None:
                done[rebuilt] = rebuilt
                _finish(done, active, uop, rebuilt)
                continue
            if new.type != rebuilt.type:
                raise BackendError(f"a rewrite rule changed {rebuilt} into {new}: types differ")
            if new in done:
                _finish(done, active, uop, done[new])
                continue
            stack.append((uop, _ADOPT, new))
            stack.append((new, _VISIT, None))
        else:
            assert replacement is not None
            _finish(done, active, uop, done[replacement])
    return done[root]


def _finish(done: dict[UOp, UOp], active: set[UOp], uop: UOp, final: UOp) -> None:
    done[uop] = final
    active.discard(uop)

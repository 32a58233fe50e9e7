"""CALL inlining (uir.md section 5): each CALL becomes its body with the arguments substituted.

This is the one inliner: the verifier's bounds proofs, the interpreter, the backends and the
`inline` pass all use `inline_calls`. It is a single rule run top-down by the rewrite engine, so a
CALL is replaced before its operands are visited: `substitute` meets the body as written, inner
CALLs included, and never enters a nested body (that body is closed and its PARAMs belong to the
nested call, even where it reuses the slot numbers, and so the very PARAM UOps, of the outer one).
What the substitution builds is then rewritten in turn, which inlines the inner calls and the
arguments. A program without CALL comes back as the very same object, nothing rebuilt.
"""

from __future__ import annotations

from collections.abc import Sequence

from .engine import Origins, graph_rewrite
from .ops import Op
from .pattern import P, Rules
from .uop import UOp


def substitute(body: UOp, args: Sequence[UOp], origins: Origins | None = None) -> UOp:
    """`body` with every PARAM of slot i replaced by `args[i]`, outside nested CALL bodies."""
    new: dict[UOp, UOp] = {}
    for uop in body.toposort(bodies=False):
        if uop.op is Op.PARAM:
            new[uop] = args[uop.arg]
            continue
        if uop.op is Op.CALL:
            src = (uop.src[0], *(new[s] for s in uop.src[1:]))
        else:
            src = tuple(new[s] for s in uop.src)
        new[uop] = rebuilt = uop.replace(src=src)
        if origins is not None:
            origins.setdefault(rebuilt, origins.get(uop, uop))
    return new[body]


def _inline(call: UOp, ctx: Origins | None) -> UOp:
    body, *args = call.src
    return substitute(body, args, ctx)


inline_rules = Rules([(P(Op.CALL, name="call"), _inline)], names=["inline a CALL"])
"""The inlining rule; its context is the Origins table to fill, or None."""


def inline_calls(root: UOp, origins: Origins | None = None) -> UOp:
    """The graph under `root` with every CALL replaced by its substituted body, recursively.

    `origins`, when given, maps each UOp built here to the original UOp it is a copy of, so that
    errors found on the inlined graph can name the line the user wrote.
    """
    return graph_rewrite(root, inline_rules, origins, bottom_up=False, origins=origins)

"""CALL substitution (uir.md section 5): a body with its PARAMs replaced by a call's arguments.

Both walks are iterative, and substitution never enters a nested CALL's body: that body is closed
and its PARAMs belong to the nested call.
"""

from __future__ import annotations

from collections.abc import Sequence

from .ops import Op
from .uop import UOp

Origins = dict[UOp, UOp]


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


def inline_calls(root: UOp, origins: Origins | None = None) -> UOp:
    """The graph under `root` with every CALL replaced by its substituted body, recursively.

    `origins`, when given, maps each UOp built here to the original UOp it is a copy of, so that
    errors found on the inlined graph can name the line the user wrote.
    """
    done: dict[UOp, UOp] = {}
    stack = [root]
    while stack:
        uop = stack[-1]
        if uop in done:
            stack.pop()
            continue
        inputs = uop.src[1:] if uop.op is Op.CALL else uop.src
        waiting = [s for s in inputs if s not in done]
        if waiting:
            stack.extend(waiting)
            continue
        if uop.op is Op.CALL:
            body = substitute(uop.src[0], [done[s] for s in inputs], origins)
            if body not in done:
                stack.append(body)  # the substituted body may hold nested CALLs: inline it too
                continue
            done[uop] = done[body]
        else:
            done[uop] = rebuilt = uop.replace(src=tuple(done[s] for s in uop.src))
            if origins is not None:
                origins.setdefault(rebuilt, origins.get(uop, uop))
        stack.pop()
    return done[root]

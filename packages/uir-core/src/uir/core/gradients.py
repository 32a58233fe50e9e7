"""What GRAD differentiates through (uir.md section 10.4, spec/uir-week9.md section 2).

`%g = GRAD T %loss %x` sees `loss` as a function of `x` through value edges only: the sources of
value ops whose result is a float and which carry a derivative. Every other UOp is a constant to
it: a LOAD that is not `x` itself (no gradient flows through memory), a comparison, an int op, a
cast to or from a non-float, TRUNC, BITCAST. This module is that definition, shared by the
verifier (which rejects a path from `x` to `loss` through a REDUCE MUL) and by the package
`uir-autodiff`, whose pass follows the same edges back from the loss. A CALL is differentiated as
if inlined: both read the inlined graph (uir.core.calls.inline_calls), where no CALL is left.
"""

from __future__ import annotations

from .memory import Kind, kind
from .ops import MOVEMENT, Op
from .uop import UOp, sources_first

# Value ops whose float result passes a derivative to every source.
_THROUGH_ALL = frozenset(
    {
        Op.ADD,
        Op.SUB,
        Op.MUL,
        Op.FDIV,
        Op.NEG,
        Op.MAX,
        Op.MIN,
        Op.SQRT,
        Op.RECIP,
        Op.EXP2,
        Op.LOG2,
        Op.SIN,
        Op.EXPAND,
        Op.REDUCE,
        Op.STAGE,
        Op.STACK,
        Op.GRAD,  # a GRAD inside a loss is differentiated in turn, through its loss and x
    }
    | MOVEMENT
)


def grad_sources(uop: UOp) -> tuple[UOp, ...]:
    """The sources of `uop` a gradient flows into (uir.md 10.4): none for a non-float result,
    a constant, memory or a LOAD; the branches of a WHERE (not its condition); the vector of an
    INDEX of a value (not the index); the source of a CAST from a float; every source of the
    float arithmetic, movement ops, REDUCE, STAGE, STACK and GRAD."""
    if not uop.dtype.is_float:
        return ()
    op = uop.op
    if op in _THROUGH_ALL:
        if op is Op.SHRINK and kind(uop) is not Kind.VALUE:
            return ()  # a window of memory
        return uop.src
    if op is Op.WHERE:
        return uop.src[1:]
    if op is Op.CAST:
        return uop.src if uop.src[0].dtype.is_float else ()
    if op is Op.INDEX and kind(uop) is Kind.VALUE:
        return uop.src[:1]
    return ()


def grad_order(loss: UOp) -> list[UOp]:
    """Every UOp `loss` reaches through `grad_sources`, sources before users."""
    return sources_first(loss, grad_sources)


def on_path(loss: UOp, x: UOp, order: list[UOp] | None = None) -> list[UOp]:
    """The UOps on a path from `x` to `loss` through `grad_sources` (both ends included when
    `loss` depends on `x`), sources first; `order` is `grad_order(loss)` when already known."""
    found: list[UOp] = []
    depends: set[UOp] = set()
    for uop in grad_order(loss) if order is None else order:
        if uop is x or any(s in depends for s in grad_sources(uop)):
            depends.add(uop)
            found.append(uop)
    return found

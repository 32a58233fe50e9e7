"""The `autodiff` pass (uir.md section 10.4): every GRAD rewritten into the ops computing it, for
every backend (a required pass, uir.core.plugins.Pass), registered through the `uir_passes` hook.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from uir.core.calls import inline_calls
from uir.core.engine import graph_rewrite
from uir.core.ops import Op
from uir.core.pattern import P, Rules
from uir.core.plugins import Pass, hookimpl
from uir.core.uop import UOp

from .backward import backward


@dataclass
class _Losses:
    """What the GRAD rule shares: each loss's targets, as written, so that one backward walk
    serves every GRAD of a loss, and the walks made so far."""

    targets: dict[UOp, set[UOp]]
    # inlined loss -> (the inlined targets walked for, their gradients)
    walked: dict[UOp, tuple[frozenset[UOp], dict[UOp, UOp]]] = field(default_factory=dict)
    holds_grad: dict[UOp, bool] = field(default_factory=dict)
    placeholders: int = 0


def _replace(root: UOp, old: UOp, new: UOp) -> UOp:
    """`root` (a graph without CALLs) with `old` replaced by `new`."""
    done: dict[UOp, UOp] = {old: new}
    for uop in root.toposort():
        if uop not in done:
            done[uop] = uop.replace(src=tuple(done[s] for s in uop.src))
    return done[root]


def _gradient(grad: UOp, ctx: _Losses) -> UOp:
    """GRAD loss x, met as written (the rule runs top-down): the gradient of the inlined loss
    with respect to the inlined x (a CALL is differentiated as if inlined), zero where the loss
    does not depend on x. What it returns is rewritten in turn, so a GRAD inside x is too."""
    loss, x = grad.src
    holds = ctx.holds_grad.get(loss)
    if holds is None:
        holds = ctx.holds_grad[loss] = any(u.op is Op.GRAD for u in loss.toposort())
    flat_loss, flat_x = inline_calls(loss), inline_calls(x)
    if holds:
        return _higher(flat_loss, flat_x, ctx)
    done = ctx.walked.get(flat_loss)
    if done is None or flat_x not in done[0]:
        targets = {inline_calls(t) for t in ctx.targets.get(loss, ())} | {flat_x}
        if done is not None:
            targets |= done[0]
        done = ctx.walked[flat_loss] = (frozenset(targets), backward(flat_loss, targets))
    found = done[1].get(flat_x)
    return x.const_like(0.0) if found is None else found


def _higher(loss: UOp, x: UOp, ctx: _Losses) -> UOp:
    """The gradient of a loss holding GRADs (a higher derivative), both without CALLs.

    The inner GRADs become backward graphs holding constants of their own (the seed 1.0, the
    halves of a tie, ln 2), and a CONST x equal to one of them would be the very same UOp
    (hash-consing). So x is first replaced by a placeholder no program holds (a PARAM of a
    negative slot), the inner GRADs rewritten, the result differentiated with respect to the
    placeholder and x put back."""
    ctx.placeholders += 1
    hole = UOp(Op.PARAM, x.type, (), -ctx.placeholders)
    inner = graph_rewrite(_replace(loss, x, hole), GRAD_RULES, ctx, bottom_up=False)
    found = backward(inner, {hole}).get(hole)
    return x.const_like(0.0) if found is None else _replace(found, hole, x)


GRAD_RULES = Rules([(P(Op.GRAD, name="grad"), _gradient)], names=["GRAD by reverse mode"])


def differentiate(sink: UOp) -> UOp:
    """`sink` with every GRAD replaced by its gradient; the very same object when it has none."""
    grads = [uop for uop in sink.toposort() if uop.op is Op.GRAD]
    if not grads:
        return sink
    targets: dict[UOp, set[UOp]] = {}
    for grad in grads:
        targets.setdefault(grad.src[0], set()).add(grad.src[1])
    return graph_rewrite(sink, GRAD_RULES, _Losses(targets), bottom_up=False)


PASSES = (
    Pass(
        "autodiff",
        "inline",
        "rewrite every GRAD into the ops computing the gradient (reverse mode)",
        differentiate,
        required=True,  # no backend runs GRAD: the interpreter needs this pass as C does
    ),
)


@hookimpl
def uir_passes() -> Iterable[Pass]:
    return PASSES

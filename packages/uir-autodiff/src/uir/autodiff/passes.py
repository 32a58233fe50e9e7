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


def _gradient(grad: UOp, ctx: _Losses) -> UOp:
    """GRAD loss x: the gradient of the inlined loss with respect to the inlined x (a CALL is
    differentiated as if inlined), zero where the loss does not depend on x. The engine runs
    bottom-up, so a GRAD inside the loss has been rewritten already (higher derivatives)."""
    loss, x = grad.src
    flat_loss, flat_x = inline_calls(loss), inline_calls(x)
    done = ctx.walked.get(flat_loss)
    if done is None or flat_x not in done[0]:
        targets = {inline_calls(t) for t in ctx.targets.get(loss, ())} | {flat_x}
        if done is not None:
            targets |= done[0]
        done = ctx.walked[flat_loss] = (frozenset(targets), backward(flat_loss, targets))
    found = done[1].get(flat_x)
    return x.const_like(0.0) if found is None else found


GRAD_RULES = Rules([(P(Op.GRAD, name="grad"), _gradient)], names=["GRAD by reverse mode"])


def differentiate(sink: UOp) -> UOp:
    """`sink` with every GRAD replaced by its gradient; the very same object when it has none."""
    grads = [uop for uop in sink.toposort() if uop.op is Op.GRAD]
    if not grads:
        return sink
    targets: dict[UOp, set[UOp]] = {}
    for grad in grads:
        targets.setdefault(grad.src[0], set()).add(grad.src[1])
    return graph_rewrite(sink, GRAD_RULES, _Losses(targets))


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

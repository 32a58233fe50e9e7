"""The walk from a loss that sums what each value receives (reverse mode, as tinygrad's
`compute_gradient`): one backward graph per loss, shared by every GRAD of that loss."""

from __future__ import annotations

from collections.abc import Iterable

from uir.core.gradients import grad_order, grad_sources
from uir.core.ops import Op
from uir.core.uop import UOp

from .rules import GRADIENT


def backward(loss: UOp, targets: Iterable[UOp]) -> dict[UOp, UOp]:
    """The gradient of the rank-0 float `loss` with respect to every UOp on a path from one of
    `targets` to it (uir.core.gradients: value edges only; `loss` without CALLs).

    The UOps are visited users first; each sends its gradient to its sources through its rule
    (rules.GRADIENT), and a UOp used several times receives the sum of what its users send, in
    the order they are visited. Only the UOps that depend on a target are walked, so the adjoint
    of a UOp is the same whichever targets are asked for: GRADs of one loss asked separately
    build (hash-consed) the very same backward graph. A target the loss does not reach is left
    out of the result.
    """
    order = grad_order(loss)
    wanted = set(targets)
    depends: set[UOp] = set()
    for uop in order:
        if uop in wanted or any(s in depends for s in grad_sources(uop)):
            depends.add(uop)
    grads: dict[UOp, UOp] = {}
    if loss in depends:
        grads[loss] = loss.const_like(1.0)
    for uop in reversed(order):
        g = grads.get(uop)
        if g is None or (uop in wanted and not any(s in depends for s in grad_sources(uop))):
            continue  # nothing flows in, or a target that depends on no other target
        sent = GRADIENT.rewrite(uop, g)
        if sent is None:
            continue
        for src, part in zip(uop.src, sent, strict=True):
            if part is None or src not in depends:
                continue
            earlier = grads.get(src)
            grads[src] = part if earlier is None else earlier.alu(Op.ADD, part)
    return grads

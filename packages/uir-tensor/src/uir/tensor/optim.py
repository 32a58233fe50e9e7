"""Optimizers: `step()` assigns each parameter its updated value (Tensor.assign), so the next
realize runs forward, backward and update as one program. The learning rate and the step count
live in buffers, so changing the rate does not change the graph (no recompile)."""

from __future__ import annotations

import math
from collections.abc import Sequence

from .tensor import Tensor, TensorError


class Optimizer:
    def __init__(self, params: Sequence[Tensor], lr: float) -> None:
        self.params = list(params)
        self._lr = Tensor.input(())
        self.lr = lr

    @property
    def lr(self) -> float:
        return self._lr_value

    @lr.setter
    def lr(self, value: float) -> None:
        self._lr_value = value
        self._lr.write(value)

    def grads(self) -> list[Tensor]:
        missing = [i for i, p in enumerate(self.params) if p.grad is None]
        if missing:
            raise TensorError(
                f"step: parameters {missing} have no gradient: call loss.backward() first"
            )
        return [p.grad for p in self.params]  # type: ignore[misc]


class SGD(Optimizer):
    """p <- p - lr * g, or with momentum: b <- mu b + g, p <- p - lr * b."""

    def __init__(self, params: Sequence[Tensor], lr: float, momentum: float = 0.0) -> None:
        super().__init__(params, lr)
        self.momentum = momentum
        self.bufs = [Tensor.input(p.shape) for p in self.params] if momentum else []

    def step(self) -> None:
        for i, (p, g) in enumerate(zip(self.params, self.grads(), strict=True)):
            if self.momentum:
                b = self.bufs[i] * self.momentum + g
                self.bufs[i].assign(b)
                g = b
            p.assign(p - self._lr * g)


class AdamW(Optimizer):
    """torch.optim.AdamW: decoupled weight decay, bias-corrected first and second moments."""

    def __init__(
        self,
        params: Sequence[Tensor],
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.0,
    ) -> None:
        super().__init__(params, lr)
        self.betas, self.eps, self.weight_decay = betas, eps, weight_decay
        self.m = [Tensor.input(p.shape) for p in self.params]
        self.v = [Tensor.input(p.shape) for p in self.params]
        self.t = Tensor.input(())

    def step(self) -> None:
        b1, b2 = self.betas
        t = self.t + 1.0
        self.t.assign(t)
        # 1 - beta^t, with beta^t = 2^(t log2 beta)
        c1 = 1.0 - (t * math.log2(b1))._unary_exp2()
        c2 = 1.0 - (t * math.log2(b2))._unary_exp2()
        lr = self._lr
        for p, g, m, v in zip(self.params, self.grads(), self.m, self.v, strict=True):
            m1 = m * b1 + g * (1.0 - b1)
            v1 = v * b2 + g * g * (1.0 - b2)
            m.assign(m1)
            v.assign(v1)
            update = (m1 / c1) / ((v1 / c2).sqrt() + self.eps)
            decayed = p * (1.0 - lr * self.weight_decay) if self.weight_decay else p
            p.assign(decayed - lr * update)

"""Random differentiable programs of weeks 4 and 5 in f64, for the gradient tests (issue 23).

`differentiable(rng)` builds, from a `random.Random`, a rank-0 f64 loss of one to three inputs:
each input a whole-buffer LOAD of a global BUFFER (slot i), RESHAPEd to a random shape, so that a
test can run the loss again on perturbed inputs (`Compiled.run(inputs)`) for finite differences
without rebuilding it. The steps are the ops GRAD differentiates: elementwise arithmetic (SQRT,
LOG2, RECIP and FDIV kept to positive arguments by `v*v + 1`), MAX and MIN, WHERE on a
comparison, a CAST through f32 and back, EXPAND, REDUCE ADD, MAX and MIN over any axes, every
movement op, STACK, INDEX of a vector, STAGE. Kinks (MAX, MIN, REDUCE MAX, a WHERE's switch) are
left in: a test excludes the inputs near one. `strategy()` wraps the builder for hypothesis.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

from uir.core.dtypes import I32, Type, f32, f64
from uir.core.ops import Op
from uir.core.uop import UOp

MAX_ELEMENTS = 24


@dataclass(frozen=True)
class Differentiable:
    """A loss of `inputs` (LOADs of the BUFFERs of slots 0..k-1, initially `values`)."""

    loss: UOp
    inputs: tuple[UOp, ...]
    values: tuple[np.ndarray, ...]
    casts: bool  # whether a CAST through f32 rounds along the way (finite differences widen)

    def forward(self) -> UOp:
        """The program printing the loss."""
        return UOp.sink(self.loss)

    def with_grads(self) -> UOp:
        """The program printing the loss, then its gradient with respect to each input."""
        grads = [UOp(Op.GRAD, x.type, (self.loss, x)) for x in self.inputs]
        return UOp.sink(self.loss, *grads)


def _shape_of(rng: random.Random, size: int) -> tuple[int, ...]:
    """A random shape of rank 1 to 3 holding `size` elements."""
    dims = []
    rest = size
    for _ in range(rng.randint(0, 2)):
        factors = [d for d in range(2, rest + 1) if rest % d == 0]
        if not factors:
            break
        d = rng.choice(factors)
        dims.append(d)
        rest //= d
    dims.append(rest)
    rng.shuffle(dims)
    return tuple(dims)


class _Builder:
    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.pool: list[UOp] = []
        self.casts = False

    def pick(self) -> UOp:
        return self.rng.choice(self.pool[-6:] if self.rng.random() < 0.7 else self.pool)

    def like(self, x: UOp) -> UOp:
        """A pool value of x's type, or one made of a pool value (its sum, broadcast)."""
        same = [v for v in self.pool if v.type == x.type and v is not x]
        if same and self.rng.random() < 0.8:
            return self.rng.choice(same)
        other = self.pick()
        total = other.reduce(Op.ADD, range(len(other.type.shape))) if other.type.shape else other
        return total.expand(x.type.shape) if x.type.shape else total

    def one(self, x: UOp) -> UOp:
        return x.const_like(1.0)

    def positive(self, x: UOp) -> UOp:
        """x*x + 1: a smooth argument for SQRT, LOG2, RECIP and a divisor."""
        return x.alu(Op.MUL, x).alu(Op.ADD, self.one(x))

    # --- steps ---------------------------------------------------------------------------

    def unary(self) -> UOp:
        x = self.pick()
        kind = self.rng.choice(["NEG", "SIN", "EXP2", "SQRT", "LOG2", "RECIP", "STAGE"])
        if kind == "NEG":
            return x.alu(Op.NEG)
        if kind == "SIN":
            return x.alu(Op.SIN)
        if kind == "EXP2":
            return x.alu(Op.SIN).alu(Op.EXP2)  # bounded, so that chains stay finite
        if kind == "STAGE":
            return x.stage()
        op = {"SQRT": Op.SQRT, "LOG2": Op.LOG2, "RECIP": Op.RECIP}[kind]
        return self.positive(x).alu(op)

    def binary(self) -> UOp:
        x = self.pick()
        y = self.like(x)
        op = self.rng.choice([Op.ADD, Op.SUB, Op.MUL, Op.MAX, Op.MIN, Op.FDIV])
        if op is Op.FDIV:
            return x.alu(Op.FDIV, self.positive(y))
        return x.alu(op, y)

    def where(self) -> UOp:
        x = self.pick()
        a, b, c = self.like(x), self.like(x), self.like(x)
        return x.alu(Op.CMPLT, a).where(b, c)

    def cast(self) -> UOp:
        self.casts = True
        return self.pick().cast(f32).cast(f64)

    def reduce(self) -> UOp:
        x = self.pick()
        rank = len(x.type.shape)
        if not rank:
            return x.expand((self.rng.randint(2, 3),))
        axes = sorted(self.rng.sample(range(rank), self.rng.randint(1, rank)))
        return x.reduce(self.rng.choice([Op.ADD, Op.ADD, Op.MAX, Op.MIN]), axes)

    def expand(self) -> UOp:
        x = self.pick()
        shape = x.type.shape
        if not shape:
            return x.expand((self.rng.randint(2, 4),))
        if x.type.size * 2 > MAX_ELEMENTS or len(shape) >= 4:
            return x
        if self.rng.random() < 0.5:
            return x.expand((2, *shape))
        at = self.rng.randrange(len(shape) + 1)
        ones = (*shape[:at], 1, *shape[at:])
        return x.reshape(ones).expand((*shape[:at], 2, *shape[at:]))

    def movement(self) -> UOp:
        x = self.pick()
        shape = x.type.shape
        if not shape:
            return x.expand((2,))
        kind = self.rng.choice(["RESHAPE", "PERMUTE", "PAD", "SHRINK", "FLIP"])
        rank = len(shape)
        if kind == "RESHAPE":
            return x.reshape(_shape_of(self.rng, x.type.size))
        if kind == "PERMUTE":
            order = list(range(rank))
            self.rng.shuffle(order)
            return x.permute(order)
        if kind == "FLIP":
            return x.flip(sorted(self.rng.sample(range(rank), self.rng.randint(1, rank))))
        if kind == "PAD":
            if x.type.size * 3 > MAX_ELEMENTS:
                return x
            return x.pad([(self.rng.randint(0, 1), self.rng.randint(0, 1)) for _ in shape])
        windows = []
        for n in shape:
            begin = self.rng.randrange(n)
            windows.append((begin, self.rng.randint(begin + 1, n)))
        return x.shrink(windows)

    def stack(self) -> UOp:
        x = self.pick()
        if x.type.size * 2 > MAX_ELEMENTS or len(x.type.shape) >= 4:
            return x
        return UOp.stack(x, self.like(x))

    def index(self) -> UOp:
        x = self.pick()
        if len(x.type.shape) != 1:
            return x
        return x.index(UOp.const(I32, self.rng.randrange(x.type.shape[0])))

    STEPS: tuple[Callable[[_Builder], UOp], ...] = (
        unary,
        unary,
        binary,
        binary,
        binary,
        where,
        cast,
        reduce,
        expand,
        movement,
        movement,
        stack,
        index,
    )

    def loss(self) -> UOp:
        """The sum of the last value and a few others, each summed to a scalar."""
        parts = [self.pool[-1], *self.rng.sample(self.pool, min(2, len(self.pool)))]
        total = None
        for v in parts:
            s = v.reduce(Op.ADD, range(len(v.type.shape))) if v.type.shape else v
            if self.rng.random() < 0.5:
                s = s.alu(Op.MUL, s)
            total = s if total is None else total.alu(Op.ADD, s)
        assert total is not None
        return total


def differentiable(rng: random.Random, steps: int | None = None) -> Differentiable:
    """A random loss of one to three f64 inputs (see the module's docstring)."""
    b = _Builder(rng)
    inputs, values = [], []
    for slot in range(rng.randint(1, 3)):
        size = rng.randint(1, 8)
        contents = np.array([rng.uniform(-2.0, 2.0) for _ in range(size)])
        init = UOp.const(Type(f64, (size,)), tuple(float(v) for v in contents))
        buffer = UOp(Op.BUFFER, init.type, (init,), slot)
        x = buffer.load()
        inputs.append(x)
        values.append(contents)
        shape = _shape_of(rng, size)
        b.pool.append(x.reshape(shape) if shape != (size,) else x)
    for _ in range(rng.randint(2, 8) if steps is None else steps):
        b.pool.append(rng.choice(_Builder.STEPS)(b))
    loss = b.loss()
    assert loss.type == Type(f64)
    return Differentiable(loss, tuple(inputs), tuple(values), b.casts)


def strategy() -> st.SearchStrategy[Differentiable]:
    """`differentiable` for hypothesis (a derandomized profile replays the same programs)."""
    return st.randoms(use_true_random=False).map(differentiable)

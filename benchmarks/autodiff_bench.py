"""What GRAD costs: the backward graph's size against the forward graph's, and the time of the
autodiff pass (uir.autodiff.passes.differentiate), on an MLP, a 2-layer transformer block and a
forward program of 10,000 ops.

Run: uv run python benchmarks/autodiff_bench.py [OPS]
Sizes count the UOps reachable from the SINK: `forward` prints the loss only, `with grads` prints
the loss and its gradient with respect to every parameter after the pass, `backward` is the
difference (the UOps the pass added). Times are CPU seconds, best of 3; nothing here asserts a
time. Every program is verified after the pass.

Measured on the course's 2-core machine (shared): MLP 54 forward UOps, 47 added (0.87x), 1.4 ms;
2-block transformer 232 and 300 (1.29x), 8.7 ms; the 10,000-op chain 10,005 and 30,007 (3.00x),
376 ms (100,000 ops: 3.00x, 5.1 s). The MLP and transformer add less than a chain per op: their
shaped ops are few UOps each, and hash-consing shares what the gradients of several parameters
have in common.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable

from uir.autodiff.passes import differentiate
from uir.core.dtypes import Type, f32
from uir.core.ops import Op
from uir.core.parse import Program
from uir.core.uop import UOp
from uir.core.verify import verify


class Params:
    """Parameters in global buffers, each a whole LOAD (what GRAD is taken of), reshaped."""

    def __init__(self) -> None:
        self.loads: list[UOp] = []

    def __call__(self, *shape: int) -> UOp:
        size = math.prod(shape)
        init = tuple(((i * 7 + len(self.loads) * 3) % 11 - 5) / 8 for i in range(size))
        buffer = UOp(Op.BUFFER, Type(f32, (size,)), (UOp.const(Type(f32, (size,)), init),),
                     len(self.loads))  # fmt: skip
        load = buffer.load()
        self.loads.append(load)
        return load.reshape(shape) if len(shape) > 1 else load


def full(shape: tuple[int, ...], value: float) -> UOp:
    return UOp.const(Type(f32, shape), value)


def matmul(a: UOp, b: UOp) -> UOp:
    """[..., M, K] @ [K, N] as RESHAPE, EXPAND, MUL and REDUCE ADD (week 5)."""
    *lead, m, k = a.type.shape
    _, n = b.type.shape
    big = (*lead, m, k, n)
    ae = a.reshape((*lead, m, k, 1)).expand(big)
    be = b.reshape((1,) * len(lead) + (1, k, n)).expand(big)
    return ae.alu(Op.MUL, be).reduce(Op.ADD, (len(big) - 2,))


def rows(x: UOp, op: Op) -> UOp:
    """REDUCE over the last axis, broadcast back."""
    shape = x.type.shape
    r = x.reduce(op, (len(shape) - 1,))
    return r.reshape((*shape[:-1], 1)).expand(shape)


def softmax(x: UOp) -> UOp:
    z = x.alu(Op.SUB, rows(x, Op.MAX))
    e = z.alu(Op.MUL, full(z.type.shape, 1.4426950216293335)).alu(Op.EXP2)
    return e.alu(Op.FDIV, rows(e, Op.ADD))


def layer_norm(x: UOp) -> UOp:
    shape = x.type.shape
    inv = full(shape, 1 / shape[-1])
    d = x.alu(Op.SUB, rows(x, Op.ADD).alu(Op.MUL, inv))
    var = rows(d.alu(Op.MUL, d), Op.ADD).alu(Op.MUL, inv)
    eps = full(shape, 9.999999747378752e-06)
    return d.alu(Op.MUL, var.alu(Op.ADD, eps).alu(Op.SQRT).alu(Op.RECIP))


def total(x: UOp) -> UOp:
    return x.reduce(Op.ADD, tuple(range(len(x.type.shape))))


def mlp(p: Params) -> UOp:
    """A 3-layer ReLU MLP on a batch of 8 inputs of 16, squared error against a target."""
    x = full((8, 16), 0.5)
    h = x
    for width_in, width_out in ((16, 32), (32, 32), (32, 4)):
        h = matmul(h, p(width_in, width_out)).alu(Op.ADD, p(width_out).expand((8, width_out)))
        if width_out != 4:
            h = h.alu(Op.MAX, full(h.type.shape, 0.0))
    d = h.alu(Op.SUB, full((8, 4), 0.25))
    return total(d.alu(Op.MUL, d))


def transformer(p: Params, layers: int = 2, tokens: int = 8, dim: int = 16) -> UOp:
    """`layers` pre-norm blocks: attention (one head, scaled scores, softmax) and a ReLU MLP,
    each with a residual; the loss is a weighted sum of the output."""
    x = full((tokens, dim), 0.25)
    for _ in range(layers):
        h = layer_norm(x)
        q, k, v = (matmul(h, p(dim, dim)) for _ in range(3))
        scores = matmul(q, k.permute((1, 0))).alu(Op.MUL, full((tokens, tokens), 0.25))
        attended = matmul(softmax(scores), v)
        x = x.alu(Op.ADD, matmul(attended, p(dim, dim)))
        h = layer_norm(x)
        up = matmul(h, p(dim, 4 * dim)).alu(Op.MAX, full((tokens, 4 * dim), 0.0))
        x = x.alu(Op.ADD, matmul(up, p(4 * dim, dim)))
    w = UOp.const(Type(f32, (tokens, dim)), tuple((i % 5 - 2) / 4 for i in range(tokens * dim)))
    return total(x.alu(Op.MUL, w))


def chain(p: Params, ops: int) -> UOp:
    """`ops` elementwise ops on a vector of 4, each reusing an earlier value (a DAG, not a
    path), cycling through the differentiable ALU ops."""
    x = p(4)
    values = [x]
    kinds = (Op.MUL, Op.ADD, Op.SIN, Op.MAX, Op.SUB, Op.NEG)
    while len(values) <= ops:
        op = kinds[len(values) % len(kinds)]
        a, b = values[-1], values[len(values) // 2]
        values.append(a.alu(op) if op in (Op.SIN, Op.NEG) else a.alu(op, b))
    return total(values[-1])


def size(sink: UOp) -> int:
    return len(sink.toposort())


def best_cpu(fn: Callable[[], UOp], runs: int = 3) -> tuple[float, UOp]:
    best, out = float("inf"), None
    for _ in range(runs):
        start = time.process_time()
        out = fn()
        best = min(best, time.process_time() - start)
    assert out is not None
    return best, out


def report(name: str, build: Callable[[Params], UOp]) -> None:
    p = Params()
    loss = build(p)
    forward = UOp.sink(loss)
    program = UOp.sink(loss, *(UOp(Op.GRAD, x.type, (loss, x)) for x in p.loads))
    seconds, out = best_cpu(lambda: differentiate(program))
    verify(Program(out, {}))
    f, w = size(forward), size(out)
    print(
        f"{name:<26} {len(p.loads):>3} params  forward {f:>6} UOps  with grads {w:>6}  "
        f"backward {w - f:>6} ({(w - f) / f:.2f}x forward)  pass {seconds * 1000:8.1f} ms"
    )


def main() -> None:
    ops = int(sys.argv[1]) if len(sys.argv) > 1 else 10_000
    report("MLP 16-32-32-4", mlp)
    report("transformer, 2 blocks", transformer)
    report(f"chain of {ops} ops", lambda p: chain(p, ops))


if __name__ == "__main__":
    main()

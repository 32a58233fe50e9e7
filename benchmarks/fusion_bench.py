"""Week 6's fusion policy (spec/uir-week6.md section 2) against week 4's, in one run.

For a row softmax, a layer norm, a matmul and a conv2d (built from movement ops and one REDUCE,
uir.testing.movement), each lowered by rangeify twice: with fusion (the pipeline's) and without
(`fuse=False`: every REDUCE materialized, every costly value computed at each read, as week 4
did). Printed for each: kernels, loops, bytes read and written (every LOAD and STORE, LOCALs
included), ALU ops, the bytes of intermediate buffers (every LOCAL lives for the whole run, so
this is their peak too), and the C backend's time for one run (best of REPEATS, the forked
runtime included). Both lowerings must print the same bits; the script checks it. Also the time
to compile a 1000-op elementwise chain through the whole pipeline (issue 22 item 7: under a
second). Nothing here asserts a time.

Run: uv run python benchmarks/fusion_bench.py [ROWS COLS]
"""

from __future__ import annotations

import sys
import time

import numpy as np

from uir.backend.c.plugin import CBackend
from uir.core.calls import inline_calls
from uir.core.dtypes import Type, f32
from uir.core.kernels import schedule_kernels
from uir.core.ops import Op
from uir.core.plugins import load_registry, prepare
from uir.core.stats import intermediate_bytes, schedule_stats
from uir.core.uop import UOp
from uir.rewrite.passes import lower_shapes
from uir.testing.movement import conv2d, expand, load, matmul, program, reduce, reshape, softmax

REPEATS = 3


def layer_norm(x: UOp) -> UOp:
    """(x - mean) / sqrt(var + 1e-5) over each row of x[R,C]."""
    rows, cols = x.type.shape

    def over_row(value: UOp) -> UOp:
        return expand(reshape(value, (rows, 1)), (rows, cols))

    def per_row(value: UOp) -> UOp:  # [R,C] -> [R]: the row mean
        n = expand(UOp(Op.CONST, Type(f32, ()), (), 1 / cols), (rows,))
        return UOp(Op.MUL, n.type, (reduce(value, Op.ADD, (1,)), n))

    centred = UOp(Op.SUB, x.type, (x, over_row(per_row(x))))
    var = per_row(UOp(Op.MUL, x.type, (centred, centred)))
    eps = expand(UOp(Op.CONST, Type(f32, ()), (), 1e-5), var.type.shape)
    root = UOp(Op.SQRT, var.type, (UOp(Op.ADD, var.type, (var, eps)),))
    return UOp(Op.FDIV, x.type, (centred, over_row(root)))


def measure(name: str, sink: UOp, inputs: dict[int, np.ndarray]) -> None:
    flat = inline_calls(sink)
    results = []
    for fuse in (False, True):
        schedule = schedule_kernels(flat, lower_shapes(flat, fuse=fuse))
        compiled = CBackend().compile(schedule)
        outputs = compiled.run(inputs)
        times = []
        for _ in range(REPEATS):
            start = time.perf_counter()
            compiled.run(inputs)
            times.append(time.perf_counter() - start)
        stats = schedule_stats(schedule)
        results.append(outputs)
        print(
            f"{name:<10} {'week 6' if fuse else 'week 4':<7} {len(schedule.kernels):>7} "
            f"{stats.loops:>5} {stats.bytes_read:>12} {stats.bytes_written:>12} {stats.ops:>11} "
            f"{intermediate_bytes(schedule):>12} {min(times) * 1000:>9.1f}"
        )
    same = all(a.tobytes() == b.tobytes() for a, b in zip(*results, strict=True))
    print(f"{'':<10} same bits both ways: {same}")


def chain_compile_seconds(length: int = 1000) -> float:
    """Seconds to bring a `length`-op elementwise chain over a loaded f32[1024] to kernels and
    render it as C (the whole pipeline: inline, fold, simplify, rangeify, the cut)."""
    value = load(0, f32, (1024,))
    for k in range(length):
        op = (Op.ADD, Op.MUL, Op.SUB)[k % 3]
        value = UOp(op, value.type, (value, load(1, f32, (1024,))))
    sink = program(value)
    registry = load_registry()
    start = time.perf_counter()
    schedule = prepare(sink, "kernels", registry.pipeline([], [], "kernels"))
    CBackend().render(schedule)
    return time.perf_counter() - start


def main() -> None:
    rows, cols = (int(a) for a in sys.argv[1:3]) if len(sys.argv) > 2 else (512, 512)
    rng = np.random.default_rng(0)
    x = rng.normal(size=rows * cols).astype(np.float32)
    print(f"rows x cols = {rows} x {cols}; C times: one run through the runtime, best of {REPEATS}")
    print(
        f"{'program':<10} {'policy':<7} {'kernels':>7} {'loops':>5} {'bytes read':>12} "
        f"{'written':>12} {'ops':>11} {'intermediate':>12} {'C ms':>9}"
    )
    measure("softmax", program(softmax(load(0, f32, (rows, cols)))), {0: x})
    measure("layernorm", program(layer_norm(load(0, f32, (rows, cols)))), {0: x})
    n = 128
    a, b = rng.normal(size=n * n).astype(np.float32), rng.normal(size=n * n).astype(np.float32)
    measure("matmul", program(matmul(load(0, f32, (n, n)), load(1, f32, (n, n)))), {0: a, 1: b})
    image = rng.normal(size=4 * 32 * 32).astype(np.float32)
    weights = rng.normal(size=8 * 4 * 3 * 3).astype(np.float32)
    conv = conv2d(load(0, f32, (4, 32, 32)), load(1, f32, (8, 4, 3, 3)), 1)
    measure("conv2d", program(conv), {0: image, 1: weights})
    print(f"1000-op chain through the pipeline to C source: {chain_compile_seconds():.2f} s")


if __name__ == "__main__":
    main()

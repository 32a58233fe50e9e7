"""The reference interpreter's speed on loops: scalar ops per second.

Run: uv run python benchmarks/loop_bench.py [N] [SUM] [BIG]
Prints figures for an N x N x N f32 matmul by loops (default 64), a SUM-iteration f32 sum
(default 10^6) and a loop-free chain of 20,000 i32/f32 ops (the week-1 per-op cost), through the
interpreter and through `--backend c`; then a BIG x BIG x BIG f32 matmul (default 512) by loops
through `--backend c` against the same triple loop written by hand in C, both compiled with the
backend's flags (-O2 -ffp-contract=off) and run the same way (a forked child on shared buffers),
as a time ratio. A scalar op is one executed statement that computes something: an ALU op, an
INDEX, a LOAD or a STORE. Nothing here asserts a time.
"""

from __future__ import annotations

import random
import sys
import time

import numpy as np

from uir.backend.c.plugin import CBackend, load_source
from uir.backend.c.runtime import CompiledProgram
from uir.core.interpret import evaluate
from uir.core.ops import ALU, Op
from uir.core.parse import parse
from uir.core.schedule import Block, loop_schedule
from uir.core.uop import UOp
from uir.core.verify import verify
from uir.testing.backends import scheduled

COUNTED = ALU | {Op.INDEX, Op.LOAD, Op.STORE}


def matmul_text(n: int) -> str:
    """C = A @ B for n x n f32 matrices, three ranges and one LOCAL accumulator."""
    return f"""
%a = BUFFER f32[{n * n}] 0
%b = BUFFER f32[{n * n}] 1
%c = BUFFER f32[{n * n}] 2
%acc = LOCAL f32[1] 0
%n = CONST i32 {n}
%z = CONST i32 0
%fz = CONST f32 0
%i = RANGE i32 %n 0
%j = RANGE i32 %n 1
%k = RANGE i32 %n 2
%accIJ = AFTER f32[1] %acc %i %j
%a0 = INDEX f32 %accIJ %z
%init = STORE void %a0 %fz
%accK = AFTER f32[1] %acc %init %k
%ak = INDEX f32 %accK %z
%old = LOAD f32 %ak
%in = MUL i32 %i %n
%ik = ADD i32 %in %k
%pa = INDEX f32 %a %ik
%va = LOAD f32 %pa
%kn = MUL i32 %k %n
%kj = ADD i32 %kn %j
%pb = INDEX f32 %b %kj
%vb = LOAD f32 %pb
%prod = MUL f32 %va %vb
%new = ADD f32 %old %prod
%upd = STORE void %ak %new
%donek = END void %upd %k
%accD = AFTER f32[1] %acc %donek
%ad = INDEX f32 %accD %z
%sum = LOAD f32 %ad
%ij = ADD i32 %in %j
%pc = INDEX f32 %c %ij
%st = STORE void %pc %sum
%done = END void %st %i %j
%c1 = AFTER f32[{n * n}] %c %done
%out = SINK void %c1
"""


def sum_text(count: int) -> str:
    """The sum of `count` f32 values 0.5 through a loop-carried accumulator."""
    return f"""
%acc = LOCAL f32[1] 0
%n = CONST i32 {count}
%z = CONST i32 0
%half = CONST f32 0.5
%k = RANGE i32 %n 0
%accK = AFTER f32[1] %acc %k
%ak = INDEX f32 %accK %z
%old = LOAD f32 %ak
%new = ADD f32 %old %half
%upd = STORE void %ak %new
%done = END void %upd %k
%accD = AFTER f32[1] %acc %done
%ad = INDEX f32 %accD %z
%sum = LOAD f32 %ad
%out = SINK void %sum
"""


def chain_text(statements: int, seed: int = 0) -> str:
    """A loop-free chain of i32 and f32 arithmetic (every value feeds later ones)."""
    rng = random.Random(seed)
    lines = ["%i0 = CONST i32 7", "%f0 = CONST f32 0.5"]
    for n in range(1, statements):
        a, b = rng.randrange(n), rng.randrange(n)
        if rng.random() < 0.5:
            op = rng.choice(["ADD", "SUB", "MUL", "XOR", "MAX"])
            lines.append(f"%i{n} = {op} i32 %i{a % n} %i{b % n}")
            lines.append(f"%f{n} = ADD f32 %f{n - 1} %f{a % n}")
        else:
            lines.append(f"%i{n} = ADD i32 %i{n - 1} %i{b % n}")
            lines.append(f"%f{n} = MUL f32 %f{n - 1} %f{a % n}")
    lines.append(f"%out = SINK void %i{statements - 1} %f{statements - 1}")
    return "\n".join(lines)


def executed(block: Block) -> int:
    """How many counted statements running `block` executes (every loop end a CONST)."""
    total = 0
    for item in block.body:
        if isinstance(item, Block):
            end: UOp = item.range.src[0]  # type: ignore[union-attr]
            total += max(end.arg, 0) * executed(item)
        elif item.op in COUNTED:
            total += 1
    return total


# The triple loop a C programmer writes for C = A @ B, with the ABI of `matmul_text` (a, b, c).
HAND_MATMUL = """
#include <stdint.h>
void uir_program(float *restrict a, float *restrict b, float *restrict c) {
    for (int32_t i = 0; i < N; i++) {
        for (int32_t j = 0; j < N; j++) {
            float acc = 0.0f;
            for (int32_t k = 0; k < N; k++) acc = acc + a[i * N + k] * b[k * N + j];
            c[i * N + j] = acc;
        }
    }
}
"""


def timed_run(
    program: CompiledProgram, inputs: dict[int, np.ndarray], repeats: int = 3
) -> tuple[float, list]:
    """The best of `repeats` runs' seconds (compiling excluded), and the outputs."""
    best, out = float("inf"), []
    for _ in range(repeats):
        start = time.perf_counter()
        out = program.run(inputs)
        best = min(best, time.perf_counter() - start)
    return best, out


def measure(
    name: str, text: str, inputs: dict[int, np.ndarray] | None = None, backend: str = "interp"
) -> None:
    program = parse(text)
    verify(program)
    ops = executed(loop_schedule(program.sink))
    if backend == "c":
        seconds, _ = timed_run(CBackend().compile(scheduled(program.sink)), inputs or {})
    else:
        start = time.perf_counter()
        evaluate(program.sink, inputs)
        seconds = time.perf_counter() - start
    print(
        f"{name:<34} {ops:>10,} ops {seconds:9.4f} s  "
        f"{ops / seconds:>14,.0f} ops/s  {seconds / ops * 1e6:6.2f} us/op"
    )


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 64
    count = int(sys.argv[2]) if len(sys.argv) > 2 else 10**6
    rng = np.random.default_rng(0)
    a, b = (rng.standard_normal(n * n).astype(np.float32) for _ in range(2))
    print("interpreter (uir run --backend interp, no passes):")
    measure(f"matmul {n}x{n}x{n} by loops", matmul_text(n), {0: a, 1: b})
    measure(f"sum of {count:,} values", sum_text(count))
    measure("week-1 chain of 20,000 ops", chain_text(10_000))
    print("C (uir run --backend c, no passes; run time only, in a forked child):")
    measure(f"matmul {n}x{n}x{n} by loops", matmul_text(n), {0: a, 1: b}, "c")
    measure(f"sum of {count:,} values", sum_text(count), None, "c")
    big = int(sys.argv[3]) if len(sys.argv) > 3 else 512
    compare_with_hand_written(big)


def compare_with_hand_written(n: int) -> None:
    """An n x n x n f32 matmul by loops through `--backend c` against HAND_MATMUL."""
    program = parse(matmul_text(n))
    verify(program)
    rng = np.random.default_rng(1)
    inputs = {slot: rng.standard_normal(n * n).astype(np.float32) for slot in (0, 1)}
    ours_program = CBackend().compile(scheduled(program.sink))
    hand = load_source(f"#define N {n}\n{HAND_MATMUL}", program.sink)
    # Alternate the two, best of five each: load from other processes hits both alike.
    ours = theirs = float("inf")
    for _ in range(5):
        seconds, ours_out = timed_run(ours_program, inputs, repeats=1)
        ours = min(ours, seconds)
        seconds, hand_out = timed_run(hand, inputs, repeats=1)
        theirs = min(theirs, seconds)
    expected = inputs[0].reshape(n, n).astype(np.float64) @ inputs[1].reshape(n, n)
    close = np.allclose(ours_out[0].reshape(n, n), expected, rtol=1e-4, atol=1e-3)
    same = all(np.array_equal(x, y) for x, y in zip(ours_out, hand_out, strict=True))
    print(
        f"matmul {n}x{n}x{n} f32: --backend c {ours:.3f} s, hand-written C {theirs:.3f} s, "
        f"ratio {ours / theirs:.2f}x (goal <= 1.5x); same bits: {same}; "
        f"close to numpy's float64 product: {close}"
    )


if __name__ == "__main__":
    main()

"""The CUDA backend on three kernels; prints figures, asserts no time.

1. d = a*b + c on 16.8 million f32 (2^24): GB/s moved (three reads, one write).
2. The sum of those 2^24 f32: 65536 threads each sum a column of a 256 x 65536 view in order
   (neighbouring threads read neighbouring elements), then one thread sums the 65536 partial
   sums in order: GB/s read.
3. A 4096^3 f32 matmul (loop_bench's, its i and j marked PARALLEL): each thread computes one
   element of C with a sequential k loop.

Each is a week-3 loop program written here by hand, its output ranges marked PARALLEL (the form
rangeify will generate from shaped programs), checked bit for bit against numpy computing the
same sums in the same order (the matmul at 64 sampled elements), then timed with CUDA events
(best of 5 after a warm-up launch, buffers uploaded once). Figures are compared with the H200's
4.8 TB/s and 67 TFLOP/s (f32, no tensor cores).

Run: uv run python benchmarks/cuda_bench.py [--backend cuda|cuda-emu] [--small]
`--backend cuda-emu --small` (scripts/gpu-check.sh --dry-run) runs the same steps on the CPU at
small sizes: the checks are real, the times are the CPU emulation's, including its fork.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from loop_bench import matmul_text  # the week-3 matmul, run from benchmarks/

from uir.backend.cuda.driver import GpuProgram
from uir.backend.cuda.plugin import CudaBackend, CudaEmuBackend
from uir.core.calls import inline_calls
from uir.core.parse import parse
from uir.core.uop import UOp
from uir.core.verify import verify
from uir.testing.backends import scheduled

PEAK_BYTES = 4.8e12  # H200 HBM3e, bytes per second
PEAK_FLOPS = 67e12  # H200 f32 FLOP/s without tensor cores


def multiply_add(n: int) -> str:
    return f"""
%a = BUFFER f32[{n}] 0
%b = BUFFER f32[{n}] 1
%c = BUFFER f32[{n}] 2
%d = BUFFER f32[{n}] 3
%n = CONST i32 {n}
%i = RANGE i32 %n (0, PARALLEL)
%pa = INDEX f32 %a %i
%pb = INDEX f32 %b %i
%pc = INDEX f32 %c %i
%va = LOAD f32 %pa
%vb = LOAD f32 %pb
%vc = LOAD f32 %pc
%ab = MUL f32 %va %vb
%r = ADD f32 %ab %vc
%pd = INDEX f32 %d %i
%s = STORE void %pd %r
%e = END void %s %i
%d1 = AFTER f32[{n}] %d %e
%out = SINK void %d1
"""


def column_sum(rows: int, columns: int) -> str:
    """Sum of x (rows x columns, row-major): column sums in order, then their sum in order,
    each fold starting from -0.0 (which leaves its first term unchanged)."""
    n = rows * columns
    return f"""
%x = BUFFER f32[{n}] 0
%part = BUFFER f32[{columns}] 1
%o = BUFFER f32[1] 2
%acc = LOCAL f32[1] 0
%tot = LOCAL f32[1] 1
%nr = CONST i32 {rows}
%nc = CONST i32 {columns}
%z = CONST i32 0
%mz = CONST f32 -0.0
%j = RANGE i32 %nc (0, PARALLEL)
%k = RANGE i32 %nr 1
%accJ = AFTER f32[1] %acc %j
%a0 = INDEX f32 %accJ %z
%init = STORE void %a0 %mz
%accK = AFTER f32[1] %acc %init %k
%ak = INDEX f32 %accK %z
%old = LOAD f32 %ak
%kc = MUL i32 %k %nc
%kj = ADD i32 %kc %j
%px = INDEX f32 %x %kj
%vx = LOAD f32 %px
%new = ADD f32 %old %vx
%upd = STORE void %ak %new
%donek = END void %upd %k
%accD = AFTER f32[1] %acc %donek
%ad = INDEX f32 %accD %z
%col = LOAD f32 %ad
%pp = INDEX f32 %part %j
%sp = STORE void %pp %col
%donej = END void %sp %j
%part1 = AFTER f32[{columns}] %part %donej
%t0 = INDEX f32 %tot %z
%tinit = STORE void %t0 %mz
%m = RANGE i32 %nc 2
%totM = AFTER f32[1] %tot %tinit %m
%tm = INDEX f32 %totM %z
%told = LOAD f32 %tm
%qp = INDEX f32 %part1 %m
%vp = LOAD f32 %qp
%tnew = ADD f32 %told %vp
%tupd = STORE void %tm %tnew
%donem = END void %tupd %m
%totD = AFTER f32[1] %tot %donem
%td = INDEX f32 %totD %z
%sum = LOAD f32 %td
%o0 = INDEX f32 %o %z
%so = STORE void %o0 %sum
%o1 = AFTER f32[1] %o %so
%out = SINK void %o1
"""


def matmul(n: int) -> str:
    """loop_bench's week-3 matmul (accumulator from +0.0), its output ranges marked PARALLEL."""
    text = matmul_text(n)
    for name, rid in (("%i", 0), ("%j", 1)):
        text = text.replace(
            f"{name} = RANGE i32 %n {rid}", f"{name} = RANGE i32 %n ({rid}, PARALLEL)"
        )
    assert text.count("PARALLEL") == 2
    return text


def in_order(terms: np.ndarray, axis: int = -1) -> np.ndarray:
    """f32 sums along `axis`, one rounding per term in order (cumsum folds sequentially)."""
    return np.cumsum(terms, axis=axis, dtype=np.float32).take(-1, axis=axis)


def load(text: str) -> UOp:
    program = parse(text)
    verify(program)
    return inline_calls(program.sink)


def measure(backend: str, sink: UOp, inputs: dict[int, np.ndarray]) -> tuple[list, float]:
    """The outputs of one run, and the best time of the kernels (GPU), or of whole runs (emu)."""
    if backend == "cuda":
        program = CudaBackend().compile(scheduled(sink))
        assert isinstance(program, GpuProgram)
        return program.run(inputs), min(program.time_kernels(inputs, repeats=5))
    program = CudaEmuBackend().compile(scheduled(sink))
    outputs = program.run(inputs)
    start = time.perf_counter()
    program.run(inputs)
    return outputs, time.perf_counter() - start


def report(name: str, seconds: float, amount: float, unit: str, peak: float, ok: bool) -> None:
    rate = amount / seconds
    scale = 1e9
    print(
        f"{name:34s} {seconds * 1e3:10.3f} ms {rate / scale:10.1f} G{unit}/s "
        f"{100 * rate / peak:6.2f}% of peak  {'bit-exact' if ok else 'MISMATCH'}"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["cuda", "cuda-emu"], default="cuda")
    parser.add_argument("--small", action="store_true", help="small sizes (for cuda-emu)")
    args = parser.parse_args()
    n = 1 << 16 if args.small else 1 << 24
    rows, columns = (256, 256) if args.small else (256, 65536)
    size = 64 if args.small else 4096
    rng = np.random.default_rng(0)
    ok_all = True

    def run(name: str, text: str, inputs: dict, check: Callable[[list], bool], amount, unit, peak):
        nonlocal ok_all
        outputs, seconds = measure(args.backend, load(text), inputs)
        ok = check(outputs)
        ok_all &= ok
        report(name, seconds, amount, unit, peak, ok)

    print(f"backend {args.backend}; peaks: {PEAK_BYTES / 1e12} TB/s, {PEAK_FLOPS / 1e12} TFLOP/s")
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    run(
        f"a*b+c, {n} f32",
        multiply_add(n),
        {0: a, 1: b, 2: c},
        lambda out: out[0].tobytes() == (a * b + c).tobytes(),
        16 * n,
        "B",
        PEAK_BYTES,
    )
    x = rng.standard_normal(rows * columns).astype(np.float32)
    total = in_order(in_order(x.reshape(rows, columns), axis=0))
    run(
        f"sum of {rows * columns} f32",
        column_sum(rows, columns),
        {0: x},
        lambda out: out[0].tobytes() == np.float32(total).tobytes(),
        4 * rows * columns,
        "B",
        PEAK_BYTES,
    )
    ma, mb = (rng.standard_normal((size, size)).astype(np.float32) for _ in range(2))
    picks = rng.integers(0, size, (64, 2))

    def matmul_ok(out: list) -> bool:
        got = out[0].reshape(size, size)
        zero = np.zeros(1, np.float32)
        want = [in_order(np.concatenate([zero, ma[i, :] * mb[:, j]])) for i, j in picks]
        return all(
            got[i, j].tobytes() == w.tobytes() for (i, j), w in zip(picks, want, strict=True)
        )

    run(
        f"matmul {size}^3 f32",
        matmul(size),
        {0: ma.reshape(-1), 1: mb.reshape(-1)},
        matmul_ok,
        2 * size**3,
        "FLOP",
        PEAK_FLOPS,
    )
    return 0 if ok_all else 1


if __name__ == "__main__":
    raise SystemExit(main())

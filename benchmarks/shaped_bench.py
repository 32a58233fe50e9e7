"""Shaped programs through rangeify and `--backend c` against numpy, in one run on this machine.

1. `a*b + c` on N f32 (default 2^24, 16.8 million): numpy makes two passes over memory (a*b into
   a temporary, then + c); rangeify fuses both ops into one loop that reads a, b, c once.
2. The sum of N f32: a REDUCE, folded in the fixed order of uir.md 8 (sequential from the first
   element) where numpy's `sum` adds pairwise with vector instructions.

The C times are of the entry point alone (called in this process through ctypes on numpy arrays,
best of REPEATS), the way numpy's are; the run through the backend's runtime (a forked child on
shared copies of the buffers) is printed once as well. `uir run --stats` figures are printed for
each program after rangeify. Nothing here asserts a time.

Run: uv run python benchmarks/shaped_bench.py [N]
"""

from __future__ import annotations

import ctypes
import sys
import time
from collections.abc import Callable

import numpy as np

from uir.backend.c.abi import layout
from uir.backend.c.plugin import CBackend
from uir.backend.c.toolchain import compile_shared
from uir.core.parse import parse
from uir.core.stats import program_stats
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.testing.backends import scheduled
from uir.testing.shaped import A_TIMES_B_PLUS_C, SUM

REPEATS = 5


def best(call: Callable[[], object], repeats: int = REPEATS) -> float:
    """The fastest of `repeats` calls, in milliseconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return min(times) * 1000


def entry_point(
    sink: UOp, threads: int = 1, flags: tuple[str, ...] | None = None, optimize: bool = False
) -> Callable[..., None]:
    """The program's C entry point, loaded in this process, its PARALLEL loops on `threads`
    threads (render.py's `uir_program_threads`), compiled with `flags` (None: the backend's);
    `optimize`: after the optimizing passes too (the `tile` pass among them), as `uir run`."""
    source = CBackend().render(scheduled(sink, optimize))
    library = ctypes.CDLL(str(compile_shared([source], flags)))
    library.uir_program_threads.argtypes = [ctypes.c_int32, ctypes.c_int64]
    library.uir_program_threads(threads, -1)
    entry = library.uir_program
    entry.argtypes = [ctypes.c_void_p] * len(layout(sink).arg_types)
    entry.restype = None
    return entry


def compare(name: str, sink: UOp, arrays: list[np.ndarray], out: np.ndarray, numpy_op) -> None:
    entry = entry_point(sink)
    pointers = [a.ctypes.data for a in (*arrays, out)]
    c_ms = best(lambda: entry(*pointers))
    np_ms = best(lambda: numpy_op(*arrays))
    start = time.perf_counter()
    CBackend().compile(scheduled(sink)).run(dict(enumerate(arrays)))
    runtime_ms = (time.perf_counter() - start) * 1000
    print(f"{name}:")
    print(f"  C loop {c_ms:8.1f} ms   numpy {np_ms:8.1f} ms   numpy/C {np_ms / c_ms:5.2f}")
    print(f"  through the runtime (compile, fork, shared copies): {runtime_ms:.0f} ms")
    print(f"  stats after rangeify: {program_stats(rangeify(sink)).describe()}")


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1 << 24
    rng = np.random.default_rng(0)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    print(f"N = {n} f32 ({n * 4 / 2**20:.0f} MiB per array), best of {REPEATS}")

    fused = parse(A_TIMES_B_PLUS_C.format(n=n)).sink
    out = np.empty(n, dtype=np.float32)
    compare("a*b + c", fused, [a, b, c], out, lambda a, b, c: a * b + c)
    assert out.tobytes() == (a * b + c).tobytes()  # one rounding per op on both sides

    total = parse(SUM.format(n=n)).sink
    result = np.empty(1, dtype=np.float32)
    compare("sum", total, [a], result, np.sum)
    print(f"  sequential sum {result[0]!r}, numpy's pairwise sum {np.sum(a)!r}")


if __name__ == "__main__":
    main()

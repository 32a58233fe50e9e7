"""EXP2, LOG2 and SIN over 2^24 f32 elements: the C backend's polynomial kernels
(uir.backend.c.transcendental) against the rendering they replaced, libm's double function called
one element at a time (`(float)exp2((double)x)`), one thread, the backend's own compiler flags.

Run: uv run python benchmarks/transcendental_bench.py [--n N] [--rounds R]

Each loop is compiled once; the time is this thread's CPU time (not wall time, which on a shared
machine counts other processes' turns), the best of R interleaved rounds. Every result is checked
against numpy's float64 function rounded to f32 (within 2 ulp, NaN where it is NaN) before a time
is printed. Inputs: exp2 on [-100, 100], log2 on 2^[-100, 100], sin on [-100, 100] (reduced by
Cody-Waite) and on [2^23, 2^40] (the table reduction). Normal floats only: a subnormal operand or
result costs a microcode assist on x86 in either version (spec/uir-week8.md 5).
"""

from __future__ import annotations

import argparse
import ctypes
import time

import numpy as np

from uir.backend.c import transcendental
from uir.backend.c.toolchain import build_flags, compile_shared
from uir.testing.compare import ulp_distance

SOURCE = """\
#include <math.h>
#include <stdint.h>
#include <string.h>

{kernels}

#define LOOP(name, expr) \\
void name(int64_t n, const float *restrict a, float *restrict out) {{ \\
    for (int64_t i = 0; i < n; i++) {{ float x = a[i]; out[i] = expr; }} \\
}}
LOOP(exp2_libm, (float)exp2((double)x))
LOOP(log2_libm, (float)log2((double)x))
LOOP(sin_libm, (float)sin((double)x))
LOOP(exp2_poly, uir_exp2_f32(x))
LOOP(log2_poly, uir_log2_f32(x))
LOOP(sin_poly, uir_sin_f32(x))
"""


def inputs(n: int) -> dict[str, tuple[np.ndarray, object]]:
    rng = np.random.default_rng(0)
    return {
        "exp2": (rng.uniform(-100, 100, n).astype(np.float32), np.exp2),
        "log2": (np.exp2(rng.uniform(-100, 100, n)).astype(np.float32), np.log2),
        "sin": (rng.uniform(-100, 100, n).astype(np.float32), np.sin),
        "sin huge": (np.exp2(rng.uniform(23, 40, n)).astype(np.float32), np.sin),
    }


def check(name: str, got: np.ndarray, x: np.ndarray, reference) -> int:
    want = reference(x.astype(np.float64)).astype(np.float32)
    nan = np.isnan(want)
    assert np.array_equal(np.isnan(got), nan), name
    worst = int(np.max(ulp_distance(got[~nan], want[~nan]), initial=0))
    assert worst <= 2, f"{name}: {worst} ulp"
    return worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1 << 24)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    kernels = "\n\n".join([transcendental.EXP2, transcendental.LOG2, transcendental.sin_f32()])
    library = ctypes.CDLL(str(compile_shared([SOURCE.format(kernels=kernels)])))
    print(f"n = {args.n} f32, one thread, flags: {' '.join(build_flags())}")
    print(
        f"{'op':10} {'libm double':>12} {'polynomial':>12} {'speedup':>8} {'ns/elem':>8}  max ulp"
    )
    for name, (x, reference) in inputs(args.n).items():
        op = name.split()[0]
        out = np.empty_like(x)
        best = {}
        for variant in ("libm", "poly"):
            fn = getattr(library, f"{op}_{variant}")
            fn.argtypes = [ctypes.c_int64, ctypes.c_void_p, ctypes.c_void_p]
            best[variant] = float("inf")
        ulps = {}
        for _ in range(args.rounds):
            for variant in ("libm", "poly"):
                fn = getattr(library, f"{op}_{variant}")
                start = time.thread_time()
                fn(args.n, x.ctypes.data, out.ctypes.data)
                best[variant] = min(best[variant], time.thread_time() - start)
                ulps[variant] = check(f"{name} {variant}", out, x, reference)
        libm, poly = best["libm"], best["poly"]
        print(
            f"{name:10} {libm * 1e3:10.1f}ms {poly * 1e3:10.1f}ms {libm / poly:7.1f}x "
            f"{poly / args.n * 1e9:8.2f}  {ulps['poly']} (libm {ulps['libm']})"
        )


if __name__ == "__main__":
    main()

"""The CPU performance table: `--backend c` against numpy, side by side in one process.

Seven programs (issue 25 item 5), each built as UOps from uir.testing (the very programs the
tests check) and run after the optimizing passes, as `uir run` runs them (the `tile` pass of
uir.rewrite.tiling among them, spec/uir-week8.md section 4):

- a*b + c, 16.8M f32: one fused loop; numpy `a * b + c` (two passes, a temporary).
- sum, 16.8M f32, FAST: split into 16 parts x 16 lanes; `np.sum` (pairwise, vectorized).
- softmax of the rows of 4096x4096 f32: REDUCE MAX, EXP2, REDUCE ADD, FDIV; numpy
  `exp(x - max) / sum`.
- layernorm of the rows of 4096x4096 f32: (x - mean) / sqrt(var + 1e-5), two in-order row folds;
  numpy the same formula.
- matmul 1024x1024 @ 1024x1024 f32, FAST: movement ops, MUL, one REDUCE (tiled); `a @ b` (BLAS).
- matmul 2048, FAST: `[2048, 2048, 2048]` has more elements than a type may hold (2^31 - 1), so
  the program is the sum of 8 matmuls over K chunks of 256, each a FAST REDUCE (tiled).
- conv2d, batch 8, 64 -> 64 channels, 56x56, 3x3, padding 1, FAST: PAD, windows, MUL, one
  REDUCE. numpy has no conv: `sliding_window_view` + `tensordot` (im2col, then BLAS sgemm).

The machine's peak is measured here too, by two small generated C kernels (`peak`): 12 chains of
independent AVX2 fused multiply-adds on every thread (the FMA peak, 2 flops an FMA), and a
memcpy of 128 MiB split over the threads (copy bandwidth, bytes read plus bytes written). Each
workload prints the fraction of the one that bounds it (flops for matmul and conv2d, the bytes it
must move at least for the others) and what dominates the rest of its gap.

Times are the best of REPEATS calls, in milliseconds: C's entry point called in this process
through ctypes on numpy arrays (shaped_bench's helpers), its PARALLEL loops on `--threads`
threads (default: every core this process may use), numpy's expression as written above;
`build` is rendering plus the C compiler (or a cache hit). numpy's BLAS may use every core too.
Nothing here asserts a time.

`whole s` is what a user waits for: `uir run --backend c FILE` of the same program (its buffers
zeros, as the program text gives them) as a child process, its output written to a file, best of
WHOLE_REPEATS after one warm-up run that fills the compile cache: parsing, rangeify, loading,
the fork, the shared copies, the kernel and printing every element. For a*b+c the printing of the
real (random) result is timed alone too: the C formatter (uir.backend.c.printing) beside the
per-element Python path (uir.core.output.format_value) it replaces, both writing the same text.

`--json FILE` writes {"results": [{"name", "uir_s", "numpy_s", "build_s", "whole_s", "threads",
"ok", "check", "peak_fraction", "bound_by", "gap"}, ...], "peak": {"fma_gflops",
"copy_gbytes"}} (seconds), one entry a workload, named `a*b+c`, `sum`, `softmax`, `layernorm`,
`matmul 1024`, `matmul 2048`, `conv2d`.

Correctness first: every C result is checked, and a wrong one prints FAIL and makes the exit
status 1. The reference is numpy, in float64 where the orders differ:

- a*b + c: bit for bit against numpy's f32 `a * b + c` (tolerance 0): one rounding per op on both
  sides, and the C compiler may not contract to fused multiply-add (toolchain.py's flags).
- sum (FAST: any order): bit for bit against numpy's f32 fold in the order the tile pass chose
  (16 parts x 16 lanes folded in order, then the 256 partials: `split_sum`), which catches a
  lost or doubled element; and within n*U*sum|x| of the float64 sum, the bound of any order
  (fold_bound: each of the n - 1 additions errs by at most U times a partial sum).
- matmul, conv2d: a fold of K rounded products (K = 1024 or 2048; C*KH*KW = 576) in any order is
  within K*U times the sum of the terms' absolute values of the exact value
  (uir.testing.tolerance.fold_bound); the float64 reference and that sum come from numpy in
  float64. matmul 2048's 8 chunk folds of 256 terms and 7 adds are 263 roundings, fewer than K.
- layernorm: within the first-order bound `layer_norm_bound` derives (the two folds' C*U, the
  roundings of SUB, MUL, FDIV, SQRT), widened by 1% as uir.testing.tolerance does.
- softmax: EXP2 is within 2 ulp, so C's exp is not numpy's; each element is within the relative
  bound uir.testing.tolerance.softmax_bound derives of numpy's float64 softmax: about 4200 U
  for rows of 4096, mostly the row sum's C*U.

The float64 references err by about 2^-53 relative to the magnitudes involved: far below every
tolerance here.

Run: nice -n 10 uv run python benchmarks/cpu_bench.py [--quick] [--threads N] [--json FILE]
(--quick: small sizes, a check that runs; --old-printing: also time the Python formatter on the
a*b+c result, about 1.3 us an element)
"""

from __future__ import annotations

import argparse
import ctypes
import functools
import json
import math
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from shaped_bench import best, entry_point  # beside this script; run from the repo root

from uir.backend.c.plugin import CBackend
from uir.backend.c.printing import format_values
from uir.backend.c.runtime import default_threads
from uir.backend.c.toolchain import build_flags, compile_shared, cpu_has_x86_64_v3
from uir.core.dtypes import Type, f32
from uir.core.ops import Op
from uir.core.output import format_value
from uir.core.parse import parse
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.rewrite.tiling import split_shape
from uir.testing.movement import conv2d, expand, load, matmul, program, reshape, shrink, softmax
from uir.testing.shaped import A_TIMES_B_PLUS_C, SUM
from uir.testing.tolerance import SECOND_ORDER, U, fold_bound, softmax_bound

REPEATS = 3
WHOLE_REPEATS = 2

Check = Callable[[np.ndarray], tuple[bool, str]]
"""A check of C's result (shaped as numpy's): whether it is right, and what was compared."""


@dataclass
class Case:
    key: str  # the workload's name in --json
    name: str
    sink: UOp
    inputs: list[np.ndarray]  # in slot order, flat f32
    out: np.ndarray  # C's output buffer, shaped as numpy's result
    numpy_op: Callable[[], np.ndarray]
    check: Check
    work: float = 0.0  # flops (bound_by "fma") or the bytes it must move at least ("copy")
    bound_by: str = "copy"
    gap: str = ""  # what dominates the rest of the gap to the bound


def exact(expected: np.ndarray, what: str) -> Check:
    def check(result: np.ndarray) -> tuple[bool, str]:
        same = result.tobytes() == np.ascontiguousarray(expected).tobytes()
        differ = np.count_nonzero(result != expected)
        return same, f"bit for bit against {what} (tolerance 0): {differ} elements differ"

    return check


def within(reference: np.ndarray, bound: np.ndarray, what: str) -> Check:
    """|result - reference| <= bound at every element; the worst element's share of its bound
    is printed."""

    def check(result: np.ndarray) -> tuple[bool, str]:
        error = np.abs(result.astype(np.float64) - reference)
        share = float(np.max(error / bound))
        ok = bool(np.all(error <= bound))  # NaN fails
        return ok, f"{what}: worst error {share:.2g} of its bound"

    return check


def both(first: Check, second: Check) -> Check:
    def check(result: np.ndarray) -> tuple[bool, str]:
        (ok1, text1), (ok2, text2) = first(result), second(result)
        return ok1 and ok2, f"{text1}; {text2}"

    return check


def elementwise(n: int, rng: np.random.Generator) -> Case:
    a, b, c = (rng.standard_normal(n, dtype=np.float32) for _ in range(3))
    return Case(
        "a*b+c",
        f"a*b+c ({n} f32)",
        parse(A_TIMES_B_PLUS_C.format(n=n)).sink,
        [a, b, c],
        np.empty(n, np.float32),
        lambda: a * b + c,
        exact(a * b + c, "numpy's a * b + c"),
        16.0 * n,
        "copy",
        "memory: one fused pass reading a, b, c and writing the result; the rest is bandwidth",
    )


def split_sum(a: np.ndarray) -> np.float32:
    """The sum in the order the tile pass gives a FAST sum of a's size (uir.rewrite.tiling,
    `split_fast_fold`): P x L partial folds over R in order, then the partials in order; the
    sequential fold when it leaves the sum alone. numpy's add.accumulate folds in order in f32."""
    shape = split_shape(a.size)
    if shape is None:
        return np.add.accumulate(a)[-1]
    partials = np.add.accumulate(a.reshape(shape), axis=1)[:, -1, :]
    return np.add.accumulate(partials.reshape(-1))[-1]


def total(n: int, rng: np.random.Generator) -> Case:
    a = rng.standard_normal(n, dtype=np.float32)
    bound = fold_bound(n, np.sum(np.abs(a), dtype=np.float64))
    reference = np.sum(a, dtype=np.float64)
    fast = SUM.replace("(ADD, (0))", "(ADD, (0), FAST)")
    order = "the split order" if split_shape(n) else "the sequential order"
    return Case(
        "sum",
        f"sum ({n} f32, FAST)",
        parse(fast.format(n=n)).sink,
        [a],
        np.empty((), np.float32),
        lambda: np.sum(a),
        both(
            exact(split_sum(a), f"numpy's f32 fold in {order} the tile pass chose"),
            within(reference, bound, f"within n*U*sum|x| = {bound:.3g} (any order) of the f64 sum"),
        ),
        4.0 * n,
        "copy",
        "memory: 16 parts x 16 lanes (tile pass); each part's lanes carry a load-add-store "
        "chain through L1 (the partials are a LOCAL, not registers)",
    )


def row_softmax(rows: int, cols: int, rng: np.random.Generator) -> Case:
    x = rng.standard_normal((rows, cols), dtype=np.float32)

    def numpy_op() -> np.ndarray:
        e = np.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    shifted = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    reference = shifted / shifted.sum(axis=1, keepdims=True)
    relative = softmax_bound(x)
    return Case(
        "softmax",
        f"softmax of rows ({rows}x{cols} f32)",
        program(softmax(load(0, f32, (rows, cols)))),
        [x.reshape(-1)],
        np.empty((rows, cols), np.float32),
        numpy_op,
        within(
            reference,
            relative * reference,
            f"relative bound up to {relative.max() / U:.0f} U of the f64 softmax",
        ),
        8.0 * rows * cols,
        "copy",
        "compute: EXP2 is libm's double exp2 an element (issue 25 item 4), and the row max and "
        "sum are in-order folds, each a loop-carried chain (not FAST)",
    )


def layer_norm(x: UOp, eps: float = 1e-5) -> UOp:
    """(x - mean) / sqrt(var + eps) of each row of x[R,C]: mean and var are in-order REDUCEs
    over axis 1 divided by C (FDIV)."""
    rows, cols = x.type.shape

    def scalar(value: float) -> UOp:
        return expand(UOp(Op.CONST, Type(f32, ()), (), value), (rows,))

    def over_row(value: UOp) -> UOp:
        return expand(reshape(value, (rows, 1)), (rows, cols))

    def row_mean(value: UOp) -> UOp:
        total = UOp(Op.REDUCE, Type(f32, (rows,)), (value,), (Op.ADD, (1,)))
        return UOp(Op.FDIV, total.type, (total, scalar(float(cols))))

    centered = UOp(Op.SUB, x.type, (x, over_row(row_mean(x))))
    var = row_mean(UOp(Op.MUL, x.type, (centered, centered)))
    spread = UOp(Op.SQRT, var.type, (UOp(Op.ADD, var.type, (var, scalar(eps))),))
    return UOp(Op.FDIV, x.type, (centered, over_row(spread)))


def layer_norm_bound(x: np.ndarray, eps: float) -> tuple[np.ndarray, np.ndarray]:
    """The float64 layer norm of x's rows and a first-order bound on the f32 program's error.

    mean: C roundings of partial sums at most sum|x|, then /C: e_m <= U*mean|x|*C/C*C... i.e.
    U*sum|x| (all C steps) / C + U|m|. d = x - m: e_d <= e_m + U(|x| + |m|). var = sum(d*d)/C:
    each square errs by 2|d|e_d + U d^2, the fold by C*U*sum(d^2)/C, the division by U var.
    s = sqrt(var + eps): e_s <= (e_v + U(var + eps)) / (2s) + U s. y = d / s:
    e_y <= e_d / s + |y| e_s / s + U|y|."""
    x64 = x.astype(np.float64)
    cols = x.shape[1]
    m = x64.mean(axis=1, keepdims=True)
    e_m = U * np.abs(x64).sum(axis=1, keepdims=True) + U * np.abs(m)
    d = x64 - m
    e_d = e_m + U * (np.abs(x64) + np.abs(m))
    var = (d * d).mean(axis=1, keepdims=True)
    e_v = ((2 * np.abs(d) * e_d + U * d * d).sum(axis=1, keepdims=True)) / cols
    e_v += U * (d * d).sum(axis=1, keepdims=True) + U * var
    s = np.sqrt(var + eps)
    e_s = (e_v + U * (var + eps)) / (2 * s) + U * s
    y = d / s
    return y, SECOND_ORDER * (e_d / s + np.abs(y) * e_s / s + U * np.abs(y))


def row_layer_norm(rows: int, cols: int, rng: np.random.Generator) -> Case:
    x = rng.standard_normal((rows, cols), dtype=np.float32)
    eps = 1e-5

    def numpy_op() -> np.ndarray:
        centered = x - x.mean(axis=1, keepdims=True)
        return centered / np.sqrt((centered * centered).mean(axis=1, keepdims=True) + eps)

    reference, bound = layer_norm_bound(x, float(np.float32(eps)))
    return Case(
        "layernorm",
        f"layernorm of rows ({rows}x{cols} f32)",
        program(layer_norm(load(0, f32, (rows, cols)), eps)),
        [x.reshape(-1)],
        np.empty((rows, cols), np.float32),
        numpy_op,
        within(reference, bound, "the first-order bound of layer_norm_bound"),
        8.0 * rows * cols,
        "copy",
        "compute: the mean and variance are in-order row folds (not FAST), each a loop-carried "
        "add chain at the add's latency, not vectorized",
    )


def chunked_matmul(a: UOp, b: UOp, chunk: int) -> UOp:
    """a[M,K] @ b[K,N] as the sum of the FAST matmuls of K chunks of `chunk` (a single
    `[M, K, N]` product may hold more elements than a type allows)."""
    (m, k), (_, n) = a.type.shape, b.type.shape
    total = None
    for start in range(0, k, chunk):
        left = shrink(a, ((0, m), (start, start + chunk)))
        right = shrink(b, ((start, start + chunk), (0, n)))
        part = matmul(left, right, fast=True)
        total = part if total is None else UOp(Op.ADD, part.type, (total, part))
    assert total is not None
    return total


def matrix_product(
    m: int, k: int, n: int, rng: np.random.Generator, chunk: int | None = None
) -> Case:
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    left, right = load(0, f32, (m, k)), load(1, f32, (k, n))
    value = matmul(left, right, fast=True) if chunk is None else chunked_matmul(left, right, chunk)
    return Case(
        f"matmul {m}",
        f"matmul ({m}x{k} @ {k}x{n} f32, FAST)",
        program(value),
        [a.reshape(-1), b.reshape(-1)],
        np.empty((m, n), np.float32),
        lambda: a @ b,
        within(a64 @ b64, fold_bound(k, np.abs(a64) @ np.abs(b64)), f"within {k}U*(|a|@|b|)"),
        2.0 * m * k * n,
        "fma",
        "compute: tiled 32x128 (tile pass), one fused multiply-add a term (FAST), but the "
        "tile's accumulators live in L1, not registers (a load and a store per multiply-add: "
        "no register-blocked micro-kernel)",
    )


def convolution(batch: int, c: int, f: int, size: int, rng: np.random.Generator) -> Case:
    x = rng.standard_normal((batch, c, size, size), dtype=np.float32)
    w = rng.standard_normal((f, c, 3, 3), dtype=np.float32)

    def conv(x: np.ndarray, w: np.ndarray) -> np.ndarray:
        """numpy has no conv: im2col as a view of the padded input, then one tensordot."""
        padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)))
        windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3), (2, 3))
        out = np.tensordot(windows, w, axes=((1, 4, 5), (1, 2, 3)))  # [N, OH, OW, F]
        return np.ascontiguousarray(out.transpose(0, 3, 1, 2))

    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    terms = c * 9
    return Case(
        "conv2d",
        f"conv2d (batch {batch}, {c}->{f} ch, {size}x{size}, 3x3, pad 1, f32, FAST)",
        program(conv2d(load(0, f32, x.shape), load(1, f32, w.shape), padding=1, fast=True)),
        [x.reshape(-1), w.reshape(-1)],
        np.empty((batch, f, size, size), np.float32),
        lambda: conv(x, w),
        within(
            conv(x64, w64),
            fold_bound(terms, conv(np.abs(x64), np.abs(w64))),
            f"within {terms}U*(|x| conv |w|)",
        ),
        2.0 * batch * f * c * 9 * size * size,
        "fma",
        "compute: 4 filters a block (tile pass), but the PAD's gate stays in the innermost "
        "loop (border not split from the interior), accumulators in L2 not registers",
    )


SIZES = (  # each program's builder, its full size (the table) and its --quick size
    (elementwise, (1 << 24,), (1 << 12,)),
    (total, (1 << 24,), (1 << 12,)),
    (row_softmax, (4096, 4096), (16, 64)),
    (row_layer_norm, (4096, 4096), (16, 64)),
    (matrix_product, (1024, 1024, 1024), (24, 40, 16)),
    (functools.partial(matrix_product, chunk=256), (2048, 2048, 2048), (32, 512, 64)),
    (convolution, (8, 64, 64, 56), (2, 4, 3, 9)),
)


PEAK_C = r"""
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
/* 12 independent chains of AVX2 FMAs: enough to fill two FMA pipes of 4-5 cycles' latency. */
struct fma_job { int64_t n; float out; };
static void *fma_main(void *arg) {
    struct fma_job *job = arg;
    __m256 m = _mm256_set1_ps(0.9999999f), c = _mm256_set1_ps(1e-7f);
    /* named, not an array: gcc keeps each chain in its own register */
    __m256 a0 = _mm256_set1_ps(0), a1 = _mm256_set1_ps(1), a2 = _mm256_set1_ps(2);
    __m256 a3 = _mm256_set1_ps(3), a4 = _mm256_set1_ps(4), a5 = _mm256_set1_ps(5);
    __m256 a6 = _mm256_set1_ps(6), a7 = _mm256_set1_ps(7), a8 = _mm256_set1_ps(8);
    __m256 a9 = _mm256_set1_ps(9), a10 = _mm256_set1_ps(10), a11 = _mm256_set1_ps(11);
    for (int64_t i = 0; i < job->n; i++) {
        a0 = _mm256_fmadd_ps(a0, m, c); a1 = _mm256_fmadd_ps(a1, m, c);
        a2 = _mm256_fmadd_ps(a2, m, c); a3 = _mm256_fmadd_ps(a3, m, c);
        a4 = _mm256_fmadd_ps(a4, m, c); a5 = _mm256_fmadd_ps(a5, m, c);
        a6 = _mm256_fmadd_ps(a6, m, c); a7 = _mm256_fmadd_ps(a7, m, c);
        a8 = _mm256_fmadd_ps(a8, m, c); a9 = _mm256_fmadd_ps(a9, m, c);
        a10 = _mm256_fmadd_ps(a10, m, c); a11 = _mm256_fmadd_ps(a11, m, c);
    }
    __m256 sum = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(a0, a1), _mm256_add_ps(a2, a3)),
                               _mm256_add_ps(_mm256_add_ps(a4, a5), _mm256_add_ps(a6, a7)));
    sum = _mm256_add_ps(sum, _mm256_add_ps(_mm256_add_ps(a8, a9), _mm256_add_ps(a10, a11)));
    float lanes[8], total = 0;
    _mm256_storeu_ps(lanes, sum);
    for (int l = 0; l < 8; l++) total += lanes[l];
    job->out = total;
    return NULL;
}
float uir_peak_fma(int64_t n, int32_t threads) {
    pthread_t ids[64];
    struct fma_job jobs[64];
    float total = 0;
    for (int32_t t = 0; t < threads; t++) {
        jobs[t].n = n;
        if (t) pthread_create(&ids[t], NULL, fma_main, &jobs[t]);
    }
    fma_main(&jobs[0]);
    for (int32_t t = 1; t < threads; t++) pthread_join(ids[t], NULL);
    for (int32_t t = 0; t < threads; t++) total += jobs[t].out;
    return total;
}
struct copy_job { char *dst; const char *src; int64_t bytes; };
static void *copy_main(void *arg) {
    struct copy_job *job = arg;
    memcpy(job->dst, job->src, (size_t)job->bytes);
    return NULL;
}
void uir_peak_copy(char *dst, const char *src, int64_t bytes, int32_t threads) {
    pthread_t ids[64];
    struct copy_job jobs[64];
    for (int32_t t = 0; t < threads; t++) {
        int64_t lo = bytes * t / threads, hi = bytes * (t + 1) / threads;
        jobs[t].dst = dst + lo;
        jobs[t].src = src + lo;
        jobs[t].bytes = hi - lo;
        if (t) pthread_create(&ids[t], NULL, copy_main, &jobs[t]);
    }
    copy_main(&jobs[0]);
    for (int32_t t = 1; t < threads; t++) pthread_join(ids[t], NULL);
}
"""


@dataclass(frozen=True)
class Peak:
    fma_gflops: float  # 2 flops an FMA, every thread
    copy_gbytes: float  # bytes read plus bytes written a second, every thread


def measure_peak(threads: int) -> Peak | None:
    """The machine's FMA peak and copy bandwidth on `threads` threads, by PEAK_C; None on a CPU
    without x86-64-v3 (AVX2 and FMA)."""
    if not cpu_has_x86_64_v3():
        return None
    library = ctypes.CDLL(str(compile_shared([PEAK_C], (*build_flags(), "-O2"))))
    library.uir_peak_fma.argtypes = [ctypes.c_int64, ctypes.c_int32]
    library.uir_peak_fma.restype = ctypes.c_float
    library.uir_peak_copy.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64]
    library.uir_peak_copy.argtypes += [ctypes.c_int32]
    # short runs, many of them: the best one is the machine's, not its other users'
    steps = 2_000_000
    fma_s = best(lambda: library.uir_peak_fma(steps, threads), 10) / 1000
    source = np.ones(1 << 27, np.uint8)
    dest = np.zeros_like(source)
    copy_s = (
        best(
            lambda: library.uir_peak_copy(
                dest.ctypes.data, source.ctypes.data, source.size, threads
            ),
            REPEATS,
        )
        / 1000
    )
    return Peak(steps * 12 * 8 * 2 * threads / fma_s / 1e9, 2 * source.size / copy_s / 1e9)


def cases(quick: bool) -> list[Callable[[], Case]]:
    """Each case built only when it runs, so that one program's arrays are freed before the
    next one's are made."""
    rng = np.random.default_rng(0)
    return [
        functools.partial(build, *(small if quick else full), rng) for build, full, small in SIZES
    ]


def measure(
    case: Case, threads: int = 1, flags: tuple[str, ...] | None = None
) -> tuple[float, float, float, bool, str]:
    """(build s, C ms, numpy ms, right, what was checked)."""
    start = time.perf_counter()
    entry = entry_point(case.sink, threads, flags, optimize=True)
    build = time.perf_counter() - start
    pointers = [ctypes.c_void_p(a.ctypes.data) for a in (*case.inputs, case.out)]
    c_ms = best(lambda: entry(*pointers), REPEATS)
    np_ms = best(case.numpy_op, REPEATS)
    right, checked = case.check(case.out)
    return build, c_ms, np_ms, right, checked


def whole_run(case: Case, threads: int, repeats: int = WHOLE_REPEATS) -> float:
    """Seconds of `uir run --backend c` of the case's program, its output written to a file:
    the best of `repeats` after a warm-up that compiles (and caches) the program."""
    with tempfile.TemporaryDirectory() as work:
        source = Path(work) / "program.uir"
        source.write_text(print_program(case.sink))
        argv = [sys.executable, "-m", "uir.cli.main", "run", str(source), "--backend", "c"]
        argv += ["--threads", str(threads)]
        times = []
        for _ in range(repeats + 1):
            with open(Path(work) / "out.txt", "w") as out:
                start = time.perf_counter()
                subprocess.run(argv, stdout=out, check=True)
                times.append(time.perf_counter() - start)
    return min(times[1:])


def printing(case: Case, threads: int, old: bool) -> str:
    """The a*b+c result's text, formatted by the C formatter and (with `old`) by the Python
    path it replaces; both must be the same text."""
    start = time.perf_counter()
    (fast,) = format_values([case.out], [f32], threads)
    fast_s = time.perf_counter() - start
    line = f"printing its {case.out.size} elements: C formatter {fast_s:.2f} s"
    if old:
        start = time.perf_counter()
        slow = format_value(case.out, f32)
        slow_s = time.perf_counter() - start
        same = "the same text" if slow == fast else "DIFFERENT TEXT"
        line += f", Python's format_value {slow_s:.2f} s ({same})"
    return line


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small sizes: a quick check")
    parser.add_argument("--threads", type=int, default=default_threads(), help="C's threads")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON here")
    parser.add_argument(
        "--old-printing", action="store_true", help="time the Python formatter on a*b+c too"
    )
    parser.add_argument(
        "--flags",
        help="compile the kernels with these flags instead of the backend's (a comparison: "
        "'-std=c99 -O2 -ffp-contract=off -fexcess-precision=standard -fno-fast-math -fPIC "
        "-shared -pthread' were the flags before issue 25)",
    )
    parser.add_argument("--no-whole", action="store_true", help="skip the whole `uir run`s")
    args = parser.parse_args()
    flags = tuple(args.flags.split()) if args.flags else None
    if not CBackend().available()[0]:
        print("no C compiler: nothing to measure")
        return 1
    print(f"{platform.processor() or platform.machine()}, {_cpu_name()}, numpy {np.__version__}")
    print(f"best of {REPEATS} (whole runs: of {WHOLE_REPEATS}); C on {args.threads} threads")
    peak = measure_peak(args.threads)
    if peak is None:
        print("peak: not measured (the CPU lacks x86-64-v3)")
    else:
        print(
            f"peak on {args.threads} threads: FMA {peak.fma_gflops:.1f} GFLOP/s, "
            f"copy {peak.copy_gbytes:.1f} GB/s (read + written)"
        )
    print(
        f"{'program':58} {'build s':>8} {'C ms':>9} {'numpy ms':>9} {'C/numpy':>8} "
        f"{'whole s':>8}  check"
    )
    failed = 0
    notes, results, gaps = [], [], []
    printed = ""
    for make in cases(args.quick):
        case = make()
        build, c_ms, np_ms, right, checked = measure(case, args.threads, flags)
        repeats = 1 if args.quick else WHOLE_REPEATS
        whole = math.nan if args.no_whole else whole_run(case, args.threads, repeats)
        verdict = "ok" if right else "FAIL"
        failed += not right
        print(
            f"{case.name:58} {build:8.2f} {c_ms:9.2f} {np_ms:9.2f} {c_ms / np_ms:8.2f} "
            f"{whole:8.2f}  {verdict}",
            flush=True,
        )
        notes.append(f"  {verdict} {case.name}: {checked}")
        fraction = math.nan
        if peak is not None:
            rate = case.work / (c_ms / 1000)
            if case.bound_by == "fma":
                fraction = rate / (peak.fma_gflops * 1e9)
                reached = f"{rate / 1e9:.1f} GFLOP/s, {fraction:.0%} of the FMA peak"
            else:
                fraction = rate / (peak.copy_gbytes * 1e9)
                reached = f"{rate / 1e9:.1f} GB/s of least traffic, {fraction:.0%} of copy"
            gaps.append(f"  {case.key}: {reached}; {case.gap}")
        if case.key == "a*b+c":
            printed = f"a*b+c, {printing(case, args.threads, args.old_printing)}"
        results.append(
            {
                "name": case.key,
                "uir_s": c_ms / 1000,
                "numpy_s": np_ms / 1000,
                "build_s": build,
                "whole_s": whole,
                "threads": args.threads,
                "ok": right,
                "check": checked,
                "peak_fraction": fraction,
                "bound_by": case.bound_by,
                "gap": case.gap,
            }
        )
    print("checks:")
    print("\n".join(notes))
    print(printed)
    if gaps:
        print("against the machine's peak, and what dominates the rest of the gap:")
        print("\n".join(gaps))
    if args.json:
        measured = {} if peak is None else {"fma_gflops": peak.fma_gflops}
        if peak is not None:
            measured["copy_gbytes"] = peak.copy_gbytes
        report = {"results": results, "peak": measured}
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")
    return 1 if failed else 0


def _cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as info:
            names = [
                line.split(":", 1)[1].strip() for line in info if line.startswith("model name")
            ]
    except OSError:
        return "unknown CPU"
    return f"{names[0]} x {len(names)}" if names else "unknown CPU"


if __name__ == "__main__":
    sys.exit(main())

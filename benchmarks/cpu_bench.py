"""The CPU performance table: `--backend c` against numpy, side by side in one process.

Five programs, each built as UOps from uir.testing (the very programs the tests check):

- a*b + c, 16.8M f32: one fused loop; numpy `a * b + c` (two passes, a temporary).
- sum, 16.8M f32: a REDUCE folded in order; `np.sum` (pairwise, vectorized).
- softmax of the rows of 4096x4096 f32: REDUCE MAX, EXP2, REDUCE ADD, FDIV; numpy
  `exp(x - max) / sum`.
- matmul 1024x1024 @ 1024x1024 f32: movement ops, MUL, one REDUCE; `a @ b` (BLAS sgemm).
- conv2d, batch 8, 64 -> 64 channels, 56x56, 3x3, padding 1: PAD, windows, MUL, one REDUCE.
  numpy has no conv: `sliding_window_view` + `tensordot` (im2col, then BLAS sgemm).

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

`--json FILE` writes {"results": [{"name", "uir_s", "numpy_s", "build_s", "whole_s", "ok",
"check"}, ...]} (seconds), one entry a workload, named `a*b+c`, `sum`, `softmax`, `matmul 1024`,
`conv2d`.

Correctness first: every C result is checked, and a wrong one prints FAIL and makes the exit
status 1. The reference is numpy, in float64 where the orders differ:

- a*b + c: bit for bit against numpy's f32 `a * b + c` (tolerance 0): one rounding per op on both
  sides, and the C compiler may not contract to fused multiply-add (toolchain.py's flags).
- sum: bit for bit against numpy's `add.accumulate` (tolerance 0), which folds sequentially in f32
  as uir.md 8 does; and within U * sum_k |s_k| of the float64 sum, s_k the f32 partial sums (each
  addition errs by at most U times its rounded result). The timed `np.sum` adds pairwise: its
  bits are not the specified fold's.
- matmul, conv2d: a fold of K rounded products (K = 1024; C*KH*KW = 576) is within K*U times the
  sum of the terms' absolute values of the exact value (uir.testing.tolerance.fold_bound); the
  float64 reference and that sum come from numpy in float64.
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
from uir.core.dtypes import f32
from uir.core.output import format_value
from uir.core.parse import parse
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.testing.movement import conv2d, load, matmul, program, softmax
from uir.testing.shaped import A_TIMES_B_PLUS_C, SUM
from uir.testing.tolerance import U, fold_bound, softmax_bound

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
    )


def total(n: int, rng: np.random.Generator) -> Case:
    a = rng.standard_normal(n, dtype=np.float32)
    partial = np.add.accumulate(a)
    bound = U * np.sum(np.abs(partial[1:]), dtype=np.float64)
    reference = np.sum(a, dtype=np.float64)
    return Case(
        "sum",
        f"sum ({n} f32)",
        parse(SUM.format(n=n)).sink,
        [a],
        np.empty((), np.float32),
        lambda: np.sum(a),
        both(
            exact(partial[-1], "numpy's sequential add.accumulate"),
            within(reference, bound, f"within U*sum|partial sums| = {bound:.3g} of the f64 sum"),
        ),
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
    )


def matrix_product(m: int, k: int, n: int, rng: np.random.Generator) -> Case:
    a = rng.standard_normal((m, k), dtype=np.float32)
    b = rng.standard_normal((k, n), dtype=np.float32)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    return Case(
        f"matmul {m}",
        f"matmul ({m}x{k} @ {k}x{n} f32)",
        program(matmul(load(0, f32, (m, k)), load(1, f32, (k, n)))),
        [a.reshape(-1), b.reshape(-1)],
        np.empty((m, n), np.float32),
        lambda: a @ b,
        within(a64 @ b64, fold_bound(k, np.abs(a64) @ np.abs(b64)), f"within {k}U*(|a|@|b|)"),
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
        f"conv2d (batch {batch}, {c}->{f} ch, {size}x{size}, 3x3, pad 1, f32)",
        program(conv2d(load(0, f32, x.shape), load(1, f32, w.shape), padding=1)),
        [x.reshape(-1), w.reshape(-1)],
        np.empty((batch, f, size, size), np.float32),
        lambda: conv(x, w),
        within(
            conv(x64, w64),
            fold_bound(terms, conv(np.abs(x64), np.abs(w64))),
            f"within {terms}U*(|x| conv |w|)",
        ),
    )


SIZES = (  # each program's builder, its full size (the table) and its --quick size
    (elementwise, (1 << 24,), (1 << 12,)),
    (total, (1 << 24,), (1 << 12,)),
    (row_softmax, (4096, 4096), (16, 64)),
    (matrix_product, (1024, 1024, 1024), (24, 40, 16)),
    (convolution, (8, 64, 64, 56), (2, 4, 3, 9)),
)


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
    entry = entry_point(case.sink, threads, flags)
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
    print(
        f"{'program':58} {'build s':>8} {'C ms':>9} {'numpy ms':>9} {'C/numpy':>8} "
        f"{'whole s':>8}  check"
    )
    failed = 0
    notes, results = [], []
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
            }
        )
    print("checks:")
    print("\n".join(notes))
    print(printed)
    if args.json:
        Path(args.json).write_text(json.dumps({"results": results}, indent=2) + "\n")
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

"""Writes bench/week8, the performance benchmarks `uir perf` grades week 8 with (spec/grading.md
section 15; bench/week8/README.md): each program as text and its expected lines, worked out here
with numpy, never by the compiler.

The inputs are periodic (small CONST patterns loaded from buffers, spread by EXPAND and RESHAPE,
plus a per-row offset), so the files are small and no compiler is handed megabytes of literals,
and their values are small integers: every product and every partial sum of the matmul, the
attention scores and the sums is an integer below 2^24, exact in f32 in any order, so those
results are the same bits whatever grouping a FAST reduction uses. Where EXP2 or a division
enters, the file states a relative tolerance derived in its comment.

Run: uv run python scripts/week8_bench.py bench/week8
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

F = np.float32
P8 = (0, -1, -2, -3, -1, 0, -2, -1)  # the column pattern
S4 = (0, 3, -2, 1)  # the row offsets


def fmt(v: float) -> str:
    v = float(F(v))
    return "nan" if math.isnan(v) else f"{v:.9g}"


def periodic(
    name: str, slot: int, rows: int, cols: int, pattern, offsets
) -> tuple[str, np.ndarray]:
    """x[i, j] = pattern[j mod len] + offsets[i mod len]: its statements and its numpy value."""
    n, m = len(pattern), len(offsets)
    text = f"""\
%{name}p = CONST f32[{n}] ({", ".join(map(str, pattern))})
%{name}pb = BUFFER f32[{n}] %{name}p {slot}
%{name}pl = LOAD f32[{n}] %{name}pb
%{name}pe = EXPAND f32[{rows * cols // n},{n}] %{name}pl
%{name}c = RESHAPE f32[{rows},{cols}] %{name}pe
%{name}o = CONST f32[{m}] ({", ".join(map(str, offsets))})
%{name}ob = BUFFER f32[{m}] %{name}o {slot + 1}
%{name}ol = LOAD f32[{m}] %{name}ob
%{name}oe = EXPAND f32[{rows // m},{m}] %{name}ol
%{name}or = RESHAPE f32[{rows},1] %{name}oe
%{name}ox = EXPAND f32[{rows},{cols}] %{name}or
%{name} = ADD f32[{rows},{cols}] %{name}c %{name}ox
"""
    value = np.add.outer(np.resize(np.array(offsets, np.float64), rows), np.resize(pattern, cols))
    return text, value


def matmul(m: int, k: int, n: int) -> tuple[str, list[str], str]:
    a_text, a = periodic("a", 0, m, k, P8, S4)
    b_text, b = periodic("b", 2, k, n, (1, 0, -1, 2, 0, 1, 1, -2), (0, 1, -1, 2))
    c = a @ b
    assert np.abs(c).max() < 2**24 and np.abs(a).sum(1).max() * np.abs(b).max() < 2**24
    text = (
        a_text
        + b_text
        + f"""\
%ar = RESHAPE f32[{m},{k},1] %a
%ae = EXPAND f32[{m},{k},{n}] %ar
%br = RESHAPE f32[1,{k},{n}] %b
%be = EXPAND f32[{m},{k},{n}] %br
%prod = MUL f32[{m},{k},{n}] %ae %be
%c = REDUCE f32[{m},{n}] %prod (ADD, (1), FAST)
%cmax = REDUCE f32 %c (MAX, (0, 1))
%cmin = REDUCE f32 %c (MIN, (0, 1))
%c00 = SHRINK f32[1,1] %c ((0, 1), (0, 1))
%out = SINK void %cmax %cmin %c00
"""
    )
    comment = (
        f"matmul {m}x{k} by {k}x{n} (FAST): its largest, smallest and first element. Every product "
        "and partial sum is an integer below 2^24, exact in any order"
    )
    return text, [fmt(c.max()), fmt(c.min()), fmt(c[0, 0])], comment


def fast_sum(n: int) -> tuple[str, list[str], str]:
    pattern = (1, 0, 1, 1, 0, 0, 1, 0)
    text = f"""\
%p = CONST f32[8] ({", ".join(map(str, pattern))})
%pb = BUFFER f32[8] %p 0
%pl = LOAD f32[8] %pb
%pe = EXPAND f32[{n // 8},8] %pl
%x = RESHAPE f32[{n}] %pe
%s = REDUCE f32 %x (ADD, (0), FAST)
%out = SINK void %s
"""
    total = n // 8 * sum(pattern)
    comment = f"the FAST sum of {n} elements of 0 and 1: every partial sum is an integer <= 2^24"
    return text, [fmt(total)], comment


def softmax(rows: int, cols: int) -> tuple[str, list[str], str]:
    x_text, x = periodic("x", 0, rows, cols, P8, S4)
    e = np.exp2(x - x.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    text = (
        x_text
        + f"""\
%m = REDUCE f32[{rows}] %x (MAX, (1))
%mr = RESHAPE f32[{rows},1] %m
%me = EXPAND f32[{rows},{cols}] %mr
%d = SUB f32[{rows},{cols}] %x %me
%e = EXP2 f32[{rows},{cols}] %d
%s = REDUCE f32[{rows}] %e (ADD, (1), FAST)
%sr = RESHAPE f32[{rows},1] %s
%se = EXPAND f32[{rows},{cols}] %sr
%p = FDIV f32[{rows},{cols}] %e %se
%pmax = REDUCE f32 %p (MAX, (0, 1))
%pmin = REDUCE f32 %p (MIN, (0, 1))
%out = SINK void %pmax %pmin
"""
    )
    comment = (
        f"a row softmax of x[{rows}, {cols}] (the row sums FAST): its largest and smallest "
        "probability. Each EXP2 is within 2 ulp (4u, u = 2^-24), the row sum of positive terms "
        f"within {cols}u relative in any order, the division u: under {cols + 6}u in all, "
        "hence 1e-4 rel"
    )
    return text, [fmt(p.max()), fmt(p.min())], comment


def layernorm(rows: int, cols: int) -> tuple[str, list[str], str]:
    x_text, x = periodic("x", 0, rows, cols, P8, S4)
    mean = x.mean(1, keepdims=True)
    d = x - mean
    var = (d * d).mean(1, keepdims=True)
    # mean, d, d*d and their sums are multiples of 2^-6 below 2^24 * 2^-6: exact in f32 in any
    # order, so only SQRT and the division round, each once and correctly (as numpy's f32 ones)
    y = F(d) / np.sqrt(F(var) + F(2**-10))
    text = (
        x_text
        + f"""\
%n = CONST f32 {cols}
%ne = EXPAND f32[{rows}] %n
%sum = REDUCE f32[{rows}] %x (ADD, (1), FAST)
%mean = FDIV f32[{rows}] %sum %ne
%mr = RESHAPE f32[{rows},1] %mean
%me = EXPAND f32[{rows},{cols}] %mr
%d = SUB f32[{rows},{cols}] %x %me
%dd = MUL f32[{rows},{cols}] %d %d
%ss = REDUCE f32[{rows}] %dd (ADD, (1), FAST)
%var = FDIV f32[{rows}] %ss %ne
%eps = CONST f32 0.0009765625
%epse = EXPAND f32[{rows}] %eps
%ve = ADD f32[{rows}] %var %epse
%sd = SQRT f32[{rows}] %ve
%sdr = RESHAPE f32[{rows},1] %sd
%sde = EXPAND f32[{rows},{cols}] %sdr
%y = FDIV f32[{rows},{cols}] %d %sde
%ymax = REDUCE f32 %y (MAX, (0, 1))
%ymin = REDUCE f32 %y (MIN, (0, 1))
%out = SINK void %ymax %ymin
"""
    )
    comment = (
        f"a layer norm (eps 2^-10) of each row of x[{rows}, {cols}] (sums FAST): its largest and "
        "smallest element. Means, deviations, squares and their sums are exact multiples of "
        "2^-6 in any order; SQRT and FDIV round once each, so the bits are fixed"
    )
    return text, [fmt(y.max()), fmt(y.min())], comment


def attention_scores(t: int, s: int, d: int) -> tuple[str, list[str], str]:
    q_text, q = periodic("q", 0, t, d, P8, S4)
    k_text, k = periodic("k", 2, s, d, (1, 0, -1, 0, 1, 1, 0, -1), (0, 1, -1, 0))
    scores = q @ k.T
    assert np.abs(scores).max() < 2**24
    e = np.exp2(scores - scores.max(1, keepdims=True))
    p = e / e.sum(1, keepdims=True)
    text = (
        q_text
        + k_text
        + f"""\
%qr = RESHAPE f32[{t},1,{d}] %q
%qe = EXPAND f32[{t},{s},{d}] %qr
%kr = RESHAPE f32[1,{s},{d}] %k
%ke = EXPAND f32[{t},{s},{d}] %kr
%qk = MUL f32[{t},{s},{d}] %qe %ke
%sc = REDUCE f32[{t},{s}] %qk (ADD, (2), FAST)
%m = REDUCE f32[{t}] %sc (MAX, (1))
%mr = RESHAPE f32[{t},1] %m
%me = EXPAND f32[{t},{s}] %mr
%z = SUB f32[{t},{s}] %sc %me
%e = EXP2 f32[{t},{s}] %z
%sum = REDUCE f32[{t}] %e (ADD, (1), FAST)
%sr = RESHAPE f32[{t},1] %sum
%se = EXPAND f32[{t},{s}] %sr
%w = FDIV f32[{t},{s}] %e %se
%smax = REDUCE f32 %sc (MAX, (0, 1))
%wmax = REDUCE f32 %w (MAX, (0, 1))
%out = SINK void %smax %wmax
"""
    )
    comment = (
        f"attention weights of q[{t}, {d}] against k[{s}, {d}] (scores in log2 units, FAST "
        "folds): the largest score (an exact integer) and the largest weight. The weight's "
        f"error as the softmax's: under {s + 6}u relative, hence 1e-3 rel"
    )
    return text, [fmt(scores.max()), fmt(p.max())], comment


BENCHMARKS = {
    "matmul_512": (matmul(512, 512, 512), None),
    "sum_2e24": (fast_sum(1 << 24), None),
    "softmax_4096x1024": (softmax(4096, 1024), "1e-4 rel"),
    "layernorm_4096x1024": (layernorm(4096, 1024), None),
    "attention_scores_512x2048x64": (attention_scores(512, 2048, 64), "1e-3 rel"),
}


def main() -> None:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name, ((text, expect, comment), tolerance) in BENCHMARKS.items():
        lines = [f"# expect: {e}" for e in expect]
        if tolerance:
            lines.append(f"# tolerance: {tolerance}")
        words, line = comment.split(), "#"
        for word in words:  # the comment wrapped at 99 columns
            if len(line) + 1 + len(word) > 99:
                lines.append(line)
                line = "#"
            line += " " + word
        lines.append(line)
        (out / f"{name}.uir").write_text("\n".join(lines) + "\n" + text)


if __name__ == "__main__":
    main()

"""Writes suites/week6 (README.md there): each test's program, built as text, and its expected
lines, worked out here with numpy (float32 steps, every fold one element at a time in row-major
order of the reduced axes, uir.md 8), never by the compiler.

Run: uv run python scripts/week6_suite.py suites/week6
"""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np

OUT = Path(sys.argv[1])
F = np.float32
TESTS: dict[str, tuple[str, str, list[str], str | None]] = {}


def fmt(a, dtype: str) -> str:
    a = np.asarray(a).reshape(-1)
    out = []
    for v in a:
        if dtype == "bool":
            out.append("true" if v else "false")
        elif dtype in ("f32",):
            v = float(v)
            out.append("nan" if math.isnan(v) else f"{v:.9g}")
        else:
            out.append(str(int(v)))
    return " ".join(out)


def fold(a, axes, op="ADD", dtype=F):
    """Fold `axes` of `a` one element at a time, row-major over the reduced axes."""
    a = np.asarray(a)
    if isinstance(axes, int):
        axes = (axes,)
    axes = tuple(x % a.ndim for x in axes)
    kept = [d for d in range(a.ndim) if d not in axes]
    rows = np.transpose(a, kept + list(axes)).reshape(*[a.shape[d] for d in kept], -1)
    acc = rows[..., 0].copy()
    for j in range(1, rows.shape[-1]):
        x = rows[..., j]
        with np.errstate(all="ignore"):
            if op == "ADD":
                acc = (acc + x).astype(dtype)
            elif op == "MUL":
                acc = (acc * x).astype(dtype)
            elif op == "MAX":
                acc = (
                    np.where(np.isnan(acc) | np.isnan(x), np.nan, np.maximum(acc, x)).astype(dtype)
                    if dtype == F
                    else np.maximum(acc, x)
                )
            elif op == "MIN":
                acc = (
                    np.where(np.isnan(acc) | np.isnan(x), np.nan, np.minimum(acc, x)).astype(dtype)
                    if dtype == F
                    else np.minimum(acc, x)
                )
    return acc


class B:
    """A program as text: one statement per call, names %a, %b, ... in order."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self.n = 0
        self.slot = 0

    def buffer(self, type_: str, init: str | None = None) -> str:
        """A new global BUFFER, the next slot, with `init` (a CONST) or zeros."""
        self.slot += 1
        return self("BUFFER", type_, *([init] if init else []), arg=str(self.slot - 1))

    def input(self, type_: str, values) -> str:
        """An input: a BUFFER initialised from a CONST, loaded whole (the passes fold an op of
        CONSTs at compile time; of a LOAD they cannot)."""
        return self("LOAD", type_, self.buffer(type_, self.const(type_, values)))

    def __call__(self, op: str, type_: str, *srcs: str, arg: str | None = None, name=None) -> str:
        if name is None:
            name = f"%v{self.n}"
            self.n += 1
        parts = [f"{name} = {op} {type_}", *srcs]
        if arg is not None:
            parts.append(arg)
        self.lines.append(" ".join(parts))
        return name

    def const(self, type_: str, values) -> str:
        vals = np.asarray(values).reshape(-1)
        if vals.size == 1 and "[" not in type_:
            return self("CONST", type_, arg=_lit(vals[0]))
        return self("CONST", type_, arg="(" + ", ".join(_lit(v) for v in vals) + ")")

    def text(self, *outs: str) -> str:
        return "\n".join([*self.lines, "%out = SINK void " + " ".join(outs)]) + "\n"

    # shaped helpers -----------------------------------------------------------------------
    def expand_rows(self, dtype: str, row: str, shape) -> str:
        """A value [.., C] broadcast from a row [C]: EXPAND."""
        return self("EXPAND", t(dtype, shape), row)

    def column(self, dtype: str, v: str, shape) -> str:
        """v of shape shape[:-1] broadcast along a new last axis of size shape[-1]."""
        c = self("RESHAPE", t(dtype, (*shape[:-1], 1)), v)
        return self("EXPAND", t(dtype, shape), c)

    def scalar_like(self, dtype: str, value, shape) -> str:
        c = self.const(dtype, [value])
        return self("EXPAND", t(dtype, shape), c)


def _lit(v) -> str:
    if isinstance(v, (bool, np.bool_)):
        return "true" if v else "false"
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        if f == 0 and math.copysign(1, f) < 0:
            return "-0.0"
        r = repr(f)
        return r[:-2] if r.endswith(".0") else r
    return str(int(v))


def t(dtype: str, shape) -> str:
    shape = tuple(shape)
    return f"{dtype}[{','.join(map(str, shape))}]" if shape else dtype


def test(name: str, comment: str, tolerance: str | None = None):
    def register(fn):
        text, expected = fn()
        TESTS[name] = (comment, text, expected, tolerance)
        return fn

    return register


# numpy twins of the programs' building blocks ------------------------------------------------


def np_softmax(x):
    m = fold(x, -1, "MAX")
    e = np.exp2((x - m[..., None]).astype(F)).astype(F)
    s = fold(e, -1, "ADD")
    return (e / s[..., None]).astype(F), m, e, s


def uir_softmax(b: B, x: str, shape, parts=False):
    m = b("REDUCE", t("f32", shape[:-1]), x, arg=f"(MAX, ({len(shape) - 1}))")
    me = b.column("f32", m, shape)
    d = b("SUB", t("f32", shape), x, me)
    e = b("EXP2", t("f32", shape), d)
    s = b("REDUCE", t("f32", shape[:-1]), e, arg=f"(ADD, ({len(shape) - 1}))")
    se = b.column("f32", s, shape)
    q = b("FDIV", t("f32", shape), e, se)
    return (q, m, e, s) if parts else q


def np_layernorm(x, eps):
    n = x.shape[-1]
    mean = (fold(x, -1) / F(n)).astype(F)
    c = (x - mean[..., None]).astype(F)
    var = (fold((c * c).astype(F), -1) / F(n)).astype(F)
    root = np.sqrt((var + F(eps)).astype(F)).astype(F)
    return (c / root[..., None]).astype(F)


def uir_layernorm(b: B, x: str, shape, eps):
    last = len(shape) - 1
    rows = shape[:-1]
    n = b.scalar_like("f32", float(shape[-1]), rows)
    mean = b("FDIV", t("f32", rows), b("REDUCE", t("f32", rows), x, arg=f"(ADD, ({last}))"), n)
    c = b("SUB", t("f32", shape), x, b.column("f32", mean, shape))
    sq = b("MUL", t("f32", shape), c, c)
    var = b("FDIV", t("f32", rows), b("REDUCE", t("f32", rows), sq, arg=f"(ADD, ({last}))"), n)
    ev = b.scalar_like("f32", eps, rows)
    root = b("SQRT", t("f32", rows), b("ADD", t("f32", rows), var, ev))
    return b("FDIV", t("f32", shape), c, b.column("f32", root, shape))


def f32s(*v):
    return np.array(v, dtype=F)


# --- small programs: every output printed whole ------------------------------------------

# --- softmax ---------------------------------------------------------------------------------


def _softmax_test(name, comment, x, dtype_shape=None):
    x = np.asarray(x, dtype=F)

    @test(name, comment)
    def _():
        b = B()
        v = b.input(t("f32", (x.size,)), x)
        xs = b("RESHAPE", t("f32", x.shape), v) if x.ndim > 1 else v
        q = uir_softmax(b, xs, x.shape)
        return b.text(q), [fmt(np_softmax(x)[0], "f32")]


_softmax_test(
    "softmax_rows_2x3",
    "a row softmax, exp2(x - max) / sum: ONE kernel (spec/uir-week6.md 2.2): the row loop holds\n"
    "the max loop, the scratch row of exps (2.3), the sum loop and the writes. Every exp2 is of\n"
    "an integer, so exact; each row's sum and quotient round as numpy float32 does",
    [[1, 2, 3], [0, -1, 4]],
)
_softmax_test(
    "softmax_rows_maxima_fall",
    "row 0's maximum is 300, row 1's is 0: a max accumulator that is not started again for row 1\n"
    "keeps 300, and row 1's exps, 2^-300, flush to 0 (0/0: nan). Started per row: 2^-1 .. 1",
    [[300, 299, 298, 297], [0, -1, -2, -3]],
)
_softmax_test(
    "softmax_rows_sums_grow",
    "three rows whose exps sum to 1.75, 3.5 and 7 (each shifted by its own max): a sum\n"
    "accumulator that carries row 0's total into row 1 divides by the wrong sum",
    [
        [0, -1, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2, -2],
        [5, 5, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4, 4],
        [1, 1, 1, 1, 1, 1, 1, 0, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9, -9],
    ],
)
_softmax_test(
    "softmax_rank3_last_axis",
    "a softmax over the last axis of a [2,2,3]: rows are the (2,2) leading index, a nest of two\n"
    "row loops around the max, exp, sum and write loops",
    [[[1, 2, 3], [3, 2, 1]], [[-4, 0, 4], [7, 7, 7]]],
)
_softmax_test(
    "softmax_one_row",
    "a softmax of a single row [1,5]: the row loop runs once",
    [[2, 4, 1, 0, 3]],
)
_softmax_test(
    "softmax_rows_of_one",
    "a softmax over rows of length 1: every element is exp2(0)/1 = 1",
    [[5], [-3], [0.5], [100]],
)
_softmax_test(
    "softmax_with_minus_infinity",
    "exp2(-inf - max) is 0: a -inf entry gets probability 0, the others share the row",
    [[float("-inf"), 0, 1], [2, float("-inf"), float("-inf")]],
)
_softmax_test(
    "softmax_row_of_minus_infinity",
    "row 1 is all -inf: its max is -inf, -inf - -inf is nan, and so is its whole softmax; row\n"
    "0 is unaffected (a max or sum shared between rows would spread the nan)",
    [[1, 0, -1], [float("-inf")] * 3, [3, 3, 2]],
)
_softmax_test(
    "softmax_with_nan",
    "a nan in row 0 makes that row's max nan, so the whole row is nan; row 1 is not",
    [[1, float("nan"), 2], [0, 1, 2]],
)
_softmax_test(
    "softmax_fractions",
    "non-integer inputs: exp2 of a fraction is within 2 ulp, so the exps here are halves only:\n"
    "x - max is an integer although x is not",
    [[0.5, 1.5, -0.5, 1.5], [0.25, 0.25, 1.25, -2.75]],
)


@test(
    "softmax_and_its_row_sums",
    "the softmax and the sum of exps both printed: the sum is read by the output fill of its own\n"
    "and by the softmax's kernel, two kernels, so it is materialized once (2.1), "
    "not folded twice;\n"
    "the exps are read by two kernels too and are materialized whole",
)
def _():
    x = np.array([[1, 2, 3], [2, 0, 0]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    q, _m, _e, s = uir_softmax(b, v, (2, 3), parts=True)
    rq, _, _, rs = np_softmax(x)
    return b.text(q, s), [fmt(rq, "f32"), fmt(rs, "f32")]


@test(
    "softmax_and_its_row_maxima",
    "the softmax and each row's maximum printed: the max is read by two kernels (its output and\n"
    "the softmax), materialized once",
)
def _():
    x = np.array([[4, 1, 3], [-2, -8, -3], [0, 0, 0]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,3]", b.input("f32[9]", x))
    q, m, _e, _s = uir_softmax(b, v, (3, 3), parts=True)
    rq, rm, _, _ = np_softmax(x)
    return b.text(m, q), [fmt(rm, "f32"), fmt(rq, "f32")]


@test(
    "softmax_of_loaded_buffer",
    "the softmax of a whole-buffer LOAD reshaped to [2,4]: the loads are fused into the row loop\n"
    "(nothing overwrites the buffer, so no snapshot)",
)
def _():
    x = np.array([[3, 1, 2, 0], [-1, -1, 0, 2]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    q = uir_softmax(b, v, (2, 4))
    return b.text(q), [fmt(np_softmax(x)[0], "f32")]


@test(
    "softmax_of_staged_input",
    "the input is 2*x + 1, STAGEd (materialized once into a LOCAL, a kernel of its own), then\n"
    "softmaxed: two kernels",
)
def _():
    x = np.array([[0, 1, -1], [2, 0.5, 1.5]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    two = b.scalar_like("f32", 2.0, (2, 3))
    one = b.scalar_like("f32", 1.0, (2, 3))
    y = b("ADD", "f32[2,3]", b("MUL", "f32[2,3]", v, two), one)
    s = b("STAGE", "f32[2,3]", y)
    q = uir_softmax(b, s, (2, 3))
    y_ = (x * F(2) + F(1)).astype(F)
    return b.text(q), [fmt(np_softmax(y_)[0], "f32")]


@test(
    "softmax_of_elementwise_chain",
    "the softmax of (x + x) - 3, not staged: the chain is computed at each read of x, in the max\n"
    "loop and in the exp loop",
)
def _():
    x = np.array([[1, 2, 0, 1], [3, 3, 1, 2]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    three = b.scalar_like("f32", 3.0, (2, 4))
    y = b("SUB", "f32[2,4]", b("ADD", "f32[2,4]", v, v), three)
    q = uir_softmax(b, y, (2, 4))
    return b.text(q), [fmt(np_softmax(((x + x) - F(3)).astype(F))[0], "f32")]


@test(
    "softmax_two_of_one_input",
    "softmax(x) and softmax(-x) of one input: two costly exp values, each with its own scratch\n"
    "row; both outputs printed",
)
def _():
    x = np.array([[1, 0, 2], [0, 0, 1]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    n = b("NEG", "f32[2,3]", v)
    return b.text(uir_softmax(b, v, (2, 3)), uir_softmax(b, n, (2, 3))), [
        fmt(np_softmax(x)[0], "f32"),
        fmt(np_softmax(-x)[0], "f32"),
    ]


@test(
    "softmax_then_column_sums",
    "the softmax of each row, then summed over the rows (a REDUCE of axis 0, whose kept axis\n"
    "comes after the reduced one: materialized with its own nest, rows outermost); the row max\n"
    "and the row's exps are computed inside that nest's row loop",
)
def _():
    x = np.array([[0, 1, 2], [2, 1, 0], [1, 1, 1], [3, 0, 0]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[4,3]", b.input("f32[12]", x))
    q = uir_softmax(b, v, (4, 3))
    c = b("REDUCE", "f32[3]", q, arg="(ADD, (0))")
    return b.text(c), [fmt(fold(np_softmax(x)[0], 0), "f32")]


@test(
    "softmax_exps_read_flipped",
    "the exps divided by the row sum, read back to front: the scratch row of a row's exps (2.3)\n"
    "is read at C-1-j, not at j",
)
def _():
    x = np.array([[0, 1, 2, 3], [1, -1, 0, 1]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    _q, _m, e, s = uir_softmax(b, v, (2, 4), parts=True)
    f = b("FLIP", "f32[2,4]", e, arg="(1)")
    r = b("FDIV", "f32[2,4]", f, b.column("f32", s, (2, 4)))
    _, _, re_, rs = np_softmax(x)
    return b.text(r), [fmt((re_[:, ::-1] / rs[:, None]).astype(F), "f32")]


@test(
    "log_softmax_rows",
    "log-softmax, x - max - log2(sum of exps): LOG2 of a sum of 2^k is exact when the sum is a\n"
    "power of two (rows chosen so: 1 + 1 = 2, 1 + 0.5 + 0.5 = 2)",
)
def _():
    x = np.array([[3, 3, -100], [0, -1, -1]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    _q, m, _e, s = uir_softmax(b, v, (2, 3), parts=True)
    lg = b("LOG2", "f32[2]", s)
    d = b(
        "SUB",
        "f32[2,3]",
        b("SUB", "f32[2,3]", v, b.column("f32", m, (2, 3))),
        b.column("f32", lg, (2, 3)),
    )
    _, rm, _, rs = np_softmax(x)
    return b.text(d), [fmt(((x - rm[:, None]) - np.log2(rs)[:, None]).astype(F), "f32")]


# --- layer norm ------------------------------------------------------------------------------


def _layernorm_test(name, comment, x, eps):
    x = np.asarray(x, dtype=F)

    @test(name, comment)
    def _():
        b = B()
        v = b.input(t("f32", (x.size,)), x)
        xs = b("RESHAPE", t("f32", x.shape), v)
        return b.text(uir_layernorm(b, xs, x.shape, eps)), [fmt(np_layernorm(x, eps), "f32")]


_layernorm_test(
    "layernorm_rows_2x4",
    "a layer norm (x - mean) / sqrt(var + eps) per row: ONE kernel, the row loop holding the mean\n"
    "loop, the variance loop (reading the mean) and the writes. eps = 2^-10, exact in f32; the\n"
    "mean and variance divide by 4; SQRT and FDIV are correctly rounded",
    [[1, 2, 3, 4], [0, 0, 4, 4]],
    0.0009765625,
)
_layernorm_test(
    "layernorm_rows_differ",
    "three rows with means 10, -2 and 0.5: a mean or variance accumulator carried from one row to\n"
    "the next would give later rows the wrong centre",
    [[9, 11, 10, 10], [-2, -4, 0, -2], [0.5, 0.5, 1.5, -0.5]],
    0.25,
)
_layernorm_test(
    "layernorm_rank3",
    "a layer norm over the last axis of [2,2,3]",
    [[[1, 2, 3], [6, 0, 0]], [[-1, -1, 2], [4, 4, 4]]],
    1.0,
)
_layernorm_test(
    "layernorm_constant_row",
    "row 1 is constant: its variance is 0, so it prints 0/sqrt(eps) = 0 (eps 1)",
    [[1, 3, 5, 7], [2, 2, 2, 2]],
    1.0,
)
_layernorm_test(
    "layernorm_single_column",
    "rows of one element: x - mean is 0, so every output is +0 (eps 0.5)",
    [[3], [-7], [0.25]],
    0.5,
)


@test(
    "layernorm_with_scale_and_shift",
    "a layer norm times gamma plus beta (rows of [4] broadcast to [2,4]): the affine part is\n"
    "elementwise, fused into the write loop",
)
def _():
    x = np.array([[1, 2, 3, 6], [5, 5, 1, 1]], dtype=F)
    g = f32s(1, 2, 0.5, -1)
    be = f32s(0, 1, -1, 0.25)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    n = uir_layernorm(b, v, (2, 4), 0.125)
    ge = b("EXPAND", "f32[2,4]", b.input("f32[4]", g))
    bee = b("EXPAND", "f32[2,4]", b.input("f32[4]", be))
    y = b("ADD", "f32[2,4]", b("MUL", "f32[2,4]", n, ge), bee)
    r = ((np_layernorm(x, 0.125) * g).astype(F) + be).astype(F)
    return b.text(y), [fmt(r, "f32")]


@test(
    "rms_norm_rows",
    "RMS norm: x / sqrt(mean(x*x) + eps) per row, one fused sum of squares per row",
)
def _():
    x = np.array([[3, 4, 0], [1, 1, 1], [-2, 6, 3]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,3]", b.input("f32[9]", x))
    sq = b("MUL", "f32[3,3]", v, v)
    s = b("REDUCE", "f32[3]", sq, arg="(ADD, (1))")
    ms = b("FDIV", "f32[3]", s, b.scalar_like("f32", 3.0, (3,)))
    r = b("SQRT", "f32[3]", b("ADD", "f32[3]", ms, b.scalar_like("f32", 0.5, (3,))))
    y = b("FDIV", "f32[3,3]", v, b.column("f32", r, (3, 3)))
    rr = np.sqrt(((fold((x * x).astype(F), 1) / F(3)).astype(F) + F(0.5)).astype(F)).astype(F)
    return b.text(y), [fmt((x / rr[:, None]).astype(F), "f32")]


# --- reductions fused into their reader ----------------------------------------------------


def _rows_test(name, comment, dtype, x, op, consumer):
    """x (op-reduced over its last axis) combined with x by `consumer` in ("SUB", "ADD", "MUL")."""
    x = np.asarray(x)

    @test(name, comment)
    def _():
        b = B()
        v = b("RESHAPE", t(dtype, x.shape), b.input(t(dtype, (x.size,)), x))
        r = b("REDUCE", t(dtype, x.shape[:-1]), v, arg=f"({op}, ({x.ndim - 1}))")
        y = b(consumer, t(dtype, x.shape), v, b.column(dtype, r, x.shape))
        np_dtype = F if dtype == "f32" else np.int32
        xr = x.astype(np_dtype)
        rr = fold(xr, -1, op, np_dtype)
        with np.errstate(all="ignore"):
            if consumer == "SUB":
                e = xr - rr[..., None]
            elif consumer == "ADD":
                e = xr + rr[..., None]
            else:
                e = xr * rr[..., None]
        return b.text(y), [fmt(e.astype(np_dtype), dtype)]


_rows_test(
    "row_sum_subtracted_f32",
    "each element minus its row's sum: the sum is folded inside the\nrow loop, once a row",
    "f32",
    [[1.5, 2, 3], [4.5, -1, 0.25]],
    "ADD",
    "SUB",
)
_rows_test(
    "row_sum_added_i32_rank3",
    "each element plus the sum of its row, rank 3 [2,3,2]",
    "i32",
    [[[1, 2], [3, 4], [5, 6]], [[-1, -2], [0, 7], [10, -10]]],
    "ADD",
    "ADD",
)
_rows_test(
    "row_max_times_i32",
    "each element times its row's max (i32)",
    "i32",
    [[1, -5, 3], [-2, -1, -9], [0, 0, 0]],
    "MAX",
    "MUL",
)
_rows_test(
    "row_min_subtracted_i32",
    "each element minus its row's min: negative rows (a min starting at 0 would\nbe wrong here)",
    "i32",
    [[5, 7, 9], [-3, -8, -1]],
    "MIN",
    "SUB",
)
_rows_test(
    "row_product_times_f32",
    "each element times its row's product",
    "f32",
    [[1, 2, 3], [0.5, 0.5, 4], [-1, 2, -3]],
    "MUL",
    "MUL",
)
_rows_test(
    "row_sum_i32_wraps_fused",
    "the fused row sum wraps like every i32 op: 2^31 - 1 + 1 is -2^31",
    "i32",
    [[2147483647, 1, 0], [-2147483648, -1, 5]],
    "ADD",
    "ADD",
)
_rows_test(
    "row_max_f32_nan_fused",
    "a fused row MAX propagates a nan; a -inf row keeps -inf",
    "f32",
    [[1, float("nan"), 2], [float("-inf"), float("-inf"), -5]],
    "MAX",
    "ADD",
)
_rows_test(
    "row_sum_rank4_last_axis",
    "a sum over the last axis of a [2,1,2,3]: three row loops around the fold",
    "f32",
    [[[[1, 2, 3], [0.5, 0.5, 1]]], [[[-1, -1, -1], [8, 0, 0.25]]]],
    "ADD",
    "SUB",
)
_rows_test(
    "row_max_f32_many_rows",
    "eight rows of three, each with its own max: maxima that fall row after row",
    "f32",
    [[8, 7, 6], [7, 6, 5], [6, 5, 4], [5, 4, 3], [4, 3, 2], [3, 2, 1], [2, 1, 0], [1, 0, -1]],
    "MAX",
    "SUB",
)
_rows_test(
    "row_min_f32_grows",
    "row minima that grow row after row (a min carried across rows would stay at\nthe first)",
    "f32",
    [[-5, 0, 1], [-1, 2, 3], [4, 5, 6]],
    "MIN",
    "SUB",
)


@test(
    "row_sum_of_neg_zeros_fused",
    "a fused float sum starts at -0.0 like a materialized one: a row of -0.0s sums to -0, and\n"
    "-0 + -0 is -0 (a +0.0 start would print 0)",
)
def _():
    b = B()
    v = b("RESHAPE", "f32[2,2]", b.input("f32[4]", f32s(-0.0, -0.0, -0.0, 1)))
    s = b("REDUCE", "f32[2]", v, arg="(ADD, (1))")
    y = b("ADD", "f32[2,2]", v, b.column("f32", s, (2, 2)))
    return b.text(y), ["-0 -0 1 2"]


@test(
    "reduce_read_twice_same_index",
    "x / s + s with s the row sum: two reads of one element of s in one kernel are one fold\n"
    "(hash-consing), and both see the finished sum",
)
def _():
    x = np.array([[1, 3], [2, 6], [-1, 5]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,2]", b.input("f32[6]", x))
    s = b("REDUCE", "f32[3]", v, arg="(ADD, (1))")
    se = b.column("f32", s, (3, 2))
    y = b("ADD", "f32[3,2]", b("FDIV", "f32[3,2]", v, se), se)
    rs = fold(x, 1)[:, None]
    return b.text(y), [fmt(((x / rs).astype(F) + rs).astype(F), "f32")]


@test(
    "reduce_read_at_two_indices",
    "s[i] + s[R-1-i] with s the row sums of a [4,3]: two reads at different rows are two folds\n"
    "inside the row loop; a cache of the fold by value alone would read row i's sum twice",
)
def _():
    x = np.array([[1, 2, 3], [10, 20, 30], [100, 200, 300], [1000, 2000, 3000]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[4,3]", b.input("i32[12]", x))
    s = b("REDUCE", "i32[4]", v, arg="(ADD, (1))")
    f = b("FLIP", "i32[4]", s, arg="(0)")
    y = b("ADD", "i32[4]", s, f)
    rs = x.sum(1)
    return b.text(y), [fmt(rs + rs[::-1], "i32")]


@test(
    "reduce_read_shifted_by_shrink",
    "row sums of a [5,2] read through a window, s[1..4] - s[0..3]: the reads of s at i+1 and at i\n"
    "are folds of different rows in one loop",
)
def _():
    x = np.array([[1, 1], [2, 3], [5, 8], [13, 21], [34, 55]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[5,2]", b.input("i32[10]", x))
    s = b("REDUCE", "i32[5]", v, arg="(ADD, (1))")
    hi = b("SHRINK", "i32[4]", s, arg="((1, 5))")
    lo = b("SHRINK", "i32[4]", s, arg="((0, 4))")
    y = b("SUB", "i32[4]", hi, lo)
    rs = x.sum(1)
    return b.text(y), [fmt(rs[1:] - rs[:-1], "i32")]


@test(
    "reduce_read_by_two_outputs",
    "the row sums printed, and printed again doubled: two kernels read them, so they are\n"
    "materialized once (2.1)",
)
def _():
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,2]", b.input("i32[6]", x))
    s = b("REDUCE", "i32[3]", v, arg="(ADD, (1))")
    d = b("ADD", "i32[3]", s, s)
    return b.text(s, d), ["3 7 11", "6 14 22"]


@test(
    "sibling_sum_and_max_of_one_row",
    "x - max(row) + sum(row): two reductions of one source read by one kernel, each folded in\n"
    "the row loop (2.5: not yet one shared loop)",
)
def _():
    x = np.array([[1, 5, 2], [-3, -1, -2]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    m = b("REDUCE", "f32[2]", v, arg="(MAX, (1))")
    s = b("REDUCE", "f32[2]", v, arg="(ADD, (1))")
    y = b(
        "ADD",
        "f32[2,3]",
        b("SUB", "f32[2,3]", v, b.column("f32", m, (2, 3))),
        b.column("f32", s, (2, 3)),
    )
    r = ((x - fold(x, 1, "MAX")[:, None]).astype(F) + fold(x, 1)[:, None]).astype(F)
    return b.text(y), [fmt(r, "f32")]


@test(
    "sibling_min_max_range_of_rows",
    "max(row) - min(row) for each row, i32: two sibling folds whose results one subtraction\nreads",
)
def _():
    x = np.array([[3, 9, -4], [7, 7, 7], [0, 100, 50]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,3]", b.input("i32[9]", x))
    m = b("REDUCE", "i32[3]", v, arg="(MAX, (1))")
    n = b("REDUCE", "i32[3]", v, arg="(MIN, (1))")
    return b.text(b("SUB", "i32[3]", m, n)), [fmt(x.max(1) - x.min(1), "i32")]


@test(
    "column_broadcast_sum_materialized",
    "y[i,j] = x[i,j] + s[j] with s[j] the sum of row j of w[3,4]: the read of s sits in the i\n"
    "loop, which its index does not depend on, so the loops around it run 2*3 times for 3 sums:\n"
    "s is materialized (2.2) instead of folded again for every i",
)
def _():
    x = np.array([[1, 2, 3], [10, 20, 30]], dtype=np.int32)
    w = np.array([[1, 1, 1, 1], [2, 0, 2, 0], [5, -5, 7, 0]], dtype=np.int32)
    b = B()
    xv = b("RESHAPE", "i32[2,3]", b.input("i32[6]", x))
    wv = b("RESHAPE", "i32[3,4]", b.input("i32[12]", w))
    s = b("REDUCE", "i32[3]", wv, arg="(ADD, (1))")
    y = b("ADD", "i32[2,3]", xv, b("EXPAND", "i32[2,3]", s))
    return b.text(y), [fmt(x + w.sum(1)[None, :], "i32")]


@test(
    "nested_reduce_sum_of_row_maxima",
    "the sum over all rows of each row's max, a scalar: the row max is folded inside the scalar\n"
    "sum's row loop",
)
def _():
    x = np.array([[1, 4], [9, -2], [-3, -7], [0.5, 0.25]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[4,2]", b.input("f32[8]", x))
    m = b("REDUCE", "f32[4]", v, arg="(MAX, (1))")
    s = b("REDUCE", "f32", m, arg="(ADD, (0))")
    return b.text(s), [fmt(fold(fold(x, 1, "MAX"), 0), "f32")]


@test(
    "nested_reduce_rank3_max_then_sum",
    "s[a] = sum over b of (max over c of x[a,b,c]): the max fused into the sum's nest, itself\n"
    "the output's fill (a row sum printed as it is is stored where it is folded)",
)
def _():
    x = np.arange(24, dtype=np.int32).reshape(2, 3, 4) * np.int32(7) % np.int32(11) - np.int32(5)
    b = B()
    v = b("RESHAPE", "i32[2,3,4]", b.input("i32[24]", x))
    m = b("REDUCE", "i32[2,3]", v, arg="(MAX, (2))")
    s = b("REDUCE", "i32[2]", m, arg="(ADD, (1))")
    return b.text(s), [fmt(x.max(2).sum(1), "i32")]


@test(
    "nested_centre_then_max",
    "the max of each row after subtracting the row's mean, then the min over rows: three\n"
    "folds, each nested in the loops of its reader",
)
def _():
    x = np.array([[1, 2, 6], [4, 4, 7], [0, -3, 9]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,3]", b.input("f32[9]", x))
    mean = b(
        "FDIV",
        "f32[3]",
        b("REDUCE", "f32[3]", v, arg="(ADD, (1))"),
        b.scalar_like("f32", 3.0, (3,)),
    )
    c = b("SUB", "f32[3,3]", v, b.column("f32", mean, (3, 3)))
    m = b("REDUCE", "f32[3]", c, arg="(MAX, (1))")
    lo = b("REDUCE", "f32", m, arg="(MIN, (0))")
    mean_ = (fold(x, 1) / F(3)).astype(F)
    mm = fold((x - mean_[:, None]).astype(F), 1, "MAX")
    return b.text(lo), [fmt(mm.min(), "f32")]


@test(
    "reduce_of_pad_fused",
    "row sums of x padded by one zero column on each side, then x's rows minus them: the pad's\n"
    "gate sits inside the fused fold",
)
def _():
    x = np.array([[1, 2], [3, -4]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[2,2]", b.input("i32[4]", x))
    p = b("PAD", "i32[2,4]", v, arg="((0, 0), (1, 1))")
    s = b("REDUCE", "i32[2]", p, arg="(ADD, (1))")
    y = b("SUB", "i32[2,2]", v, b.column("i32", s, (2, 2)))
    return b.text(y), [fmt(x - x.sum(1)[:, None], "i32")]


@test(
    "reduce_of_flip_fused_f32_order",
    "the row sum of each row flipped: the fold runs over the flipped row, in its order: 1e8 is\n"
    "added last, so 1 + 1 + 1e8 (the flipped order) rounds to 100000000 while 1e8 + 1 + 1 would\n"
    "too; rows chosen so the order shows: (-1e8, 1e8, 1) flipped sums 1 + 1e8 - 1e8 = 0",
)
def _():
    x = np.array([[-1e8, 1e8, 1], [1, 1e8, -1e8]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    f = b("FLIP", "f32[2,3]", v, arg="(1)")
    s = b("REDUCE", "f32[2]", f, arg="(ADD, (1))")
    y = b("ADD", "f32[2,3]", v, b.column("f32", s, (2, 3)))
    rs = fold(x[:, ::-1], 1)
    return b.text(y), [fmt((x + rs[:, None]).astype(F), "f32")]


@test(
    "reduce_of_transpose_fused",
    "sum over the last axis of x transposed (x's column sums), added to the transposed x",
)
def _():
    x = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[2,3]", b.input("i32[6]", x))
    p = b("PERMUTE", "i32[3,2]", v, arg="(1, 0)")
    s = b("REDUCE", "i32[3]", p, arg="(ADD, (1))")
    y = b("ADD", "i32[3,2]", p, b.column("i32", s, (3, 2)))
    return b.text(y), [fmt(x.T + x.sum(0)[:, None], "i32")]


@test(
    "reduce_of_expanded_row",
    "the sum of a row broadcast to [3,4] is the row's sum in every row: 10 each, minus x",
)
def _():
    b = B()
    r = b.input("i32[4]", [1, 2, 3, 4])
    e = b("EXPAND", "i32[3,4]", r)
    s = b("REDUCE", "i32[3]", e, arg="(ADD, (1))")
    x = b.input("i32[3]", [1, 20, 300])
    return b.text(b("SUB", "i32[3]", s, x)), ["9 -10 -290"]


@test(
    "reduce_reshaped_then_read",
    "row sums of a [4,2] reshaped to [2,2] and added to a [2,2]: the fused fold's index comes\n"
    "through the reshape's div and mod",
)
def _():
    x = np.array([[1, 2], [3, 4], [5, 6], [7, 8]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[4,2]", b.input("i32[8]", x))
    s = b("REDUCE", "i32[4]", v, arg="(ADD, (1))")
    r = b("RESHAPE", "i32[2,2]", s)
    c = b.input("i32[4]", [100, 200, 300, 400])
    y = b("ADD", "i32[2,2]", r, b("RESHAPE", "i32[2,2]", c))
    return b.text(y), ["103 207 311 415"]


@test(
    "reduce_middle_axis_materialized",
    "a sum over the middle axis of [2,3,2] (a kept axis after the reduced one): not fusible, its\n"
    "nest is its own (2.1); then each kept element doubled",
)
def _():
    x = np.arange(12, dtype=np.int32).reshape(2, 3, 2)
    b = B()
    v = b("RESHAPE", "i32[2,3,2]", b.input("i32[12]", x))
    s = b("REDUCE", "i32[2,2]", v, arg="(ADD, (1))")
    y = b("ADD", "i32[2,2]", s, s)
    return b.text(y), [fmt(2 * x.sum(1), "i32")]


@test(
    "reduce_rank2_result_fused",
    "the sums over the last axis of a [2,2,3], a [2,2], added to a [2,2]: the fold runs inside\n"
    "both row loops",
)
def _():
    x = np.arange(12, dtype=F).reshape(2, 2, 3) * F(0.5)
    y0 = f32s(1, 2, 3, 4).reshape(2, 2)
    b = B()
    v = b("RESHAPE", "f32[2,2,3]", b.input("f32[12]", x))
    s = b("REDUCE", "f32[2,2]", v, arg="(ADD, (2))")
    w = b("RESHAPE", "f32[2,2]", b.input("f32[4]", y0))
    return b.text(b("MUL", "f32[2,2]", s, w)), [fmt((fold(x, 2) * y0).astype(F), "f32")]


@test(
    "reduce_two_last_axes_fused",
    "a sum over the last two axes of a [3,2,2], subtracted from a [3]: one fold of four terms\n"
    "per row, row-major",
)
def _():
    x = np.array([[[1, 2], [3, 4]], [[0.5, 0.25], [8, -8]], [[-1, -2], [-3, 1e8]]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,2,2]", b.input("f32[12]", x))
    s = b("REDUCE", "f32[3]", v, arg="(ADD, (1, 2))")
    c = b.input("f32[3]", [10, 10, 10])
    return b.text(b("SUB", "f32[3]", c, s)), [fmt((F(10) - fold(x, (1, 2))).astype(F), "f32")]


@test(
    "reduce_in_where_above_mean",
    "where(x > row mean, x, 0): the mean is read by the compare, fused into the write loop",
)
def _():
    x = np.array([[1, 2, 3, 10], [5, 5, 5, 6]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    mean = b(
        "FDIV",
        "f32[2]",
        b("REDUCE", "f32[2]", v, arg="(ADD, (1))"),
        b.scalar_like("f32", 4.0, (2,)),
    )
    gt = b("CMPLT", "bool[2,4]", b.column("f32", mean, (2, 4)), v)
    y = b("WHERE", "f32[2,4]", gt, v, b.scalar_like("f32", 0.0, (2, 4)))
    m = (fold(x, 1) / F(4)).astype(F)
    return b.text(y), [fmt(np.where(x > m[:, None], x, F(0)), "f32")]


@test(
    "reduce_argmax_mask",
    "x == max(row): a bool mask of each row's maxima",
)
def _():
    x = np.array([[3, 1, 3], [-1, -2, -3], [0, 9, 8]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,3]", b.input("i32[9]", x))
    m = b("REDUCE", "i32[3]", v, arg="(MAX, (1))")
    eq = b("CMPEQ", "bool[3,3]", v, b.column("i32", m, (3, 3)))
    return b.text(eq), [fmt(x == x.max(1)[:, None], "bool")]


@test(
    "reduce_stacked_sum_and_max",
    "STACK of each row's sum and each row's max, a [2,3]: both folds fused into the one write\n"
    "loop (the STACK's WHERE picks which)",
)
def _():
    x = np.array([[1, 2], [5, -1], [-4, -4]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,2]", b.input("i32[6]", x))
    s = b("REDUCE", "i32[3]", v, arg="(ADD, (1))")
    m = b("REDUCE", "i32[3]", v, arg="(MAX, (1))")
    return b.text(b("STACK", "i32[2,3]", s, m)), [fmt(np.stack([x.sum(1), x.max(1)]), "i32")]


@test(
    "reduce_cast_to_f32_then_divide",
    "the i32 row sums cast to f32, each element divided by its row's sum",
)
def _():
    x = np.array([[1, 3], [2, 2], [5, 0]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,2]", b.input("i32[6]", x))
    s = b("REDUCE", "i32[3]", v, arg="(ADD, (1))")
    fs = b("CAST", "f32[3]", s)
    fv = b("CAST", "f32[3,2]", v)
    y = b("FDIV", "f32[3,2]", fv, b.column("f32", fs, (3, 2)))
    return b.text(y), [fmt((x.astype(F) / x.sum(1).astype(F)[:, None]).astype(F), "f32")]


@test(
    "reduce_u8_row_sum_wraps",
    "u8 row sums wrap at 256, fused into an add",
)
def _():
    x = np.array([[200, 100], [1, 2]], dtype=np.uint8)
    b = B()
    v = b("RESHAPE", "u8[2,2]", b.input("u8[4]", x))
    s = b("REDUCE", "u8[2]", v, arg="(ADD, (1))")
    y = b("ADD", "u8[2,2]", v, b.column("u8", s, (2, 2)))
    r = (x.astype(np.int64) + x.astype(np.int64).sum(1)[:, None]) % 256
    return b.text(y), [fmt(r, "u8")]


@test(
    "row_sum_printed_rank3",
    "the row sums of x: f32[3,4,5] over (1, 2), printed as they are: one loop nest (3, 4, 5)\n"
    "storing each row's sum where it is folded (spec/uir-week6.md 2.2)",
)
def _():
    x = (np.arange(60, dtype=F).reshape(3, 4, 5) * F(0.1)).astype(F)
    b = B()
    v = b("RESHAPE", "f32[3,4,5]", b.input("f32[60]", x))
    s = b("REDUCE", "f32[3]", v, arg="(ADD, (1, 2))")
    return b.text(s), [fmt(fold(x, (1, 2)), "f32")]


@test(
    "row_max_printed_i32",
    "row maxima printed as they are (the output's fill folds them)",
)
def _():
    x = np.array([[-5, -9], [3, 2], [0, -1], [7, 70]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[4,2]", b.input("i32[8]", x))
    return b.text(b("REDUCE", "i32[4]", v, arg="(MAX, (1))")), [fmt(x.max(1), "i32")]


@test(
    "matmul_then_row_softmax",
    "a [2,3] @ [3,2] matmul (its K axis is the middle one of [M,K,N]: materialized, 2.1) and a\n"
    "softmax of each row of the product",
)
def _():
    a = np.array([[1, 0, 1], [0, 1, -1]], dtype=F)
    w = np.array([[1, 2], [0, 1], [2, 0]], dtype=F)
    b = B()
    av = b("RESHAPE", "f32[2,3]", b.input("f32[6]", a))
    wv = b("RESHAPE", "f32[3,2]", b.input("f32[6]", w))
    ae = b("EXPAND", "f32[2,3,2]", b("RESHAPE", "f32[2,3,1]", av))
    we = b("EXPAND", "f32[2,3,2]", b("RESHAPE", "f32[1,3,2]", wv))
    p = b("REDUCE", "f32[2,2]", b("MUL", "f32[2,3,2]", ae, we), arg="(ADD, (1))")
    q = uir_softmax(b, p, (2, 2))
    prod = fold((a[:, :, None] * w[None, :, :]).astype(F), 1)
    return b.text(q), [fmt(np_softmax(prod)[0], "f32")]


# --- costly values ---------------------------------------------------------------------------


@test(
    "costly_sqrt_read_once",
    "sqrt(x) read by one op: computed where it is read (2.2), nothing kept",
)
def _():
    x = f32s(4, 2, 9, 0.25, 16, 3).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r = b("SQRT", "f32[2,3]", v)
    return b.text(b("ADD", "f32[2,3]", r, v)), [fmt((np.sqrt(x) + x).astype(F), "f32")]


@test(
    "costly_sqrt_read_twice_one_kernel",
    "sqrt(x) read by an add and a multiply in one kernel: its row is computed once into a\n"
    "scratch row inside the row loop and read there twice (2.3)",
)
def _():
    x = f32s(4, 2, 9, 0.25, 16, 3).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r = b("SQRT", "f32[2,3]", v)
    y = b("MUL", "f32[2,3]", b("ADD", "f32[2,3]", r, v), r)
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt(((rr + x).astype(F) * rr).astype(F), "f32")]


@test(
    "costly_sqrt_row_read_flipped",
    "sqrt(x) + flip(sqrt(x)) along the rows: the scratch row is read at j and at C-1-j",
)
def _():
    x = f32s(1, 4, 9, 16, 2, 3, 5, 7).reshape(2, 4)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    r = b("SQRT", "f32[2,4]", v)
    y = b("SUB", "f32[2,4]", r, b("FLIP", "f32[2,4]", r, arg="(1)"))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((rr - rr[:, ::-1]).astype(F), "f32")]


@test(
    "costly_sqrt_row_read_shifted",
    "sqrt(x)[:, 1:] - sqrt(x)[:, :-1]: the scratch row read at j+1 and at j",
)
def _():
    x = f32s(1, 4, 9, 16, 25, 2, 8, 18, 32, 50).reshape(2, 5)
    b = B()
    v = b("RESHAPE", "f32[2,5]", b.input("f32[10]", x))
    r = b("SQRT", "f32[2,5]", v)
    hi = b("SHRINK", "f32[2,4]", r, arg="((0, 2), (1, 5))")
    lo = b("SHRINK", "f32[2,4]", r, arg="((0, 2), (0, 4))")
    rr = np.sqrt(x).astype(F)
    return b.text(b("SUB", "f32[2,4]", hi, lo)), [fmt((rr[:, 1:] - rr[:, :-1]).astype(F), "f32")]


@test(
    "costly_sqrt_rank1_read_twice",
    "a rank-1 sqrt read twice has no rows to keep one at a time: materialized whole (2.3)",
)
def _():
    x = f32s(1, 2, 4, 8)
    b = B()
    v = b.input("f32[4]", x)
    r = b("SQRT", "f32[4]", v)
    y = b("ADD", "f32[4]", r, b("FLIP", "f32[4]", r, arg="(0)"))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((rr + rr[::-1]).astype(F), "f32")]


@test(
    "costly_exp_read_by_two_kernels",
    "exp2(x) printed, and its row sums printed: two kernels read it, so it is materialized whole\n"
    "once (2.3), not computed in each",
)
def _():
    x = f32s(0, 1, 2, -1, -2, 3).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    e = b("EXP2", "f32[2,3]", v)
    s = b("REDUCE", "f32[2]", e, arg="(ADD, (1))")
    ee = np.exp2(x).astype(F)
    return b.text(e, s), [fmt(ee, "f32"), fmt(fold(ee, 1), "f32")]


@test(
    "costly_sqrt_rank3_rows",
    "sqrt of a [2,2,3] read twice: a scratch row of 3 inside the two row loops",
)
def _():
    x = (np.arange(12, dtype=F).reshape(2, 2, 3) ** 2).astype(F)
    b = B()
    v = b("RESHAPE", "f32[2,2,3]", b.input("f32[12]", x))
    r = b("SQRT", "f32[2,2,3]", v)
    y = b("SUB", "f32[2,2,3]", v, b("MUL", "f32[2,2,3]", r, r))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((x - (rr * rr).astype(F)).astype(F), "f32")]


@test(
    "costly_broadcast_has_one_reader",
    "sqrt(w)[j,k] read for every i of y[i,j,k] = x[i] * sqrt(w)[j,k] + sqrt(w)[j,k]: sqrt(w) has\n"
    "one reader, its EXPAND (the MUL and the ADD read that one UOp), "
    "so it is computed where it is\n"
    "read, once per (i, j, k) (2.3 counts readers, not reads through a broadcast)",
)
def _():
    x = f32s(1, 2, 3)
    w = f32s(1, 4, 9, 16).reshape(2, 2)
    b = B()
    xv = b("EXPAND", "f32[3,2,2]", b("RESHAPE", "f32[3,1,1]", b.input("f32[3]", x)))
    wv = b("RESHAPE", "f32[2,2]", b.input("f32[4]", w))
    r = b("EXPAND", "f32[3,2,2]", b("SQRT", "f32[2,2]", wv))
    y = b("ADD", "f32[3,2,2]", b("MUL", "f32[3,2,2]", xv, r), r)
    rr = np.sqrt(w).astype(F)
    return b.text(y), [fmt(((x[:, None, None] * rr).astype(F) + rr).astype(F), "f32")]


@test(
    "costly_read_in_repeating_loop_materialized",
    "sqrt(w) broadcast over i and flipped: y[i,j,k] = sqrt(w)[j,k] * x[i] + sqrt(w)[j,1-k]. Two\n"
    "readers (the EXPAND and the FLIP), and the loops around the reads repeat w's rows (the i\n"
    "loop), so sqrt(w) is materialized whole, a kernel of its own (2.3)",
)
def _():
    x = f32s(1, 2, 3)
    w = f32s(1, 4, 9, 16).reshape(2, 2)
    b = B()
    xv = b("EXPAND", "f32[3,2,2]", b("RESHAPE", "f32[3,1,1]", b.input("f32[3]", x)))
    wv = b("RESHAPE", "f32[2,2]", b.input("f32[4]", w))
    r = b("SQRT", "f32[2,2]", wv)
    re_ = b("EXPAND", "f32[3,2,2]", r)
    rf = b("EXPAND", "f32[3,2,2]", b("FLIP", "f32[2,2]", r, arg="(1)"))
    y = b("ADD", "f32[3,2,2]", b("MUL", "f32[3,2,2]", re_, xv), rf)
    rr = np.sqrt(w).astype(F)
    return b.text(y), [
        fmt(((rr[None] * x[:, None, None]).astype(F) + rr[None, :, ::-1]).astype(F), "f32")
    ]


@test(
    "costly_log2_read_twice",
    "log2(x) read twice, x a power of two in every place (exact): l * l + l",
    "2 ulp",
)
def _():
    x = f32s(1, 2, 4, 8, 0.5, 0.25, 1024, 16).reshape(2, 4)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    lg = b("LOG2", "f32[2,4]", v)
    y = b("ADD", "f32[2,4]", b("MUL", "f32[2,4]", lg, lg), lg)
    ll = np.log2(x).astype(F)
    return b.text(y), [fmt(((ll * ll).astype(F) + ll).astype(F), "f32")]


@test(
    "costly_of_costly",
    "sqrt(sqrt(x)), each read twice: two scratch rows, the inner read by the outer's row loop",
)
def _():
    x = f32s(16, 81, 1, 256, 625, 4096).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r1 = b("SQRT", "f32[2,3]", v)
    a = b("ADD", "f32[2,3]", r1, r1)
    r2 = b("SQRT", "f32[2,3]", a)
    y = b("MUL", "f32[2,3]", b("ADD", "f32[2,3]", r2, r1), r2)
    n1 = np.sqrt(x).astype(F)
    n2 = np.sqrt((n1 + n1).astype(F)).astype(F)
    return b.text(y), [fmt(((n2 + n1).astype(F) * n2).astype(F), "f32")]


@test(
    "costly_read_by_sum_and_write",
    "r = sqrt(x), then r / sum(r) per row: the sum loop and the write loop read the same scratch\n"
    "row, like the softmax's exps",
)
def _():
    x = f32s(1, 4, 9, 16, 25, 36).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r = b("SQRT", "f32[2,3]", v)
    s = b("REDUCE", "f32[2]", r, arg="(ADD, (1))")
    y = b("FDIV", "f32[2,3]", r, b.column("f32", s, (2, 3)))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((rr / fold(rr, 1)[:, None]).astype(F), "f32")]


@test(
    "costly_read_by_two_reductions",
    "r = sqrt(x) read by its row max and its row sum, then max / sum: both folds read the\n"
    "scratch row",
)
def _():
    x = f32s(1, 4, 9, 16, 0, 1, 4, 0.25).reshape(2, 4)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    r = b("SQRT", "f32[2,4]", v)
    s = b("REDUCE", "f32[2]", r, arg="(ADD, (1))")
    m = b("REDUCE", "f32[2]", r, arg="(MAX, (1))")
    rr = np.sqrt(x).astype(F)
    return b.text(b("FDIV", "f32[2]", m, s)), [
        fmt((fold(rr, 1, "MAX") / fold(rr, 1)).astype(F), "f32")
    ]


@test(
    "costly_through_pad",
    "sqrt(x) padded by a zero column, plus sqrt(x) padded on the other side: the pad reads the\n"
    "kept row at a clamped index under a WHERE",
)
def _():
    x = f32s(1, 4, 9, 16, 25, 36).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r = b("SQRT", "f32[2,3]", v)
    p1 = b("PAD", "f32[2,4]", r, arg="((0, 0), (1, 0))")
    p2 = b("PAD", "f32[2,4]", r, arg="((0, 0), (0, 1))")
    rr = np.sqrt(x).astype(F)
    a1 = np.pad(rr, ((0, 0), (1, 0)))
    a2 = np.pad(rr, ((0, 0), (0, 1)))
    return b.text(b("ADD", "f32[2,4]", p1, p2)), [fmt((a1 + a2).astype(F), "f32")]


@test(
    "costly_sin_of_zero_and_pi_free",
    "sin(x) read twice, x = 0 and -0 only (sin of a zero is that zero, exactly): s + s keeps -0",
    "2 ulp",
)
def _():
    b = B()
    v = b("RESHAPE", "f32[2,2]", b.input("f32[4]", f32s(0, -0.0, -0.0, 0)))
    s = b("SIN", "f32[2,2]", v)
    y = b("ADD", "f32[2,2]", s, b("FLIP", "f32[2,2]", s, arg="(1)"))
    return b.text(y), ["0 0 0 0"]


@test(
    "costly_rows_differ",
    "sqrt(x) read twice, four rows of different values: a scratch row computed for row 0 and\n"
    "read for every row would repeat row 0",
)
def _():
    x = (np.arange(1, 13, dtype=F).reshape(4, 3) ** 2).astype(F)
    b = B()
    v = b("RESHAPE", "f32[4,3]", b.input("f32[12]", x))
    r = b("SQRT", "f32[4,3]", v)
    y = b("ADD", "f32[4,3]", r, b("FLIP", "f32[4,3]", r, arg="(1)"))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((rr + rr[:, ::-1]).astype(F), "f32")]


@test(
    "costly_read_across_rows",
    "sqrt(x) + flip over the rows axis of sqrt(x): row i reads rows i and R-1-i of the costly\n"
    "value; each is a row of the loop's own iteration, so each gets a scratch row (two rows a\n"
    "row loop iteration), and row R-1-i's is not row i's",
)
def _():
    x = f32s(1, 4, 9, 16, 25, 36).reshape(3, 2)
    b = B()
    v = b("RESHAPE", "f32[3,2]", b.input("f32[6]", x))
    r = b("SQRT", "f32[3,2]", v)
    y = b("ADD", "f32[3,2]", r, b("FLIP", "f32[3,2]", r, arg="(0)"))
    rr = np.sqrt(x).astype(F)
    return b.text(y), [fmt((rr + rr[::-1]).astype(F), "f32")]


# --- STAGE, snapshots, outputs ---------------------------------------------------------------


@test(
    "stage_read_twice_materialized",
    "a STAGEd x*x read twice (flipped and not): computed once into a LOCAL, a kernel of its own",
)
def _():
    x = np.array([1, 2, 3, 4, 5, 6], dtype=np.int32)
    b = B()
    v = b.input("i32[6]", x)
    s = b("STAGE", "i32[6]", b("MUL", "i32[6]", v, v))
    y = b("SUB", "i32[6]", s, b("FLIP", "i32[6]", s, arg="(0)"))
    sq = x * x
    return b.text(y), [fmt(sq - sq[::-1], "i32")]


@test(
    "stage_of_reduce_one_copy",
    "a STAGE of a row sum is the row sum's LOCAL (no second copy), read by a later elementwise op",
)
def _():
    x = np.array([[1, 2], [3, 4], [5, 6]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,2]", b.input("i32[6]", x))
    s = b("STAGE", "i32[3]", b("REDUCE", "i32[3]", v, arg="(ADD, (1))"))
    y = b("MUL", "i32[3,2]", v, b.column("i32", s, (3, 2)))
    return b.text(y), [fmt(x * x.sum(1)[:, None], "i32")]


@test(
    "stage_softmax_then_layernorm",
    "a softmax STAGEd, then layer-normed: two kernels, the second reading the first's LOCAL",
)
def _():
    x = np.array([[0, 1, 2, 2], [3, 3, 3, 1]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    s = b("STAGE", "f32[2,4]", uir_softmax(b, v, (2, 4)))
    y = uir_layernorm(b, s, (2, 4), 0.0625)
    return b.text(y), [fmt(np_layernorm(np_softmax(x)[0], 0.0625), "f32")]


@test(
    "snapshot_before_overwrite",
    "a whole-buffer LOAD of b, then a STORE overwriting b with the row sums' broadcast, then the\n"
    "LOAD's value used: the LOAD is snapshotted before the overwrite (2.1), so the old values\n"
    "print",
)
def _():
    b = B()
    buf = b.buffer("i32[4]", b.const("i32[4]", [1, 2, 3, 4]))
    old = b("LOAD", "i32[4]", buf)
    m = b("RESHAPE", "i32[2,2]", old)
    s = b("REDUCE", "i32[2]", m, arg="(ADD, (1))")
    new = b("RESHAPE", "i32[4]", b.column("i32", s, (2, 2)))
    st = b("STORE", "void", buf, new)
    after = b("AFTER", "i32[4]", buf, st)
    y = b("ADD", "i32[4]", old, old)
    return b.text(y, after), ["2 4 6 8", "3 3 7 7"]


@test(
    "snapshot_read_with_new_contents",
    "old = LOAD b, then b overwritten with its row sums spread back, then old + LOAD of the new\n"
    "b: one kernel reads both versions, after the overwrite, so old must be a snapshot taken\n"
    "before it (2.1); a fused old would read the new contents (3 3 7 7 twice: 6 6 14 14)",
)
def _():
    b = B()
    buf = b.buffer("i32[4]", b.const("i32[4]", [1, 2, 3, 4]))
    old = b("LOAD", "i32[4]", buf)
    s = b("REDUCE", "i32[2]", b("RESHAPE", "i32[2,2]", old), arg="(ADD, (1))")
    st = b("STORE", "void", buf, b("RESHAPE", "i32[4]", b.column("i32", s, (2, 2))))
    new = b("LOAD", "i32[4]", b("AFTER", "i32[4]", buf, st))
    return b.text(b("ADD", "i32[4]", old, new)), ["4 5 10 11"]


@test(
    "store_softmax_then_load_and_sum",
    "the softmax stored whole into a buffer, loaded back after the STORE and summed per row:\n"
    "the STORE is a kernel, the load's sums another",
)
def _():
    x = np.array([[1, 2, 3, 4], [0, 0, 1, 1]], dtype=F)
    b = B()
    buf = b.buffer("f32[8]")
    v = b("RESHAPE", "f32[2,4]", b.input("f32[8]", x))
    q = uir_softmax(b, v, (2, 4))
    st = b("STORE", "void", buf, b("RESHAPE", "f32[8]", q))
    after = b("AFTER", "f32[8]", buf, st)
    ld = b("RESHAPE", "f32[2,4]", b("LOAD", "f32[8]", after))
    s = b("REDUCE", "f32[2]", ld, arg="(ADD, (1))")
    return b.text(s), [fmt(fold(np_softmax(x)[0], 1), "f32")]


@test(
    "two_outputs_share_a_reduce",
    "x - mean and x + mean both printed: the mean (read by two output fills, two kernels) is\n"
    "materialized once",
)
def _():
    x = np.array([[2, 4], [1, 0]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,2]", b.input("f32[4]", x))
    mean = b(
        "FDIV",
        "f32[2]",
        b("REDUCE", "f32[2]", v, arg="(ADD, (1))"),
        b.scalar_like("f32", 2.0, (2,)),
    )
    me = b.column("f32", mean, (2, 2))
    return b.text(b("SUB", "f32[2,2]", v, me), b("ADD", "f32[2,2]", v, me)), [
        "-1 1 0.5 -0.5",
        "5 7 1.5 0.5",
    ]


@test(
    "output_and_scalar_of_it",
    "a row-normalized x printed, and the sum of all of it (a scalar REDUCE, a kernel of its own)",
)
def _():
    x = np.array([[1, 1, 2], [3, 0, 1]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    s = b("REDUCE", "f32[2]", v, arg="(ADD, (1))")
    y = b("FDIV", "f32[2,3]", v, b.column("f32", s, (2, 3)))
    tot = b("REDUCE", "f32", y, arg="(ADD, (0, 1))")
    yy = (x / fold(x, 1)[:, None]).astype(F)
    return b.text(y, tot), [fmt(yy, "f32"), fmt(fold(yy, (0, 1)), "f32")]


# --- the kernel cut: loops and scalars the program writes itself ----------------------------


def raw(name, comment, text, expected, tolerance=None):
    TESTS[name] = (comment, text.strip() + "\n", expected, tolerance)


raw(
    "cut_two_loads_then_parallel_loop",
    "spec/uir-week6.md 1's example: the two loads are a kernel in order, the squares a PARALLEL\n"
    "loop; the loaded scalars cross between them, no buffer",
    """
%d = CONST i32[2] (3, 5)
%x = BUFFER i32[2] %d 0
%z = CONST i32 0
%one = CONST i32 1
%p = INDEX i32 %x %z
%q = INDEX i32 %x %one
%a = LOAD i32 %p
%b = LOAD i32 %q
%v = STACK i32[2] %a %b
%s = MUL i32[2] %v %v
%o = SINK void %s
""",
    ["9 25"],
)

raw(
    "cut_loaded_end_crosses_kernels",
    "a loaded 4 is the end of an in-order loop summing 0..3 into acc, and is broadcast into a\n"
    "shaped output (a PARALLEL loop of its own): the loaded scalar crosses into the later kernel",
    """
%d = CONST i32[1] (4)
%nb = BUFFER i32[1] %d 0
%acc = BUFFER i32[1] 1
%z = CONST i32 0
%p = INDEX i32 %nb %z
%len = LOAD i32 %p
%i = RANGE i32 %len 0
%ap = AFTER i32[1] %acc %i
%ai = INDEX i32 %ap %z
%old = LOAD i32 %ai
%new = ADD i32 %old %i
%st = STORE void %ai %new
%e = END void %st %i
%done = AFTER i32[1] %acc %e
%lv = EXPAND i32[3] %len
%sq = MUL i32[3] %lv %lv
%out = SINK void %done %sq
""",
    ["6", "16 16 16"],
)

raw(
    "cut_parallel_fill_then_row_sums",
    "a PARALLEL loop the program writes (o[k] = k*k), then the buffer loaded whole, viewed as\n"
    "[2,4] and summed per row: two PARALLEL kernels, the second reading the first's buffer",
    """
%o = BUFFER i32[8] 0
%n = CONST i32 8
%k = RANGE i32 %n (0, PARALLEL)
%p = INDEX i32 %o %k
%sq = MUL i32 %k %k
%s = STORE void %p %sq
%e = END void %s %k
%o1 = AFTER i32[8] %o %e
%x = LOAD i32[8] %o1
%m = RESHAPE i32[2,4] %x
%r = REDUCE i32[2] %m (ADD, (1))
%out = SINK void %r
""",
    ["14 126"],
)

raw(
    "cut_in_order_accumulate_then_parallel",
    "an in-order loop adding 0..4 into acc[0] (10), then acc broadcast times (1, 2, 3, 4): a\n"
    "kernel in order, then a PARALLEL one; the in-order kernel must run exactly once",
    """
%acc = BUFFER i32[1] 0
%n = CONST i32 5
%z = CONST i32 0
%i = RANGE i32 %n 0
%ap = AFTER i32[1] %acc %i
%ai = INDEX i32 %ap %z
%old = LOAD i32 %ai
%new = ADD i32 %old %i
%st = STORE void %ai %new
%e = END void %st %i
%done = AFTER i32[1] %acc %e
%dp = INDEX i32 %done %z
%tot = LOAD i32 %dp
%te = EXPAND i32[4] %tot
%c = CONST i32[4] (1, 2, 3, 4)
%y = MUL i32[4] %te %c
%out = SINK void %done %y
""",
    ["10", "10 20 30 40"],
)

raw(
    "cut_three_kernels_through_buffers",
    "kernel 0 writes a[k] = 3k (PARALLEL), kernel 1 writes b[k] = a[7-k] + 1 (PARALLEL), the\n"
    "output kernel prints b's running row maxima: each kernel reads what the one before wrote",
    """
%a = BUFFER i32[8] 0
%bb = BUFFER i32[8] 1
%n = CONST i32 8
%three = CONST i32 3
%seven = CONST i32 7
%one = CONST i32 1
%k = RANGE i32 %n (0, PARALLEL)
%pa = INDEX i32 %a %k
%v = MUL i32 %k %three
%sa = STORE void %pa %v
%ea = END void %sa %k
%a1 = AFTER i32[8] %a %ea
%j = RANGE i32 %n (1, PARALLEL)
%r = SUB i32 %seven %j
%pr = INDEX i32 %a1 %r
%lr = LOAD i32 %pr
%w = ADD i32 %lr %one
%pb = INDEX i32 %bb %j
%sb = STORE void %pb %w
%eb = END void %sb %j
%b1 = AFTER i32[8] %bb %eb
%x = LOAD i32[8] %b1
%m = RESHAPE i32[4,2] %x
%mx = REDUCE i32[4] %m (MAX, (1))
%out = SINK void %mx
""",
    ["22 16 10 4"],
)

raw(
    "cut_scalar_reduce_then_shaped",
    "x minus the mean of all of x: the scalar REDUCE is a kernel of its own (a LOCAL of one\n"
    "element that a later kernel reads: it must outlive its kernel), then the PARALLEL output",
    """
%v = CONST f32[4] (1, 2, 3, 6)
%s = REDUCE f32 %v (ADD, (0))
%n = CONST f32 4
%mean = FDIV f32 %s %n
%me = EXPAND f32[4] %mean
%d = SUB f32[4] %v %me
%out = SINK void %d %mean
""",
    ["-2 -1 0 3", "3"],
)

raw(
    "cut_scalars_only",
    "no loop at all: a run of scalar statements, one kernel in order",
    """
%a = CONST i32 6
%b = CONST i32 7
%c = MUL i32 %a %b
%d = SUB i32 %c %a
%out = SINK void %c %d
""",
    ["42", "36"],
)

raw(
    "cut_loaded_scalar_read_by_two_kernels",
    "one loaded scalar broadcast into two shaped outputs, each a PARALLEL kernel of its own:\n"
    "the load's kernel hands it to both",
    """
%d = CONST f32[1] (2.5)
%bf = BUFFER f32[1] %d 0
%z = CONST i32 0
%p = INDEX f32 %bf %z
%a = LOAD f32 %p
%e3 = EXPAND f32[3] %a
%c3 = CONST f32[3] (1, 2, 4)
%y1 = MUL f32[3] %e3 %c3
%e2 = EXPAND f32[2] %a
%c2 = CONST f32[2] (-1, 0.5)
%y2 = ADD f32[2] %e2 %c2
%out = SINK void %y1 %y2
""",
    ["2.5 5 10", "1.5 3"],
)

raw(
    "cut_whole_store_then_loop_reads",
    "a whole-buffer STORE of a softmax-free row sum broadcast (a PARALLEL kernel), then a loop\n"
    "the program writes reading that buffer in order and summing it into acc",
    """
%buf = BUFFER i32[4] 0
%acc = BUFFER i32[1] 1
%v = CONST i32[4] (1, 2, 3, 4)
%m = RESHAPE i32[2,2] %v
%s = REDUCE i32[2] %m (ADD, (1))
%c = RESHAPE i32[2,1] %s
%e = EXPAND i32[2,2] %c
%f = RESHAPE i32[4] %e
%st = STORE void %buf %f
%b1 = AFTER i32[4] %buf %st
%n = CONST i32 4
%z = CONST i32 0
%i = RANGE i32 %n 0
%ap = AFTER i32[1] %acc %i
%ai = INDEX i32 %ap %z
%old = LOAD i32 %ai
%pb = INDEX i32 %b1 %i
%x = LOAD i32 %pb
%new = ADD i32 %old %x
%s2 = STORE void %ai %new
%e2 = END void %s2 %i
%done = AFTER i32[1] %acc %e2
%out = SINK void %done %b1
""",
    ["20", "3 3 7 7"],
)

raw(
    "cut_matmul_by_hand_then_softmax",
    "week 3's matmul by hand (in-order loops, a LOCAL accumulator) into c[2,2], then the softmax\n"
    "of c's rows: the hand loops are a kernel in order, the softmax a PARALLEL one",
    """
%ad = CONST f32[4] (1, 2, 3, 4)
%bd = CONST f32[4] (1, 0, 0, 1)
%a = BUFFER f32[4] %ad 0
%b = BUFFER f32[4] %bd 1
%c = BUFFER f32[4] 2
%acc = LOCAL f32[1] 0
%two = CONST i32 2
%z = CONST i32 0
%fz = CONST f32 0
%i = RANGE i32 %two 0
%j = RANGE i32 %two 1
%kk = RANGE i32 %two 2
%accIJ = AFTER f32[1] %acc %i %j
%a0 = INDEX f32 %accIJ %z
%init = STORE void %a0 %fz
%accK = AFTER f32[1] %acc %init %kk
%ak = INDEX f32 %accK %z
%old = LOAD f32 %ak
%iK = MUL i32 %i %two
%ia = ADD i32 %iK %kk
%pa = INDEX f32 %a %ia
%va = LOAD f32 %pa
%kN = MUL i32 %kk %two
%jb = ADD i32 %kN %j
%pb = INDEX f32 %b %jb
%vb = LOAD f32 %pb
%prod = MUL f32 %va %vb
%new = ADD f32 %old %prod
%upd = STORE void %ak %new
%donek = END void %upd %kk
%accD = AFTER f32[1] %acc %donek
%ad0 = INDEX f32 %accD %z
%sum = LOAD f32 %ad0
%iN = MUL i32 %i %two
%ic = ADD i32 %iN %j
%pc = INDEX f32 %c %ic
%sc = STORE void %pc %sum
%endij = END void %sc %i %j
%c1 = AFTER f32[4] %c %endij
%x = LOAD f32[4] %c1
%xm = RESHAPE f32[2,2] %x
%m = REDUCE f32[2] %xm (MAX, (1))
%mc = RESHAPE f32[2,1] %m
%me = EXPAND f32[2,2] %mc
%dd = SUB f32[2,2] %xm %me
%ex = EXP2 f32[2,2] %dd
%s = REDUCE f32[2] %ex (ADD, (1))
%sc2 = RESHAPE f32[2,1] %s
%se = EXPAND f32[2,2] %sc2
%q = FDIV f32[2,2] %ex %se
%out = SINK void %q
""",
    [fmt(np_softmax(np.array([[1, 2], [3, 4]], dtype=F))[0], "f32")],
)


raw(
    "cut_in_order_between_parallel_loops",
    "a PARALLEL fill of a (a[k] = k), an in-order loop adding a into acc[0], a second PARALLEL\n"
    "loop writing c[k] = acc[0] + k: three kernels, the middle one in order, each run once",
    """
%a = BUFFER i32[4] 0
%acc = BUFFER i32[1] 1
%c = BUFFER i32[4] 2
%n = CONST i32 4
%z = CONST i32 0
%k = RANGE i32 %n (0, PARALLEL)
%pa = INDEX i32 %a %k
%sa = STORE void %pa %k
%ea = END void %sa %k
%a1 = AFTER i32[4] %a %ea
%i = RANGE i32 %n 1
%ap = AFTER i32[1] %acc %i
%ai = INDEX i32 %ap %z
%old = LOAD i32 %ai
%pi = INDEX i32 %a1 %i
%x = LOAD i32 %pi
%new = ADD i32 %old %x
%st = STORE void %ai %new
%e = END void %st %i
%done = AFTER i32[1] %acc %e
%dp = INDEX i32 %done %z
%tot = LOAD i32 %dp
%j = RANGE i32 %n (2, PARALLEL)
%pc = INDEX i32 %c %j
%w = ADD i32 %tot %j
%sc = STORE void %pc %w
%ec = END void %sc %j
%c1 = AFTER i32[4] %c %ec
%out = SINK void %done %c1
""",
    ["6", "6 7 8 9"],
)


@test(
    "softmax_rank3_rows_differ",
    "a softmax over the last axis of [3,2,2] whose six rows have six different maxima, falling\n"
    "then rising",
)
def _():
    x = np.array([[[9, 8], [1, 3]], [[-4, -6], [0, 0]], [[50, 49], [2, -2]]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,2,2]", b.input("f32[12]", x))
    return b.text(uir_softmax(b, v, (3, 2, 2))), [fmt(np_softmax(x)[0], "f32")]


@test(
    "softmax_transposed_input",
    "the softmax over the rows of x transposed (PERMUTE (1, 0) of a [3,2]): each row of the\n"
    "softmax reads a column of x",
)
def _():
    x = np.array([[0, 3], [1, 2], [2, 2]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,2]", b.input("f32[6]", x))
    p = b("PERMUTE", "f32[2,3]", v, arg="(1, 0)")
    return b.text(uir_softmax(b, p, (2, 3))), [fmt(np_softmax(np.ascontiguousarray(x.T))[0], "f32")]


@test(
    "layernorm_of_padded_rows",
    "a layer norm of x padded with a zero column on the right: the mean and variance fold\n"
    "over the pad's zeros too",
)
def _():
    x = np.array([[1, 2, 3], [4, 4, 8]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    p = b("PAD", "f32[2,4]", v, arg="((0, 0), (0, 1))")
    return b.text(uir_layernorm(b, p, (2, 4), 0.5)), [
        fmt(np_layernorm(np.pad(x, ((0, 0), (0, 1))), 0.5), "f32")
    ]


@test(
    "row_sum_and_row_max_of_difference",
    "d = x - row sum, then the row max of d, then d - that max: a fold read by a fold read by\n"
    "the writes, all in one row loop",
)
def _():
    x = np.array([[1, 2, 3], [-1, 5, 0], [2, 2, 2]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[3,3]", b.input("i32[9]", x))
    s = b("REDUCE", "i32[3]", v, arg="(ADD, (1))")
    d = b("SUB", "i32[3,3]", v, b.column("i32", s, (3, 3)))
    m = b("REDUCE", "i32[3]", d, arg="(MAX, (1))")
    y = b("SUB", "i32[3,3]", d, b.column("i32", m, (3, 3)))
    dd = x - x.sum(1)[:, None]
    return b.text(y), [fmt(dd - dd.max(1)[:, None], "i32")]


@test(
    "costly_exp_rank3_read_flipped",
    "exp2 of a [2,2,3] read forwards and flipped along the last axis: a scratch row of 3 per\n"
    "(a, b) row, read at k and at 2-k",
    "2 ulp",
)
def _():
    x = np.array([[[0, 1, 2], [-1, -2, 3]], [[4, 0, -3], [1, 1, 0]]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[2,2,3]", b.input("f32[12]", x))
    e = b("EXP2", "f32[2,2,3]", v)
    y = b("SUB", "f32[2,2,3]", e, b("FLIP", "f32[2,2,3]", e, arg="(2)"))
    ee = np.exp2(x).astype(F)
    return b.text(y), [fmt((ee - ee[..., ::-1]).astype(F), "f32")]


@test(
    "mean_read_by_output_and_scalar",
    "row means printed, and the largest of them: two kernels read the means (the output fill\n"
    "and the scalar max), so they are materialized once",
)
def _():
    x = np.array([[1, 2], [8, 4], [-3, -3]], dtype=F)
    b = B()
    v = b("RESHAPE", "f32[3,2]", b.input("f32[6]", x))
    mean = b(
        "FDIV",
        "f32[3]",
        b("REDUCE", "f32[3]", v, arg="(ADD, (1))"),
        b.scalar_like("f32", 2.0, (3,)),
    )
    hi = b("REDUCE", "f32", mean, arg="(MAX, (0))")
    return b.text(mean, hi), ["1.5 6 -3", "6"]


@test(
    "costly_two_values_two_rows",
    "sqrt(x) and sqrt(2x), each read twice in one kernel: two scratch rows in one row loop,\n"
    "each its own LOCAL",
)
def _():
    x = f32s(1, 4, 9, 2, 8, 18).reshape(2, 3)
    b = B()
    v = b("RESHAPE", "f32[2,3]", b.input("f32[6]", x))
    r1 = b("SQRT", "f32[2,3]", v)
    r2 = b("SQRT", "f32[2,3]", b("ADD", "f32[2,3]", v, v))
    y = b(
        "ADD",
        "f32[2,3]",
        b("MUL", "f32[2,3]", r1, r2),
        b("SUB", "f32[2,3]", r2, b("FLIP", "f32[2,3]", r1, arg="(1)")),
    )
    n1 = np.sqrt(x).astype(F)
    n2 = np.sqrt((x + x).astype(F)).astype(F)
    return b.text(y), [fmt(((n1 * n2).astype(F) + (n2 - n1[:, ::-1]).astype(F)).astype(F), "f32")]


@test(
    "sibling_folds_differ_by_op",
    "a row's max, min, sum and product, each fused, combined as (max - min) * sum + product",
)
def _():
    x = np.array([[1, 2, 3], [-2, 4, 1]], dtype=np.int32)
    b = B()
    v = b("RESHAPE", "i32[2,3]", b.input("i32[6]", x))
    r = {op: b("REDUCE", "i32[2]", v, arg=f"({op}, (1))") for op in ("MAX", "MIN", "ADD", "MUL")}
    y = b(
        "ADD",
        "i32[2]",
        b("MUL", "i32[2]", b("SUB", "i32[2]", r["MAX"], r["MIN"]), r["ADD"]),
        r["MUL"],
    )
    return b.text(y), [fmt((x.max(1) - x.min(1)) * x.sum(1) + x.prod(1), "i32")]


# --- big programs: every shaped intermediate holds 2^26 elements or more (256 MiB
# of f32 and up), over the suite's memory limit on its own; fused, each needs a row or a scalar.
# Inputs are built from short CONST patterns by EXPAND and RESHAPE (no buffer holds them):
# x[i, j] = P[j mod len(P)] + S[i mod len(S)], so every row is one of len(S) kinds, and the
# expectations are worked out on one row of each kind.

ROWS, COLS = 65536, 1024  # 2^26 elements
P = [0, -1, -2, -3, -1, 0, -2, -1]
S = [0, 100, -50, 7]


def periodic(b: B, shape, p=P, s=S) -> str:
    rows, cols = shape
    pe = b("EXPAND", t("f32", (rows * cols // len(p), len(p))), b.input(t("f32", (len(p),)), p))
    x0 = b("RESHAPE", t("f32", shape), pe)
    se = b("EXPAND", t("f32", (rows // len(s), len(s))), b.input(t("f32", (len(s),)), s))
    sf = b("RESHAPE", t("f32", (rows,)), se)
    return b("ADD", t("f32", shape), x0, b.column("f32", sf, shape))


def kinds(cols=COLS, p=P, s=S) -> np.ndarray:
    """One row of each kind: [len(s), cols]."""
    row = np.array([p[j % len(p)] for j in range(cols)], dtype=F)
    return np.stack([(row + F(v)).astype(F) for v in s])


BIG = (
    "Big: {what}. Every shaped intermediate holds {n} elements ({mib} MiB), over the suite's\n"
    "memory limit (README.md) on its own; fused, the program needs {fused}. "
    "x[i, j] = P[j mod 8] +\n"
    "S[i mod 4] with P = (0, -1, -2, -3, -1, 0, -2, -1), S = (0, 100, -50, 7): every row is one\n"
    "of four kinds, and the expectations are worked out on one row of each (numpy, f32 steps,\n"
    "folds in row-major order)"
)


def big(what, fused, n=ROWS * COLS):
    return BIG.format(what=what, n=n, mib=n * 4 >> 20, fused=fused)


@test(
    "big_softmax_rows",
    big(
        "a row softmax of x[65536, 1024], and the largest and smallest row sum of it. A max\n"
        "carried from a row of S = 100 into the next (S = -50) flushes that row's exps to zero",
        "a scratch row of 1024 exps and three scalars",
    ),
)
def _():
    b = B()
    x = periodic(b, (ROWS, COLS))
    q = uir_softmax(b, x, (ROWS, COLS))
    rs = b("REDUCE", t("f32", (ROWS,)), q, arg="(ADD, (1))")
    hi = b("REDUCE", "f32", rs, arg="(MAX, (0))")
    lo = b("REDUCE", "f32", rs, arg="(MIN, (0))")
    sums = fold(np_softmax(kinds())[0], 1)
    return b.text(hi, lo), [fmt(sums.max(), "f32"), fmt(sums.min(), "f32")]


@test(
    "big_softmax_largest_probability",
    big("the largest element of the row softmax of x[65536, 1024]", "a scratch row of exps"),
)
def _():
    b = B()
    q = uir_softmax(b, periodic(b, (ROWS, COLS)), (ROWS, COLS))
    hi = b("REDUCE", "f32", q, arg="(MAX, (0, 1))")
    return b.text(hi), [fmt(np_softmax(kinds())[0].max(), "f32")]


@test(
    "big_softmax_column_sums",
    big(
        "the row softmax of x[65536, 1024] summed over its rows (a column sum: materialized, its\n"
        "row loop outermost, holding the row's max, exps and sum), its first 8 columns printed",
        "a scratch row of exps and 1024 column sums",
    ),
)
def _():
    b = B()
    q = uir_softmax(b, periodic(b, (ROWS, COLS)), (ROWS, COLS))
    c = b("REDUCE", t("f32", (COLS,)), q, arg="(ADD, (0))")
    w = b("SHRINK", "f32[8]", c, arg="((0, 8))")
    qs = np_softmax(kinds())[0][:, :8]
    allrows = np.tile(qs, (ROWS // len(S), 1))
    return b.text(w), [fmt(fold(allrows, 0), "f32")]


@test(
    "big_layernorm_extremes",
    big(
        "a layer norm (eps 2^-10) of each row of x[65536, 1024], its largest and smallest\n"
        "element (two kernels, each running the fused norm)",
        "the row's mean and variance",
    ),
)
def _():
    b = B()
    y = uir_layernorm(b, periodic(b, (ROWS, COLS)), (ROWS, COLS), 0.0009765625)
    hi = b("REDUCE", "f32", y, arg="(MAX, (0, 1))")
    lo = b("REDUCE", "f32", y, arg="(MIN, (0, 1))")
    n = np_layernorm(kinds(), 0.0009765625)
    return b.text(hi, lo), [fmt(n.max(), "f32"), fmt(n.min(), "f32")]


@test(
    "big_rms_norm_row_sums",
    big(
        "an RMS norm x / sqrt(mean(x*x) + 1) of each row of x[65536, 1024], the largest row sum",
        "one sum of squares per row",
    ),
)
def _():
    b = B()
    x = periodic(b, (ROWS, COLS))
    rows = (ROWS,)
    ss = b("REDUCE", t("f32", rows), b("MUL", t("f32", (ROWS, COLS)), x, x), arg="(ADD, (1))")
    ms = b("FDIV", t("f32", rows), ss, b.scalar_like("f32", float(COLS), rows))
    r = b("SQRT", t("f32", rows), b("ADD", t("f32", rows), ms, b.scalar_like("f32", 1.0, rows)))
    y = b("FDIV", t("f32", (ROWS, COLS)), x, b.column("f32", r, (ROWS, COLS)))
    hi = b("REDUCE", "f32", b("REDUCE", t("f32", rows), y, arg="(ADD, (1))"), arg="(MAX, (0))")
    k = kinds()
    rr = np.sqrt(((fold((k * k).astype(F), 1) / F(COLS)).astype(F) + F(1)).astype(F)).astype(F)
    return b.text(hi), [fmt(fold((k / rr[:, None]).astype(F), 1).max(), "f32")]


@test(
    "big_variance_of_rows",
    big(
        "the variance of each row of x[65536, 1024] (the mean folded inside the variance's row\n"
        "loop), its largest and smallest over the rows",
        "two scalars per row",
    ),
)
def _():
    b = B()
    x = periodic(b, (ROWS, COLS))
    rows = (ROWS,)
    n = b.scalar_like("f32", float(COLS), rows)
    mean = b("FDIV", t("f32", rows), b("REDUCE", t("f32", rows), x, arg="(ADD, (1))"), n)
    c = b("SUB", t("f32", (ROWS, COLS)), x, b.column("f32", mean, (ROWS, COLS)))
    var = b(
        "FDIV",
        t("f32", rows),
        b("REDUCE", t("f32", rows), b("MUL", t("f32", (ROWS, COLS)), c, c), arg="(ADD, (1))"),
        n,
    )
    vs = b("STAGE", t("f32", rows), var)
    hi = b("REDUCE", "f32", vs, arg="(MAX, (0))")
    lo = b("REDUCE", "f32", vs, arg="(MIN, (0))")
    k = kinds()
    m = (fold(k, 1) / F(COLS)).astype(F)
    cc = (k - m[:, None]).astype(F)
    v = (fold((cc * cc).astype(F), 1) / F(COLS)).astype(F)
    return b.text(hi, lo), [fmt(v.max(), "f32"), fmt(v.min(), "f32")]


@test(
    "big_sqrt_row_scratch",
    big(
        "r = sqrt(x + 60) over x[65536, 1024], then r / (row sum of r), its largest element:\n"
        "the sum loop and the division read r from one scratch row (2.3); materialized whole, r\n"
        "alone is over the limit",
        "a scratch row of 1024 roots",
    ),
)
def _():
    b = B()
    x = periodic(b, (ROWS, COLS))
    sh = (ROWS, COLS)
    r = b("SQRT", t("f32", sh), b("ADD", t("f32", sh), x, b.scalar_like("f32", 60.0, sh)))
    s = b("REDUCE", t("f32", (ROWS,)), r, arg="(ADD, (1))")
    y = b("FDIV", t("f32", sh), r, b.column("f32", s, sh))
    hi = b("REDUCE", "f32", y, arg="(MAX, (0, 1))")
    k = kinds()
    rr = np.sqrt((k + F(60)).astype(F)).astype(F)
    with np.errstate(invalid="ignore"):
        yy = (rr / fold(rr, 1)[:, None]).astype(F)
    return b.text(hi), [fmt(fold(yy.reshape(1, -1), 1, "MAX")[0], "f32")]


@test(
    "big_exp_read_by_two_folds",
    big(
        "e = exp2(x - row max) over x[65536, 1024], read by its row max and its row sum; the\n"
        "largest of max/sum over the rows",
        "a scratch row of exps",
    ),
)
def _():
    b = B()
    sh = (ROWS, COLS)
    x = periodic(b, sh)
    m = b("REDUCE", t("f32", (ROWS,)), x, arg="(MAX, (1))")
    e = b("EXP2", t("f32", sh), b("SUB", t("f32", sh), x, b.column("f32", m, sh)))
    em = b("REDUCE", t("f32", (ROWS,)), e, arg="(MAX, (1))")
    es = b("REDUCE", t("f32", (ROWS,)), e, arg="(ADD, (1))")
    hi = b("REDUCE", "f32", b("FDIV", t("f32", (ROWS,)), em, es), arg="(MAX, (0))")
    _, _, ee, s = np_softmax(kinds())
    return b.text(hi), [fmt((fold(ee, 1, "MAX") / s).astype(F).max(), "f32")]


@test(
    "big_log_sum_exp_rows",
    big(
        "log-sum-exp of each row of x[65536, 1024], max + log2(sum of exp2(x - max)), and the\n"
        "smallest over the rows. Each row's sum is 128 * 4.125 = 528 times 2^0: log2(528) is\n"
        "not exact, hence the tolerance",
        "a row's max and sum",
    ),
    "2 ulp",
)
def _():
    b = B()
    sh = (ROWS, COLS)
    x = periodic(b, sh)
    m = b("REDUCE", t("f32", (ROWS,)), x, arg="(MAX, (1))")
    e = b("EXP2", t("f32", sh), b("SUB", t("f32", sh), x, b.column("f32", m, sh)))
    s = b("REDUCE", t("f32", (ROWS,)), e, arg="(ADD, (1))")
    lse = b("ADD", t("f32", (ROWS,)), m, b("LOG2", t("f32", (ROWS,)), s))
    lo = b("REDUCE", "f32", lse, arg="(MIN, (0))")
    _, mm, _, ss = np_softmax(kinds())
    return b.text(lo), [fmt((mm + np.log2(ss).astype(F)).astype(F).min(), "f32")]


@test(
    "big_sibling_max_and_sum",
    big(
        "x - row max + row sum / 1024 over x[65536, 1024], its largest element: two sibling\n"
        "folds of one row read by one kernel",
        "two scalars per row",
    ),
)
def _():
    b = B()
    sh = (ROWS, COLS)
    x = periodic(b, sh)
    m = b("REDUCE", t("f32", (ROWS,)), x, arg="(MAX, (1))")
    s = b("REDUCE", t("f32", (ROWS,)), x, arg="(ADD, (1))")
    mean = b("FDIV", t("f32", (ROWS,)), s, b.scalar_like("f32", float(COLS), (ROWS,)))
    y = b(
        "ADD",
        t("f32", sh),
        b("SUB", t("f32", sh), x, b.column("f32", m, sh)),
        b.column("f32", mean, sh),
    )
    hi = b("REDUCE", "f32", y, arg="(MAX, (0, 1))")
    k = kinds()
    yy = (
        (k - fold(k, 1, "MAX")[:, None]).astype(F) + (fold(k, 1) / F(COLS)).astype(F)[:, None]
    ).astype(F)
    return b.text(hi), [fmt(yy.max(), "f32")]


@test(
    "big_pair_sums_then_max",
    big(
        "x[2^26, 2] summed over its last axis (y, 2^26 sums) and the max of y: y is folded in\n"
        "the max's loop, a pair at a time",
        "one pair's sum",
        n=1 << 26,
    ),
)
def _():
    b = B()
    n = 1 << 26
    sh = (n, 2)
    pe = b("EXPAND", t("f32", (n * 2 // 8, 8)), b.input("f32[8]", [1, 2, -3, 4, 0.5, 0.25, -8, 9]))
    x = b("RESHAPE", t("f32", sh), pe)
    s = b("REDUCE", t("f32", (n,)), b("MUL", t("f32", sh), x, x), arg="(ADD, (1))")
    hi = b("REDUCE", "f32", s, arg="(MAX, (0))")
    pairs = f32s(1, 2, -3, 4, 0.5, 0.25, -8, 9).reshape(4, 2)
    return b.text(hi), [fmt(fold((pairs * pairs).astype(F), 1).max(), "f32")]


@test(
    "big_rank3_sums_then_extremes",
    big(
        "x[8192, 8192, 2] summed over its last axis (y[8192, 8192]) and the largest and smallest\n"
        "of y - 1: y is folded inside both of its reader's loops",
        "one sum",
        n=1 << 26,
    ),
)
def _():
    b = B()
    sh = (8192, 8192, 2)
    pe = b(
        "EXPAND",
        t("f32", (8192 * 8192 * 2 // 8, 8)),
        b.input("f32[8]", [3, -1, 0.5, 0.5, -7, 2, 6, 6]),
    )
    x = b("RESHAPE", t("f32", sh), pe)
    y = b("REDUCE", t("f32", sh[:2]), x, arg="(ADD, (2))")
    d = b("SUB", t("f32", sh[:2]), y, b.scalar_like("f32", 1.0, sh[:2]))
    hi = b("REDUCE", "f32", d, arg="(MAX, (0, 1))")
    pairs = f32s(3, -1, 0.5, 0.5, -7, 2, 6, 6).reshape(4, 2)
    ys = (fold(pairs, 1) - F(1)).astype(F)
    return b.text(hi), [fmt(ys.max(), "f32")]


@test(
    "big_softmax_rank3",
    big(
        "a softmax over the last axis of x[256, 256, 1024] (two row loops), the smallest element",
        "a scratch row of exps",
    ),
)
def _():
    b = B()
    sh2 = (ROWS, COLS)
    x = b("RESHAPE", "f32[256,256,1024]", periodic(b, sh2))
    q = uir_softmax(b, x, (256, 256, 1024))
    lo = b("REDUCE", "f32", q, arg="(MIN, (0, 1, 2))")
    return b.text(lo), [fmt(np_softmax(kinds())[0].min(), "f32")]


@test(
    "big_elementwise_chain_max",
    big(
        "a chain of eight elementwise ops over x[65536, 1024] ((x*2 + 1) * x - x, max with 0,\n"
        "minus 3, times -1), then its largest and smallest elements",
        "nothing but each element's chain",
    ),
)
def _():
    b = B()
    sh = (ROWS, COLS)
    x = periodic(b, sh)
    ty = t("f32", sh)
    y = b("MUL", ty, x, b.scalar_like("f32", 2.0, sh))
    y = b("ADD", ty, y, b.scalar_like("f32", 1.0, sh))
    y = b("MUL", ty, y, x)
    y = b("SUB", ty, y, x)
    y = b("MAX", ty, y, b.scalar_like("f32", 0.0, sh))
    y = b("SUB", ty, y, b.scalar_like("f32", 3.0, sh))
    y = b("MUL", ty, y, b.scalar_like("f32", -1.0, sh))
    hi = b("REDUCE", "f32", y, arg="(MAX, (0, 1))")
    lo = b("REDUCE", "f32", y, arg="(MIN, (0, 1))")
    k = kinds()
    yy = ((k * F(2)).astype(F) + F(1)).astype(F)
    yy = ((yy * k).astype(F) - k).astype(F)
    yy = (np.maximum(yy, F(0)) - F(3)).astype(F) * F(-1)
    return b.text(hi, lo), [fmt(yy.max(), "f32"), fmt(yy.min(), "f32")]


# --- time: a fold repeated in a loop its index does not depend on ----------------------------

TIME = (
    "Time: y[i, j] = x[i, j] {op} s[j] over [{r}, {j}], s[j] the {what} of row j of w[{j}, {k}].\n"
    "The read of s sits in the i loop, which its index does not depend on, so s is materialized\n"
    "(spec/uir-week6.md 2.2): {j}*{k} terms folded once. Folded again at every (i, j) instead,\n"
    "{r}*{j}*{k} = 2^36 f32 steps, each waiting for the one before, which no compiler finishes\n"
    "within the suite's time limit (README.md). Only the largest y is printed: y has one\n"
    "reader, so s does too (a second reader would make s materialized anyway, 2.1).\n"
    "x[i, j] = P[j mod 8] + S[i mod 4] and\n"
    "w[j, k] = Q[k mod 8] + T[j mod 4], small integers, so every sum is exact"
)

Q = [1, 0, 2, -1, 3, 1, 0, 1]
T = [0, 1, -2, 5]


def _time_test(name, op, what, r, j, k, rop):
    @test(name, TIME.format(op=op, what=what, r=r, j=j, k=k))
    def _():
        b = B()
        x = periodic(b, (r, j))
        w = periodic(b, (j, k), Q, T)
        s = b("REDUCE", t("f32", (j,)), w, arg=f"({rop}, (1))")
        y = b("ADD" if op == "+" else "MUL", t("f32", (r, j)), x, b("EXPAND", t("f32", (r, j)), s))
        hi = b("REDUCE", "f32", y, arg="(MAX, (0, 1))")
        wk = kinds(k, Q, T)  # w's rows by j mod 4
        sk = fold(wk, 1, rop)
        xk = kinds(j, P, S)  # x's rows by i mod 4; x's columns by j mod 8
        sj = np.array([sk[jj % 4] for jj in range(j)], dtype=F)
        yy = (xk + sj[None, :]) if op == "+" else (xk * sj[None, :])
        yy = yy.astype(F)
        return b.text(hi), [fmt(yy.max(), "f32")]


_time_test("time_column_sums_broadcast", "+", "sum", 4096, 4096, 4096, "ADD")
_time_test("time_column_maxima_scale", "*", "max", 8192, 2048, 4096, "MAX")


@test(
    "big_max_of_row_sums_rank3",
    big(
        "x[8192, 8192, 2] summed over its last axis (y[8192, 8192]), the max of each row of y\n"
        "(z[8192]) and the min of z: y is folded inside z's fold, inside the min's loop",
        "two scalars",
        n=1 << 26,
    ),
)
def _():
    b = B()
    sh = (8192, 8192, 2)
    pe = b(
        "EXPAND",
        t("f32", (8192 * 8192 * 2 // 8, 8)),
        b.input("f32[8]", [3, -1, 0.5, 0.5, -7, 2, 6, 6]),
    )
    x = b("RESHAPE", t("f32", sh), pe)
    y = b("REDUCE", t("f32", sh[:2]), x, arg="(ADD, (2))")
    z = b("REDUCE", "f32[8192]", y, arg="(MAX, (1))")
    lo = b("REDUCE", "f32", z, arg="(MIN, (0))")
    pairs = f32s(3, -1, 0.5, 0.5, -7, 2, 6, 6).reshape(4, 2)
    return b.text(lo), [fmt(fold(pairs, 1).max(), "f32")]


def write() -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    for name, (comment, text, expected, tol) in TESTS.items():
        head = [f"# expect: {line}" for line in expected]
        if tol:
            head.append(f"# tolerance: {tol}")
        head += [f"# {c}" if c else "#" for c in comment.strip().splitlines()]
        (OUT / f"{name}.uir").write_text("\n".join(head) + "\n" + text)
    print(len(TESTS), "tests")


if __name__ == "__main__":
    write()

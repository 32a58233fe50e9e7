"""The tests of suites/week9, built by scripts/week9_suite.py (see there for how expectations are
worked out). Each function builds one program and returns (loss, targets), or its outputs."""

from __future__ import annotations

import numpy as np
from week9_suite import REJECTIONS, Program, V, test

SHAPES = {0: (), 1: (4,), 2: (2, 3), 3: (2, 2, 3)}
# small values whose sums and products are exact in f32
BASE = [1, -2, 3, 0.5, -1.5, 2, 4, -3, 1.25, -0.5, 2.5, -4]


def values(shape, offset=0, scale=1.0, positive=False):
    n = int(np.prod(shape)) if shape else 1
    out = [BASE[(i + offset) % len(BASE)] * scale for i in range(n)]
    return [abs(x) for x in out] if positive else out


def leaf(p: Program, shape, offset=0, hint="x", **kw) -> V:
    return p.const(values(shape, offset, **kw), shape, hint=hint)


def weighted(p: Program, y: V, offset=5) -> V:
    """sum(w * y) with weights distinct from the inputs (so no two CONSTs coincide)."""
    w = p.const(values(y.shape, offset, scale=0.25) if y.shape else [1.75], y.shape, hint="w")
    return p.sum(y * w)


# ---- each elementwise binary op at ranks 0-2 ----------------------------------------------

for rank in (0, 1, 2):
    shape = SHAPES[rank]
    for op in ("ADD", "SUB", "MUL", "MAX", "MIN", "FDIV"):

        def build(p, op=op, shape=shape):
            a = leaf(p, shape, 0, "a")
            if op == "FDIV":  # powers of two: every quotient exact
                b = p.const(
                    [[2, -0.5, 4, 1, -2, 0.25][i % 6] for i in range(max(1, len(values(shape))))],
                    shape,
                    hint="b",
                )
            else:  # never equal to a: no ties
                b = p.const(
                    [x + 0.75 if i % 2 else x - 1.25 for i, x in enumerate(values(shape, 3))],
                    shape,
                    hint="b",
                )
            return weighted(p, p.binary(op, a, b)), [a, b]

        test(
            f"{op.lower()}_rank{rank}",
            f"d/da and d/db of sum(w * ({op} a b)), {shape or 'scalars'}",
        )(build)


# ---- each unary op at ranks 0-2 -----------------------------------------------------------

UNARY_INPUTS = {
    "NEG": ({}, 0),
    "SQRT": ({"positive": True}, 1),  # g / (2 sqrt x): rounds
    "RECIP": ({"positive": False}, 0),
    "EXP2": ({}, 8),
    "LOG2": ({"positive": True}, 8),
    # cos(x) is computed as sin(pi/2 - x): near x = pi/2 (1.5 here) the subtraction loses bits
    "SIN": ({}, 64),
}
SQUARES = [1, 4, 0.25, 9, 16, 2.25, 0.0625, 36, 6.25, 1, 4, 0.25]
POWERS = [2, -0.5, 4, 1, -2, 0.25, 8, -1, 0.5, -4, 1, 2]

for rank in (0, 1, 2):
    shape = SHAPES[rank]
    for op, (kw, ulps) in UNARY_INPUTS.items():

        def build(p, op=op, shape=shape, kw=kw):
            n = len(values(shape))
            if op == "SQRT":
                x = p.const(SQUARES[:n], shape, hint="x")
            elif op == "RECIP":
                x = p.const(POWERS[:n], shape, hint="x")
            else:
                x = leaf(p, shape, 0, "x", **kw)
            return weighted(p, p.unary(op, x)), [x]

        test(
            f"{op.lower()}_rank{rank}",
            f"d/dx of sum(w * {op}(x)), {shape or 'a scalar'}",
            ulps=ulps,
        )(build)


# ---- ties and kinks, worked by hand -------------------------------------------------------


@test(
    "max_tie_halves",
    "MAX of equal values: g/2 to each (x is 2, y is 1 + 1, another UOp)",
    kinked=True,
)
def _(p):
    x = p.const([2], (), hint="x")
    one = p.const([1], (), hint="one")
    y = one + one
    return p.binary("MAX", x, y), [x, y]


@test("min_tie_halves", "MIN of equal vectors: g/2 to each element of each", kinked=True)
def _(p):
    x = p.const([1, 2, 3], (3,), hint="x")
    y = p.const([0.5, 1, 1.5], (3,), hint="y0") * p.const([2, 2, 2], (3,), hint="two")
    return p.sum(p.binary("MIN", x, y)), [x, y]


@test("max_of_itself", "MAX x x: both halves reach x, 1 in all", kinked=True)
def _(p):
    x = p.const([3, -1], (2,), hint="x")
    return weighted(p, p.binary("MAX", x, x)), [x]


@test("reduce_max_ties_shared", "REDUCE MAX with the maximum twice: 1/2 to each", kinked=True)
def _(p):
    x = p.const([1, 3, 3, 2], (4,), hint="x")
    return p.reduce(x, "MAX", (0,)), [x]


@test(
    "reduce_max_three_ties",
    "REDUCE MAX with the maximum three times: 1/3 each (rounded)",
    ulps=1,
    kinked=True,
)
def _(p):
    x = p.const([5, 5, 1, 5], (4,), hint="x")
    return p.reduce(x, "MAX", (0,)), [x]


@test("reduce_min_ties_rows", "REDUCE MIN over axis 1, a tie in row 0 only", kinked=True)
def _(p):
    x = p.const([2, 1, 1, 4, 3, 5], (2, 3), hint="x")
    return weighted(p, p.reduce(x, "MIN", (1,))), [x]


@test("reduce_max_all_equal", "REDUCE MAX of four equal values: 1/4 each", kinked=True)
def _(p):
    x = p.const([7, 7, 7, 7], (2, 2), hint="x")
    return p.reduce(x, "MAX", (0, 1)), [x]


@test("relu_at_zero", "MAX x 0 with x = 0 at one element: the tie gives 1/2 there", kinked=True)
def _(p):
    x = p.const([-1, 0, 2], (3,), hint="x")
    z = p.const([0, 0, 0], (3,), hint="z")
    return weighted(p, p.binary("MAX", x, z)), [x]


# ---- WHERE, CAST, what carries nothing -----------------------------------------------------

for rank in (0, 1, 2):
    shape = SHAPES[rank]

    def build(p, shape=shape):
        a = leaf(p, shape, 0, "a")
        b = leaf(p, shape, 4, "b")
        x = leaf(p, shape, 2, "x")
        y = leaf(p, shape, 7, "y")
        return weighted(p, p.where(a, b, x * x, y * x)), [x, y, a]

    test(
        f"where_rank{rank}",
        "WHERE (a < b) x*x y*x: each branch where chosen, nothing to a",
    )(build)


@test("cast_f32_f64_round_trip", "CAST to f64 and back: g cast back at each step")
def _(p):
    x = leaf(p, (3,), 0)
    d = p.cast(x, "f64")
    sq = d * p.const([2, 2, 2], (3,), hint="two", dtype="f64")
    return weighted(p, p.cast(sq * d, "f32")), [x]


@test("cast_f64_loss", "a loss computed in f64 from an f32 input")
def _(p):
    x = leaf(p, (2, 2), 1)
    d = p.cast(x, "f64")
    s = p.sum(d * d)
    return p.cast(s, "f32"), [x]


@test("trunc_carries_nothing", "TRUNC has no gradient: only the x * 2 term remains")
def _(p):
    x = p.const([1.5, -2.5, 3.25], (3,), hint="x")
    t = p.unary("TRUNC", x)
    two = p.const([2, 2, 2], (3,), hint="two")
    return p.sum(t * t + x * two), [x]


@test("zero_when_independent", "the loss does not depend on x: zeros of x's type")
def _(p):
    x = leaf(p, (2, 3), 0)
    y = leaf(p, (3,), 3, "y")
    return p.sum(y * y), [x, y]


# ---- REDUCE ----------------------------------------------------------------------------------

for shape, axes in (
    ((4,), (0,)),
    ((2, 3), (0,)),
    ((2, 3), (1,)),
    ((2, 3), (0, 1)),
    ((2, 2, 3), (0, 2)),
    ((2, 2, 3), (1,)),
):

    def build(p, shape=shape, axes=axes):
        x = leaf(p, shape, 1)
        r = p.reduce(x * x, "ADD", axes)
        return weighted(p, r) if r.shape else r * r, [x]

    name = "x".join(map(str, shape))
    test(
        f"reduce_add_{name}_axes{''.join(map(str, axes))}",
        f"REDUCE ADD over {axes} of {shape}: g expanded back",
    )(build)

for shape, axes, op in (
    ((2, 3), (1,), "MAX"),
    ((2, 3), (0,), "MIN"),
    ((2, 2, 3), (0, 2), "MAX"),
    ((4,), (0,), "MIN"),
):

    def build(p, shape=shape, axes=axes, op=op):
        x = p.const(
            list(range(1, int(np.prod(shape)) + 1))[::-1]
            if op == "MAX"
            else list(range(1, int(np.prod(shape)) + 1)),
            shape,
            hint="x",
        )
        x = x * p.const(values(shape, 0), shape, hint="s")  # distinct values, no ties
        r = p.reduce(x, op, axes)
        return weighted(p, r) if r.shape else r, [x]

    name = "x".join(map(str, shape))
    test(
        f"reduce_{op.lower()}_{name}_axes{''.join(map(str, axes))}",
        f"REDUCE {op} over {axes}: g to the one extreme element",
    )(build)


# ---- EXPAND ----------------------------------------------------------------------------------

for src, dst in (((), (4,)), ((3,), (2, 3)), ((2, 1), (2, 3)), ((1, 3), (2, 2, 3)), ((1,), (2, 2))):

    def build(p, src=src, dst=dst):
        x = leaf(p, src, 2)
        e = p.expand(x, dst)
        return weighted(p, e * e), [x]

    name = "x".join(map(str, src)) or "scalar"
    test(
        f"expand_{name}_to_{'x'.join(map(str, dst))}",
        f"EXPAND {src} to {dst}: g summed over the broadcast axes",
    )(build)


# ---- movement ops ----------------------------------------------------------------------------

MOVES = {
    "reshape_4_to_2x2": ((4,), lambda p, x: p.reshape(x, (2, 2))),
    "reshape_2x3_to_3x2": ((2, 3), lambda p, x: p.reshape(x, (3, 2))),
    "reshape_2x2x3_to_12": ((2, 2, 3), lambda p, x: p.reshape(x, (12,))),
    "permute_2x3": ((2, 3), lambda p, x: p.permute(x, (1, 0))),
    "permute_rank3_201": ((2, 2, 3), lambda p, x: p.permute(x, (2, 0, 1))),
    "permute_rank3_120": ((2, 2, 3), lambda p, x: p.permute(x, (1, 2, 0))),
    "flip_rank1": ((4,), lambda p, x: p.flip(x, (0,))),
    "flip_rank2_axis1": ((2, 3), lambda p, x: p.flip(x, (1,))),
    "flip_rank3_axes02": ((2, 2, 3), lambda p, x: p.flip(x, (0, 2))),
    "pad_rank1": ((4,), lambda p, x: p.pad(x, ((1, 2),))),
    "pad_rank2": ((2, 3), lambda p, x: p.pad(x, ((0, 1), (2, 0)))),
    "pad_rank3": ((2, 2, 3), lambda p, x: p.pad(x, ((1, 0), (0, 0), (1, 1)))),
    "shrink_rank1": ((4,), lambda p, x: p.shrink(x, ((1, 3),))),
    "shrink_rank2": ((2, 3), lambda p, x: p.shrink(x, ((1, 2), (0, 2)))),
    "shrink_rank3": ((2, 2, 3), lambda p, x: p.shrink(x, ((0, 2), (1, 2), (1, 3)))),
    "pad_then_shrink_offset": ((4,), lambda p, x: p.shrink(p.pad(x, ((2, 1),)), ((1, 5),))),
    "flip_pad_shrink_permute": (
        (2, 3),
        lambda p, x: p.permute(
            p.shrink(p.flip(p.pad(x, ((1, 0), (0, 1))), (0, 1)), ((0, 2), (1, 4))), (1, 0)
        ),
    ),
}

for name, (shape, move) in MOVES.items():

    def build(p, shape=shape, move=move):
        x = leaf(p, shape, 3)
        return weighted(p, move(p, x * x)), [x]

    test(name, "g through the inverse index map (zeros where nothing maps)")(build)


@test("stack_scalars", "STACK of scalars: each gets its element of g")
def _(p):
    a, b, c = (p.const([v], (), hint=n) for v, n in ((1.5, "a"), (-2, "b"), (3, "c")))
    return weighted(p, p.stack(a * a, b, c * a)), [a, b, c]


@test("stack_vectors", "STACK of two vectors: row i of g to source i")
def _(p):
    x = leaf(p, (3,), 0)
    y = leaf(p, (3,), 4, "y")
    return weighted(p, p.stack(x * y, y)), [x, y]


@test("stack_matrices_one_twice", "STACK of one matrix twice and another: its two slices summed")
def _(p):
    x = leaf(p, (2, 2), 0)
    y = leaf(p, (2, 2), 5, "y")
    return weighted(p, p.stack(x, y, x * y)), [x, y]


@test("index_of_vector", "INDEX of a vector: g at that element, zeros elsewhere")
def _(p):
    v = leaf(p, (4,), 1, "v")
    e = p.index(v * v, 2)
    return e * p.const([3], (), hint="k"), [v]


@test("index_twice", "two INDEXes of one vector: both elements get their part")
def _(p):
    v = leaf(p, (3,), 2, "v")
    return p.index(v, 0) * p.index(v, 2), [v]


@test("stage_passes_through", "STAGE is the identity: g passes")
def _(p):
    x = leaf(p, (2, 2), 1)
    s = p.stage(x * x)
    return weighted(p, s * x), [x]


# ---- compositions ----------------------------------------------------------------------------


@test("used_twice", "x*x + x: a value used several times receives the sum")
def _(p):
    x = leaf(p, (3,), 0)
    return weighted(p, x * x + x), [x]


@test("diamond", "y = x*x used by two paths, rejoined: both contributions reach x")
def _(p):
    x = leaf(p, (2, 2), 2)
    y = x * x
    z = p.permute(y, (1, 0)) * y
    return weighted(p, z + y), [x]


@test("alu_move_alu", "an elementwise op, a movement op, another elementwise op")
def _(p):
    x = leaf(p, (2, 3), 1)
    y = p.flip(p.permute(x * x, (1, 0)), (0,))
    return weighted(p, y * y), [x]


@test("expand_then_reduce", "a broadcast summed back: the reduction of the expansion")
def _(p):
    x = leaf(p, (3,), 0)
    e = p.expand(p.reshape(x, (3, 1)), (3, 4))
    return p.sum(p.reduce(e * e, "ADD", (1,)) * x), [x]


@test("grad_of_intermediate", "the gradient with respect to an intermediate value")
def _(p):
    x = leaf(p, (3,), 1)
    y = x * x
    return weighted(p, y * y), [y, x]


@test("grad_of_loss_itself", "d loss / d loss is 1")
def _(p):
    x = leaf(p, (3,), 1)
    loss = p.sum(x * x)
    return loss, [loss]


# ---- models ----------------------------------------------------------------------------------


def matmul(p: Program, a: V, b: V) -> V:
    (m, k), (_, n) = a.shape, b.shape
    ae = p.expand(p.reshape(a, (m, k, 1)), (m, k, n))
    be = p.expand(p.reshape(b, (1, k, n)), (m, k, n))
    return p.reduce(ae * be, "ADD", (1,))


@test("matmul_grads", "C = A @ B, loss sum(W * C): dA = W @ B^T, dB = A^T @ W")
def _(p):
    a = p.const([1, 2, -1, 0.5, 3, -2], (2, 3), hint="a")
    b = p.const([2, -1, 1, 0.5, -3, 1, 1, 2, -0.5, 1.5, 0, -1], (3, 4), hint="b")
    return weighted(p, matmul(p, a, b)), [a, b]


@test("matmul_squared_loss", "loss = sum((A @ B)^2): dA = 2 C @ B^T")
def _(p):
    a = p.const([1, 2, -1, 0.5], (2, 2), hint="a")
    b = p.const([2, -1, 1, 0.5], (2, 2), hint="b")
    c = matmul(p, a, b)
    return p.sum(c * c), [a, b]


@test("batched_matmul_rank4", "a batch of 2 matmuls through rank-4 EXPANDs", ulps=0)
def _(p):
    a = leaf(p, (2, 2, 3), 0, "a")
    b = leaf(p, (2, 3, 2), 4, "b")
    ae = p.expand(p.reshape(a, (2, 2, 3, 1)), (2, 2, 3, 2))
    be = p.expand(p.reshape(b, (2, 1, 3, 2)), (2, 2, 3, 2))
    return weighted(p, p.reduce(ae * be, "ADD", (2,))), [a, b]


def relu(p: Program, x: V) -> V:
    return p.binary("MAX", x, p.const([0] * int(np.prod(x.shape)), x.shape, hint="zero"))


@test("mlp_two_layers", "relu(x W1 + b1) W2, squared error against t: every parameter", ulps=0)
def _(p):
    x = p.const([1, -2, 0.5, 2, 1, -1], (2, 3), hint="x")
    w1 = p.const([0.5, -1, 1, 0.25, -0.5, 2, 1, -0.75, 0.25, 1.5, -1, 0.5], (3, 4), hint="w1")
    b1 = p.const([0.25, -0.5, 0.125, 1], (4,), hint="b1")
    w2 = p.const([1, -0.5, 0.5, 2, -1, 0.25, 0.75, -1.5], (4, 2), hint="w2")
    h = relu(p, matmul(p, x, w1) + p.expand(b1, (2, 4)))
    y = matmul(p, h, w2)
    t = p.const([1, 0, -1, 2], (2, 2), hint="t")
    d = y - t
    return p.sum(d * d), [w1, b1, w2]


def log_softmax_ce(p: Program, logits: V, onehot: V) -> V:
    """mean over rows of -sum(onehot * log_softmax(logits)), with EXP2/LOG2 as a student writes
    it: exp(z) = exp2(z * log2 e), ln(s) = log2(s) * ln 2."""
    rows, cols = logits.shape
    m = p.reduce(logits, "MAX", (1,))
    z = logits - p.expand(p.reshape(m, (rows, 1)), (rows, cols))
    log2e = p.const([1.4426950408889634] * (rows * cols), (rows, cols), hint="log2e")
    e = p.unary("EXP2", z * log2e)
    s = p.reduce(e, "ADD", (1,))
    ln2 = p.const([0.6931471805599453] * rows, (rows,), hint="ln2")
    lse = p.unary("LOG2", s) * ln2
    logp = z - p.expand(p.reshape(lse, (rows, 1)), (rows, cols))
    picked = p.reduce(logp * onehot, "ADD", (1,))
    scale = p.const([-1 / rows] * rows, (rows,), hint="mean")
    return p.sum(picked * scale)


@test(
    "softmax_cross_entropy", "softmax cross-entropy of 2 rows of 3 logits: (p - y) / rows", ulps=64
)
def _(p):
    logits = p.const([1, 2, 0.5, -1, 0, 3], (2, 3), hint="z")
    onehot = p.const([0, 1, 0, 1, 0, 0], (2, 3), hint="y")
    return log_softmax_ce(p, logits, onehot), [logits]


@test("softmax_cross_entropy_linear", "cross-entropy of x W: dW = x^T (p - y) / rows", ulps=64)
def _(p):
    x = p.const([1, -1, 0.5, 2], (2, 2), hint="x")
    w = p.const([0.5, -1, 1, 0.25, 2, -0.5], (2, 3), hint="w")
    onehot = p.const([0, 0, 1, 1, 0, 0], (2, 3), hint="y")
    return log_softmax_ce(p, matmul(p, x, w), onehot), [w]


def layer_norm(p: Program, x: V) -> V:
    rows, cols = x.shape
    inv = p.const([1 / cols] * rows, (rows,), hint="inv")
    mean = p.reduce(x, "ADD", (1,)) * inv
    d = x - p.expand(p.reshape(mean, (rows, 1)), (rows, cols))
    var = p.reduce(d * d, "ADD", (1,)) * inv
    eps = p.const([1e-5] * rows, (rows,), hint="eps")
    r = p.unary("RECIP", p.unary("SQRT", var + eps))
    return d * p.expand(p.reshape(r, (rows, 1)), (rows, cols))


@test("layer_norm_input", "layer norm of 2 rows of 4, loss sum(w * ln(x)): d/dx", ulps=64)
def _(p):
    x = p.const([1, 2, 4, -1, 0.5, -2, 3, 1], (2, 4), hint="x")
    return weighted(p, layer_norm(p, x)), [x]


@test("layer_norm_gain_bias", "layer norm with gain and bias: d/dgain, d/dbias", ulps=64)
def _(p):
    x = p.const([1, 2, 4, -1, 0.5, -2, 3, 1], (2, 4), hint="x")
    gain = p.const([1, 0.5, -1, 2], (4,), hint="gain")
    bias = p.const([0.25, 0, -0.5, 1], (4,), hint="bias")
    y = layer_norm(p, x) * p.expand(gain, (2, 4)) + p.expand(bias, (2, 4))
    return weighted(p, y), [gain, bias]


@test("attention_scores", "softmax(Q K^T / 2) V for 3 tokens of dim 2: d/dQ, d/dK, d/dV", ulps=64)
def _(p):
    q = p.const([1, 0, 0.5, -1, -0.5, 1], (3, 2), hint="q")
    k = p.const([0.5, 1, -1, 0.5, 1, -0.5], (3, 2), hint="k")
    v = p.const([1, 2, -1, 0.5, 0, 1], (3, 2), hint="v")
    scores = matmul(p, q, p.permute(k, (1, 0))) * p.const([0.5] * 9, (3, 3), hint="half")
    m = p.reduce(scores, "MAX", (1,))
    z = scores - p.expand(p.reshape(m, (3, 1)), (3, 3))
    log2e = p.const([1.4426950408889634] * 9, (3, 3), hint="log2e")
    e = p.unary("EXP2", z * log2e)
    s = p.reduce(e, "ADD", (1,))
    att = e / p.expand(p.reshape(s, (3, 1)), (3, 3))
    return weighted(p, matmul(p, att, v)), [q, k, v]


@test(
    "conv1d_weights", "a 1-D convolution as PAD, a sliding window of SHRINKs and STACK, MUL, REDUCE"
)
def _(p):
    x = p.const([1, -2, 3, 0.5, 2], (5,), hint="x")
    w = p.const([0.5, -1, 2], (3,), hint="w")
    padded = p.pad(x, ((1, 1),))
    windows = p.stack(*(p.shrink(padded, ((i, i + 3),)) for i in range(5)))
    y = p.reduce(windows * p.expand(w, (5, 3)), "ADD", (1,))
    return weighted(p, y * y), [w, x]


# ---- CALL -------------------------------------------------------------------------------------


@test("through_a_call", "a CALL is differentiated as if inlined")
def _(p):
    x = leaf(p, (3,), 0)
    y = leaf(p, (3,), 6, "y")
    r = p.call(lambda q, ps: ps[0] * ps[0] * ps[1], [x, y])
    return weighted(p, r), [x, y]


@test("call_used_twice", "one body called twice: each call's contribution")
def _(p):
    x = leaf(p, (2,), 1)
    y = leaf(p, (2,), 4, "y")
    body = lambda q, ps: ps[0] * ps[1]  # noqa: E731
    r = p.call(body, [x, y]) + p.call(body, [x, x])
    return weighted(p, r), [x, y]


# ---- several outputs, memory, SGD --------------------------------------------------------


@test("load_is_a_constant", "a LOAD that is not x carries no gradient: x * LOAD")
def _(p):
    b = p.param([2, -1, 0.5], (3,), hint="b")
    x = leaf(p, (3,), 2)
    return weighted(p, x * b * x), [x, b]


@test("grad_of_a_load", "the gradient with respect to a whole-buffer LOAD")
def _(p):
    w = p.param([1, -2, 0.5, 3], (4,), hint="w")
    t = p.const([0.5, 0.5, 0.5, 0.5], (4,), hint="t")
    d = w - t
    return p.sum(d * d), [w]


def sgd(p: Program, w: V, loss: V, rate: float) -> list[V]:
    g = p.grad(loss, w)
    lr = p.const([rate] * int(np.prod(w.shape)), w.shape, hint="lr")
    new = w - g * lr
    st = p.fresh("st")
    p.lines.append(f"{st} = STORE void {w.buffer.name} {new.name}")
    after = V(p, p.fresh("w"), w.dtype, new.value)
    p.lines.append(f"{after.name} = AFTER {w.type} {w.buffer.name} {st}")
    return [loss, g, after]


@test(
    "sgd_step_linear_regression",
    "one SGD step: load w, GRAD of the squared error, store w - 0.25 g",
    ulps=0,
)
def _(p):
    w = p.param([0.5, -1], (2,), hint="w")
    x = p.const([1, 2, -1, 0.5, 2, 1], (3, 2), hint="x")
    t = p.const([1, -1, 2], (3,), hint="t")
    y = p.reduce(x * p.expand(w, (3, 2)), "ADD", (1,))
    d = y - t
    return sgd(p, w, p.sum(d * d), 0.25)


@test("sgd_step_mlp", "one SGD step of a one-hidden-layer ReLU network, W1 stored back", ulps=0)
def _(p):
    w1 = p.param([0.5, -1, 1, 0.25, -0.5, 2], (6,), hint="w1")
    x = p.const([1, -2, 0.5, 2], (2, 2), hint="x")
    w2 = p.const([1, -0.5, 2], (3, 1), hint="w2")
    y = matmul(p, relu(p, matmul(p, x, p.reshape(w1, (2, 3)))), w2)
    t = p.const([1, -1], (2, 1), hint="t")
    d = y - t
    return sgd(p, w1, p.sum(d * d), 0.125)


@test("sgd_two_parameters", "one step on two buffers: both read, both written", ulps=0)
def _(p):
    w = p.param([1, 2], (2,), hint="w")
    b = p.param([0.5], (1,), hint="b")
    x = p.const([1, -1], (2,), hint="x")
    y = p.sum(w * x) + p.sum(b)
    loss = y * y
    out = sgd(p, w, loss, 0.5)
    return [*out, *sgd(p, b, loss, 0.5)[1:]]


# ---- higher derivatives, by hand -----------------------------------------------------------


@test("second_derivative_cube", "x^3 at x = 2 (f64): 3x^2 = 12, then 6x = 12, then 6")
def _(p):
    p.dtype = "f64"
    x = p.const([2], (), hint="x")
    c = x * x * x
    d1 = p.grad(c, x)
    d2 = V(p, p.fresh("h"), "f64", np.asarray(12.0))
    p.emit(d2, "GRAD", (d1, x))
    d3 = V(p, p.fresh("h"), "f64", np.asarray(6.0))
    p.emit(d3, "GRAD", (d2, x))
    return [c, d1, d2, d3]


@test(
    "second_derivative_vector",
    "sum(x^3) (f32): the gradient 3x^2, then GRAD of sum(3x^2 * w) = 6 x w",
)
def _(p):
    x = p.const([1, -2, 0.5], (3,), hint="x")
    g = p.grad(p.sum(x * x * x), x)
    w = p.const([1, 0.5, -1], (3,), hint="w")
    l2 = p.sum(g * w)
    h = V(p, p.fresh("h"), "f32", 6 * x.value * w.value)
    p.emit(h, "GRAD", (l2, x))
    return [g, h]


@test("mixed_partial", "d/dy of d/dx (x y^2) = 2y, at x = 3, y = -1.5")
def _(p):
    x = p.const([3], (), hint="x")
    y = p.const([-1.5], (), hint="y")
    gx = p.grad(x * y * y, x)
    h = V(p, p.fresh("h"), "f32", np.asarray(2 * -1.5))
    p.emit(h, "GRAD", (gx, y))
    return [gx, h]


@test("second_derivative_of_sin", "d2/dx2 sin(x) = -sin(x) at x = 1 (f32)", ulps=8)
def _(p):
    x = p.const([1], (), hint="x")
    g = p.grad(p.unary("SIN", x), x)
    h = V(p, p.fresh("h"), "f32", np.asarray(-np.sin(1.0)))
    p.emit(h, "GRAD", (g, x))
    return [g, h]


@test("grad_in_call_body", "a GRAD inside a CALL body, with respect to its PARAM: 2p at 3 and -4")
def _(p):
    q = V(p, "%p", "f32", np.asarray(0.0))
    p.lines.append("%p = PARAM f32 0")
    p.lines.append("%q = MUL f32 %p %p")
    p.lines.append("%d = GRAD f32 %q %p")
    outs = []
    for i, at in enumerate((3, -4)):
        a = p.const([at], (), hint="a")
        c = V(p, f"%call{i}", "f32", np.asarray(2.0 * at))
        p.lines.append(f"{c.name} = CALL f32 %d {a.name}")
        outs.append(c)
    del q
    return outs


# ---- f64 ------------------------------------------------------------------------------------

for name, op in (("f64_sin_chain", "SIN"), ("f64_sqrt_chain", "SQRT")):

    def build(p, op=op):
        p.dtype = "f64"
        x = p.const([0.5, 1.5, 2.5], (3,), hint="x")
        y = p.unary(op, x * x + p.const([1, 1, 1], (3,), hint="one"))
        return weighted(p, y * x), [x]

    test(name, f"in f64: {op} of x*x + 1 times x", ulps=1)(build)


# ---- rejections (exit 3), each with the line it names ---------------------------------------

REJECTIONS += [
    (
        "reject_loss_shaped",
        "the loss must be rank 0: f32[3] is not (line 3)",
        """
%x = CONST f32[3] (1, 2, 3)
%y = MUL f32[3] %x %x
%g = GRAD f32[3] %y %x
%out = SINK void %g""",
    ),
    (
        "reject_loss_int",
        "the loss must be a float",
        """
%x = CONST f32 2
%i = CONST i32 3
%g = GRAD f32 %i %x
%out = SINK void %g""",
    ),
    (
        "reject_loss_bool",
        "the loss must be a float, not a bool",
        """
%x = CONST f32 2
%b = CMPLT bool %x %x
%g = GRAD f32 %b %x
%out = SINK void %g""",
    ),
    (
        "reject_x_int",
        "x must be a float value",
        """
%i = CONST i32 3
%f = CAST f32 %i
%g = GRAD i32 %f %i
%out = SINK void %g""",
    ),
    (
        "reject_type_not_x",
        "T must be x's type: f32, not f32[2]",
        """
%x = CONST f32[2] (1, 2)
%l = REDUCE f32 %x (ADD, (0))
%g = GRAD f32 %l %x
%out = SINK void %g""",
    ),
    (
        "reject_dtype_not_x",
        "T must be x's dtype: f64 is not f32",
        """
%x = CONST f32 2
%l = MUL f32 %x %x
%g = GRAD f64 %l %x
%out = SINK void %g""",
    ),
    (
        "reject_x_buffer",
        "x must be a value, not memory: LOAD it first",
        """
%b = BUFFER f32[2] 0
%v = LOAD f32[2] %b
%l = REDUCE f32 %v (ADD, (0))
%g = GRAD f32[2] %l %b
%out = SINK void %g""",
    ),
    (
        "reject_loss_store",
        "the loss must be a value, not an effect",
        """
%x = CONST f32 2
%b = BUFFER f32[1] 0
%z = CONST i32 0
%p = INDEX f32 %b %z
%s = STORE void %p %x
%g = GRAD f32 %s %x
%out = SINK void %g""",
    ),
    (
        "reject_one_operand",
        "GRAD takes a loss and x",
        """
%x = CONST f32 2
%l = MUL f32 %x %x
%g = GRAD f32 %l
%out = SINK void %g""",
    ),
    (
        "reject_argument",
        "GRAD takes no argument",
        """
%x = CONST f32 2
%l = MUL f32 %x %x
%g = GRAD f32 %l %x 1
%out = SINK void %g""",
    ),
    (
        "reject_reduce_mul_path",
        "the loss depends on x through a REDUCE MUL (line 2)",
        """
%x = CONST f32[3] (1, 2, 3)
%p = REDUCE f32 %x (MUL, (0))
%l = MUL f32 %p %p
%g = GRAD f32[3] %l %x
%out = SINK void %g""",
    ),
    (
        "reject_reduce_mul_in_call",
        "a REDUCE MUL inside a CALL body, judged as if inlined",
        """
%x = CONST f32[2] (1, 2)
%p = PARAM f32[2] 0
%r = REDUCE f32 %p (MUL, (0))
%c = CALL f32 %r %x
%g = GRAD f32[2] %c %x
%out = SINK void %g""",
    ),
    (
        "reject_reduce_mul_partial_axes",
        "a REDUCE MUL over one axis of two on the path",
        """
%x = CONST f32[2,2] (1, 2, 3, 4)
%p = REDUCE f32[2] %x (MUL, (1))
%l = REDUCE f32 %p (ADD, (0))
%g = GRAD f32[2,2] %l %x
%out = SINK void %g""",
    ),
    (
        "reject_grad_in_loop",
        "a GRAD inside a RANGE",
        """
%b = BUFFER f32[4] 0
%o = BUFFER f32[4] 1
%n = CONST i32 4
%k = RANGE i32 %n 0
%e = INDEX f32 %b %k
%v = LOAD f32 %e
%w = MUL f32 %v %v
%g = GRAD f32 %w %v
%f = INDEX f32 %o %k
%s = STORE void %f %g
%d = END void %s %k
%a = AFTER f32[4] %o %d
%out = SINK void %a""",
    ),
    (
        "reject_grad_in_loop_of_counter",
        "a loss of a loop counter, cast to f32, inside the loop",
        """
%o = BUFFER f32[3] 0
%n = CONST i32 3
%k = RANGE i32 %n 0
%c = CAST f32 %k
%w = MUL f32 %c %c
%g = GRAD f32 %w %c
%f = INDEX f32 %o %k
%s = STORE void %f %g
%d = END void %s %k
%a = AFTER f32[3] %o %d
%out = SINK void %a""",
    ),
    (
        "reject_x_bool",
        "x must be a float value, not a bool",
        """
%x = CONST f32 2
%b = CMPLT bool %x %x
%f = CAST f32 %b
%g = GRAD bool %f %b
%out = SINK void %g""",
    ),
]

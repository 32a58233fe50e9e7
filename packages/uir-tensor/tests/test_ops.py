"""Each Tensor op's values against numpy on random inputs, run through the interpreter.

Tolerances, from the unit roundoff U = 2^-24 of f32 (uir.testing.tolerance):
- ADD, SUB, MUL, FDIV, NEG, SQRT, MAX and the movement ops are exact or correctly rounded, as
  numpy's f32 arithmetic is: the same inputs give the same bits (compared exactly).
- exp is EXP2(x * log2 e) and log is LOG2(x) * ln 2: EXP2/LOG2 within 2 ulp, plus the roundings
  of the two MULs, and the rounding of x * log2 e grows as |x| (at most 3 here), so a relative
  error of (2 + 1 + 1 + ln2 * 3 * 1.5) U < 8U < 1e-6: compared with rtol 1e-5 against float64,
  which leaves a margin of ten for composites of a few such ops (sigmoid, tanh, gelu).
- A sum of n terms folded in order errs by at most n U sum|x| (fold_bound); means, variances,
  matmuls, softmax and layer norm are compared at that bound (times a small stated factor).
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from uir.core.dtypes import bool_, i32
from uir.core.ops import Op
from uir.tensor import Tensor, causal_mask, realize
from uir.testing.tolerance import U, fold_bound

RTOL = 1e-5  # f32 transcendental composites, derived in the module docstring


def run(*tensors: Tensor) -> list[np.ndarray]:
    return realize(*tensors, backend="interp")


def within(got: np.ndarray, want: np.ndarray, bound: np.ndarray | float) -> None:
    """|got - want| <= bound, elementwise (bound broadcast), naming the worst element."""
    assert np.shape(got) == np.shape(want)
    excess = np.abs(np.asarray(got, np.float64) - want) - bound
    worst = np.unravel_index(np.argmax(excess), np.shape(excess)) if np.ndim(excess) else ()
    assert (excess <= 0).all(), f"at {worst}: got {got[worst]}, want {want[worst]}"


def value(t: Tensor) -> np.ndarray:
    return run(t)[0]


def rand(*shape: int, seed: int = 0, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


# --- constructors


def test_constructors_hold_their_values() -> None:
    a = rand(2, 3)
    assert np.array_equal(value(Tensor(a)), a)
    assert np.array_equal(value(Tensor([[1, 2], [3, 4]])), np.array([[1, 2], [3, 4]]))
    assert Tensor([1, 2]).dtype is i32 and Tensor([True]).dtype is bool_
    assert np.array_equal(value(Tensor.zeros(2, 3)), np.zeros((2, 3)))
    assert np.array_equal(value(Tensor.ones(4)), np.ones(4))
    assert np.array_equal(value(Tensor.full((2,), 7.5)), [7.5, 7.5])
    assert np.array_equal(value(Tensor.arange(5)), np.arange(5))
    g = np.random.default_rng(3).normal(0.0, 2.0, (3, 2)).astype(np.float32)
    assert np.array_equal(value(Tensor.randn(3, 2, seed=3, std=2.0)), g)
    u = value(Tensor.uniform(50, low=-1.0, high=2.0, seed=1))
    assert u.min() >= -1.0 and u.max() < 2.0
    p = Tensor.parameter(a)
    assert p.requires_grad and p.uop.op is Op.RESHAPE and p.uop.src[0].op is Op.LOAD
    assert np.array_equal(value(p), a)
    q = Tensor(a, requires_grad=True)  # the same as Tensor.parameter(a), in its own buffer
    assert q.requires_grad and q.buffer is not None and q.buffer.slot != p.buffer.slot  # type: ignore[union-attr]
    assert np.array_equal(value(q), a)


def test_realize_method_numpy_and_item() -> None:
    a, b = Tensor([1.0, 2.0]), Tensor(np.float32(3.5))
    first, second = Tensor.realize(a * 2, b, backend="interp")
    assert first.tolist() == [2.0, 4.0] and second.shape == ()
    assert a.realize(backend="interp")[0].tolist() == [1.0, 2.0]
    assert (a * 3).numpy("interp").tolist() == [3.0, 6.0]
    assert b.item("interp") == 3.5 and isinstance(b.item("interp"), float)
    assert Tensor([7]).sum().item("interp") == 7


def test_input_reads_what_was_written_before_each_run() -> None:
    x = Tensor.input((2, 2), i32)
    y = x * 2
    x.write([[1, 2], [3, 4]])
    assert np.array_equal(value(y), [[2, 4], [6, 8]])
    x.write([[5, 6], [7, 8]])
    assert np.array_equal(value(y), [[10, 12], [14, 16]])


# --- elementwise and broadcasting

BINARY = [
    (lambda a, b: a + b, np.add),
    (lambda a, b: a - b, np.subtract),
    (lambda a, b: a * b, np.multiply),
    (lambda a, b: a / b, np.divide),
    (lambda a, b: a.maximum(b), np.maximum),
    (lambda a, b: a.minimum(b), np.minimum),
]
SHAPES = [((2, 3), (2, 3)), ((2, 3), (3,)), ((4, 1), (1, 5)), ((2, 1, 3), (4, 1)), ((3,), ())]


@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("op", range(len(BINARY)), ids=["add", "sub", "mul", "div", "max", "min"])
def test_binary_broadcast_equals_numpy_exactly(op: int, shapes: tuple) -> None:
    build, ref = BINARY[op]
    a, b = rand(*shapes[0], seed=1), rand(*shapes[1], seed=2)
    got = value(build(Tensor(a), Tensor(b)))
    want = ref(a, b)
    assert got.shape == want.shape and got.dtype == np.float32
    assert np.array_equal(got, want)


def test_broadcasting_is_reshape_then_expand() -> None:
    a, b = Tensor(rand(2, 3)), Tensor(rand(3))
    add = (a + b).uop
    assert add.src[0] is a.uop
    expand = add.src[1]
    assert expand.op is Op.EXPAND and expand.type.shape == (2, 3)
    assert expand.src[0].op is Op.RESHAPE and expand.src[0].type.shape == (1, 3)
    # a Python number is the CONST of the result's shape: what EXPAND of its rank-0 CONST is
    scalar = (a + 1.5).uop.src[1]
    assert scalar.op is Op.CONST and scalar.type.shape == (2, 3)
    assert scalar.arg.is_fill and scalar.arg[0] == 1.5


def test_python_scalars_on_either_side() -> None:
    a = rand(3, seed=4)
    got = run(a_t := Tensor(a), 2.0 - a_t, 1.0 / (a_t + 4.0), a_t * 3, -a_t)
    assert np.array_equal(got[1], np.float32(2.0) - a)
    assert np.array_equal(got[2], np.float32(1.0) / (a + np.float32(4.0)))
    assert np.array_equal(got[3], a * np.float32(3.0))
    assert np.array_equal(got[4], -a)


UNARY = {
    "exp": (lambda t: t.exp(), np.exp, (-3, 3)),
    "log": (lambda t: t.log(), np.log, (0.1, 5)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, (0.1, 5)),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), (0.1, 5)),
    "relu": (lambda t: t.relu(), lambda x: np.maximum(x, 0), (-3, 3)),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), (-3, 3)),
    "tanh": (lambda t: t.tanh(), np.tanh, (-3, 3)),
    "gelu": (
        lambda t: t.gelu(),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        (-3, 3),
    ),
    "pow3": (lambda t: t**3, lambda x: x**3, (-3, 3)),
    "pow-2": (lambda t: t**-2, lambda x: x**-2.0, (0.5, 3)),
    "pow0": (lambda t: t**0, lambda x: np.ones_like(x), (-3, 3)),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_equals_numpy(name: str) -> None:
    build, ref, (low, high) = UNARY[name]
    x = rand(4, 5, seed=5, low=low, high=high)
    got = value(build(Tensor(x)))
    want = ref(x.astype(np.float64))
    # tanh(x) = 2 sigmoid(2x) - 1 loses its relative precision near 0 (a difference of nearly
    # equal numbers): there the error is absolute, U-sized times the terms (about 1), so 1e-6.
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=1e-6)


def test_comparisons_and_where() -> None:
    a, b = rand(3, 4, seed=6), rand(4, seed=7)
    ta, tb = Tensor(a), Tensor(b)
    lt, le, gt, ge, eq = run(ta < tb, ta <= tb, ta > tb, ta >= tb, ta.eq(ta))
    assert lt.dtype == np.bool_
    assert np.array_equal(lt, a < b) and np.array_equal(le, a <= b)
    assert np.array_equal(gt, a > b) and np.array_equal(ge, a >= b) and eq.all()
    picked = value((ta < tb).where(ta, tb))
    assert np.array_equal(picked, np.where(a < b, a, b))
    assert np.array_equal(value((ta < 0).where(0.0, ta)), np.where(a < 0, 0, a))


# --- movement


def test_movement_ops_equal_numpy_exactly() -> None:
    x = rand(2, 3, 4, seed=8)
    t = Tensor(x)
    cases = [
        (t.reshape(6, 4), x.reshape(6, 4)),
        (t.reshape(-1, 2), x.reshape(-1, 2)),
        (t.permute(2, 0, 1), x.transpose(2, 0, 1)),
        (t.transpose(), x.swapaxes(-1, -2)),
        (t.transpose(0, 2), x.swapaxes(0, 2)),
        (t.pad([(1, 0), (0, 2), (1, 1)]), np.pad(x, [(1, 0), (0, 2), (1, 1)])),
        (t.shrink([(0, 1), (1, 3), (0, 4)]), x[0:1, 1:3, :]),
        (t.flip(0, 2), x[::-1, :, ::-1]),
        (t[1], x[1]),
        (t[:, 1:, -1], x[:, 1:, -1]),
        (t[0, 2, 3], x[0, 2, 3]),
        (t[:, :2].expand(3, 2, 2, 4), np.broadcast_to(x[:, :2], (3, 2, 2, 4))),
        (Tensor(x[0, 0]).reshape(4, 1).expand(4, 3), np.broadcast_to(x[0, 0][:, None], (4, 3))),
    ]
    got = run(*(c[0] for c in cases))
    for (_, want), g in zip(cases, got, strict=True):
        assert g.shape == want.shape
        assert np.array_equal(g, want)


def test_len_and_iteration_give_the_rows() -> None:
    x = rand(3, 2, seed=21)
    t = Tensor(x)
    assert len(t) == 3
    rows = list(t)
    assert len(rows) == 3 and all(r.shape == (2,) for r in rows)
    for got, want in zip(run(*rows), x, strict=True):
        assert np.array_equal(got, want)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cat_equals_numpy(axis: int) -> None:
    parts = [rand(2, 3, seed=9), rand(2, 3, seed=10), rand(2, 3, seed=11)]
    got = value(Tensor.cat([Tensor(p) for p in parts], axis))
    # Each piece is padded with zeros and the pieces added: x + 0 is x, exactly.
    assert np.array_equal(got, np.concatenate(parts, axis))


# --- reductions


@pytest.mark.parametrize(
    "axis, keepdim", [(None, False), (0, False), (1, True), (-1, False), ((0, 2), True)]
)
def test_reductions_equal_numpy(axis: int | tuple | None, keepdim: bool) -> None:
    x = rand(3, 4, 5, seed=12)
    t = Tensor(x)
    s, m, mx, v = run(
        t.sum(axis, keepdim), t.mean(axis, keepdim), t.max(axis, keepdim), t.var(axis, keepdim)
    )
    x64 = x.astype(np.float64)
    n = x.size // s.size
    bound = fold_bound(n, np.abs(x64).sum(axis, keepdims=keepdim))
    within(s, x64.sum(axis, keepdims=keepdim), bound)
    # the mean: the sum's bound, divided by n, plus the MUL's rounding of the result
    mean = x64.mean(axis, keepdims=keepdim)
    within(m, mean, bound / n + 2 * U * np.abs(mean))
    assert np.array_equal(mx, x.max(axis, keepdims=keepdim))
    # var = mean((x - mean)^2): the centred terms carry the mean's error (d) and a SUB's
    # rounding, so each square is off by 2|x - mean| d + U (x - mean)^2; over n terms and the
    # final fold, bounded by (4 n U + 2d) * (mean of |x|^2 plus a spread of 9) (|x| <= 3).
    want_v = x64.var(axis, keepdims=keepdim)
    within(v, want_v, (4 * n * U + 2 * bound.max() / n) * 18)


# --- composites


@pytest.mark.parametrize(
    "a_shape, b_shape",
    [
        ((3, 4), (4, 5)),
        ((2, 3, 4), (4, 2)),
        ((2, 1, 3, 4), (3, 4, 2)),
        ((4,), (4, 5)),
        ((2, 3, 4), (4,)),
        ((4,), (4,)),
    ],
)
def test_matmul_equals_numpy(a_shape: tuple, b_shape: tuple) -> None:
    a, b = rand(*a_shape, seed=13), rand(*b_shape, seed=14)
    got = value(Tensor(a) @ Tensor(b))
    want = a.astype(np.float64) @ b.astype(np.float64)
    k = a_shape[-1]
    bound = fold_bound(k + 1, np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    if not want.shape:  # a rank-0 result: the test's `got` is a 0-d array
        want, bound = np.asarray(want), np.asarray(bound)
    assert got.shape == want.shape
    within(got, want, bound)


def test_matmul_is_movement_mul_reduce() -> None:
    out = (Tensor(rand(3, 4)) @ Tensor(rand(4, 5))).uop
    assert out.op is Op.REDUCE and out.arg[:2] == (Op.ADD, (1,))
    assert out.src[0].op is Op.MUL and out.src[0].type.shape == (3, 4, 5)


def _softmax64(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_softmax_and_log_softmax_equal_numpy() -> None:
    # shifts of 50 test stability: exp(50 + 3) overflows nothing once the max is subtracted
    x = rand(3, 6, seed=15) + np.float32(50)
    sm, lsm = run(Tensor(x).softmax(-1), Tensor(x).log_softmax(-1))
    x64 = x.astype(np.float64)
    want = _softmax64(x64)
    # exp's 8U per element (docstring), the row's fold of 6 terms, the FDIV: well under 1e-5
    np.testing.assert_allclose(sm, want, rtol=RTOL)
    np.testing.assert_allclose(sm.sum(-1), 1.0, rtol=6 * 8 * U)
    # log_softmax = (x - max) - log(sum): absolute error of a few U times |x - max| <= 6
    np.testing.assert_allclose(lsm, np.log(want), rtol=0, atol=1e-5)
    assert np.isfinite(value(Tensor(np.array([1e4, 0.0], np.float32)).softmax())).all()


def test_cross_entropy_equals_numpy() -> None:
    logits = rand(2, 3, 5, seed=16)
    targets = np.random.default_rng(17).integers(0, 5, (2, 3)).astype(np.int32)
    got = value(Tensor(logits).cross_entropy(Tensor(targets)))
    x64 = logits.astype(np.float64)
    logp = np.log(_softmax64(x64))
    want = -np.take_along_axis(logp, targets[..., None], -1).mean()
    np.testing.assert_allclose(got, want, rtol=RTOL)


def test_layer_norm_equals_numpy() -> None:
    x, w, b = rand(3, 8, seed=18), rand(8, seed=19), rand(8, seed=20)
    got = value(Tensor(x).layer_norm(Tensor(w), Tensor(b)))
    x64 = x.astype(np.float64)
    c = x64 - x64.mean(-1, keepdims=True)
    want = c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b
    # the normalized values (|.| <= sqrt(8)) carry the variance's n-term error; times |w| <= 3
    within(got, want, fold_bound(8, 8 * 3 * 3 * np.ones(1)))


def test_one_hot_and_embedding() -> None:
    ids = np.array([[0, 3], [2, 2]], np.int32)
    oh = value(Tensor(ids).one_hot(4))
    assert np.array_equal(oh, np.eye(4, dtype=np.float32)[ids])
    from uir.tensor import nn

    emb = nn.Embedding(4, 3, np.random.default_rng(0))
    table = emb.w.numpy()
    # a one-hot row times the table adds one value and zeros: exact
    assert np.array_equal(value(emb(Tensor(ids))), table[ids])


def test_causal_mask_is_lower_triangular() -> None:
    mask = causal_mask(5)
    assert mask.uop.op is Op.CMPLE
    assert np.array_equal(value(mask), np.tril(np.ones((5, 5), bool)))


def test_same_computation_is_the_same_graph() -> None:
    a = rand(2, 3)
    first = (Tensor(a).softmax() @ Tensor(a).T).uop
    second = (Tensor(a).softmax() @ Tensor(a).T).uop
    assert first is second

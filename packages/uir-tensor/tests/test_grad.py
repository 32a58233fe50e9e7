"""`backward()` (GRAD, spec/uir-week9.md) against central finite differences of the same
function computed in float64 numpy (no code shared with the Tensor path), through the
interpreter.

Each case is a function of one or more parameters, reduced to the scalar sum(f(x) * w) with
fixed random weights w so that every output element matters. The difference quotient with
h = 1e-6 in float64 errs by O(h^2 f''') + O(1e-16 / h), about 1e-9 here; the f32 gradient by a
few roundings (U = 6e-8) per op on the path, times the number of terms a reduction folds (<= 24
here) and the magnitudes (<= 10): under 1e-4 relative to the gradient's scale, the tolerance.
"""

from __future__ import annotations

import math
from collections.abc import Callable

import numpy as np
import pytest

from uir.core.dtypes import i32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.tensor import Tensor, realize

TOL = 1e-4


def rand(*shape: int, seed: int, low: float = -2.0, high: float = 2.0) -> np.ndarray:
    return np.random.default_rng(seed).uniform(low, high, shape).astype(np.float32)


def numeric_grad(f: Callable[..., float], xs: list[np.ndarray], i: int) -> np.ndarray:
    """d f / d xs[i] by central differences in float64."""
    h = 1e-6
    grad = np.zeros(xs[i].shape)
    for idx in np.ndindex(xs[i].shape):
        up = [x.copy() for x in xs]
        down = [x.copy() for x in xs]
        up[i][idx] += h
        down[i][idx] -= h
        grad[idx] = (f(*up) - f(*down)) / (2 * h)
    return grad


def check(build: Callable[..., Tensor], ref: Callable[..., np.ndarray], *arrays: np.ndarray):
    params = [Tensor.parameter(a) for a in arrays]
    out = build(*params)
    w = np.random.default_rng(99).uniform(0.5, 1.5, out.shape).astype(np.float32)
    loss = (out * Tensor(w)).sum() if out.shape else out * float(w)
    loss.backward()
    got = realize(loss, *(p.grad for p in params), backend="interp")
    xs = [np.array(a, dtype=np.float64) for a in arrays]

    def f(*ys: np.ndarray) -> float:
        return float((ref(*ys) * w.astype(np.float64)).sum())

    np.testing.assert_allclose(got[0], f(*xs), rtol=TOL)
    for i, g in enumerate(got[1:]):
        want = numeric_grad(f, xs, i)
        assert g.shape == arrays[i].shape
        scale = max(np.abs(want).max(), 1.0)
        np.testing.assert_allclose(g, want, rtol=TOL, atol=TOL * scale)


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))


def _softmax(x: np.ndarray) -> np.ndarray:
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> np.ndarray:
    c = x - x.mean(-1, keepdims=True)
    return c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5) * w + b


UNARY = {
    "exp": (lambda t: t.exp(), np.exp, (-2, 2)),
    "log": (lambda t: t.log(), np.log, (0.2, 3)),
    "sqrt": (lambda t: t.sqrt(), np.sqrt, (0.2, 3)),
    "rsqrt": (lambda t: t.rsqrt(), lambda x: 1 / np.sqrt(x), (0.2, 3)),
    # away from 0, where relu's derivative jumps
    "relu": (lambda t: (t * t - 1.0).relu(), lambda x: np.maximum(x * x - 1, 0), (-2, 2)),
    "sigmoid": (lambda t: t.sigmoid(), lambda x: 1 / (1 + np.exp(-x)), (-2, 2)),
    "tanh": (lambda t: t.tanh(), np.tanh, (-2, 2)),
    "gelu": (lambda t: t.gelu(), _gelu, (-2, 2)),
    "neg-pow": (lambda t: -(t**3) + t**-2, lambda x: -(x**3) + x**-2.0, (0.5, 2)),
}


@pytest.mark.parametrize("name", UNARY)
def test_unary_gradient(name: str) -> None:
    build, ref, (low, high) = UNARY[name]
    check(build, ref, rand(3, 4, seed=1, low=low, high=high))


def test_binary_broadcast_gradients() -> None:
    # b's gradient sums over the broadcast axes (EXPAND's rule), c's over a size-1 axis too
    check(
        lambda a, b, c: (a * b - c) / (b * b + 1.0),
        lambda a, b, c: (a * b - c) / (b * b + 1.0),
        rand(2, 3, 4, seed=2),
        rand(4, seed=3),
        rand(3, 1, seed=4),
    )


def test_maximum_and_where_gradients() -> None:
    a, b = rand(3, 4, seed=5), rand(3, 4, seed=6)
    check(lambda x, y: x.maximum(y), np.maximum, a, b)
    check(
        lambda x, y: (x < y).where(x * 2.0, y * y), lambda x, y: np.where(x < y, 2 * x, y * y), a, b
    )


@pytest.mark.parametrize("axis", [None, 0, -1, (0, 2)])
def test_reduction_gradients(axis: int | tuple | None) -> None:
    x = rand(2, 3, 4, seed=7)
    check(lambda t: t.sum(axis), lambda t: t.sum(axis), x)
    check(lambda t: t.mean(axis, keepdim=True), lambda t: t.mean(axis, keepdims=True), x)
    check(lambda t: t.max(axis), lambda t: t.max(axis), x)
    check(lambda t: t.var(axis), lambda t: t.var(axis), x)


def test_movement_gradients() -> None:
    x = rand(2, 3, 4, seed=8)
    check(
        lambda t: t.permute(2, 0, 1).reshape(4, 6).flip(1)[1:3, :4].pad([(1, 0), (0, 2)]),
        lambda t: np.pad(t.transpose(2, 0, 1).reshape(4, 6)[:, ::-1][1:3, :4], [(1, 0), (0, 2)]),
        x,
    )
    check(
        lambda a, b: Tensor.cat([a, b * 2.0], 1).expand(3, 2, 6, 4),
        lambda a, b: np.broadcast_to(np.concatenate([a, 2 * b], 1), (3, 2, 6, 4)),
        x,
        rand(2, 3, 4, seed=9),
    )


def test_matmul_gradient_batched_and_broadcast() -> None:
    check(lambda a, b: a @ b, lambda a, b: a @ b, rand(2, 3, 4, seed=10), rand(4, 5, seed=11))
    check(lambda a, b: a @ b, lambda a, b: a @ b, rand(4, seed=24), rand(2, 4, 3, seed=25))


def test_softmax_cross_entropy_layer_norm_gradients() -> None:
    x = rand(2, 3, 5, seed=12)
    check(lambda t: t.softmax(-1), _softmax, x)
    check(lambda t: t.log_softmax(-1), lambda t: np.log(_softmax(t)), x)
    targets = np.random.default_rng(13).integers(0, 5, (2, 3)).astype(np.int32)

    def ce(t: np.ndarray) -> np.ndarray:
        return -np.take_along_axis(np.log(_softmax(t)), targets[..., None], -1).mean()

    check(lambda t: t.cross_entropy(Tensor(targets)), ce, x)
    check(
        lambda t, w, b: t.layer_norm(w, b),
        _layer_norm,
        rand(3, 6, seed=14),
        rand(6, seed=15),
        rand(6, seed=16),
    )


def test_a_scalar_parameter_gets_a_scalar_gradient() -> None:
    check(
        lambda s, x: x * s * s, lambda s, x: x * s * s, np.array(1.5, np.float32), rand(3, seed=17)
    )


def test_one_grad_per_parameter_sharing_one_loss() -> None:
    a, b = Tensor.parameter(rand(3, seed=18)), Tensor.parameter(rand(3, seed=19))
    loss = (a * b).sum()
    loss.backward()
    assert a.grad is not None and b.grad is not None
    grads = [u for t in (a.grad, b.grad) for u in t.uop.toposort() if u.op is Op.GRAD]
    assert len(grads) == 2 and grads[0].src[0] is grads[1].src[0] is loss.uop
    # A tensor that is not trainable gets none; a second backward replaces the first's.
    assert Tensor(rand(3, seed=20)).grad is None


def test_interpreter_evaluate_is_a_second_path() -> None:
    """The GRADs lowered by the autodiff pass and run by uir.core.interpret.evaluate (no
    session, no pipeline) agree with realize."""
    from uir.autodiff.passes import differentiate
    from uir.tensor.buffers import BUFFERS

    x = rand(2, 3, seed=21)
    p = Tensor.parameter(x)
    loss = (p.exp() @ Tensor(rand(3, 2, seed=22))).softmax().log().sum() * -1.0
    loss.backward()
    sink = UOp.sink(loss.uop, p.grad.uop)
    buffers = {u.arg: BUFFERS[u].read() for u in sink.toposort() if u.op is Op.BUFFER}
    direct = evaluate(differentiate(sink), buffers)
    through = realize(loss, p.grad, backend="interp")
    np.testing.assert_array_equal(direct[0], through[0])
    np.testing.assert_array_equal(direct[1].reshape(2, 3), through[1])


def test_embedding_gradient_is_the_one_hot_matmuls() -> None:
    ids = np.array([[0, 2, 2], [1, 0, 2]], np.int32)
    table = rand(3, 4, seed=23)
    check(lambda w: Tensor(ids).one_hot(3) @ w, lambda w: w[ids], table)
    assert Tensor(ids).dtype is i32

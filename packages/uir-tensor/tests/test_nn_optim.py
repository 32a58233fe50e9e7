"""nn and optim: the GPT against uir.testing.gpt_numpy (hand-derived gradients, no compiler),
SGD and AdamW steps against numpy implementations of the same updates, and the training step
as one program compiled once whose stores every other program sees."""

from __future__ import annotations

import numpy as np
import pytest

from uir.core.dtypes import i32
from uir.tensor import Tensor, nn, optim, realize
from uir.tensor.realize import _sessions, program
from uir.testing import gpt_numpy

CONFIG = gpt_numpy.Config(vocab=7, d_model=8, layers=2, heads=2, context=4)


def test_parameters_walk_every_module_in_gpt_numpy_order() -> None:
    model = nn.GPT(CONFIG.vocab, CONFIG.d_model, CONFIG.layers, CONFIG.heads, CONFIG.context)
    shapes = {name: p.shape for name, p in model.named_parameters()}
    assert shapes == gpt_numpy.parameter_shapes(CONFIG)
    assert list(shapes) == list(gpt_numpy.parameter_shapes(CONFIG))
    assert len(model.parameters()) == len(shapes)
    assert all(p.requires_grad for p in model.parameters())
    assert len({p.buffer.slot for p in model.parameters()}) == len(shapes)  # type: ignore[union-attr]


def test_gpt_loss_and_gradients_equal_the_hand_derived_numpy_model() -> None:
    c = CONFIG
    model = nn.GPT(c.vocab, c.d_model, c.layers, c.heads, c.context)
    params = gpt_numpy.init_parameters(c, seed=3)
    # unit layer norms and zero biases would hide their gradients' errors: perturb them
    rng = np.random.default_rng(4)
    params = {k: (v + rng.normal(0, 0.3, v.shape)).astype(np.float32) for k, v in params.items()}
    model.load_state(params)
    ids = rng.integers(0, c.vocab, (2, c.context))
    targets = rng.integers(0, c.vocab, (2, c.context))
    x = Tensor.input(ids.shape, i32)
    x.write(ids)
    loss = model(x).cross_entropy(Tensor(targets.astype(np.int32)))
    loss.backward()
    got = realize(loss, *(p.grad for p in model.parameters()), backend="interp")
    want_loss, want = gpt_numpy.loss_and_gradients(
        {k: v.astype(np.float64) for k, v in params.items()}, c, ids, targets
    )
    # Both sides round in f32 (this one) against float64: a few hundred roundings along the
    # deepest path, each U = 6e-8 relative, so 1e-4 relative to each gradient's scale.
    np.testing.assert_allclose(got[0], want_loss, rtol=1e-5)
    for (name, _), g in zip(model.named_parameters(), got[1:], strict=True):
        scale = np.abs(want[name]).max()
        np.testing.assert_allclose(g, want[name], rtol=0, atol=1e-4 * scale, err_msg=name)


# --- optimizers: a linear least-squares model, whose gradient numpy computes by hand


def _data(seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 3)).astype(np.float32)
    y = rng.normal(size=(5, 2)).astype(np.float32)
    w = rng.normal(size=(3, 2)).astype(np.float32)
    b = rng.normal(size=(2,)).astype(np.float32)
    return x, y, w, b


def _numpy_loss_grads(x, y, w, b) -> tuple[float, np.ndarray, np.ndarray]:
    """mean((x w + b - y)^2) and its gradients, by hand in float64."""
    r = x @ w + b - y
    n = r.size
    return float((r * r).mean()), 2 / n * x.T @ r, 2 / n * r.sum(0)


def _train(opt_factory, steps: int, backend: str = "interp") -> tuple[list[float], list, int]:
    x, y, w0, b0 = _data()
    w, b = Tensor.parameter(w0), Tensor.parameter(b0)
    opt = opt_factory([w, b])
    losses, sinks = [], []
    before = len(_sessions)
    for _ in range(steps):
        loss = ((Tensor(x) @ w + b - Tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        sinks.append(program(loss))
        losses.append(realize(loss, backend=backend)[0].item())
    opened = len(_sessions) - before
    assert all(s is sinks[0] for s in sinks), "the step's graph changed between steps"
    return losses, [w.numpy(), b.numpy()], opened


def _numpy_sgd(lr: float, momentum: float, steps: int):
    x, y, w, b = (a.astype(np.float64) for a in _data())
    bw, bb = np.zeros_like(w), np.zeros_like(b)
    losses = []
    for _ in range(steps):
        loss, gw, gb = _numpy_loss_grads(x, y, w, b)
        losses.append(loss)
        if momentum:
            bw, bb = momentum * bw + gw, momentum * bb + gb
            gw, gb = bw, bb
        w, b = w - lr * gw, b - lr * gb
    return losses, [w, b]


def _numpy_adamw(lr: float, betas, eps: float, wd: float, steps: int):
    x, y, w, b = (a.astype(np.float64) for a in _data())
    params = [w, b]
    m = [np.zeros_like(p) for p in params]
    v = [np.zeros_like(p) for p in params]
    losses = []
    for t in range(1, steps + 1):
        loss, gw, gb = _numpy_loss_grads(x, y, *params)
        losses.append(loss)
        for i, g in enumerate((gw, gb)):
            m[i] = betas[0] * m[i] + (1 - betas[0]) * g
            v[i] = betas[1] * v[i] + (1 - betas[1]) * g * g
            mhat = m[i] / (1 - betas[0] ** t)
            vhat = v[i] / (1 - betas[1] ** t)
            params[i] = params[i] * (1 - lr * wd) - lr * mhat / (np.sqrt(vhat) + eps)
    return losses, params


# f32 against float64 over 3 steps of a 5 x 3 problem: each value is a few dozen roundings
# deep (U = 6e-8), so 1e-5 relative; AdamW's update divides by sqrt(v) + eps, which amplifies
# the gradients' relative error at most by 1 (the ratio m/sqrt(v) is scale-free).
@pytest.mark.parametrize("momentum", [0.0, 0.9])
def test_three_sgd_steps_equal_numpy(momentum: float) -> None:
    losses, params, opened = _train(lambda ps: optim.SGD(ps, lr=0.1, momentum=momentum), 3)
    want_losses, want_params = _numpy_sgd(0.1, momentum, 3)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params, want_params, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert opened == 1  # one compiled program for all three steps


def test_three_adamw_steps_equal_numpy() -> None:
    def make(ps):
        return optim.AdamW(ps, lr=0.05, betas=(0.9, 0.99), eps=1e-8, weight_decay=0.1)

    losses, params, opened = _train(make, 3)
    want_losses, want_params = _numpy_adamw(0.05, (0.9, 0.99), 1e-8, 0.1, 3)
    np.testing.assert_allclose(losses, want_losses, rtol=1e-5)
    for got, want in zip(params, want_params, strict=True):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert opened == 1


def test_changing_the_learning_rate_changes_no_graph() -> None:
    x, y, w0, _ = _data()
    w = Tensor.parameter(w0)
    opt = optim.SGD([w], lr=0.1)
    sinks = []
    for lr in (0.1, 0.0, 0.5):
        opt.lr = lr
        loss = ((Tensor(x) @ w - Tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        sinks.append(program(loss))
        realize(loss, backend="interp")
    assert sinks[0] is sinks[1] is sinks[2]
    # lr 0 left the second step's weights alone: the third step's start equals the first's end
    x64, y64 = x.astype(np.float64), y.astype(np.float64)
    wn = w0.astype(np.float64)
    for lr in (0.1, 0.0, 0.5):
        r = x64 @ wn - y64
        wn = wn - lr * 2 / r.size * x64.T @ r
    np.testing.assert_allclose(w.numpy(), wn, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("backend", ["interp", "c", "cuda-emu"])
def test_an_evaluation_program_sees_what_the_step_stored(backend: str) -> None:
    from uir.tensor.realize import registry

    if not registry().backend(backend).available()[0]:
        pytest.skip(f"backend {backend} is not available here")
    x, y, w0, b0 = _data(1)
    w, b = Tensor.parameter(w0), Tensor.parameter(b0)
    opt = optim.SGD([w, b], lr=0.2)
    evaluation = ((Tensor(x) @ w + b - Tensor(y)) ** 2).mean()
    # opened before the step: the step's session then shares this one's memory of w and b
    first = realize(evaluation, backend=backend)[0]
    np.testing.assert_allclose(first, _numpy_loss_grads(x, y, w0, b0)[0], rtol=1e-5)
    for _ in range(2):
        loss = ((Tensor(x) @ w + b - Tensor(y)) ** 2).mean()
        loss.backward()
        opt.step()
        realize(loss, backend=backend)
    # a different program (no backward, no store) on the same backend: the stored weights
    got = realize(evaluation, w, backend=backend)
    _, want_params = _numpy_sgd_from(x, y, w0, b0, 0.2, 2)
    want_loss, _, _ = _numpy_loss_grads(x, y, *want_params)
    np.testing.assert_allclose(got[0], want_loss, rtol=1e-5)
    np.testing.assert_allclose(got[1], want_params[0], rtol=1e-5, atol=1e-6)
    # and on the host: the parameter's contents come back from that backend's memory
    np.testing.assert_allclose(w.buffer.read().reshape(3, 2), want_params[0], rtol=1e-5, atol=1e-6)  # type: ignore[union-attr]


def _numpy_sgd_from(x, y, w, b, lr: float, steps: int):
    w, b = w.astype(np.float64), b.astype(np.float64)
    for _ in range(steps):
        _, gw, gb = _numpy_loss_grads(x.astype(np.float64), y.astype(np.float64), w, b)
        w, b = w - lr * gw, b - lr * gb
    return None, [w, b]


def test_layers_compute_their_formulas() -> None:
    rng = np.random.default_rng(5)
    lin = nn.Linear(3, 4, rng)
    ln = nn.LayerNorm(4)
    mlp = nn.MLP(4, rng)
    xs = rng.normal(size=(2, 3)).astype(np.float32)
    got_lin, got_ln, got_mlp = realize(
        lin(Tensor(xs)), ln(lin(Tensor(xs))), mlp(lin(Tensor(xs))), backend="interp"
    )
    w, b = lin.w.numpy().astype(np.float64), lin.b.numpy()  # type: ignore[union-attr]
    h = xs @ w + b
    np.testing.assert_allclose(got_lin, h, rtol=1e-5, atol=1e-6)
    c = h - h.mean(-1, keepdims=True)
    np.testing.assert_allclose(
        got_ln, c / np.sqrt((c * c).mean(-1, keepdims=True) + 1e-5), atol=1e-5
    )
    f = h @ mlp.fc.w.numpy() + mlp.fc.b.numpy()  # type: ignore[union-attr]
    g = 0.5 * f * (1 + np.tanh(np.sqrt(2 / np.pi) * (f + 0.044715 * f**3)))
    np.testing.assert_allclose(got_mlp, g @ mlp.out.w.numpy() + mlp.out.b.numpy(), atol=1e-5)  # type: ignore[union-attr]


def test_attention_block_is_causal() -> None:
    """Changing a later token changes no earlier position's output."""
    rng = np.random.default_rng(6)
    attn = nn.CausalSelfAttention(4, 2, rng)
    x = rng.normal(size=(1, 5, 4)).astype(np.float32)
    x2 = x.copy()
    x2[0, 3:] += 1.0
    a, b = realize(attn(Tensor(x)), attn(Tensor(x2)), backend="interp")
    np.testing.assert_array_equal(a[0, :3], b[0, :3])
    assert not np.allclose(a[0, 3:], b[0, 3:])


def test_closing_the_sessions_keeps_every_value() -> None:
    from uir.tensor import close_sessions

    x, y, w0, _ = _data(2)
    w = Tensor.parameter(w0)
    opt = optim.SGD([w], lr=0.1)
    loss = ((Tensor(x) @ w - Tensor(y)) ** 2).mean()
    loss.backward()
    opt.step()
    realize(loss, backend="interp")
    stored = w.numpy("interp")
    close_sessions()
    assert not _sessions
    np.testing.assert_array_equal(w.buffer.host.reshape(3, 2), stored)  # type: ignore[union-attr]
    np.testing.assert_array_equal(w.numpy("interp"), stored)

"""uir.tensor against numpy: op values, GPT gradients against the hand-derived numpy model,
AdamW steps against the numpy optimizer, the exported program through `uir run`, shape errors.

Tolerances: an f32 op rounds once (relative 2^-24 of its result); a chain of k ops or a sum of n
terms errs by at most about (k + n) * 2^-24 relative to the sum of magnitudes (the standard
forward error bound of recursive summation). The tests use shapes with n <= 64 and k <= 20 and
compare with rtol 1e-5 / atol 1e-6, above (64 + 20) * 6e-8 = 5e-6.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from uir.core.dtypes import i32
from uir.tensor import Tensor, TensorError, device, nn, optim, realize, to_uir
from uir.testing.cli import run_uir
from uir.testing.gpt_numpy import AdamW as NumpyAdamW
from uir.testing.gpt_numpy import Config, init_parameters, loss_and_gradients

BACKENDS = ["interp", "c"]
RTOL, ATOL = 1e-5, 1e-6


def _rand(rng: np.random.Generator, *shape: int) -> np.ndarray:
    return rng.normal(0, 1, shape).astype(np.float32)


@pytest.mark.parametrize("backend", BACKENDS)
def test_ops_match_numpy(backend: str) -> None:
    rng = np.random.default_rng(0)
    a, b, c = _rand(rng, 3, 4), _rand(rng, 4), _rand(rng, 4, 5)
    pos = np.abs(a) + 0.5
    ta, tb, tc, tp = Tensor(a), Tensor(b), Tensor(c), Tensor(pos)
    cases = {
        "add broadcast": (ta + tb, a + b),
        "sub scalar": (2.0 - ta, 2.0 - a),
        "mul": (ta * tb, a * b),
        "div": (ta / tp, a / pos),
        "neg": (-ta, -a),
        "exp": (ta.exp(), np.exp(a)),
        "log": (tp.log(), np.log(pos)),
        "sqrt": (tp.sqrt(), np.sqrt(pos)),
        "rsqrt": (tp.rsqrt(), 1 / np.sqrt(pos)),
        "relu": (ta.relu(), np.maximum(a, 0)),
        "sigmoid": (ta.sigmoid(), 1 / (1 + np.exp(-a))),
        "tanh": (ta.tanh(), np.tanh(a)),
        "gelu": (ta.gelu(), 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a**3)))),
        "pow": (ta**3, a**3),
        "where": ((ta > 0).where(ta, tb), np.where(a > 0, a, b)),
        "matmul": (ta @ tc, a @ c),
        "batched matmul": (Tensor(np.stack([a, 2 * a])) @ tc, np.stack([a, 2 * a]) @ c),
        "sum": (ta.sum(), a.sum()),
        "sum axis keepdim": (ta.sum(0, keepdim=True), a.sum(0, keepdims=True)),
        "max axis": (ta.max(1), a.max(1)),
        "mean": (ta.mean(1), a.mean(1)),
        "var": (ta.var(1), a.var(1)),
        "softmax": (ta.softmax(), np.exp(a) / np.exp(a).sum(1, keepdims=True)),
        "log_softmax": (ta.log_softmax(), a - np.log(np.exp(a).sum(1, keepdims=True))),
        "layer_norm": (
            ta.layer_norm(tb, tb),
            (a - a.mean(1, keepdims=True)) / np.sqrt(a.var(1, keepdims=True) + 1e-5) * b + b,
        ),
        "reshape": (ta.reshape(2, -1), a.reshape(2, 6)),
        "permute": (
            Tensor(c.reshape(2, 2, 5)).permute(2, 0, 1),
            c.reshape(2, 2, 5).transpose(2, 0, 1),
        ),
        "transpose": (ta.T, a.T),
        "pad": (ta.pad([(1, 0), (0, 2)]), np.pad(a, [(1, 0), (0, 2)])),
        "slice": (ta[1:, 2], a[1:, 2]),
        "flip": (ta.flip(1), a[:, ::-1]),
        "cat": (Tensor.cat([ta, ta * 2], axis=1), np.concatenate([a, a * 2], 1)),
        "one_hot": (Tensor(np.array([2, 0, 3])).one_hot(4), np.eye(4, dtype=np.float32)[[2, 0, 3]]),
    }
    with device(backend):
        got = realize(*(t for t, _ in cases.values()))
    for (name, (_, want)), value in zip(cases.items(), got, strict=True):
        np.testing.assert_allclose(value, want, rtol=RTOL, atol=ATOL, err_msg=name)


@pytest.mark.parametrize("backend", BACKENDS)
def test_cross_entropy_and_its_gradient(backend: str) -> None:
    rng = np.random.default_rng(1)
    z, y = _rand(rng, 5, 7), rng.integers(0, 7, 5)
    logits = Tensor.parameter(z)
    loss = logits.cross_entropy(Tensor(y.astype(np.int32)))
    loss.backward()
    with device(backend):
        value, grad = realize(loss, logits.grad)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    assert value == pytest.approx(-np.log(p[np.arange(5), y]).mean(), rel=RTOL)
    np.testing.assert_allclose(grad, (p - np.eye(7)[y]) / 5, rtol=RTOL, atol=ATOL)


def _tiny_gpt(seed: int) -> tuple[Config, dict[str, np.ndarray], nn.GPT]:
    config = Config(vocab=11, d_model=16, layers=2, heads=2, context=8)
    params = init_parameters(config, seed)
    rng = np.random.default_rng(seed)
    for name in params:  # off the initialization's symmetries, so every gradient is nonzero
        params[name] = (params[name] + rng.normal(0, 0.1, params[name].shape)).astype(np.float32)
    model = nn.GPT(config.vocab, config.d_model, config.layers, config.heads, config.context)
    model.load_state(params)
    return config, params, model


@pytest.mark.parametrize("backend", BACKENDS)
def test_gpt_loss_and_gradients_match_the_numpy_model(backend: str) -> None:
    config, params, model = _tiny_gpt(3)
    assert [n for n, _ in model.named_parameters()] == list(params)
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 11, (4, 8)), rng.integers(0, 11, (4, 8))
    ids, targets = Tensor.input((4, 8), i32), Tensor.input((4, 8), i32)
    ids.write(x)
    targets.write(y)
    loss = model(ids).cross_entropy(targets)
    loss.backward()
    with device(backend):
        got = realize(loss, *(p.grad for p in model.parameters()))
    want, grads = loss_and_gradients(
        {k: v.astype(np.float64) for k, v in params.items()}, config, x, y
    )
    assert got[0] == pytest.approx(want, rel=1e-5)
    for (name, _), g in zip(model.named_parameters(), got[1:], strict=True):
        # each gradient sums about a hundred f32 products: 1e-4 of its largest element
        np.testing.assert_allclose(
            g, grads[name], atol=1e-4 * np.abs(grads[name]).max(), err_msg=name
        )


def test_three_adamw_steps_match_numpy() -> None:
    config, params, model = _tiny_gpt(5)
    opt = optim.AdamW(model.parameters(), lr=1e-2, betas=(0.9, 0.99))
    reference = NumpyAdamW(lr=1e-2, betas=(0.9, 0.99))
    numpy_params = {k: v.astype(np.float64) for k, v in params.items()}
    rng = np.random.default_rng(2)
    ids, targets = Tensor.input((2, 8), i32), Tensor.input((2, 8), i32)
    for _ in range(3):
        x, y = rng.integers(0, 11, (2, 8)), rng.integers(0, 11, (2, 8))
        ids.write(x)
        targets.write(y)
        loss = model(ids).cross_entropy(targets)
        loss.backward()
        opt.step()
        with device("c"):
            (value,) = realize(loss)
        want, grads = loss_and_gradients(numpy_params, config, x, y)
        reference.step(numpy_params, grads)
        assert value == pytest.approx(want, rel=1e-5)
    state = model.state()
    d = config.d_model
    for name, want in numpy_params.items():
        got = state[name]
        if name.endswith("qkv.b"):
            # The key bias adds q.b to every score of a query: softmax cancels it, so its exact
            # gradient is 0 and both sides hold rounding noise, which Adam's m / sqrt(v) scales
            # up to full steps of either sign. Only the query and value biases can agree.
            got, want = np.delete(got, np.s_[d : 2 * d]), np.delete(want, np.s_[d : 2 * d])
        # Adam's step is lr * m / sqrt(v): relative gradient errors of 1e-4 move it by 1e-6
        np.testing.assert_allclose(got, want, atol=1e-5, err_msg=name)


def test_an_exported_training_step_prints_the_same_loss_through_uir_run(tmp_path) -> None:
    model = nn.GPT(5, 8, 1, 2, 4, seed=1)
    opt = optim.SGD(model.parameters(), lr=0.5)
    ids, targets = Tensor.input((2, 4), i32), Tensor.input((2, 4), i32)
    ids.write([[0, 1, 2, 3], [4, 3, 2, 1]])
    targets.write([[1, 2, 3, 4], [3, 2, 1, 0]])
    loss = model(ids).cross_entropy(targets)
    loss.backward()
    opt.step()
    program = tmp_path / "step.uir"
    program.write_text(to_uir(loss))
    with device("interp"):
        (want,) = realize(loss)
    new_head = model.head.w.buffer.read()  # type: ignore[union-attr]
    done = run_uir(tmp_path, "run", str(program), "--backend", "c")
    lines = done.stdout.splitlines()
    assert float(lines[0]) == pytest.approx(float(want), rel=1e-6)
    # one line per assigned buffer follows: the head's weights are among them
    printed = [np.array(line.split(), dtype=np.float32) for line in lines[1:]]
    assert any(p.shape == new_head.shape and np.allclose(p, new_head, atol=1e-6) for p in printed)


def test_shape_errors_name_the_op_and_both_shapes() -> None:
    a, b = Tensor(np.zeros((2, 3), np.float32)), Tensor(np.zeros((4, 5), np.float32))
    with pytest.raises(TensorError, match=r"matmul: shapes \(2, 3\) and \(4, 5\)"):
        a @ b
    with pytest.raises(TensorError, match=r"add: shapes \(2, 3\) and \(4, 5\) do not broadcast"):
        a + b
    with pytest.raises(TensorError, match=r"cross_entropy: logits \(2, 3\) and targets \(3,\)"):
        a.cross_entropy(Tensor(np.zeros(3, np.int32)))
    with pytest.raises(TensorError, match=r"reshape: a tensor of shape \(2, 3\)"):
        a.reshape(4, 2)
    with pytest.raises(TensorError, match="backward: the loss must be an f32 scalar"):
        a.backward()


def test_a_parameter_is_shared_by_every_program_that_reads_it() -> None:
    w = Tensor.parameter([1.0, 2.0])
    opt = optim.SGD([w], lr=0.25)
    for _ in range(4):
        loss = (w * w).sum()  # gradient 2w: each step scales w by 1 - 2 * 0.25 = 0.5
        loss.backward()
        opt.step()
        with device("c"):
            realize(loss)
    with device("c"):
        np.testing.assert_array_equal((w + 0.0).numpy(), [1 / 16, 2 / 16])
    assert math.isclose(opt.lr, 0.25)


def test_scaled_dot_product_attention_flash_equals_naive_and_refuses_backward() -> None:
    rng = np.random.default_rng(4)
    q, k, v = (Tensor.parameter(_rand(rng, 2, 9, 4)) for _ in range(3))
    flash = nn.scaled_dot_product_attention(q, k, v, block=4)
    naive = nn.scaled_dot_product_attention(q, k, v, flash=False)
    with device("c"):
        a, b = realize(flash, naive)
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)
    with pytest.raises(TensorError, match="flash attention"):
        flash.sum().backward()
    naive.sum().backward()  # the naive formula has gradients
    assert q.grad is not None

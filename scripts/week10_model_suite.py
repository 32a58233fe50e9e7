"""Writes the model tests of suites/week10: programs exported by uir.tensor (`to_uir`) from
nn.GPT's parts, with expectations worked out in float64 numpy by uir.testing.gpt_numpy (the
hand-derived model; nothing of the compiler computes them).

- `model_mlp_block`: one block's MLP half, x + out(gelu(fc(ln2(x)))), on a [2, 3, 8] input.
- `model_gpt_loss`: a whole GPT's mean cross entropy (vocab 7, width 8, 1 block, 2 heads,
  context 4, batch 2).
- `model_gpt_sgd_step`: that GPT's training step with SGD (lr 0.5): the loss, then every
  parameter's new values, in the order the optimizer assigns them (nn.GPT.parameters()).
- `model_linear_adamw_steps`: the first AdamW step of a linear regression: the loss, then the
  step counter, then m, v and the weights.

The parameters are GPT-2's initialization plus noise of 0.1 (no gradient is then near zero by
symmetry, except the key bias's, which softmax cancels: it is exactly 0 in exact arithmetic and
rounding noise in f32, so SGD's update of it is within the tolerance). Tolerances, `A abs`: the
loss is a mean of 8 terms each O(1), so f32 errs by under 1e-6; a gradient is a sum of at most
a few hundred products of O(1) terms, so under 1e-5 of its largest element; SGD multiplies it by
0.5. Each file takes 2e-5 abs (1e-5 for the MLP block), comfortably above these and far below
the O(1e-2) a wrong rule gives.

    uv run python scripts/week10_model_suite.py [DIR]   # rewrites suites/week10/model_*
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

from uir.core.dtypes import i32
from uir.tensor import Tensor, device, nn, optim, realize, to_uir
from uir.testing import gpt_numpy as G

OUT = Path(__file__).resolve().parents[1] / "suites" / "week10"
PREFIX = "model_"


def _line(values: np.ndarray) -> str:
    return " ".join(f"{float(v):.9g}" for v in np.asarray(values, dtype=np.float64).reshape(-1))


def _write(
    path: Path, about: list[str], expect: list[np.ndarray | float], tol: float, body: str
) -> None:
    head = [f"# expect: {_line(np.asarray(e))}" for e in expect]
    head.append(f"# tolerance: {tol:g} abs")
    head += [f"# {line}" for line in about]
    path.write_text("\n".join(head) + "\n" + body)


def _gpt(config: G.Config) -> tuple[nn.GPT, dict[str, np.ndarray]]:
    params = G.init_parameters(config, 7)
    rng = np.random.default_rng(7)
    for name in params:
        params[name] = (params[name] + rng.normal(0, 0.1, params[name].shape)).astype(np.float32)
    model = nn.GPT(config.vocab, config.d_model, config.layers, config.heads, config.context)
    model.load_state(params)
    return model, params


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)

    # the MLP half of a block
    config = G.Config(vocab=7, d_model=8, layers=1, heads=2, context=4)
    model, params = _gpt(config)
    x = rng.normal(0, 1, (2, 3, 8)).astype(np.float32)
    xt = Tensor.parameter(x)
    block = model.h[0]
    y = xt + block.mlp(block.ln2(xt))
    p = {k: v.astype(np.float64) for k, v in params.items()}
    m, _ = G._layer_norm(x.astype(np.float64), p["h0.ln2.w"], p["h0.ln2.b"])
    g, _ = G._gelu(m @ p["h0.mlp.fc.w"] + p["h0.mlp.fc.b"])
    want = x + g @ p["h0.mlp.out.w"] + p["h0.mlp.out.b"]
    about = [
        "x + out(gelu(fc(layer_norm(x)))) of a [2, 3, 8] input: the MLP half of a GPT",
        "block, exported by uir.tensor; expected by float64 numpy (gpt_numpy).",
    ]
    _write(out / f"{PREFIX}mlp_block.uir", about, [want], 1e-5, to_uir(y))

    # a whole GPT's loss, and one SGD step of it
    ids = rng.integers(0, 7, (2, 4))
    targets = rng.integers(0, 7, (2, 4))
    ti, tt = Tensor.input((2, 4), i32), Tensor.input((2, 4), i32)
    ti.write(ids)
    tt.write(targets)
    loss = model(ti).cross_entropy(tt)
    want_loss, grads = G.loss_and_gradients(p, config, ids, targets)
    about = [
        "the mean next-token cross entropy of a GPT (vocab 7, width 8, 1 block, 2 heads,",
        "context 4) on a batch of 2, exported by uir.tensor; expected by gpt_numpy.",
    ]
    _write(out / f"{PREFIX}gpt_loss.uir", about, [want_loss], 2e-5, to_uir(loss))

    opt = optim.SGD(model.parameters(), lr=0.5)
    loss.backward()
    opt.step()
    names = [n for n, _ in model.named_parameters()]
    updated = [p[n] - 0.5 * grads[n] for n in names]
    about = [
        "one SGD step (lr 0.5) of that GPT: the loss, then each parameter's new values in",
        f"the optimizer's order ({', '.join(names)}); gradients by gpt_numpy's hand-derived",
        "backward pass, in float64.",
    ]
    _write(out / f"{PREFIX}gpt_sgd_step.uir", about, [want_loss, *updated], 2e-5, to_uir(loss))
    with device("interp"):
        realize()  # the step's assignments were pending: run them, so the next program has none

    # the first AdamW step of a linear regression
    a = rng.normal(0, 1, (6, 3)).astype(np.float32)
    t = rng.normal(0, 1, (6,)).astype(np.float32)
    w0 = np.array([0.5, -0.25, 1.0], dtype=np.float32)
    w = Tensor.parameter(w0)
    err = Tensor(a) @ w.reshape(3, 1) - Tensor(t).reshape(6, 1)
    loss = (err * err).mean()
    adam = optim.AdamW([w], lr=0.1, betas=(0.9, 0.99), eps=1e-8)
    loss.backward()
    adam.step()
    a64, w64 = a.astype(np.float64), w0.astype(np.float64)
    r = a64 @ w64 - t
    grad = 2 * a64.T @ r / 6
    m1, v1 = 0.1 * grad, 0.01 * grad * grad
    w1 = w64 - 0.1 * (m1 / 0.1) / (np.sqrt(v1 / 0.01) + 1e-8)
    about = [
        "one AdamW step (lr 0.1, betas 0.9 and 0.99) of mean((A w - t)^2) for A [6, 3]:",
        "the loss, then the step counter, the first and second moments and the weights;",
        "after one step m/(1-b1) = g and v/(1-b2) = g^2, so w moves by lr g/(|g| + eps).",
    ]
    _write(
        out / f"{PREFIX}linear_adamw_step.uir",
        about,
        [np.mean(r * r), np.array([1.0]), m1, v1, w1],
        2e-5,
        to_uir(loss),
    )


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)

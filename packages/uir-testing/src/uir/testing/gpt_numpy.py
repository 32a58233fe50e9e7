"""A character-level GPT written in plain numpy, forward and backward by hand.

It is week 10's second path: the model `uir.tensor.nn.GPT` builds as UOps (whose gradients come
from GRAD), computed here with no compiler at all, each gradient derived by hand from the chain
rule. Tests compare the two on losses and gradients; benchmarks/lm_bench.py times it beside the
compiled step.

The architecture (the same as `uir.tensor.nn.GPT`): token and position embeddings; `layers` pre-norm
blocks x + attn(ln1(x)), then x + mlp(ln2(x)); a final layer norm; an untied linear head with
bias. Attention is causal, `heads` heads of width d/heads, from one qkv projection (d -> 3d, with
bias) and an output projection (d -> d, with bias); the MLP is d -> 4d, gelu (tanh form), 4d -> d.
Layer norm has weight and bias, eps 1e-5. The loss is the mean cross entropy of the next token.

Parameters live in a dict keyed by the names `parameter_names` gives, in that order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EPS = 1e-5
_GELU_C = np.sqrt(2.0 / np.pi)


@dataclass(frozen=True)
class Config:
    vocab: int
    d_model: int = 64
    layers: int = 2
    heads: int = 4
    context: int = 64


def parameter_shapes(c: Config) -> dict[str, tuple[int, ...]]:
    """Each parameter's name and shape, in the order of `uir.tensor.nn.GPT.parameters()`."""
    d = c.d_model
    shapes: dict[str, tuple[int, ...]] = {"tok.w": (c.vocab, d), "pos": (c.context, d)}
    for i in range(c.layers):
        shapes |= {
            f"h{i}.ln1.w": (d,),
            f"h{i}.ln1.b": (d,),
            f"h{i}.attn.qkv.w": (d, 3 * d),
            f"h{i}.attn.qkv.b": (3 * d,),
            f"h{i}.attn.proj.w": (d, d),
            f"h{i}.attn.proj.b": (d,),
            f"h{i}.ln2.w": (d,),
            f"h{i}.ln2.b": (d,),
            f"h{i}.mlp.fc.w": (d, 4 * d),
            f"h{i}.mlp.fc.b": (4 * d,),
            f"h{i}.mlp.out.w": (4 * d, d),
            f"h{i}.mlp.out.b": (d,),
        }
    return shapes | {"lnf.w": (d,), "lnf.b": (d,), "head.w": (d, c.vocab), "head.b": (c.vocab,)}


def init_parameters(c: Config, seed: int = 0, dtype: type = np.float32) -> dict[str, np.ndarray]:
    """GPT-2's initialization: normal(0, 0.02) weights, zero biases, unit layer-norm weights."""
    rng = np.random.default_rng(seed)
    params = {}
    for name, shape in parameter_shapes(c).items():
        if name.endswith(".b"):
            value = np.zeros(shape)
        elif ".ln" in name or name.startswith("lnf"):
            value = np.ones(shape)
        else:
            value = rng.normal(0.0, 0.02, shape)
        params[name] = value.astype(dtype)
    return params


def _layer_norm(x: np.ndarray, w: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, tuple]:
    mean = x.mean(-1, keepdims=True)
    centred = x - mean
    rstd = 1.0 / np.sqrt((centred * centred).mean(-1, keepdims=True) + EPS)
    xhat = centred * rstd
    return xhat * w + b, (xhat, rstd, w)


def _layer_norm_back(dy: np.ndarray, cache: tuple) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    xhat, rstd, w = cache
    dxhat = dy * w
    n = xhat.shape[-1]
    dx = (
        rstd
        / n
        * (n * dxhat - dxhat.sum(-1, keepdims=True) - xhat * (dxhat * xhat).sum(-1, keepdims=True))
    )
    axes = tuple(range(dy.ndim - 1))
    return dx, (dy * xhat).sum(axes), dy.sum(axes)


def _gelu(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    inner = _GELU_C * (x + 0.044715 * x**3)
    t = np.tanh(inner)
    y = 0.5 * x * (1.0 + t)
    dydx = 0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * _GELU_C * (1.0 + 3 * 0.044715 * x * x)
    return y, dydx


def loss_and_gradients(
    params: dict[str, np.ndarray], c: Config, ids: np.ndarray, targets: np.ndarray
) -> tuple[float, dict[str, np.ndarray]]:
    """Mean next-token cross entropy of `ids` ([B, T] ints) against `targets`, and its gradient
    with respect to every parameter, in the parameters' dtype."""
    batch, t = ids.shape
    d, h = c.d_model, c.heads
    hd = d // h
    p = params
    grads = {k: np.zeros_like(v) for k, v in p.items()}
    x = p["tok.w"][ids] + p["pos"][:t]
    mask = np.tril(np.ones((t, t), dtype=bool))
    caches = []
    for i in range(c.layers):
        a, ln1 = _layer_norm(x, p[f"h{i}.ln1.w"], p[f"h{i}.ln1.b"])
        qkv = a @ p[f"h{i}.attn.qkv.w"] + p[f"h{i}.attn.qkv.b"]
        q, k, v = (
            qkv[..., j * d : (j + 1) * d].reshape(batch, t, h, hd).transpose(0, 2, 1, 3)
            for j in range(3)
        )
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(hd)
        scores = np.where(mask, scores, -np.inf)
        scores = scores - scores.max(-1, keepdims=True)
        att = np.exp(scores)
        att /= att.sum(-1, keepdims=True)
        y = (att @ v).transpose(0, 2, 1, 3).reshape(batch, t, d)
        x1 = x + y @ p[f"h{i}.attn.proj.w"] + p[f"h{i}.attn.proj.b"]
        m, ln2 = _layer_norm(x1, p[f"h{i}.ln2.w"], p[f"h{i}.ln2.b"])
        f = m @ p[f"h{i}.mlp.fc.w"] + p[f"h{i}.mlp.fc.b"]
        g, dgelu = _gelu(f)
        x2 = x1 + g @ p[f"h{i}.mlp.out.w"] + p[f"h{i}.mlp.out.b"]
        caches.append((a, ln1, q, k, v, att, y, m, ln2, g, dgelu))
        x = x2
    z, lnf = _layer_norm(x, p["lnf.w"], p["lnf.b"])
    logits = z @ p["head.w"] + p["head.b"]
    shifted = logits - logits.max(-1, keepdims=True)
    logsum = np.log(np.exp(shifted).sum(-1, keepdims=True))
    logp = shifted - logsum
    n = batch * t
    loss = -np.take_along_axis(logp, targets[..., None], -1).sum() / n

    dlogits = np.exp(logp)
    np.put_along_axis(
        dlogits, targets[..., None], np.take_along_axis(dlogits, targets[..., None], -1) - 1, -1
    )
    dlogits /= n
    dlogits = dlogits.astype(logits.dtype)
    grads["head.w"] = z.reshape(n, d).T @ dlogits.reshape(n, -1)
    grads["head.b"] = dlogits.sum((0, 1))
    dz = dlogits @ p["head.w"].T
    dx, grads["lnf.w"], grads["lnf.b"] = _layer_norm_back(dz, lnf)
    for i in reversed(range(c.layers)):
        a, ln1, q, k, v, att, y, m, ln2, g, dgelu = caches[i]
        # x2 = x1 + g @ out.w + out.b
        grads[f"h{i}.mlp.out.w"] = g.reshape(n, -1).T @ dx.reshape(n, d)
        grads[f"h{i}.mlp.out.b"] = dx.sum((0, 1))
        df = (dx @ p[f"h{i}.mlp.out.w"].T) * dgelu
        grads[f"h{i}.mlp.fc.w"] = m.reshape(n, d).T @ df.reshape(n, -1)
        grads[f"h{i}.mlp.fc.b"] = df.sum((0, 1))
        dm = df @ p[f"h{i}.mlp.fc.w"].T
        dx1_ln, grads[f"h{i}.ln2.w"], grads[f"h{i}.ln2.b"] = _layer_norm_back(dm, ln2)
        dx1 = dx + dx1_ln
        # x1 = x + y @ proj.w + proj.b
        grads[f"h{i}.attn.proj.w"] = y.reshape(n, d).T @ dx1.reshape(n, d)
        grads[f"h{i}.attn.proj.b"] = dx1.sum((0, 1))
        dy = (dx1 @ p[f"h{i}.attn.proj.w"].T).reshape(batch, t, h, hd).transpose(0, 2, 1, 3)
        datt = dy @ v.transpose(0, 1, 3, 2)
        dv = att.transpose(0, 1, 3, 2) @ dy
        dscores = att * (datt - (datt * att).sum(-1, keepdims=True)) / np.sqrt(hd)
        dq = dscores @ k
        dk = dscores.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate(
            [u.transpose(0, 2, 1, 3).reshape(batch, t, d) for u in (dq, dk, dv)], -1
        )
        grads[f"h{i}.attn.qkv.w"] = a.reshape(n, d).T @ dqkv.reshape(n, -1)
        grads[f"h{i}.attn.qkv.b"] = dqkv.sum((0, 1))
        da = dqkv @ p[f"h{i}.attn.qkv.w"].T
        dx0, grads[f"h{i}.ln1.w"], grads[f"h{i}.ln1.b"] = _layer_norm_back(da, ln1)
        dx = dx1 + dx0
    np.add.at(grads["tok.w"], ids, dx)
    grads["pos"][:t] = dx.sum(0)
    return float(loss), {k: v.astype(p[k].dtype) for k, v in grads.items()}


@dataclass
class AdamW:
    """torch.optim.AdamW's update (decoupled weight decay, bias-corrected moments)."""

    lr: float = 3e-3
    betas: tuple[float, float] = (0.9, 0.99)
    eps: float = 1e-8
    weight_decay: float = 0.0
    step_count: int = 0

    def __post_init__(self) -> None:
        self.m: dict[str, np.ndarray] = {}
        self.v: dict[str, np.ndarray] = {}

    def step(self, params: dict[str, np.ndarray], grads: dict[str, np.ndarray]) -> None:
        self.step_count += 1
        b1, b2 = self.betas
        for name, g in grads.items():
            m = self.m.setdefault(name, np.zeros_like(g))
            v = self.v.setdefault(name, np.zeros_like(g))
            m[...] = b1 * m + (1 - b1) * g
            v[...] = b2 * v + (1 - b2) * g * g
            mhat = m / (1 - b1**self.step_count)
            vhat = v / (1 - b2**self.step_count)
            p = params[name]
            p *= 1 - self.lr * self.weight_decay
            p -= (self.lr * mhat / (np.sqrt(vhat) + self.eps)).astype(p.dtype)

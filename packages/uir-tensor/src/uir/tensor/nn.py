"""Layers: modules holding parameters, called on tensors. The GPT is uir.testing.gpt_numpy's
architecture, parameter for parameter: the names `named_parameters` gives (attribute paths,
`h0.attn.qkv.w`) are its keys."""

from __future__ import annotations

import math
import weakref
from collections.abc import Iterator

import numpy as np

from uir.core.shapes import ShapeError
from uir.core.uop import UOp

from .attention import flash_attention
from .tensor import Tensor, TensorError, causal_mask

# The masked scores: finite, so no inf - inf or 0 * inf can reach a gradient; exp of it is 0.
MASKED = -1e30


class Module:
    """Parameters are attributes that are trainable tensors, modules, or lists of modules."""

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Tensor]]:
        for name, value in vars(self).items():
            if isinstance(value, Tensor) and value.requires_grad:
                yield prefix + name, value
            elif isinstance(value, Module):
                yield from value.named_parameters(f"{prefix}{name}.")
            elif isinstance(value, list):
                for i, m in enumerate(value):
                    yield from m.named_parameters(
                        f"{prefix}{name[:-1] if name.endswith('s') else name}{i}."
                    )

    def parameters(self) -> list[Tensor]:
        return [p for _, p in self.named_parameters()]

    def load_state(self, values: dict[str, np.ndarray]) -> None:
        """Write each named parameter's values (shapes must match)."""
        for name, p in self.named_parameters():
            if name not in values:
                raise TensorError(f"load_state: no values for parameter {name}")
            p.write(np.asarray(values[name], dtype=np.float32))

    def state(self) -> dict[str, np.ndarray]:
        """Each parameter's current values."""
        assert all(p.buffer is not None for p in self.parameters())
        return {n: p.buffer.read().reshape(p.shape) for n, p in self.named_parameters()}  # type: ignore[union-attr]


def _normal(rng: np.random.Generator, *shape: int, std: float = 0.02) -> Tensor:
    return Tensor.parameter(rng.normal(0.0, std, shape))


class Linear(Module):
    """x @ w + b, w of shape [in, out]."""

    def __init__(self, n_in: int, n_out: int, rng: np.random.Generator, bias: bool = True) -> None:
        self.w = _normal(rng, n_in, n_out)
        self.b = Tensor.parameter(np.zeros(n_out)) if bias else None

    def __call__(self, x: Tensor) -> Tensor:
        y = x @ self.w
        return y + self.b if self.b is not None else y


class Embedding(Module):
    """Rows of a [count, dim] table picked by i32 ids: a one-hot matmul, so its gradient is the
    matmul's (no scatter op is needed)."""

    def __init__(self, count: int, dim: int, rng: np.random.Generator) -> None:
        self.count = count
        self.w = _normal(rng, count, dim)

    def __call__(self, ids: Tensor) -> Tensor:
        return ids.one_hot(self.count) @ self.w


class LayerNorm(Module):
    def __init__(self, dim: int, eps: float = 1e-5) -> None:
        self.w = Tensor.parameter(np.ones(dim))
        self.b = Tensor.parameter(np.zeros(dim))
        self.eps = eps

    def __call__(self, x: Tensor) -> Tensor:
        return x.layer_norm(self.w, self.b, self.eps)


def attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = True) -> Tensor:
    """softmax(q k^T / sqrt(d) + mask) v over [..., T, d]: the scores materialized (the
    naive formula; uir.tensor.attention has the flash schedule)."""
    t, d = q.shape[-2], q.shape[-1]
    scores = (q @ k.transpose()) * (1.0 / math.sqrt(d))
    if causal:
        scores = causal_mask(t).where(scores, MASKED)
    return scores.softmax(-1) @ v


# The outputs of flash attention built so far: its loops read q, k and v through memory, where no
# gradient flows (spec/uir-week9.md section 2), so backward() refuses a loss that depends on one.
FLASH_OUTPUTS: weakref.WeakSet[UOp] = weakref.WeakSet()


def scaled_dot_product_attention(
    q: Tensor, k: Tensor, v: Tensor, causal: bool = True, flash: bool = True, block: int = 64
) -> Tensor:
    """softmax(q k^T / sqrt(d) + mask) v over [..., T, d]: with `flash`, the online-softmax
    schedule of uir.tensor.attention (the T x T scores never in memory; forward only), else
    the naive formula (`attention`), which training differentiates."""
    if not flash:
        return attention(q, k, v, causal)
    try:
        out = flash_attention(q.uop, k.uop, v.uop, causal, block)
    except ShapeError as exc:
        raise TensorError(str(exc)) from None
    FLASH_OUTPUTS.add(out)
    return Tensor(out)


class CausalSelfAttention(Module):
    def __init__(self, dim: int, heads: int, rng: np.random.Generator) -> None:
        if dim % heads:
            raise TensorError(f"CausalSelfAttention: {heads} heads do not divide width {dim}")
        self.heads = heads
        self.qkv = Linear(dim, 3 * dim, rng)
        self.proj = Linear(dim, dim, rng)

    def __call__(self, x: Tensor) -> Tensor:
        b, t, d = x.shape
        h = self.heads
        qkv = self.qkv(x)
        q, k, v = (
            qkv[:, :, i * d : (i + 1) * d].reshape(b, t, h, d // h).permute(0, 2, 1, 3)
            for i in range(3)
        )
        y = attention(q, k, v).permute(0, 2, 1, 3).reshape(b, t, d)
        return self.proj(y)


class MLP(Module):
    def __init__(self, dim: int, rng: np.random.Generator) -> None:
        self.fc = Linear(dim, 4 * dim, rng)
        self.out = Linear(4 * dim, dim, rng)

    def __call__(self, x: Tensor) -> Tensor:
        return self.out(self.fc(x).gelu())


class Block(Module):
    def __init__(self, dim: int, heads: int, rng: np.random.Generator) -> None:
        self.ln1 = LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads, rng)
        self.ln2 = LayerNorm(dim)
        self.mlp = MLP(dim, rng)

    def __call__(self, x: Tensor) -> Tensor:
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


class GPT(Module):
    """A character-level GPT: token and position embeddings, pre-norm blocks, a final layer
    norm, an untied head; `__call__` gives logits [B, T, vocab] of ids [B, T]."""

    def __init__(
        self,
        vocab: int,
        d_model: int = 64,
        layers: int = 2,
        heads: int = 4,
        context: int = 64,
        seed: int = 0,
    ) -> None:
        rng = np.random.default_rng(seed)
        self.vocab, self.context = vocab, context
        self.tok = Embedding(vocab, d_model, rng)
        self.pos = _normal(rng, context, d_model)
        self.h = [Block(d_model, heads, rng) for _ in range(layers)]
        self.lnf = LayerNorm(d_model)
        self.head = Linear(d_model, vocab, rng)

    def __call__(self, ids: Tensor) -> Tensor:
        t = ids.shape[-1]
        if t > self.context:
            raise TensorError(f"GPT: {t} tokens exceed the context of {self.context}")
        x = self.tok(ids) + self.pos[:t]
        for block in self.h:
            x = block(x)
        return self.head(self.lnf(x))

"""The GPT of uir.testing.gpt_numpy in PyTorch eager, for benchmarks/lm_bench.py only.

torch is no dependency of any package: lm_bench imports this module only when torch imports.
Parameters are the numpy model's, so the first losses of the two must agree.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from uir.testing.gpt_numpy import EPS, Config


def loss_fn(p: dict[str, torch.Tensor], c: Config, ids: torch.Tensor, targets: torch.Tensor):
    batch, t = ids.shape
    d, h = c.d_model, c.heads
    mask = torch.tril(torch.ones(t, t, dtype=torch.bool))
    x = p["tok.w"][ids] + p["pos"][:t]
    for i in range(c.layers):
        a = torch.nn.functional.layer_norm(x, (d,), p[f"h{i}.ln1.w"], p[f"h{i}.ln1.b"], EPS)
        q, k, v = (a @ p[f"h{i}.attn.qkv.w"] + p[f"h{i}.attn.qkv.b"]).split(d, -1)
        q, k, v = (u.view(batch, t, h, d // h).transpose(1, 2) for u in (q, k, v))
        scores = (q @ k.transpose(-1, -2) / math.sqrt(d // h)).masked_fill(~mask, -math.inf)
        y = (scores.softmax(-1) @ v).transpose(1, 2).reshape(batch, t, d)
        x = x + y @ p[f"h{i}.attn.proj.w"] + p[f"h{i}.attn.proj.b"]
        m = torch.nn.functional.layer_norm(x, (d,), p[f"h{i}.ln2.w"], p[f"h{i}.ln2.b"], EPS)
        g = torch.nn.functional.gelu(
            m @ p[f"h{i}.mlp.fc.w"] + p[f"h{i}.mlp.fc.b"], approximate="tanh"
        )
        x = x + g @ p[f"h{i}.mlp.out.w"] + p[f"h{i}.mlp.out.b"]
    z = torch.nn.functional.layer_norm(x, (d,), p["lnf.w"], p["lnf.b"], EPS)
    logits = z @ p["head.w"] + p["head.b"]
    return torch.nn.functional.cross_entropy(logits.view(-1, c.vocab), targets.view(-1))


class TorchTrainer:
    """One AdamW training step of the model, eager."""

    def __init__(self, params: dict[str, np.ndarray], c: Config, lr: float, betas, eps: float):
        self.config = c
        self.params = {k: torch.tensor(v, requires_grad=True) for k, v in params.items()}
        self.opt = torch.optim.AdamW(
            self.params.values(), lr=lr, betas=betas, eps=eps, weight_decay=0.0
        )

    def step(self, ids: np.ndarray, targets: np.ndarray) -> float:
        self.opt.zero_grad(set_to_none=True)
        loss = loss_fn(self.params, self.config, torch.from_numpy(ids), torch.from_numpy(targets))
        loss.backward()
        self.opt.step()
        return loss.item()

"""UIR's Python front end (week 10): a Tensor that builds UOps, run by any installed backend.

    from uir.tensor import Tensor, nn, optim
    model = nn.GPT(vocab=65)
    loss = model(ids).cross_entropy(targets)
    loss.backward(); opt.step(); print(loss.item())   # one compiled program per step

spec/uir-week10.md is the normative text.
"""

from . import nn, optim
from .nn import scaled_dot_product_attention
from .realize import close_sessions, device, realize, to_uir
from .tensor import Tensor, TensorError, causal_mask

__all__ = [
    "Tensor",
    "TensorError",
    "causal_mask",
    "close_sessions",
    "device",
    "nn",
    "optim",
    "realize",
    "scaled_dot_product_attention",
    "to_uir",
]

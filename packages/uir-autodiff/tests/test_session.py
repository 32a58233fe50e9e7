"""A training step that takes its gradients with GRAD runs in a persistent session
(uir.core.runtime): open_session runs the gradient pass as `uir run` does, and k runs take the
k steps that numpy works out by hand."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from uir.core import parse
from uir.core.plugins import load_registry
from uir.core.runtime import open_session

ROOT = Path(__file__).resolve().parents[3]
REGISTRY = load_registry()
BACKENDS = [
    pytest.param(
        name,
        marks=pytest.mark.skipif(
            name not in REGISTRY.backends or not REGISTRY.backend(name).available()[0],
            reason=f"backend {name} is not usable here",
        ),
    )
    for name in ("interp", "c", "cuda-emu")
]


def numpy_steps(k: int) -> tuple[np.ndarray, np.ndarray]:
    """The loss (w . x + b)^2 and its SGD steps at rate 0.5, with the gradients by hand:
    d/dw = 2 (w . x + b) x, d/db = 2 (w . x + b)."""
    f = np.float32
    w, b, x = np.array([1, 2], f), np.array([0.5], f), np.array([1, -1], f)
    for _ in range(k):
        s = f(np.sum(w * x, dtype=f)) + b[0]
        w, b = w - (f(2) * s * x) * f(0.5), b - (f(2) * s) * f(0.5)
    return w, b


@pytest.mark.parametrize("backend", BACKENDS)
def test_k_runs_of_the_sgd_step_take_k_steps(backend: str) -> None:
    sink = parse((ROOT / "suites" / "week9" / "sgd_two_parameters.uir").read_text()).sink
    with open_session(sink, backend) as session:
        for k in range(1, 11):
            _, _, w, _, b = session.run()
            want_w, want_b = numpy_steps(k)
            # w . x + b doubles and flips sign each step: powers of two, exact in f32.
            assert w.tolist() == want_w.tolist() and b.tolist() == want_b.tolist()
        assert session.memory[0].read().tolist() == want_w.tolist()

"""GRAD against independent mathematics: central finite differences of the program itself.

Random differentiable programs of weeks 4-5 in f64 (uir.testing.differentiable) are run twice
per input element in the interpreter, the input moved by +h and -h, and the central difference
compared with GRAD's value. Near a kink (MAX, MIN, REDUCE MAX, a WHERE switching within h) the
derivative does not exist: an element whose two one-sided differences disagree is left out (ties
and kinks are worked by hand in test_rules.py). Tolerances: without a CAST through f32,
h = 1e-5 * max(1, |x|), and GRAD agrees within 1e-6 * scale + 1e-5 * |d|; a CAST rounds the
function to steps of f32, so there h = 1e-3 and the bound is 1e-3 * scale.
"""

from __future__ import annotations

import os

import numpy as np
from hypothesis import given, settings

from uir.core.interpret import evaluate
from uir.core.plugins import load_registry, prepare
from uir.testing.differentiable import Differentiable, strategy

SCALE = int(os.environ.get("UIR_HYPOTHESIS_SCALE", "1"))
REGISTRY = load_registry()


def gradients(d: Differentiable) -> list[np.ndarray]:
    """The loss and its GRADs, through the pipeline (the autodiff pass) and the interpreter."""
    ready = prepare(d.with_grads(), "program", REGISTRY.pipeline())
    return evaluate(ready)


def central_differences(d: Differentiable) -> tuple[list[np.ndarray], list[np.ndarray], float]:
    """Per input: the central differences, and a mask of the elements where the loss is smooth
    at the scale of h; and the loss's own magnitude."""
    forward = d.forward()
    base = {slot: v.copy() for slot, v in enumerate(d.values)}

    def loss(inputs: dict[int, np.ndarray]) -> float:
        return float(evaluate(forward, inputs)[0])

    f0 = loss(base)
    step = 1e-3 if d.casts else 1e-5
    slopes, smooth = [], []
    for slot, values in enumerate(d.values):
        slope = np.zeros(values.shape)
        ok = np.zeros(values.shape, dtype=bool)
        for j in range(values.size):
            h = step * max(1.0, abs(values[j]))
            moved = {**base, slot: values.copy()}
            moved[slot][j] = values[j] + h
            up = loss(moved)
            moved[slot][j] = values[j] - h
            down = loss(moved)
            slope[j] = (up - down) / (2 * h)
            ahead, behind = (up - f0) / h, (f0 - down) / h
            ok[j] = abs(ahead - behind) <= (0.1 if d.casts else 1e-2) * (1 + abs(slope[j]))
        slopes.append(slope)
        smooth.append(ok)
    return slopes, smooth, abs(f0)


@settings(max_examples=100 * SCALE)
@given(strategy())
def test_grad_agrees_with_central_finite_differences(d: Differentiable) -> None:
    got = gradients(d)
    assert float(got[0]) == float(evaluate(d.forward())[0])  # the loss itself is unchanged
    slopes, smooth, size = central_differences(d)
    rel = 1e-3 if d.casts else 1e-5
    floor = (1e-3 if d.casts else 1e-6) * (1 + size)
    for grad, slope, ok in zip(got[1:], slopes, smooth, strict=True):
        grad = np.asarray(grad, dtype=np.float64).reshape(-1)
        assert grad.shape == slope.shape
        error = np.abs(grad - slope)
        bound = floor + rel * np.maximum(np.abs(slope), np.abs(grad))
        assert np.all(error[ok] <= bound[ok]), (grad, slope, ok)


def test_most_elements_are_smooth_so_the_comparison_is_not_empty() -> None:
    import random

    from uir.testing.differentiable import differentiable

    kept = total = 0
    for seed in range(12):
        _, smooth, _ = central_differences(differentiable(random.Random(seed)))
        kept += sum(int(m.sum()) for m in smooth)
        total += sum(m.size for m in smooth)
    assert kept >= 0.8 * total

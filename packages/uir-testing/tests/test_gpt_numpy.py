"""The numpy GPT's hand-derived gradients against central differences in float64."""

import numpy as np
import pytest

from uir.testing.gpt_numpy import AdamW, Config, init_parameters, loss_and_gradients

CONFIG = Config(vocab=7, d_model=8, layers=2, heads=2, context=5)


@pytest.fixture
def problem():
    rng = np.random.default_rng(0)
    params = init_parameters(CONFIG, 1, np.float64)
    for name in params:  # away from the initialization's symmetries (zero biases, unit norms)
        params[name] = params[name] + rng.normal(0, 0.3, params[name].shape)
    return params, rng.integers(0, 7, (2, 5)), rng.integers(0, 7, (2, 5)), rng


def test_every_gradient_matches_central_differences(problem):
    params, ids, targets, rng = problem
    _, grads = loss_and_gradients(params, CONFIG, ids, targets)
    step = 1e-6
    for name, value in params.items():
        for _ in range(3):
            at = tuple(int(rng.integers(0, n)) for n in value.shape)
            old = value[at]
            value[at] = old + step
            up, _ = loss_and_gradients(params, CONFIG, ids, targets)
            value[at] = old - step
            down, _ = loss_and_gradients(params, CONFIG, ids, targets)
            value[at] = old
            # central differences err by O(step^2) plus rounding O(eps/step): about 1e-10 here
            assert grads[name][at] == pytest.approx((up - down) / (2 * step), rel=1e-6, abs=1e-9)


def test_the_initial_loss_is_about_ln_vocab():
    params = init_parameters(CONFIG, 0)
    rng = np.random.default_rng(1)
    ids, targets = rng.integers(0, 7, (4, 5)), rng.integers(0, 7, (4, 5))
    loss, _ = loss_and_gradients(params, CONFIG, ids, targets)
    # weights of scale 0.02 give logits within a few hundredths of each other
    assert loss == pytest.approx(np.log(7), abs=0.05)


def test_adamw_first_step_moves_each_weight_by_lr():
    # after one step m/(1-b1) = g and v/(1-b2) = g^2, so the update is lr * g / (|g| + eps)
    params = {"w": np.array([1.0, -2.0, 3.0])}
    grads = {"w": np.array([0.5, -4.0, 1e-3])}
    AdamW(lr=0.1, eps=0.0).step(params, grads)
    np.testing.assert_allclose(params["w"], [0.9, -1.9, 2.9])

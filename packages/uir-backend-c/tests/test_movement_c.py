"""Week 5's movement ops in C: rangeify's lowering (a week-3 program, since the week-5 verifier
lands on another branch) rendered, compiled and run, against numpy and the interpreter, bit for
bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings

from uir.backend.c.plugin import CBackend
from uir.cli.main import main
from uir.core.dtypes import f32
from uir.core.interpret import evaluate
from uir.core.printer import print_program
from uir.rewrite.passes import rangeify
from uir.testing.backends import scheduled
from uir.testing.movement import chains, conv2d, load, matmul, program, softmax
from uir.testing.shaped import check_lowered
from uir.testing.tolerance import softmax_bound

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"


def _matmul_example() -> np.ndarray:
    a = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.float32)
    b = np.array([[7, 8], [9, 10], [11, 12]], dtype=np.float32)
    return a @ b


def _conv2d_example() -> np.ndarray:
    # x: 2 channels of 3x3, the second 100 times the first; w[f, c] as the example's comment says
    x0 = np.arange(1, 10, dtype=np.float32).reshape(3, 3)
    x = np.stack([x0, 100 * x0])
    w = np.zeros((2, 2, 3, 3), dtype=np.float32)
    w[0, 0] = 1  # filter 0: the neighbourhood sum of channel 0
    w[1, 0, 1, 1] = 10  # filter 1: 10 times the centre of channel 0 ...
    w[1, 1, 0, 0] = 1  # ... plus the up-left neighbour of channel 1
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), (1, 1), (1, 1))), (3, 3), (1, 2)
    )
    return np.einsum("chwij,fcij->fhw", windows, w)  # small integers: exact in any order


@pytest.mark.parametrize("backend", ["interp", "c"])
@pytest.mark.parametrize(
    ("name", "expected"),
    [("matmul_movement", _matmul_example), ("conv2d_movement", _conv2d_example)],
)
def test_the_movement_examples_print_what_numpy_computes(capsys, backend, name, expected):
    path = EXAMPLES / f"{name}.uir"
    assert main(["run", "--backend", backend, str(path)]) == 0
    printed = capsys.readouterr().out.split()
    assert np.array(printed, dtype=np.float32).tobytes() == expected().reshape(-1).tobytes()
    # and the example states its output in its `# expect:` line
    assert path.read_text().splitlines()[0] == "# expect: " + " ".join(printed)


def test_matmul_and_conv2d_in_c_compute_what_numpy_does():
    rng = np.random.default_rng(11)
    # small integers in f32: every product and sum is exact, so any order gives numpy's bits
    a, b = rng.integers(-8, 9, (17, 9)).astype(np.float32), rng.integers(-8, 9, (9, 13))
    x, w = rng.integers(-4, 5, (3, 9, 7)), rng.integers(-3, 4, (4, 3, 3, 3))
    b, x, w = b.astype(np.float32), x.astype(np.float32), w.astype(np.float32)
    product = check_lowered(rangeify(program(matmul(load(0, f32, (17, 9)), load(1, f32, (9, 13))))))
    (result,) = CBackend().compile(scheduled(product)).run({0: a.reshape(-1), 1: b.reshape(-1)})
    assert result.tobytes() == (a @ b).tobytes()
    conv = conv2d(load(0, f32, (3, 9, 7)), load(1, f32, (4, 3, 3, 3)), padding=1)
    (result,) = (
        CBackend()
        .compile(scheduled(check_lowered(rangeify(program(conv)))))
        .run({0: x.reshape(-1), 1: w.reshape(-1)})
    )
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), (1, 1), (1, 1))), (3, 3), (1, 2)
    )
    expected = np.einsum("chwij,fcij->fhw", windows, w)  # [C,9,7,3,3] with w[F,C,3,3]
    assert result.tobytes() == expected.astype(np.float32).tobytes()


@settings(max_examples=8, deadline=None)  # each example compiles C: a few are enough here
@given(chains())
def test_random_chains_in_c_agree_with_the_interpreter_and_numpy(case):
    value, expected, inputs = case
    lowered = check_lowered(rangeify(program(value)))
    (from_c,) = CBackend().compile(scheduled(lowered)).run(inputs)
    (interpreted,) = evaluate(lowered, inputs)
    want = np.ascontiguousarray(expected).reshape(-1).tobytes()
    assert from_c.tobytes() == np.asarray(interpreted).tobytes() == want, print_program(lowered)


def test_a_batched_conv2d_in_c_is_each_images_conv2d():
    rng = np.random.default_rng(12)
    # small integers in f32: every sum is exact, so numpy's einsum gives the very bits
    x = rng.integers(-4, 5, (3, 2, 6, 5)).astype(np.float32)
    w = rng.integers(-3, 4, (4, 2, 3, 3)).astype(np.float32)
    conv = conv2d(load(0, f32, x.shape), load(1, f32, w.shape), padding=1)
    assert conv.type.shape == (3, 4, 6, 5)
    lowered = check_lowered(rangeify(program(conv)))
    (result,) = CBackend().compile(scheduled(lowered)).run({0: x.reshape(-1), 1: w.reshape(-1)})
    windows = np.lib.stride_tricks.sliding_window_view(
        np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), (2, 3)
    )
    expected = np.einsum("nchwij,fcij->nfhw", windows, w).astype(np.float32)
    assert result.tobytes() == expected.tobytes()
    for n, image in enumerate(x):  # the unbatched builder on each image alone
        single = rangeify(program(conv2d(load(0, f32, image.shape), load(1, f32, w.shape), 1)))
        (alone,) = (
            CBackend().compile(scheduled(single)).run({0: image.reshape(-1), 1: w.reshape(-1)})
        )
        assert alone.tobytes() == expected[n].tobytes()


@pytest.mark.parametrize("scale", [1.0, 8.0])  # 8: exps down to 2^-63, still normal f32
def test_softmax_in_the_interpreter_and_in_c_is_numpys_within_the_derived_bound(scale):
    x = (np.random.default_rng(13).standard_normal((7, 33)) * scale).astype(np.float32)
    x[3, 5] = x[3, 6]  # a row whose maximum occurs twice
    value = softmax(load(0, f32, x.shape))
    e = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
    expected = e / e.sum(axis=1, keepdims=True)
    bound = softmax_bound(x) * expected
    (interpreted,) = evaluate(program(value), {0: x.reshape(-1)})
    (from_c,) = CBackend().compile(scheduled(program(value))).run({0: x.reshape(-1)})
    for result in (np.asarray(interpreted), from_c.reshape(x.shape)):
        assert result.dtype == np.float32
        assert np.all(np.abs(result - expected) <= bound)
        assert np.all(np.abs(result.sum(axis=1) - 1) < 1e-5)  # rows are distributions

"""Bad input raises TensorError (a ValueError) at the op the user called, naming the op and the
shapes, before anything is compiled."""

from __future__ import annotations

import traceback

import numpy as np
import pytest

from uir.core.dtypes import i32
from uir.tensor import Tensor, TensorError, nn

A = Tensor(np.zeros((2, 3), np.float32))
B = Tensor(np.zeros((4,), np.float32))


@pytest.mark.parametrize(
    "call, words",
    [
        (lambda: A + B, ["add", "(2, 3)", "(4,)"]),
        (lambda: A * B, ["mul", "(2, 3)", "(4,)"]),
        (lambda: A.maximum(B), ["maximum", "(2, 3)", "(4,)"]),
        (lambda: A @ Tensor(np.zeros((4, 2), np.float32)), ["matmul", "(2, 3)", "(4, 2)"]),
        (lambda: A @ B, ["matmul", "(2, 3)", "(4,)"]),
        (lambda: B @ A, ["matmul", "(4,)", "(2, 3)"]),
        (lambda: A @ Tensor(np.float32(1.0)), ["matmul", "(2, 3)", "()"]),
        (
            lambda: Tensor(np.zeros((2, 2, 3), np.float32)) @ Tensor(np.zeros((3, 3, 1))),
            ["matmul", "(2, 2, 3)", "(3, 3, 1)"],
        ),
        (lambda: A.reshape(4, 2), ["reshape", "(2, 3)", "(4, 2)"]),
        (lambda: A.expand(4, 3), ["expand", "(2, 3)", "(4, 3)"]),
        (lambda: A.permute(0, 0), ["permute", "(2, 3)"]),
        (lambda: A.sum(2), ["sum", "axis 2", "(2, 3)"]),
        (lambda: A.pad([(1, 1)]), ["pad", "(2, 3)"]),
        (lambda: A.shrink([(0, 3), (0, 3)]), ["shrink", "(2, 3)"]),
        (lambda: A[2], ["index", "2"]),
        (lambda: Tensor.cat([A, B]), ["cat", "(2, 3)", "(4,)"]),
        (lambda: A < B, ["lt", "(2, 3)", "(4,)"]),
        (lambda: (A < 0).where(A, B), ["where", "(2, 3)", "(4,)"]),
        (lambda: A.where(A, A), ["where", "bool"]),
        (
            lambda: A.cross_entropy(Tensor(np.zeros((3,), np.int32))),
            ["cross_entropy", "(2, 3)", "(3,)"],
        ),
        (lambda: A.backward(), ["backward", "scalar"]),
        (lambda: A.item(), ["item", "(2, 3)"]),
        (lambda: Tensor([1, 2]).exp(), ["exp", "i32"]),
        (lambda: Tensor([1, 2]) + Tensor([1.0, 2.0]), ["add", "i32", "f32"]),
        (lambda: Tensor([1, 2]) * 0.5, ["i32", "0.5"]),
        (lambda: A**1.5, ["pow", "1.5"]),
        (lambda: Tensor.input((2,), i32).write([1, 2, 3]), ["write", "(3,)", "(2,)"]),
        (lambda: Tensor.input((2,), i32).write([0.5, 1.0]), ["write", "fractional", "i32"]),
        (lambda: bool(A < 0), ["bool", "item()"]),
        (lambda: A.assign(A), ["assign"]),
        (lambda: Tensor.parameter(np.zeros(3)).assign(B), ["assign", "f32[4]", "f32[3]"]),
        (lambda: nn.CausalSelfAttention(6, 4, np.random.default_rng(0)), ["4 heads", "6"]),
    ],
)
def test_error_names_the_op_and_shapes(call, words: list[str]) -> None:
    with pytest.raises(TensorError) as caught:
        call()
    for word in words:
        assert word in str(caught.value), (word, str(caught.value))
    assert isinstance(caught.value, ValueError)


def test_raised_in_the_front_end_not_the_compiler() -> None:
    with pytest.raises(TensorError) as caught:
        A + B
    frames = traceback.extract_tb(caught.tb)
    assert all("uir/core" not in f.filename and "uir/rewrite" not in f.filename for f in frames)


def test_gpt_rejects_more_tokens_than_its_context() -> None:
    model = nn.GPT(5, d_model=4, layers=1, heads=1, context=3)
    with pytest.raises(TensorError, match="4 tokens exceed the context of 3"):
        model(Tensor(np.zeros((1, 4), np.int32)))


def test_step_without_backward_says_what_to_do() -> None:
    from uir.tensor import optim

    p = Tensor.parameter(np.ones(2))
    with pytest.raises(TensorError, match=r"backward\(\)"):
        optim.SGD([p], lr=0.1).step()

"""The interpreter on week-5 movement ops (uir.md section 9), at ranks 1 to 4 and in chains.

The interpreter runs movement ops as numpy operations. The expectations here come from a second,
independent path: each op's index map (spec/uir-week5.md section 9), written as plain Python on
tuples of indices, composed through a chain, with no numpy at all.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from math import prod
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.core.parse import parse
from uir.core.verify import verify

Index = tuple[int, ...]
# A value of the model: its shape and the function giving its element at an index.
Model = tuple[tuple[int, ...], Callable[[Index], int]]


def run(*lines: str) -> list[str]:
    program = parse("\n".join(lines) + "\n")
    verify(program)
    outputs = evaluate(program.sink)
    return [format_value(v, s.dtype) for v, s in zip(outputs, program.sink.src, strict=True)]


def _type(shape: tuple[int, ...]) -> str:
    return f"i32[{','.join(map(str, shape))}]"


def _unflatten(flat: int, shape: tuple[int, ...]) -> Index:
    index = []
    for d in reversed(shape):
        index.append(flat % d)
        flat //= d
    return tuple(reversed(index))


def _flatten(index: Index, shape: tuple[int, ...]) -> int:
    flat = 0
    for i, d in zip(index, shape, strict=True):
        flat = flat * d + i
    return flat


def _elements(model: Model) -> list[int]:
    shape, at = model
    return [at(i) for i in itertools.product(*(range(d) for d in shape))]


# ---- the index maps, one per op: the result's element at `out` is the source's at ... ----------


def reshape(m: Model, shape: tuple[int, ...]) -> Model:
    src, at = m
    return shape, lambda out: at(_unflatten(_flatten(out, shape), src))


def permute(m: Model, order: tuple[int, ...]) -> Model:
    src, at = m

    def element(out: Index) -> int:
        index = [0] * len(src)
        for d, axis in enumerate(order):
            index[axis] = out[d]
        return at(tuple(index))

    return tuple(src[a] for a in order), element


def pad(m: Model, pairs: tuple[tuple[int, int], ...]) -> Model:
    src, at = m

    def element(out: Index) -> int:
        index = tuple(i - b for i, (b, _) in zip(out, pairs, strict=True))
        inside = all(0 <= i < d for i, d in zip(index, src, strict=True))
        return at(index) if inside else 0

    return tuple(d + b + a for d, (b, a) in zip(src, pairs, strict=True)), element


def shrink(m: Model, pairs: tuple[tuple[int, int], ...]) -> Model:
    _, at = m
    shape = tuple(e - b for b, e in pairs)
    return shape, lambda out: at(tuple(i + b for i, (b, _) in zip(out, pairs, strict=True)))


def flip(m: Model, axes: tuple[int, ...]) -> Model:
    src, at = m

    def element(out: Index) -> int:
        pairs = enumerate(zip(out, src, strict=True))
        return at(tuple(d - 1 - i if axis in axes else i for axis, (i, d) in pairs))

    return src, element


def expand(m: Model, shape: tuple[int, ...]) -> Model:
    src, at = m
    skip = len(shape) - len(src)
    return shape, lambda out: at(
        tuple(0 if d == 1 else i for i, d in zip(out[skip:], src, strict=True))
    )


# ---- random programs: a source, then a chain of movement ops ----------------------------------

shapes = st.lists(st.integers(1, 4), min_size=1, max_size=4).map(tuple)


@st.composite
def moves(draw: st.DrawFn, m: Model) -> tuple[str, str, Model]:
    """One movement op applied to `m`: (op, argument text, resulting model)."""
    shape = m[0]
    rank = len(shape)
    op = draw(st.sampled_from(["RESHAPE", "PERMUTE", "PAD", "SHRINK", "FLIP", "EXPAND"]))
    if op == "RESHAPE":
        n, dims = prod(shape), []
        while n > 1 and len(dims) < 7:
            d = draw(st.sampled_from([k for k in range(1, n + 1) if n % k == 0]))
            dims.append(d)
            n //= d
        new = (*dims, n) if n > 1 or not dims else tuple(dims)
        return op, "", reshape(m, new)
    if op == "PERMUTE":
        order = tuple(draw(st.permutations(range(rank))))
        return op, f" {order}".replace(",)", ")"), permute(m, order)
    if op == "PAD":
        pairs = tuple((draw(st.integers(0, 2)), draw(st.integers(0, 2))) for _ in shape)
        return op, f" {pairs}".replace(",)", ")"), pad(m, pairs)
    if op == "SHRINK":
        pairs = []
        for d in shape:
            begin = draw(st.integers(0, d - 1))
            pairs.append((begin, draw(st.integers(begin + 1, d))))
        pairs = tuple(pairs)
        return op, f" {pairs}".replace(",)", ")"), shrink(m, pairs)
    if op == "FLIP":
        axes = tuple(sorted(draw(st.sets(st.integers(0, rank - 1), min_size=1))))
        return op, f" {axes}".replace(",)", ")"), flip(m, axes)
    lead = tuple(draw(st.lists(st.integers(1, 3), max_size=min(2, 8 - rank))))
    new = (*lead, *(draw(st.integers(2, 3)) if d == 1 else d for d in shape))
    return op, "", expand(m, new)


@st.composite
def chains(draw: st.DrawFn) -> tuple[list[str], list[int]]:
    """A program of a CONST and 1 to 4 movement ops, each printed; and the expected elements."""
    shape = draw(shapes)
    size = prod(shape)
    values = draw(st.lists(st.integers(-99, 99), min_size=size, max_size=size))
    model: Model = (shape, lambda i, v=values, s=shape: v[_flatten(i, s)])
    lines = [f"%v0 = CONST {_type(shape)} ({', '.join(map(str, values))},)"]
    expected: list[list[int]] = [values]
    for n in range(1, draw(st.integers(1, 4)) + 1):
        op, arg, model = draw(moves(model))
        lines.append(f"%v{n} = {op} {_type(model[0])} %v{n - 1}{arg}")
        expected.append(_elements(model))
    names = " ".join(f"%v{k}" for k in range(len(lines)))
    lines.append(f"%out = SINK void {names}")
    return lines, [" ".join(map(str, e)) for e in expected]


@settings(deadline=None, max_examples=150)
@given(chains())
def test_movement_chains_match_their_index_maps(chain: tuple[list[str], list[str]]) -> None:
    lines, expected = chain
    assert run(*lines) == expected


@settings(deadline=None, max_examples=50)
@given(shapes, st.integers(1, 3))
def test_stack_puts_its_sources_along_a_new_leading_axis(shape: tuple[int, ...], k: int) -> None:
    size = prod(shape)
    lines, sources = [], []
    for j in range(k):
        values = [100 * j + e for e in range(size)]  # source j's elements: 100j, 100j+1, ...
        sources.append(values)
        lines.append(f"%s{j} = CONST {_type(shape)} ({', '.join(map(str, values))},)")
    names = " ".join(f"%s{j}" for j in range(k))
    lines += [f"%k = STACK {_type((k, *shape))} {names}", "%out = SINK void %k"]
    # The leading index selects the source; the rest index within it: source after source.
    assert run(*lines) == [" ".join(str(e) for values in sources for e in values)]


# ---- worked examples of spec/uir-week5.md, outputs worked out by hand --------------------------


def test_transpose() -> None:
    # [[1, 2, 3], [4, 5, 6]] transposed is [[1, 4], [2, 5], [3, 6]].
    assert run(
        "%m = CONST i32[2,3] (1, 2, 3, 4, 5, 6)",
        "%t = PERMUTE i32[3,2] %m (1, 0)",
        "%out = SINK void %t",
    ) == ["1 4 2 5 3 6"]


def test_pad_gives_positive_zero_around_negative_zeros() -> None:
    # The padding is +0.0 (prints 0), never the -0.0 the value holds (prints -0).
    assert run(
        "%v = CONST f32[2] (-0.0, 1.5)",
        "%p = PAD f32[5] %v ((2, 1))",
        "%out = SINK void %p",
    ) == ["0 0 -0 1.5 0"]


def test_pad_of_bools_is_false() -> None:
    assert run(
        "%v = CONST bool[1] (true)",
        "%p = PAD bool[3] %v ((1, 1))",
        "%out = SINK void %p",
    ) == ["false true false"]


def test_flip_of_a_reshape() -> None:
    # (0..5) as [[0, 1, 2], [3, 4, 5]]; flipping axis 1 reverses each row: [[2, 1, 0], [5, 4, 3]].
    assert run(
        "%v = CONST i32[6] (0, 1, 2, 3, 4, 5)",
        "%m = RESHAPE i32[2,3] %v",
        "%f = FLIP i32[2,3] %m (1)",
        "%out = SINK void %f",
    ) == ["2 1 0 5 4 3"]


def test_padded_convolution_window() -> None:
    # x = (1, 2, 3) padded by one zero each side: (0, 1, 2, 3, 0). The three windows of width 3
    # (SHRINKs at 0, 1, 2) stacked are [[0,1,2], [1,2,3], [2,3,0]]; times the kernel (1, 10, 100)
    # and summed over the window: 0+10+200 = 210, 1+20+300 = 321, 2+30+0 = 32.
    assert run(
        "%x = CONST i32[3] (1, 2, 3)",
        "%p = PAD i32[5] %x ((1, 1))",
        "%w0 = SHRINK i32[3] %p ((0, 3))",
        "%w1 = SHRINK i32[3] %p ((1, 4))",
        "%w2 = SHRINK i32[3] %p ((2, 5))",
        "%w = STACK i32[3,3] %w0 %w1 %w2",
        "%k = CONST i32[1,3] (1, 10, 100)",
        "%ke = EXPAND i32[3,3] %k",
        "%m = MUL i32[3,3] %w %ke",
        "%y = REDUCE i32[3] %m (ADD, (1))",
        "%out = SINK void %y",
    ) == ["210 321 32"]


def test_reduce_keeps_its_fold_order_after_a_permute() -> None:
    # Columns of the permuted value fold in row-major order of the reduced axis: 2^24 first, then
    # four ones, each of which rounds back to 2^24 in f32 (ties to even); in the other order the
    # four ones make 4 first and the sum is 2^24 + 4 exactly.
    assert run(
        "%m = CONST f32[5,2] (16777216, 1, 1, 1, 1, 1, 1, 1, 1, 16777216)",
        "%t = PERMUTE f32[2,5] %m (1, 0)",
        "%s = REDUCE f32[2] %t (ADD, (1))",
        "%out = SINK void %s",
    ) == ["16777216 16777220"]


def test_matmul_example() -> None:
    # examples/matmul_movement.uir against a product worked out with Python ints.
    text = (Path(__file__).resolve().parents[3] / "examples" / "matmul_movement.uir").read_text()
    program = parse(text)
    verify(program)
    a, b = [[1, 2, 3], [4, 5, 6]], [[7, 8], [9, 10], [11, 12]]
    c = [sum(a[i][k] * b[k][j] for k in range(3)) for i in range(2) for j in range(2)]
    (out,) = evaluate(program.sink)
    assert out.tolist() == c == [58, 64, 139, 154]


def test_sliding_window_from_movement_alone() -> None:
    # spec/uir-week5.md's padded convolution window, with no STACK: p = (0, 1, 2, 3, 0) repeated
    # 4 times and read with rows of 6 shifts each row by one, so W[i, j] = p[i + j]:
    # [[0,1,2], [1,2,3], [2,3,0]]. Times the kernel (1, 10, 100), summed: 210 321 32.
    assert run(
        "%x = CONST i32[3] (1, 2, 3)",
        "%p = PAD i32[5] %x ((1, 1))",
        "%e = EXPAND i32[4,5] %p",
        "%f = RESHAPE i32[20] %e",
        "%s = SHRINK i32[18] %f ((0, 18))",
        "%r = RESHAPE i32[3,6] %s",
        "%w = SHRINK i32[3,3] %r ((0, 3), (0, 3))",
        "%k = CONST i32[3] (1, 10, 100)",
        "%ke = EXPAND i32[3,3] %k",
        "%m = MUL i32[3,3] %w %ke",
        "%y = REDUCE i32[3] %m (ADD, (1))",
        "%out = SINK void %w %y",
    ) == ["0 1 2 1 2 3 2 3 0", "210 321 32"]


@pytest.mark.parametrize(
    "dtype", ["i8", "i16", "i32", "i64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64"]
)
def test_movement_keeps_every_dtype(dtype: str) -> None:
    # [[1, 2], [3, 4]] transposed is [[1, 3], [2, 4]]; a zero before each row: [[0,1,3], [0,2,4]];
    # rows swapped: [[0,2,4], [0,1,3]].
    assert run(
        f"%m = CONST {dtype}[2,2] (1, 2, 3, 4)",
        f"%t = PERMUTE {dtype}[2,2] %m (1, 0)",
        f"%p = PAD {dtype}[2,3] %t ((0, 0), (1, 0))",
        f"%f = FLIP {dtype}[2,3] %p (0)",
        "%out = SINK void %f",
    ) == ["0 2 4 0 1 3"]

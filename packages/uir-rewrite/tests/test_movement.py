"""Rangeify of week 5's movement ops (uir.md section 9): each op an index map, composed through
chains, at ranks 1 to 4; the simplifier then cleans the index arithmetic.

Programs are built as UOps (uir.testing.movement) since the week-5 verifier lands on another
branch; rangeify's output is a week-3 program, verified and run by the interpreter, and compared
with numpy's transpose, pad, flip, reshape and stack computed here. `maps_only` is the lowering
alone; the pass (`rangeify`) simplifies its index arithmetic next.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.dtypes import Type, bool_, f32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify, simplify
from uir.rewrite.rangeify import rangeify as maps_only
from uir.testing.movement import (
    STEPS,
    chains,
    const,
    conv2d,
    flip,
    index_ops,
    load,
    matmul,
    pad,
    permute,
    program,
    reduce,
    reshape,
    shrink,
    stack,
)
from uir.testing.shaped import check_lowered


def run(value: UOp, inputs: dict[int, np.ndarray] | None = None) -> np.ndarray:
    """The value computed by the interpreter from rangeify's lowering, flat."""
    (result,) = evaluate(check_lowered(rangeify(program(value))), inputs)
    return np.asarray(result).reshape(-1)


def same(result: np.ndarray, expected: np.ndarray) -> bool:
    return result.tobytes() == np.ascontiguousarray(expected).reshape(-1).tobytes()


# --- each op, worked by hand --------------------------------------------------------------------

X = np.arange(24, dtype=np.int32).reshape(2, 3, 4)


def test_reshape_is_row_major():
    assert same(run(reshape(const(X), (4, 6))), X.reshape(4, 6))
    assert same(run(reshape(const(X), (24,))), np.arange(24, dtype=np.int32))


def test_permute_is_numpy_transpose():
    # result axis d is source axis order[d]: element (i, j, k) of the result is X[j, k, i]
    result = run(permute(const(X), (1, 2, 0))).reshape(3, 4, 2)
    assert result[2, 1, 0] == X[0, 2, 1] == 9
    assert same(result, np.transpose(X, (1, 2, 0)))


def test_pad_puts_the_dtypes_zero_around_the_value():
    values = np.array([[-0.0, 1.5], [2.5, -3.0]], dtype=np.float32)
    result = run(pad(const(values), ((1, 0), (0, 2)))).reshape(3, 4)
    assert result.tolist() == [[0, 0, 0, 0], [0, 1.5, 0, 0], [2.5, -3.0, 0, 0]]
    # the zero around is +0.0; the -0.0 inside stays -0.0
    signs = np.signbit(result)
    assert signs.tolist() == [[False] * 4, [True, False, False, False], [False, True, False, False]]
    flags = UOp(Op.CMPLT, Type(bool_, (2, 2)), (const(values), const(np.zeros((2, 2), np.float32))))
    # only -3.0 < 0 (-0.0 < 0 is false); rows of false around
    assert run(pad(flags, ((1, 1), (0, 0)))).tolist() == [0, 0, 0, 0, 0, 1, 0, 0]


def test_shrink_takes_the_window():
    assert same(run(shrink(const(X), ((1, 2), (0, 3), (1, 3)))), X[1:2, 0:3, 1:3])


def test_flip_reverses_the_listed_axes():
    assert same(run(flip(const(X), (0, 2))), np.flip(X, (0, 2)))
    assert run(flip(const(X[0, 0]), (0,))).tolist() == [3, 2, 1, 0]


def test_stack_of_shaped_values_adds_a_leading_axis():
    a, b, c = const(X[0]), const(X[1]), const(X[0] * 10)
    assert same(run(stack(a, b, c)), np.stack([X[0], X[1], X[0] * 10]))
    rows = stack(const(X[0, 0]), const(X[1, 2]))  # a stack of rank-1 values: rank 2
    assert run(rows).tolist() == [0, 1, 2, 3, 20, 21, 22, 23]


def test_reduce_folds_any_axes_at_rank_four():
    x = np.arange(120, dtype=np.int32).reshape(2, 3, 4, 5)
    for axes in [(0,), (3,), (1, 2), (0, 2, 3), (0, 1, 2, 3)]:
        assert same(run(reduce(const(x), Op.ADD, axes)), x.sum(axis=axes, dtype=np.int32)), axes


def test_a_padded_buffer_reads_every_element_inside_and_nothing_outside():
    data = np.arange(1, 7, dtype=np.float32)
    value = pad(load(0, f32, (2, 3)), ((2, 1), (1, 1)))
    assert same(run(value, {0: data}), np.pad(data.reshape(2, 3), ((2, 1), (1, 1))))


def test_a_pad_of_memory_gates_its_read_and_a_pad_of_a_computed_value_picks_by_where():
    # spec/rangeify.md section 8: through the FLIP and RESHAPE the padded source is a LOAD, so the
    # gate is its INDEX's and no clamp or WHERE is left; a NEG of it is computed: WHERE and clamps.
    # The -0.0s stay -0.0 and the padding is +0.0 both ways (a gated-off LOAD gives +0.0).
    data = np.array([-0.0, 1, 2, -0.0, 4, 5], dtype=np.float32)
    pairs = ((1, 0), (0, 2))
    source = flip(load(0, f32, (2, 3)), (1,))
    negated = UOp(Op.NEG, source.type, (source,))
    for value, expected in [
        (pad(source, pairs), np.pad(data.reshape(2, 3)[:, ::-1], pairs)),
        (pad(negated, pairs), np.pad(-data.reshape(2, 3)[:, ::-1], pairs)),
    ]:
        assert same(run(value, {0: data}), expected)
        lowered = simplify(maps_only(program(value))).toposort()
        ops = {u.op for u in lowered}
        gated = any(u.op is Op.INDEX and len(u.src) == 3 for u in lowered)
        if value.src[0] is source:
            assert gated and not ops & {Op.WHERE, Op.MAX, Op.MIN}
        else:
            assert not gated and {Op.WHERE, Op.MAX} <= ops


# --- matmul and conv2d from movement plus one REDUCE ---------------------------------------------


def test_matmul_is_movement_mul_and_one_reduce():
    rng = np.random.default_rng(5)
    a = rng.integers(-5, 6, (3, 4)).astype(np.float32)  # small integers: every sum is exact
    b = rng.integers(-5, 6, (4, 5)).astype(np.float32)
    product = matmul(const(a), const(b))
    assert sum(u.op is Op.REDUCE for u in product.toposort()) == 1
    assert same(run(product), a @ b)


def conv2d_by_loops(x: np.ndarray, w: np.ndarray, p: int) -> np.ndarray:
    """The definition, one output element at a time, over a zero-padded copy of x."""
    f, c, kh, kw = w.shape
    padded = np.zeros((c, x.shape[1] + 2 * p, x.shape[2] + 2 * p), x.dtype)
    padded[:, p : p + x.shape[1], p : p + x.shape[2]] = x
    oh, ow = padded.shape[1] - kh + 1, padded.shape[2] - kw + 1
    out = np.zeros((f, oh, ow), x.dtype)
    for o in range(f):
        for i in range(oh):
            for j in range(ow):
                out[o, i, j] = (padded[:, i : i + kh, j : j + kw] * w[o]).sum()
    return out


def test_conv2d_is_pad_windows_mul_and_one_reduce():
    rng = np.random.default_rng(6)
    x = rng.integers(-4, 5, (2, 5, 4)).astype(np.int32)
    w = rng.integers(-3, 4, (3, 2, 3, 2)).astype(np.int32)
    out = conv2d(const(x), const(w), padding=1)
    assert out.type.shape == (3, 5, 5)
    assert same(run(out), conv2d_by_loops(x, w, 1))


# --- random chains at ranks 1 to 4 ---------------------------------------------------------------


@pytest.mark.parametrize("rank", [1, 2, 3, 4])
@pytest.mark.parametrize("step", STEPS)
@settings(max_examples=4, deadline=None)
@given(data=st.data())
def test_each_op_at_ranks_one_to_four(step, rank, data):
    value, expected, inputs = data.draw(chains(rank=rank, steps=(step,), length=1))
    assert same(run(value, inputs), expected), print_program(program(value))


@settings(max_examples=40, deadline=None)
@given(chains())
def test_random_chains_compute_what_numpy_computes(case):
    value, expected, inputs = case
    lowered = check_lowered(maps_only(program(value)))
    (result,) = evaluate(lowered, inputs)
    assert same(np.asarray(result).reshape(-1), expected), print_program(lowered)
    # and the simplifier (which the rangeify pass runs next) keeps every bit of it
    (simplified,) = evaluate(check_lowered(simplify(lowered)), inputs)
    assert same(np.asarray(simplified).reshape(-1), expected)


# --- the simplifier cleans the index arithmetic --------------------------------------------------


def divisions(sink: UOp) -> int:
    return sum(u.op in (Op.IDIV, Op.MOD) for u in index_ops(sink))


def test_a_reshape_there_and_back_leaves_no_division():
    x = load(0, f32, (2, 3, 4))  # RESHAPE of a rank-1 LOAD
    there = reshape(x, (6, 4))
    back = reshape(there, (2, 3, 4))
    lowered = maps_only(program(back))
    assert divisions(lowered) > 0  # the maps divide; the ranges make it unnecessary
    clean = rangeify(program(back))  # the pass: the maps, then the simplifier
    assert divisions(clean) == 0, print_program(clean)
    data = np.arange(24, dtype=np.float32)
    assert same(np.asarray(evaluate(clean, {0: data})[0]).reshape(-1), data)


def test_a_permute_there_and_back_is_the_identity_index():
    x = load(0, f32, (2, 3, 4))
    back = permute(permute(x, (2, 0, 1)), (1, 2, 0))
    clean = rangeify(program(back))
    places = [u for u in clean.toposort() if u.op is Op.INDEX]
    (read,) = [u for u in places if u.src[0].op is Op.BUFFER and u.src[0].arg == 0]
    (write,) = [u for u in places if u is not read]  # into the output buffer (slot 1)
    assert divisions(clean) == 0
    assert read.src[1] is write.src[1]  # out[i] = x[i]: one index expression for both


def test_a_transposed_reshape_keeps_only_the_divisions_it_needs():
    # [6] viewed as [2, 3] and transposed: element (j, i) reads x[3i + j]; no division left
    x = load(0, f32, (6,))
    clean = rangeify(program(permute(reshape(x, (2, 3)), (1, 0))))
    assert divisions(clean) == 0, print_program(clean)
    data = np.arange(6, dtype=np.float32)
    assert same(np.asarray(evaluate(clean, {0: data})[0]), data.reshape(2, 3).T)


def test_a_flip_of_a_reshape_read_back_flat_is_a_reversal():
    # spec/rangeify.md 8: [6] viewed [2,3], both axes flipped, back to [6]: x[5 - r]
    x = load(0, f32, (6,))
    clean = rangeify(program(reshape(flip(reshape(x, (2, 3)), (0, 1)), (6,))))
    assert divisions(clean) == 0, print_program(clean)
    data = np.arange(6, dtype=np.float32)
    assert same(np.asarray(evaluate(clean, {0: data})[0]), data[::-1])

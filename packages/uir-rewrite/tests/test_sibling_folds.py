"""Sibling folds share one loop (spec/uir-week6.md 2.2): two REDUCEs fused into one reader at one
index, over the same axes and neither reading the other, fold in one nest. Checked by the
structure (the RANGEs of the lowered program) and by the bits: the lowered program on the
interpreter against the interpreter on the program as written (numpy arrays, no rangeify), and
against each fold worked out in numpy in the week-4 order (from the identity, left to right)."""

from __future__ import annotations

import numpy as np
import pytest

from uir.core.dtypes import f32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.testing.movement import expand, load, program, reduce, reshape
from uir.testing.shaped import check_lowered

ROWS, COLS = 4, 7
DATA = np.random.default_rng(11).normal(size=(ROWS, COLS)).astype(np.float32)


def lowered_outputs(sink: UOp) -> tuple[UOp, list[np.ndarray]]:
    lowered = check_lowered(rangeify(sink))
    whole = [np.asarray(v) for v in evaluate(sink, {0: DATA.reshape(-1)})]
    looped = [np.asarray(v) for v in evaluate(lowered, {0: DATA.reshape(-1)})]
    for a, b in zip(whole, looped, strict=True):
        assert a.tobytes() == b.tobytes()
    return lowered, looped


def ranges(sink: UOp) -> int:
    return sum(1 for u in sink.toposort() if u.op is Op.RANGE)


def in_order(rows: np.ndarray, op) -> np.ndarray:
    """Each row folded from its first element on, left to right, in f32 (the week-4 order; ADD's
    identity -0.0 and MAX's -inf change no value here)."""
    out = rows[:, 0].copy()
    for j in range(1, rows.shape[1]):
        out = op(out, rows[:, j]).astype(np.float32)
    return out


def x() -> UOp:
    return load(0, f32, (ROWS, COLS))


def test_a_row_sum_and_a_row_max_read_by_one_kernel_fold_in_one_loop():
    total, top = reduce(x(), Op.ADD, (1,)), reduce(x(), Op.MAX, (1,))
    lowered, (out,) = lowered_outputs(program(total.alu(Op.ADD, top)))
    assert ranges(lowered) == 2  # the row loop and ONE fold loop (three before)
    want = in_order(DATA, np.add) + in_order(DATA, np.maximum)
    assert out.tobytes() == want.astype(np.float32).tobytes()


def test_a_sum_and_a_sum_of_squares_load_each_element_once():
    data = x()
    total, squares = reduce(data, Op.ADD, (1,)), reduce(data.alu(Op.MUL, data), Op.ADD, (1,))
    lowered, (out,) = lowered_outputs(program(total.alu(Op.ADD, squares)))
    assert ranges(lowered) == 2
    assert (
        sum(1 for u in lowered.toposort() if u.op is Op.LOAD and u.src[0].src[0].op is Op.BUFFER)
        == 1
    )
    want = in_order(DATA, np.add) + in_order((DATA * DATA).astype(np.float32), np.add)
    assert out.tobytes() == want.astype(np.float32).tobytes()


def test_a_fold_reading_its_siblings_result_gets_a_loop_of_its_own():
    data = x()
    mean = reduce(data, Op.ADD, (1,))
    centred = data.alu(Op.SUB, expand(reshape(mean, (ROWS, 1)), (ROWS, COLS)))
    spread = reduce(centred.alu(Op.MUL, centred), Op.ADD, (1,))
    lowered, (out,) = lowered_outputs(program(spread))
    assert ranges(lowered) == 3  # the variance needs the whole mean loop first
    sums = in_order(DATA, np.add)
    deviations = (DATA - sums[:, None]).astype(np.float32)
    want = in_order((deviations * deviations).astype(np.float32), np.add)
    assert out.tobytes() == want.tobytes()


@pytest.mark.parametrize("fast", [(True, True), (True, False), (False, True)])
def test_fast_folds_keep_a_nest_each(fast):
    # the CUDA block fold splits one accumulator's nest across a block's threads
    folds = [reduce(x(), op, (1,), fast=f) for op, f in zip((Op.ADD, Op.MAX), fast, strict=True)]
    lowered, _ = lowered_outputs(program(folds[0].alu(Op.ADD, folds[1])))
    assert ranges(lowered) == 3

"""The fusion policy of spec/uir-week6.md section 2: which values rangeify folds inside the kernel
reading them, which it computes once, which it materializes. Each test checks the structure (the
kernels of the schedule, how many times a costly op or a fold occurs) and the bits, against the
interpreter running the program whole (numpy arrays, no rangeify: a second path sharing no
lowering code) or against numpy with the reference fold order."""

from __future__ import annotations

import numpy as np

from uir.core.dtypes import Type, f32, i32
from uir.core.interpret import evaluate
from uir.core.kernels import schedule_kernels
from uir.core.ops import ALU, Op
from uir.core.schedule import Block
from uir.core.uop import UOp
from uir.rewrite.passes import rangeify
from uir.testing.movement import expand, fold_sum, load, permute, program, reduce, reshape, softmax
from uir.testing.shaped import check_lowered

ROWS, COLS = 3, 5
DATA = np.random.default_rng(6).normal(size=(ROWS, COLS)).astype(np.float32)


def lowered_and_outputs(sink: UOp, inputs: dict[int, np.ndarray]) -> tuple[UOp, list[np.ndarray]]:
    """The program lowered by rangeify (verified), and its outputs: the interpreter's on the
    lowered program, checked bit for bit against the interpreter on the program as written."""
    lowered = check_lowered(rangeify(sink))
    whole = [np.asarray(v) for v in evaluate(sink, inputs)]
    looped = [np.asarray(v) for v in evaluate(lowered, inputs)]
    for a, b in zip(whole, looped, strict=True):
        assert a.tobytes() == b.tobytes()
    return lowered, looped


def count(sink: UOp, op: Op) -> int:
    return sum(1 for u in sink.toposort() if u.op is op)


def float_ops(block: Block, runs: int = 1) -> int:
    """The float ALU ops the loop nest executes, each statement once per iteration of the loops
    around it (the ends are constants here); index arithmetic is i32 and not counted."""
    total = 0
    for item in block.body:
        if isinstance(item, Block):
            total += float_ops(item, runs * item.range.src[0].arg)  # type: ignore[union-attr]
        elif item.op in ALU and item.dtype.is_float:
            total += runs
    return total


def over_rows(value: UOp) -> UOp:
    return expand(reshape(value, (ROWS, 1)), (ROWS, COLS))


def test_a_row_softmax_is_one_kernel_computing_each_exp_once():
    sink = program(softmax(load(0, f32, (ROWS, COLS))))
    lowered, (out,) = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert len(schedule.kernels) == 1 and schedule.kernels[0].parallel
    # one EXP2 in the graph, run once per element: the exps of a row are kept in a scratch row
    # that the sum and the division both read
    assert count(lowered, Op.EXP2) == 1 and count(lowered, Op.MAX) == 1
    # per element: the max, the product by log2(e) and sub, exp2, the add of the sum, the division
    assert float_ops(schedule.nest) == ROWS * COLS * 6
    # the reference: numpy in f32 with the fold order of uir.md 8 (the max is exact anyway)
    m = DATA.max(axis=1, keepdims=True)
    e = np.exp2((DATA - m) * np.float32(1.4426950408889634)).astype(np.float32)
    assert np.abs(out.reshape(ROWS, COLS) - e / fold_sum(e, (1,))[:, None]).max() < 1e-6


def test_a_layer_norm_is_one_kernel_and_folds_the_mean_once_a_row():
    x = load(0, f32, (ROWS, COLS))
    n = UOp(Op.CONST, Type(f32, ()), (), 1 / COLS)
    mean = UOp(Op.MUL, Type(f32, (ROWS,)), (reduce(x, Op.ADD, (1,)), expand(n, (ROWS,))))
    centred = UOp(Op.SUB, x.type, (x, over_rows(mean)))
    square = UOp(Op.MUL, x.type, (centred, centred))
    var = UOp(Op.MUL, mean.type, (reduce(square, Op.ADD, (1,)), expand(n, (ROWS,))))
    root = UOp(Op.SQRT, mean.type, (var,))
    sink = program(UOp(Op.FDIV, x.type, (centred, over_rows(root))))
    lowered, _ = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    assert len(schedule_kernels(sink, lowered).kernels) == 1
    # the mean is read by the variance's fold and by the output: one fold of it, not two
    # the row loop and the write loop, the mean's fold and the variance's: a second fold of the
    # mean would be a fifth
    assert count(lowered, Op.RANGE) == 4


def test_a_reduce_two_kernels_read_is_materialized_and_folded_once():
    # the SINK prints the row max and the rows minus their max: two output kernels read it
    x = load(0, f32, (ROWS, COLS))
    m = reduce(x, Op.MAX, (1,))
    sink = program(m, UOp(Op.SUB, x.type, (x, over_rows(m))))
    lowered, (maxes, shifted) = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    assert count(lowered, Op.MAX) == 1
    schedule = schedule_kernels(sink, lowered)
    assert len(schedule.kernels) == 3  # the fold, then each output's loop
    assert float_ops(schedule.nest) == ROWS * COLS * 2  # each max once, each sub once
    assert maxes.tobytes() == DATA.max(axis=1).tobytes()
    assert shifted.tobytes() == (DATA - DATA.max(axis=1, keepdims=True)).reshape(-1).tobytes()


def test_a_reduce_read_inside_a_loop_its_index_skips_is_not_folded_there():
    # out[j, i] = x[i, j] - max(x[i]): the output's loops run j outside i, and the max is read at
    # i in the inner loop; folding it there would fold each row COLS times, so it is materialized
    x = load(0, f32, (ROWS, COLS))
    shifted = UOp(Op.SUB, x.type, (x, over_rows(reduce(x, Op.MAX, (1,)))))
    sink = program(permute(shifted, (1, 0)))
    lowered, (out,) = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert len(schedule.kernels) == 2
    assert float_ops(schedule.nest) == ROWS * COLS * 2  # each max once, each sub once
    assert out.tobytes() == (DATA - DATA.max(axis=1, keepdims=True)).T.reshape(-1).tobytes()


def test_a_costly_value_two_kernels_read_is_computed_once_into_a_buffer():
    # the SINK prints exp2(x) and the row sums of exp2(x): one EXP2 per element, in a buffer
    x = load(0, f32, (ROWS, COLS))
    e = UOp(Op.EXP2, x.type, (x,))
    sink = program(e, reduce(e, Op.ADD, (1,)))
    lowered, (exps, sums) = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert count(lowered, Op.EXP2) == 1
    assert float_ops(schedule.nest) == ROWS * COLS * 2  # each exp2 once, each add of the sums once
    assert sums.tobytes() == fold_sum(exps.reshape(ROWS, COLS), (1,)).tobytes()


def test_a_cheap_value_read_twice_is_recomputed_not_stored():
    # x + 1 read by the sum and by the output: an add is cheaper than a buffer round trip
    x = load(0, f32, (ROWS, COLS))
    one = expand(UOp(Op.CONST, Type(f32, ()), (), 1.0), (ROWS, COLS))
    y = UOp(Op.ADD, x.type, (x, one))
    sink = program(UOp(Op.FDIV, x.type, (y, over_rows(reduce(y, Op.ADD, (1,))))))
    lowered, _ = lowered_and_outputs(sink, {0: DATA.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert len(schedule.kernels) == 1
    assert not any(r.type.size > 1 for k in schedule.kernels for r in k.writes if r.op is Op.LOCAL)


def test_a_pad_of_a_broadcast_scalar_load_reads_the_scalar_not_memory():
    # found by the week-6 random programs: a PAD's source seen through EXPAND was a scalar LOAD,
    # which rangeify took for a whole-buffer LOAD and indexed its place again
    buffer = UOp(Op.BUFFER, Type(f32, (1,)), (), 0)
    scalar = buffer.index(UOp(Op.CONST, Type(i32), (), 0)).load()
    padded = expand(scalar, (1, 2)).pad(((0, 2), (1, 2)))
    sink = program(padded)
    _, (out,) = lowered_and_outputs(sink, {0: np.array([3.5], dtype=np.float32)})
    assert out.tobytes() == np.pad(np.full((1, 2), 3.5, np.float32), ((0, 2), (1, 2))).tobytes()


def _matmul_of(a: UOp, b: UOp) -> UOp:
    """a[M, K] @ b[K, N] as uir.tensor writes it: both broadcast to [M, N, K], multiplied, the
    last axis folded."""
    (m, k), (_, n) = a.type.shape, b.type.shape
    left = expand(reshape(a, (m, 1, k)), (m, n, k))
    right = expand(reshape(permute(b, (1, 0)), (1, n, k)), (m, n, k))
    return reduce(UOp(Op.MUL, Type(f32, (m, n, k)), (left, right)), Op.ADD, (2,))


M, K, N = 3, 4, 5
A = np.random.default_rng(7).normal(size=(M, K)).astype(np.float32)
B = np.random.default_rng(8).normal(size=(K, N)).astype(np.float32)


def test_a_dear_value_a_fold_reads_through_a_broadcast_is_computed_once():
    # g = (x*x + x)*x - x (4 float ops an element) is the left operand of a matmul: fused into
    # the K loop it would be computed again for each of the N output columns
    x = load(0, f32, (M, K))
    t = x.type
    g = UOp(Op.SUB, t, (UOp(Op.MUL, t, (UOp(Op.ADD, t, (UOp(Op.MUL, t, (x, x)), x)), x)), x))
    sink = program(_matmul_of(g, load(1, f32, (K, N))))
    lowered, (out,) = lowered_and_outputs(sink, {0: A.reshape(-1), 1: B.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert float_ops(schedule.nest) == M * K * 4 + M * N * K * 2  # g once, then mul + add
    assert len(schedule.kernels) == 2  # g's fill, then the matmul
    g_np = ((A * A + A) * A - A).astype(np.float32)
    products = g_np[:, None, :] * B.T[None, :, :]
    assert out.tobytes() == fold_sum(products, (2,)).reshape(-1).tobytes()


def test_a_cheap_value_a_fold_reads_through_a_broadcast_stays_fused():
    # x*x (one op and a load) costs less than the buffer round trip: recomputed per column
    x = load(0, f32, (M, K))
    sink = program(_matmul_of(UOp(Op.MUL, x.type, (x, x)), load(1, f32, (K, N))))
    lowered, (out,) = lowered_and_outputs(sink, {0: A.reshape(-1), 1: B.reshape(-1)})
    schedule = schedule_kernels(sink, lowered)
    assert float_ops(schedule.nest) == M * N * K * 3
    assert len(schedule.kernels) == 1
    products = (A * A)[:, None, :] * B.T[None, :, :]
    assert out.tobytes() == fold_sum(products, (2,)).reshape(-1).tobytes()

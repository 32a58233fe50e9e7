"""uir.tensor.attention: flash attention against the naive formula and against float64 numpy,
on every backend, within the error bound spec/uir-week10.md derives (uir.testing.tolerance.
attention_bound); and its schedule's memory, counted by hand."""

from __future__ import annotations

import functools
import math
import re
import types
from pathlib import Path

import numpy as np
import pytest

from uir.backend.c.plugin import CBackend
from uir.backend.c.plugin import compile_many as compile_c
from uir.backend.cuda.emulation import compile_many as compile_emulated
from uir.backend.cuda.emulation import cxx
from uir.core import parse, print_program, verify
from uir.core.dtypes import Type, f32
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.shapes import ShapeError
from uir.core.stats import peak_scratch
from uir.core.uop import UOp
from uir.tensor import attention
from uir.tensor.attention import flash_attention, naive_attention
from uir.testing.backends import scheduled
from uir.testing.tolerance import attention_bound, reference_attention


def inputs(*shapes: tuple[int, ...], seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, shape).astype(np.float32) for shape in shapes]


def loaded(arrays: list[np.ndarray]) -> list[UOp]:
    """Each array in a BUFFER of its own (slots 0, 1, ...), LOADed and reshaped to its shape."""
    values = []
    for slot, array in enumerate(arrays):
        flat = Type(f32, (array.size,))
        data = UOp.const(flat, tuple(float(x) for x in array.ravel()))
        values.append(UOp(Op.BUFFER, flat, (data,), slot).load().reshape(array.shape))
    return values


def program(builder, arrays: list[np.ndarray], **options) -> UOp:
    sink = UOp.sink(builder(*loaded(arrays), **options))
    verify(parse(print_program(sink), "attention.uir"))  # what `uir run` would check
    return sink


# (q, k, v shapes, causal, block): blocks that divide T and blocks that do not, a block longer
# than T, leading axes of rank 0 to 2, and (not causal) as many keys as queries or not, v wider
CASES = [
    (((13, 4),) * 3, True, 4),
    (((13, 4),) * 3, False, 5),
    (((2, 37, 8),) * 3, True, 8),
    (((2, 37, 8),) * 3, False, 16),
    (((2, 2, 10, 6),) * 3, True, 3),
    (((5, 3),) * 3, True, 8),
    (((2, 7, 4), (2, 11, 4), (2, 11, 5)), False, 4),
]
IDS = [f"{'x'.join(map(str, c[0][0]))}-{'causal' if c[1] else 'full'}-b{c[2]}" for c in CASES]


@functools.cache
def cases() -> list[tuple[list[np.ndarray], bool, int, UOp, UOp]]:
    built = []
    for i, (shapes, causal, block) in enumerate(CASES):
        arrays = inputs(*shapes, seed=i)
        flash = program(flash_attention, arrays, causal=causal, block=block)
        naive = program(naive_attention, arrays, causal=causal)
        built.append((arrays, causal, block, flash, naive))
    return built


def check(arrays, causal, block, flash_out, naive_out) -> None:
    """Both within their bounds of the exact value, so within the sum of them of each other."""
    exact = reference_attention(*arrays, causal)
    flash_out, naive_out = (np.asarray(o).reshape(exact.shape) for o in (flash_out, naive_out))
    flash_bound = attention_bound(*arrays, causal, block)
    naive_bound = attention_bound(*arrays, causal)
    assert np.all(np.abs(flash_out - exact) <= flash_bound)
    assert np.all(np.abs(naive_out - exact) <= naive_bound)
    assert np.all(np.abs(flash_out - naive_out) <= flash_bound + naive_bound)


@pytest.mark.parametrize("index", range(len(CASES)), ids=IDS)
def test_flash_and_naive_meet_numpy_in_the_interpreter(index):
    arrays, causal, block, flash, naive = cases()[index]
    check(arrays, causal, block, evaluate(flash)[0], evaluate(naive)[0])


def _on_compiled(compile_many) -> None:
    built = cases()
    programs = compile_many([scheduled(s) for _, _, _, f, n in built for s in (f, n)])
    for i, (arrays, causal, block, _, _) in enumerate(built):
        check(arrays, causal, block, programs[2 * i].run()[0], programs[2 * i + 1].run()[0])


@pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")
def test_flash_and_naive_meet_numpy_in_c():
    _on_compiled(compile_c)


@pytest.mark.skipif(cxx() is None, reason="no C++ compiler")
def test_flash_and_naive_meet_numpy_in_cuda_emu():
    # cuda-emu runs a PARALLEL loop's iterations last to first: each query row must use only
    # its own scratch (spec/uir-week7.md rule 3)
    _on_compiled(compile_emulated)


@pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")
def test_twenty_drawn_shapes_meet_numpy_in_c():
    # T, d, dv, heads, block and the mask drawn (a fixed seed: the same 20 every run), one
    # compile for all; flash against numpy and naive within the bounds
    rng = np.random.default_rng(2026)
    drawn = []
    for i in range(20):
        t, d, dv = (int(x) for x in rng.integers(1, (24, 9, 9)))
        lead = tuple(int(x) for x in rng.integers(1, 3, int(rng.integers(0, 3))))
        causal = bool(rng.integers(0, 2))
        tk = t if causal else int(rng.integers(1, 24))
        block = int(rng.integers(1, 12))
        arrays = inputs((*lead, t, d), (*lead, tk, d), (*lead, tk, dv), seed=100 + i)
        drawn.append((arrays, causal, block))
    sinks = [
        program(builder, arrays, causal=causal, **options)
        for arrays, causal, block in drawn
        for builder, options in ((flash_attention, {"block": block}), (naive_attention, {}))
    ]
    compiled = compile_c([scheduled(s) for s in sinks])
    for i, (arrays, causal, block) in enumerate(drawn):
        check(arrays, causal, block, compiled[2 * i].run()[0], compiled[2 * i + 1].run()[0])


# Bugs planted in flash_attention's source: each still verifies and runs, and must land outside
# the bound on some input. The block max started at -inf instead of the running max is exact in
# real numbers; it fails only where a later block's max lies more than 128 (in log2 units)
# below an earlier one's, and exp2 of the difference overflows: inputs up to 32.
PLANTED = [
    ("acc not rescaled", "a_c.load().alu(Op.MUL, alpha)", "a_c.load()", 1),
    ("l not rescaled", "l_old.alu(Op.MUL, alpha)", "l_old", 1),
    (
        "one key past the row",
        "stop.alu(Op.SUB, first))",
        "stop.alu(Op.SUB, first).alu(Op.ADD, one))",
        1,
    ),
    ("the diagonal key dropped", "stop = t.alu(Op.ADD, one)", "stop = t.alu(Op.MAX, one)", 1),
    ("block max from -inf", ".store(m_old)", ".store(_f32(-math.inf))", 32),
]


@pytest.mark.parametrize(
    ("find", "replace", "scale"), [p[1:] for p in PLANTED], ids=[p[0] for p in PLANTED]
)
def test_a_planted_bug_falls_outside_the_bound(find, replace, scale):
    source = Path(attention.__file__).read_text()
    assert source.count(find) == 1
    planted = types.ModuleType("planted")
    exec(compile(source.replace(find, replace), "planted.py", "exec"), planted.__dict__)
    arrays = [x * np.float32(scale) for x in inputs((8, 4), (8, 4), (8, 4), seed=3)]
    got = evaluate(program(planted.flash_attention, arrays, block=3))[0].reshape(8, 4)
    exact = reference_attention(*arrays, True)
    assert np.any(~(np.abs(got - exact) <= attention_bound(*arrays, True, 3)))
    right = evaluate(program(flash_attention, arrays, block=3))[0].reshape(8, 4)
    assert np.all(np.abs(right - exact) <= attention_bound(*arrays, True, 3))


def test_flash_peak_scratch_is_counted_by_hand():
    # q, k, v [5, 3], block 2, causal. Kernels: k transposed and padded to 3 blocks of 2 keys,
    # then the loop over query rows, then the copy of the output into the output buffer.
    # Live while the row loop runs: k^T [3, 6] (72 bytes), the output [5, 3] (60), and a row's
    # scratch: q's row scaled [3] (12), m and l [2] (8), acc [3] (12), the block max [1] (4), the
    # block's scores [2] (8) and its exps [2] (8): 184 bytes
    sink = program(flash_attention, inputs((5, 3), (5, 3), (5, 3)), causal=True, block=2)
    schedule = scheduled(sink)
    assert [k.parallel for k in schedule.kernels] == [True, True, True]
    peak = peak_scratch(schedule)
    assert (peak.bytes, peak.kernel.index) == (184, 1)


def flash_scratch(t: int, d: int, block: int) -> int:
    """The peak worked out as above for one head of [t, d]: O(t d)."""
    blocks = -(-t // block)
    return 4 * (d * blocks * block + t * d + d + 2 + d + 1 + 2 * block)


@pytest.mark.parametrize("t", [64, 200])
def test_flash_scratch_grows_as_t_d_and_naive_as_t_squared(t):
    d = 8
    arrays = [np.zeros((t, d), np.float32)] * 3
    flash = peak_scratch(scheduled(program(flash_attention, arrays, block=16)))
    assert flash.bytes == flash_scratch(t, d, 16)
    schedule = scheduled(program(naive_attention, arrays))
    # the masked scores and the probabilities, t x t each, live at once; besides them only
    # rows of t (the softmax's scratch) and the output
    naive = peak_scratch(schedule).bytes
    assert 2 * 4 * t * t <= naive <= 2 * 4 * t * t + 4 * (4 * t + t * d + 8)
    assert max(r.type.size for r in schedule.shared_locals) == t * t


def test_flash_never_holds_the_scores():
    t, d = 256, 16
    arrays = [np.zeros((t, d), np.float32)] * 3
    schedule = scheduled(program(flash_attention, arrays, block=32))
    sizes = {r.type.size for k in schedule.kernels for r in (*k.reads, *k.writes)}
    assert max(sizes) == t * d  # the inputs, k transposed, the output: never t x t


def test_inputs_computed_by_other_ops_are_read_once_computed():
    # k and v computed (an EXP2 of a load, a sum of two): flash STAGEs what rangeify would
    # compute at each of its T reads, and still meets numpy
    q, k, v = inputs((6, 4), (6, 4), (6, 4))
    qq, kk, vv = loaded([q, k, v])
    ke = UOp(Op.EXP2, kk.type, (kk,))
    ve = vv.alu(Op.ADD, vv)
    sink = UOp.sink(flash_attention(qq, ke, ve, causal=True, block=4))
    got = evaluate(sink)[0].reshape(6, 4)
    args = (q, np.exp2(k.astype(np.float64)), 2 * v.astype(np.float64), True)
    assert np.all(np.abs(got - reference_attention(*args)) <= 2 * attention_bound(*args, 4))


def test_two_attentions_in_a_row_get_loops_of_their_own():
    # the second reads the first's output as its queries: its RANGE and LOCAL ids are above the
    # first's, so the two loop nests are distinct
    q, k, v = inputs((7, 4), (7, 4), (7, 4))
    qq, kk, vv = loaded([q, k, v])
    first = flash_attention(qq, kk, vv, block=3)
    sink = UOp.sink(flash_attention(first, kk, vv, block=3))
    verify(parse(print_program(sink), "twice.uir"))
    once = reference_attention(q, k, v, True)
    want = reference_attention(once, k, v, True)
    assert np.abs(evaluate(sink)[0].reshape(7, 4) - want).max() < 1e-5


def test_the_program_prints_and_parses_back_to_itself():
    sink = program(flash_attention, inputs((6, 4), (6, 4), (6, 4)), block=4)
    assert parse(print_program(sink)).sink is sink


@pytest.mark.parametrize(
    ("shapes", "causal", "message"),
    [
        (((4, 8), (4, 7), (4, 7)), True, "q f32[4,8] and k f32[4,7] differ in their last axis"),
        (((4, 8), (5, 8), (5, 8)), True, "a causal mask needs as many queries as keys"),
        (((4, 8), (5, 8), (4, 8)), False, "k f32[5,8] and v f32[4,8] hold different numbers"),
        (((2, 4, 8), (3, 4, 8), (3, 4, 8)), False, "must have the same leading axes"),
        (((8,), (8,), (8,)), False, "q must be an f32 value of shape [..., T, d], not f32[8]"),
    ],
)
def test_shapes_that_do_not_fit_are_a_clear_error(shapes, causal, message):
    values = loaded([np.zeros(s, np.float32) for s in shapes])
    for builder in (flash_attention, naive_attention):
        with pytest.raises(ShapeError, match=re.escape(message)) as info:
            builder(*values, causal=causal)
        assert str(info.value).startswith(builder.__name__)


def test_memory_is_not_a_value():
    buffer = UOp(Op.BUFFER, Type(f32, (8,)), (), 0)
    value = UOp.const(Type(f32, (2, 4)), 0.0)
    with pytest.raises(ShapeError, match=re.escape("k is BUFFER f32[8], not a value (LOAD it")):
        flash_attention(value, buffer, value)


def test_a_block_below_one_is_a_clear_error():
    values = loaded([np.zeros((4, 2), np.float32)] * 3)
    with pytest.raises(ShapeError, match="block must be an int >= 1, not 0"):
        flash_attention(*values, block=0)


def test_the_scale_is_that_of_the_head_dim():
    # d = 4: the second key scores q.k / sqrt(4) = 2 / 2 = 1 against the first's 0, so the
    # weights are 1 and e, and the output (v0 + e v1) / (1 + e)
    q = np.array([[1, 0, 0, 0]], np.float32)
    k = np.array([[0, 0, 0, 0], [2, 0, 0, 0]], np.float32)
    v = np.array([[1, 2, 3, 4], [5, 6, 7, 8]], np.float32)
    want = (v[0] + math.e * v[1]) / (1 + math.e)
    for block in (1, 2):
        got = evaluate(program(flash_attention, [q, k, v], causal=False, block=block))[0]
        assert np.abs(got - want).max() < 1e-6

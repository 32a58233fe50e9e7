"""FAST reductions across the threads of a block (spec/uir-week7.md 2.1, spec/uir-week8.md 1.1):
a one-thread kernel folding a FAST range runs on one block of THREADS threads, each folding a
strided share, the shares combined by a tree in shared memory with barriers. cuda-emu runs the
block's threads so that they meet at each barrier (spec/uir-week7.md 2.3), so these check the
meaning without a GPU: ints bit for bit (every order gives the same bits), f32 within the bound
of any summation order, and NVRTC compiles the kernels for sm_90."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings

from uir.backend.cuda.emulation import compile_emulated, compile_many, cxx
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.render import THREADS, bundle, render_cuda
from uir.core import parse, print_program
from uir.core.dtypes import DTYPES
from uir.core.interpret import evaluate
from uir.core.ops import FAST, Op
from uir.core.uop import UOp
from uir.testing.backends import scheduled
from uir.testing.compare import same_outputs
from uir.testing.programs import programs
from uir.testing.tolerance import fold_bound, softmax_bound

needs_cxx = pytest.mark.skipif(cxx() is None, reason="no C++ compiler")


def reduction(dtype: str, n: int, op: str, fast: bool = True) -> str:
    flag = ", FAST" if fast else ""
    return (
        f"%x = BUFFER {dtype}[{n}] 0\n%l = LOAD {dtype}[{n}] %x\n"
        f"%s = REDUCE {dtype} %l ({op}, (0){flag})\n%o = SINK void %s\n"
    )


def emulated(text: str, inputs: dict[int, np.ndarray]) -> list[np.ndarray]:
    schedule = scheduled(parse(text).sink)
    return compile_emulated(render_cuda(schedule), schedule.source).run(inputs)


def test_a_fast_sum_renders_a_block_tree_in_shared_memory() -> None:
    rendered = render_cuda(scheduled(parse(reduction("f32", 1 << 24, "ADD")).sink))
    (kernel,) = rendered.kernels
    assert (kernel.blocks, kernel.threads, kernel.barriers) == (1, THREADS, True)
    source = rendered.source
    assert f"__shared__ float uir_red0[{THREADS}];" in source
    # one barrier before the fold, one after the shares are written, one per tree level, one after
    assert source.count("__syncthreads();") == 4
    assert "uir_s0 += blockDim.x" in source  # each thread a strided share


def test_a_plain_sum_keeps_one_thread_and_its_order() -> None:
    rendered = render_cuda(scheduled(parse(reduction("f32", 1 << 24, "ADD", fast=False)).sink))
    (kernel,) = rendered.kernels
    assert (kernel.blocks, kernel.threads, kernel.barriers) == (1, 1, False)
    assert "__shared__" not in rendered.source and "__syncthreads" not in rendered.source


@needs_cxx
@pytest.mark.parametrize("op", ["ADD", "MUL", "MAX", "MIN"])
def test_fast_i32_folds_are_exact(op: str) -> None:
    rng = np.random.default_rng(7)
    x = rng.integers(-(2**31), 2**31, 10_000, dtype=np.int64).astype(np.int32)
    # numpy in int64, wrapped to i32 by hand: ADD and MUL wrap, so every order gives these bits
    wrap = {
        "ADD": lambda v: np.int64(v.astype(np.int64).sum() % 2**32),
        "MUL": lambda v: np.int64(np.prod(v.astype(np.uint64), dtype=np.uint64) % 2**32),
        "MAX": lambda v: np.int64(v.max()) % 2**32,
        "MIN": lambda v: np.int64(v.min()) % 2**32,
    }
    want = np.uint32(wrap[op](x)).view(np.int32)
    (got,) = emulated(reduction("i32", x.size, op), {0: x})
    assert got == want


@needs_cxx
@pytest.mark.parametrize("n", [1, 255, 256, 257, 70_001])
def test_fast_f32_sum_is_within_the_bound_of_any_order(n: int) -> None:
    rng = np.random.default_rng(n)
    x = rng.standard_normal(n).astype(np.float32)
    (got,) = emulated(reduction("f32", n, "ADD"), {0: x})
    exact = x.astype(np.float64).sum()
    # any grouping of n terms: at most n roundings, each of a partial sum below sum |x|
    assert abs(float(got) - exact) <= fold_bound(n, np.abs(x.astype(np.float64)).sum())


@needs_cxx
def test_a_fast_sum_of_ones_is_exact_and_empty_shares_add_nothing() -> None:
    # 1000 ones: every partial sum is an integer below 2^24, exact in any order; threads past
    # the end fold nothing, so their identity -0.0 adds nothing
    (got,) = emulated(reduction("f32", 1000, "ADD"), {0: np.ones(1000, np.float32)})
    assert got == np.float32(1000.0)
    # -0.0 + -0.0 is -0.0 in every order: the identity must be -0.0, not +0.0
    (zero,) = emulated(reduction("f32", 300, "ADD"), {0: np.full(300, -0.0, np.float32)})
    assert np.signbit(zero)


def whole(dtype: str, rows: int, columns: int) -> str:
    n = rows * columns
    return (
        f"%x = BUFFER {dtype}[{n}] 0\n%l = LOAD {dtype}[{n}] %x\n"
        f"%m = RESHAPE {dtype}[{rows},{columns}] %l\n"
        f"%s = REDUCE {dtype} %m (ADD, (0, 1), FAST)\n%o = SINK void %s\n"
    )


def test_a_fast_sum_over_two_axes_is_one_flattened_fold_innermost_fastest() -> None:
    rendered = render_cuda(scheduled(parse(whole("f32", 40, 30)).sink))
    (kernel,) = rendered.kernels
    assert kernel.barriers and len(kernel.folds) == 2
    source = rendered.source
    # neighbouring threads take neighbouring columns: the column is the index mod the row length
    assert "uir_s0 < uir_n0_0 * uir_n0_1" in source
    assert "(int32_t)(uir_s0 % uir_n0_1)" in source
    assert "(int32_t)((uir_s0 / uir_n0_1))" in source


@needs_cxx
def test_a_fast_sum_over_two_axes_is_exact_in_i32_and_within_the_bound_in_f32() -> None:
    rng = np.random.default_rng(3)
    x = rng.integers(-(2**31), 2**31, 1200, dtype=np.int64).astype(np.int32)
    (got,) = emulated(whole("i32", 40, 30), {0: x})
    assert got == np.uint32(int(x.astype(np.int64).sum()) % 2**32).view(np.int32)
    y = rng.standard_normal(1200).astype(np.float32)
    (sum32,) = emulated(whole("f32", 40, 30), {0: y})
    exact = y.astype(np.float64).sum()
    assert abs(float(sum32) - exact) <= fold_bound(1200, np.abs(y.astype(np.float64)).sum())


# mean and then the sum of squared deviations of 600 ints: two FAST folds in one kernel, the
# second reading the first's result (exact in i32: the values are small)
TWO_FOLDS = """
%x = BUFFER i32[600] 0
%l = LOAD i32[600] %x
%s = REDUCE i32 %l (ADD, (0), FAST)
%six = CONST i32 600
%m = IDIV i32 %s %six
%me = EXPAND i32[600] %m
%d = SUB i32[600] %l %me
%q = MUL i32[600] %d %d
%v = REDUCE i32 %q (ADD, (0), FAST)
%o = SINK void %m %v
"""


@needs_cxx
def test_two_folds_in_one_kernel_meet_at_barriers() -> None:
    x = (np.arange(600, dtype=np.int64) * 37 % 101).astype(np.int32)
    schedule = scheduled(parse(TWO_FOLDS).sink)
    rendered = render_cuda(schedule)
    assert any(len(k.folds) == 2 for k in rendered.kernels)
    got = compile_emulated(rendered, schedule.source).run({0: x})
    mean = int(x.sum()) // 600
    assert got[0] == mean
    assert got[1] == int(((x.astype(np.int64) - mean) ** 2).sum())


INT_DTYPES = tuple(d for d in DTYPES.values() if d.is_int)


def fast(sink: UOp) -> UOp:
    """The program with every REDUCE marked FAST."""
    done: dict[UOp, UOp] = {}
    for u in sink.toposort():
        src = tuple(done[s] for s in u.src)
        arg = u.arg
        if u.op is Op.REDUCE and len(arg) == 2:
            arg = (*arg, FAST)
        done[u] = u.replace(src=src, arg=arg)
    return done[sink]


def drawn(week: int, count: int) -> list[UOp]:
    sinks: list[UOp] = []

    # drawing, not checking: a loaded machine must not fail the draw for being slow
    @settings(
        max_examples=count,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(programs(week=week, dtypes=INT_DTYPES, approximate=False))
    def draw(sink: UOp) -> None:
        sinks.append(fast(sink))

    draw()
    return sinks


@pytest.mark.slow
@needs_cxx
@pytest.mark.parametrize("week", [4, 5, 6])
def test_random_fast_int_programs_agree_with_the_interpreter(week: int) -> None:
    """Every order of an int fold gives the same bits, so cuda-emu's block folds must give the
    interpreter's outputs exactly; some of the programs must have reached a block fold."""
    sinks = drawn(week, 100)
    schedules = [scheduled(s) for s in sinks]
    folded = sum(any(k.barriers for k in render_cuda(s).kernels) for s in schedules)
    assert folded >= 1
    for i, (sink, program) in enumerate(zip(sinks, compile_many(schedules), strict=True)):
        got = program.run()
        assert same_outputs(got, evaluate(sink)), f"program {i}:\n{print_program(sink)}\n{got}"


@pytest.mark.parametrize("arch", ["sm_90"])
def test_block_folds_compile_with_nvrtc(arch: str) -> None:
    texts = [
        reduction(d, n, op)
        for d in ("f32", "f64", "f16", "bf16", "i32", "u8", "i64")
        for op, n in (("ADD", 1 << 24), ("MAX", 1000), ("MUL", 3))
    ] + [TWO_FOLDS, whole("f32", 40, 30), whole("i64", 7, 300), ROWS, SOFTMAX]
    sources = [
        render_cuda(scheduled(parse(t).sink), f"uir_p{i}").source for i, t in enumerate(texts)
    ]
    assert all("__syncthreads();" in s for s in sources)
    assert compile_cubin(bundle(sources), arch)[:4] == b"\x7fELF"


# per row of 30: the maximum, then the sum of squared distances from it (i32, exact in any order)
ROWS = """
%x = BUFFER i32[1200] 0
%l = LOAD i32[1200] %x
%m = RESHAPE i32[40,30] %l
%hi = REDUCE i32[40] %m (MAX, (1), FAST)
%h2 = RESHAPE i32[40,1] %hi
%he = EXPAND i32[40,30] %h2
%d = SUB i32[40,30] %m %he
%q = MUL i32[40,30] %d %d
%s = REDUCE i32[40] %q (ADD, (1), FAST)
%o = SINK void %hi %s
"""


def test_rows_with_fast_folds_get_one_block_each() -> None:
    rendered = render_cuda(scheduled(parse(ROWS).sink))
    rows = [k for k in rendered.kernels if k.ranges and k.barriers]
    assert rows and all(k.blocks == 40 and k.threads == THREADS for k in rows)
    assert "uir_row += gridDim.x" in rendered.source


@needs_cxx
def test_rows_with_fast_folds_match_numpy() -> None:
    x = (np.arange(1200, dtype=np.int64) * 7919 % 2003 - 1000).astype(np.int32)
    schedule = scheduled(parse(ROWS).sink)
    got = compile_emulated(render_cuda(schedule), schedule.source).run({0: x})
    m = x.reshape(40, 30).astype(np.int64)
    assert got[0].tolist() == m.max(axis=1).tolist()
    assert got[1].tolist() == ((m - m.max(axis=1, keepdims=True)) ** 2).sum(axis=1).tolist()


SOFTMAX = (Path(__file__).parent / "programs" / "softmax_fast.uir").read_text()


def test_a_fast_row_softmax_gets_a_block_per_row() -> None:
    (kernel,) = render_cuda(scheduled(parse(SOFTMAX).sink)).kernels
    assert (kernel.blocks, kernel.threads, len(kernel.folds)) == (40, THREADS, 2)


@needs_cxx
def test_a_fast_row_softmax_is_within_its_bound() -> None:
    x = (np.random.default_rng(1).standard_normal(1200) * 4).astype(np.float32)
    schedule = scheduled(parse(SOFTMAX).sink)
    (got,) = compile_emulated(render_cuda(schedule), schedule.source).run({0: x})
    rows = x.reshape(40, 30).astype(np.float64)
    e = np.exp2(rows - rows.max(axis=1, keepdims=True))
    exact = e / e.sum(axis=1, keepdims=True)
    # tolerance.softmax_bound is for exp2((x - max) * log2(e)); this program takes exp2(x - max),
    # the same with x scaled by 1 / log2(e) and two roundings fewer, so the bound covers it. Its
    # row-sum term holds for any fold order: C positive terms, every partial sum below the whole
    bound = softmax_bound(rows / np.log2(np.e))
    assert np.all(np.abs(got.reshape(40, 30) - exact) <= bound * exact)

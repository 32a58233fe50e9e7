"""Kernels from PARALLEL ranges (spec/uir-week7.md): how a program is cut into kernels, and that
each runs, under cuda-emu, to results worked out by hand or with numpy. The programs are in
tests/programs/, each with a comment saying what it exercises."""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.cuda.emulation import cxx
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.plugin import CudaEmuBackend
from uir.backend.cuda.render import MAX_BLOCKS, THREADS, render_cuda
from uir.core.interpret import evaluate
from uir.core.uop import UOp
from uir.testing.backends import scheduled

needs_cxx = pytest.mark.skipif(cxx() is None, reason="no C++ compiler")


def run(sink: UOp, inputs: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """The outputs under cuda-emu, checked equal to the interpreter's; the source also compiles
    with NVRTC."""
    compile_cubin(render_cuda(scheduled(sink)).source)
    got = CudaEmuBackend().compile(scheduled(sink)).run(inputs)
    for a, b in zip(got, evaluate(sink, inputs), strict=True):
        assert a.tobytes() == b.tobytes()
    return got


def test_a_parallel_loop_is_one_kernel_of_many_threads(program) -> None:
    r = render_cuda(scheduled(program("fill")))
    assert [(k.blocks, k.threads, len(k.ranges)) for k in r.kernels] == [(1, THREADS, 1)]
    assert r.scratch == ()
    assert "blockIdx.x * blockDim.x + threadIdx.x" in r.source


def test_sequential_loops_run_in_one_thread(program) -> None:
    r = render_cuda(scheduled(program("fill", ("(0, PARALLEL)", "0"))))
    assert [(k.blocks, k.threads, k.ranges) for k in r.kernels] == [(1, 1, ())]


def test_output_ranges_collapse_and_the_accumulator_is_private(program) -> None:
    r = render_cuda(scheduled(program("matmul_parallel")))
    assert [(k.threads, len(k.ranges)) for k in r.kernels] == [(THREADS, 2)]
    assert r.scratch == ()  # the LOCAL accumulator is each thread's own array


def test_a_loaded_end_sizes_the_grid_from_its_bounds(program) -> None:
    kernels = render_cuda(scheduled(program("crossing"))).kernels
    assert [(k.blocks, len(k.ranges)) for k in kernels] == [(1, 0), (MAX_BLOCKS, 1), (1, 0)]


def test_a_row_load_keeps_columns_inside_the_thread(program) -> None:
    (kernel,) = render_cuda(scheduled(program("rows"))).kernels
    assert len(kernel.ranges) == 1


@needs_cxx
def test_fill(program) -> None:
    (out,) = run(program("fill"))
    assert out.tolist() == [0, 3, 6, 9, 12]


@needs_cxx
def test_matmul(program) -> None:
    (out,) = run(program("matmul_parallel"))
    a = np.arange(1, 7).reshape(2, 3)
    b = np.arange(7, 13).reshape(3, 2)
    assert out.tolist() == (a @ b).reshape(-1).tolist()


@needs_cxx
def test_multiply_add_rounds_twice(program) -> None:
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    (out,) = run(program("multiply_add"), {0: a, 1: b, 2: c})
    expected = (a * b) + c  # numpy rounds the float32 product, then the sum
    assert out.tobytes() == expected.tobytes()


@needs_cxx
def test_values_cross_kernels(program) -> None:
    out, twice, x = run(program("crossing"))
    assert out.tolist() == [0, 7, 14, 0]  # end 7 - 4 = 3 iterations
    assert twice.tolist() == 14
    assert x.tolist() == [7]


@needs_cxx
def test_a_local_shared_by_two_kernels(program) -> None:
    (out,) = run(program("shared_local"))
    assert out.tolist() == [1, 2, 5, 10]


@needs_cxx
def test_rows_with_a_loaded_scale(program) -> None:
    (out,) = run(program("rows"))
    assert out.tolist() == [0, 2, 4, 6, 0, 3, 6, 9, 0, 5, 10, 15]


@needs_cxx
def test_more_iterations_than_threads_take_turns(program) -> None:
    # 70000 > 256 threads per block, and 274 blocks run them all once: a multiple of the grid
    # size is exercised by the loaded end above; here every index is written exactly once.
    sink = program("fill", ("i32[5]", "i32[70000]"), ("CONST i32 5", "CONST i32 70000"))
    (out,) = run(sink)
    assert out.tolist() == [3 * i for i in range(70000)]


@needs_cxx
def test_a_private_and_a_shared_local(program) -> None:
    sink = program("column_sum")
    r = render_cuda(scheduled(sink))
    # the total's LOCAL is shared scratch; each column's accumulator is its thread's own
    assert [s.name for s in r.scratch] == ["scratch0"]
    _, partial, total = run(sink)
    assert partial.tolist() == [111, 222, 333, 444]
    assert total.tolist() == [1110]


@needs_cxx
def test_the_emulator_does_not_hide_a_broken_promise(program) -> None:
    # Threads run last to first under cuda-emu, so thread 0's store, iteration 0's, lands last.
    sink = program("broken_promise")
    (reference,) = evaluate(sink)
    (emulated,) = CudaEmuBackend().compile(scheduled(sink)).run()
    assert reference.tolist() == [3]
    assert emulated.tolist() == [0]


@needs_cxx
def test_a_local_filled_by_one_parallel_kernel_and_read_by_the_next(program) -> None:
    sink = program("intermediate")
    r = render_cuda(scheduled(sink))
    assert [len(k.ranges) for k in r.kernels] == [1, 1]
    assert [s.name for s in r.scratch] == ["scratch0"]
    (out,) = run(sink)
    assert out.tolist() == [9, 4, 1, 0]

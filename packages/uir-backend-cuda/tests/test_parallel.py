"""Kernels from PARALLEL ranges (spec/uir-week7.md): how a program is cut into kernels, and that
each runs, under cuda-emu, to results worked out by hand or with numpy."""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.cuda.emulation import cxx
from uir.backend.cuda.nvrtc import compile_cubin
from uir.backend.cuda.plugin import CudaEmuBackend
from uir.backend.cuda.render import MAX_BLOCKS, THREADS, Rendered, render_cuda
from uir.core import parse, verify
from uir.core.calls import inline_calls
from uir.core.interpret import evaluate
from uir.core.uop import UOp

needs_cxx = pytest.mark.skipif(cxx() is None, reason="no C++ compiler")


def load(text: str) -> UOp:
    program = parse(text)
    verify(program)
    return inline_calls(program.sink)


def rendered(text: str) -> Rendered:
    return render_cuda(load(text))


def run(text: str, inputs: dict[int, np.ndarray] | None = None) -> list[np.ndarray]:
    """The outputs under cuda-emu, checked equal to the interpreter's; the source also compiles
    with NVRTC."""
    sink = load(text)
    compile_cubin(render_cuda(sink).source)
    got = CudaEmuBackend().compile(sink).run(inputs)
    for a, b in zip(got, evaluate(sink, inputs), strict=True):
        assert a.tobytes() == b.tobytes()
    return got


FILL = """
%o = BUFFER i32[5] 0
%n = CONST i32 5
%three = CONST i32 3
%i = RANGE i32 %n (0, PARALLEL)
%v = MUL i32 %i %three
%p = INDEX i32 %o %i
%s = STORE void %p %v
%e = END void %s %i
%a = AFTER i32[5] %o %e
%out = SINK void %a
"""

# C = A @ B for 2x3 by 3x2: i and j PARALLEL, k sequential, the accumulator each (i, j)'s own.
MATMUL = """
%ad = CONST i32[6] (1, 2, 3, 4, 5, 6)
%bd = CONST i32[6] (7, 8, 9, 10, 11, 12)
%a = BUFFER i32[6] %ad 0
%b = BUFFER i32[6] %bd 1
%c = BUFFER i32[4] 2
%acc = LOCAL i32[1] 0
%two = CONST i32 2
%three = CONST i32 3
%z = CONST i32 0
%i = RANGE i32 %two (0, PARALLEL)
%j = RANGE i32 %two (1, PARALLEL)
%k = RANGE i32 %three 2
%accIJ = AFTER i32[1] %acc %i %j
%a0 = INDEX i32 %accIJ %z
%init = STORE void %a0 %z
%accK = AFTER i32[1] %acc %init %k
%ak = INDEX i32 %accK %z
%old = LOAD i32 %ak
%i3 = MUL i32 %i %three
%ik = ADD i32 %i3 %k
%pa = INDEX i32 %a %ik
%va = LOAD i32 %pa
%k2 = MUL i32 %k %two
%kj = ADD i32 %k2 %j
%pb = INDEX i32 %b %kj
%vb = LOAD i32 %pb
%prod = MUL i32 %va %vb
%new = ADD i32 %old %prod
%upd = STORE void %ak %new
%donek = END void %upd %k
%accD = AFTER i32[1] %acc %donek
%ad2 = INDEX i32 %accD %z
%sum = LOAD i32 %ad2
%i2 = MUL i32 %i %two
%ij = ADD i32 %i2 %j
%pc = INDEX i32 %c %ij
%st = STORE void %pc %sum
%done = END void %st %i %j
%c1 = AFTER i32[4] %c %done
%out = SINK void %c1
"""

# d = a*b + c elementwise over 1000 f32: each product rounds before the sum (no FMA).
FMA_FREE = """
%a = BUFFER f32[1000] 0
%b = BUFFER f32[1000] 1
%c = BUFFER f32[1000] 2
%d = BUFFER f32[1000] 3
%n = CONST i32 1000
%i = RANGE i32 %n (0, PARALLEL)
%pa = INDEX f32 %a %i
%pb = INDEX f32 %b %i
%pc = INDEX f32 %c %i
%va = LOAD f32 %pa
%vb = LOAD f32 %pb
%vc = LOAD f32 %pc
%ab = MUL f32 %va %vb
%r = ADD f32 %ab %vc
%pd = INDEX f32 %d %i
%s = STORE void %pd %r
%e = END void %s %i
%d1 = AFTER f32[1000] %d %e
%out = SINK void %d1
"""

# A scalar computed by a one-thread kernel (a store, then a load of what it stored) reaches the
# PARALLEL kernel after it, as a factor and as the loop's end (loaded: the grid is sized from the
# end's bounds, its iterations past 4 gated off); a value output computed before the loop is
# copied out after it.
CROSSING = """
%o = BUFFER i32[4] 0
%x = BUFFER i32[1] 1
%z = CONST i32 0
%seven = CONST i32 7
%px = INDEX i32 %x %z
%sx = STORE void %px %seven
%x1 = AFTER i32[1] %x %sx
%qx = INDEX i32 %x1 %z
%f = LOAD i32 %qx
%four = CONST i32 4
%end = SUB i32 %f %four
%i = RANGE i32 %end (0, PARALLEL)
%v = MUL i32 %i %f
%in = CMPLT bool %i %four
%p = INDEX i32 %o %i %in
%s = STORE void %p %v
%e = END void %s %i
%o1 = AFTER i32[4] %o %e
%twice = ADD i32 %f %f
%out = SINK void %o1 %twice %x1
"""

# A LOCAL table filled by a sequential loop, then read by every thread of a PARALLEL one: one
# copy, in scratch memory, shared by both kernels.
SHARED_LOCAL = """
%o = BUFFER i32[4] 0
%t = LOCAL i32[4] 0
%n = CONST i32 4
%k = RANGE i32 %n 0
%kk = MUL i32 %k %k
%pt = INDEX i32 %t %k
%st = STORE void %pt %kk
%et = END void %st %k
%t1 = AFTER i32[4] %t %et
%i = RANGE i32 %n (1, PARALLEL)
%qt = INDEX i32 %t1 %i
%v = LOAD i32 %qt
%one = CONST i32 1
%w = ADD i32 %v %one
%p = INDEX i32 %o %i
%s = STORE void %p %w
%e = END void %s %i
%o1 = AFTER i32[4] %o %e
%out = SINK void %o1
"""

# Rows PARALLEL, columns PARALLEL, but each row loads its scale before its columns: the column
# loop stays inside each row's thread (a load at the row's level is not run once per column).
ROWS = """
%sd = CONST i32[3] (2, 3, 5)
%s = BUFFER i32[3] %sd 0
%o = BUFFER i32[12] 1
%three = CONST i32 3
%four = CONST i32 4
%i = RANGE i32 %three (0, PARALLEL)
%ps = INDEX i32 %s %i
%scale = LOAD i32 %ps
%j = RANGE i32 %four (1, PARALLEL)
%v = MUL i32 %scale %j
%i4 = MUL i32 %i %four
%ij = ADD i32 %i4 %j
%p = INDEX i32 %o %ij
%st = STORE void %p %v
%e = END void %st %i %j
%o1 = AFTER i32[12] %o %e
%out = SINK void %o1
"""


def test_a_parallel_loop_is_one_kernel_of_many_threads() -> None:
    r = rendered(FILL)
    assert [(k.blocks, k.threads, len(k.ranges)) for k in r.kernels] == [(1, THREADS, 1)]
    assert r.scratch == ()
    assert "blockIdx.x * blockDim.x + threadIdx.x" in r.source


def test_sequential_loops_run_in_one_thread() -> None:
    r = rendered(FILL.replace("(0, PARALLEL)", "0"))
    assert [(k.blocks, k.threads, k.ranges) for k in r.kernels] == [(1, 1, ())]


def test_output_ranges_collapse_and_the_accumulator_is_private() -> None:
    r = rendered(MATMUL)
    assert [(k.threads, len(k.ranges)) for k in r.kernels] == [(THREADS, 2)]
    assert r.scratch == ()  # the LOCAL accumulator is each thread's own array


def test_a_loaded_end_sizes_the_grid_from_its_bounds() -> None:
    kernels = rendered(CROSSING).kernels
    assert [(k.blocks, len(k.ranges)) for k in kernels] == [(1, 0), (MAX_BLOCKS, 1), (1, 0)]


def test_a_row_load_keeps_columns_inside_the_thread() -> None:
    (kernel,) = rendered(ROWS).kernels
    assert len(kernel.ranges) == 1


@needs_cxx
def test_fill() -> None:
    (out,) = run(FILL)
    assert out.tolist() == [0, 3, 6, 9, 12]


@needs_cxx
def test_matmul() -> None:
    (out,) = run(MATMUL)
    a = np.arange(1, 7).reshape(2, 3)
    b = np.arange(7, 13).reshape(3, 2)
    assert out.tolist() == (a @ b).reshape(-1).tolist()


@needs_cxx
def test_multiply_add_rounds_twice() -> None:
    rng = np.random.default_rng(7)
    a, b, c = (rng.standard_normal(1000).astype(np.float32) for _ in range(3))
    (out,) = run(FMA_FREE, {0: a, 1: b, 2: c})
    expected = (a * b) + c  # numpy rounds the float32 product, then the sum
    assert out.tobytes() == expected.tobytes()


@needs_cxx
def test_values_cross_kernels() -> None:
    out, twice, x = run(CROSSING)
    assert out.tolist() == [0, 7, 14, 0]  # end 7 - 4 = 3 iterations
    assert twice.tolist() == 14
    assert x.tolist() == [7]


@needs_cxx
def test_a_local_shared_by_two_kernels() -> None:
    (out,) = run(SHARED_LOCAL)
    assert out.tolist() == [1, 2, 5, 10]


@needs_cxx
def test_rows_with_a_loaded_scale() -> None:
    (out,) = run(ROWS)
    assert out.tolist() == [0, 2, 4, 6, 0, 3, 6, 9, 0, 5, 10, 15]


@needs_cxx
def test_more_iterations_than_threads_take_turns() -> None:
    # 70000 > 256 threads per block, and 274 blocks run them all once: a multiple of the grid
    # size is exercised by the loaded end above; here every index is written exactly once.
    text = FILL.replace("i32[5]", "i32[70000]").replace("CONST i32 5", "CONST i32 70000")
    (out,) = run(text)
    assert out.tolist() == [3 * i for i in range(70000)]

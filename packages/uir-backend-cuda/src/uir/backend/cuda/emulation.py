"""The CUDA source of a program compiled for the CPU (backend `cuda-emu`).

The emulation header turns the CUDA names the kernels use into C++: `__global__` and `__device__`
into nothing, `blockIdx`/`threadIdx`/`blockDim`/`gridDim` into globals that `uir_launch` sets as
it runs every thread of every block in turn, the last thread first (running threads one after
another is a valid schedule for a kernel without barriers, and running them backwards shows a
kernel that relies on their order). A kernel with barriers (a block sharing a FAST fold through
shared memory) runs under `uir_launch_block`: each thread of a block a coroutine (ucontext) on
its own stack, resumed in turn from thread 0 up to its next `__syncthreads()`, the block's
`__shared__` arrays function statics that its coroutines share; a round of the barrier ends when
every thread has reached it. Thread 0 first is the order that exposes a missing barrier in a
tree fold (thread 0 reads the partial of thread 128 before that thread has written it). A host
entry point with the C backend's ABI allocates the zeroed scratch arrays and launches each
kernel in order, so the program loads and runs exactly as the C backend's does
(uir.backend.c.runtime.CompiledProgram: forked, on shared memory) and its results
compare bit for bit with the interpreter's.
"""

from __future__ import annotations

import os
import shlex
import shutil
from collections.abc import Sequence
from pathlib import Path

from uir.backend.c.abi import ENTRY, storage_ctype
from uir.backend.c.runtime import CompiledProgram
from uir.backend.c.toolchain import compile_shared
from uir.core.errors import BackendError
from uir.core.kernels import Schedule
from uir.core.uop import UOp

from .render import Rendered, bundle, render_cuda

HEADER = """\
/* uir_cuda_emu.h: CUDA kernels as C++ on the CPU. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <ucontext.h>
#include <functional>
#define __global__
#define __device__
#define __restrict__ __restrict
/* A block's shared memory: statics of the kernel function, one copy that the block's threads
   (coroutines on one OS thread) share; blocks run one after another. */
#define __shared__ static
struct uir_dim3 {
    unsigned int x, y, z;
};
static uir_dim3 threadIdx, blockIdx, blockDim, gridDim;
/* Runs `kernel` on a grid of `blocks` blocks of `threads` threads each, one thread at a time,
   the last first: a GPU keeps no order among threads, and a kernel that relied on one would
   show it here too rather than pass by luck. */
template <typename... Params, typename... Args>
static void uir_launch(void (*kernel)(Params...), unsigned int blocks, unsigned int threads,
                       Args... args) {
    gridDim = {blocks, 1, 1};
    blockDim = {threads, 1, 1};
    for (unsigned int b = blocks; b-- > 0;) {
        blockIdx = {b, 0, 0};
        for (unsigned int t = threads; t-- > 0;) {
            threadIdx = {t, 0, 0};
            kernel(args...);
        }
    }
}
/* Threads that meet at barriers: each a coroutine, resumed from thread 0 up until it reaches
   __syncthreads() or returns. */
enum { UIR_STACK = 256 * 1024 };
static ucontext_t uir_scheduler;
static ucontext_t *uir_threads;
static unsigned char *uir_waiting; /* 1 at a barrier, 2 returned */
static const std::function<void()> *uir_body;
static void uir_thread_main() {
    (*uir_body)();
    uir_waiting[threadIdx.x] = 2;
    swapcontext(&uir_threads[threadIdx.x], &uir_scheduler);
}
static void __syncthreads() {
    unsigned int t = threadIdx.x;
    uir_waiting[t] = 1;
    swapcontext(&uir_threads[t], &uir_scheduler);
}
template <typename... Params, typename... Args>
static void uir_launch_block(void (*kernel)(Params...), unsigned int blocks,
                             unsigned int threads, Args... args) {
    gridDim = {blocks, 1, 1};
    blockDim = {threads, 1, 1};
    const std::function<void()> body = [&]() { kernel(args...); };
    uir_body = &body;
    uir_threads = (ucontext_t *)calloc(threads, sizeof(ucontext_t));
    uir_waiting = (unsigned char *)calloc(threads, 1);
    char *stacks = (char *)malloc((size_t)threads * UIR_STACK);
    if (uir_threads == NULL || uir_waiting == NULL || stacks == NULL) abort();
    for (unsigned int b = blocks; b-- > 0;) {
        blockIdx = {b, 0, 0};
        for (unsigned int t = 0; t < threads; t++) {
            getcontext(&uir_threads[t]);
            uir_threads[t].uc_stack.ss_sp = stacks + (size_t)t * UIR_STACK;
            uir_threads[t].uc_stack.ss_size = UIR_STACK;
            uir_threads[t].uc_link = NULL;
            makecontext(&uir_threads[t], uir_thread_main, 0);
            uir_waiting[t] = 0;
        }
        for (;;) {
            unsigned int running = 0, done = 0;
            for (unsigned int t = 0; t < threads; t++) {
                if (uir_waiting[t] == 2) continue;
                uir_waiting[t] = 0;
                threadIdx = {t, 0, 0};
                swapcontext(&uir_scheduler, &uir_threads[t]);
                if (uir_waiting[t] == 1) running++;
                else done++;
            }
            if (running == 0) break;
            /* a barrier that some threads of the block never reach: undefined on a GPU */
            if (done != 0) abort();
        }
    }
    free(stacks);
    free(uir_waiting);
    free(uir_threads);
}"""

# IEEE floating point as in the C backend: no contraction, no fast-math, no excess precision.
FLAGS = (
    "-x",
    "c++",
    "-std=c++17",
    "-O2",
    "-ffp-contract=off",
    "-fno-fast-math",
    "-fPIC",
    "-shared",
)


def cxx() -> list[str] | None:
    """The C++ compiler command ($CXX may carry arguments, else c++ or g++), or None."""
    words = shlex.split(os.environ.get("CXX", ""))
    for candidate in [words] if words else [["c++"], ["g++"]]:
        found = shutil.which(candidate[0])
        if found is not None:
            return [found, *candidate[1:]]
    return None


def host_entry(rendered: Rendered, entry: str = ENTRY) -> str:
    """`uir_program` with the C ABI: zeroed scratch, each kernel launched in order."""
    abi = rendered.abi
    names = [f"buf{b.slot}" for b in abi.buffers] + [f"out{i}" for i in range(len(abi.outputs))]
    types = [storage_ctype(t.dtype) for t in abi.arg_types]
    params = [f"{t} *{n}" for t, n in zip(types, names, strict=True)]
    args = names + [s.name for s in rendered.scratch]
    lines = [f'extern "C" void {entry}({", ".join(params) or "void"}) {{']
    for s in rendered.scratch:
        lines.append(
            f"    {s.ctype} *{s.name} = ({s.ctype} *)calloc({max(s.count, 1)}, sizeof({s.ctype}));"
        )
        lines.append(f"    if ({s.name} == NULL) abort();")
    for k in rendered.kernels:
        launch = "uir_launch_block" if k.barriers else "uir_launch"
        lines.append(f"    {launch}({', '.join([k.name, str(k.blocks), str(k.threads), *args])});")
    lines += [f"    free({s.name});" for s in rendered.scratch]
    lines.append("}")
    return "\n".join(lines)


def emulated_source(rendered: Rendered) -> str:
    """The C++ translation unit: header, the CUDA source unchanged, the host entry point."""
    return "\n\n".join([HEADER, rendered.source, host_entry(rendered)]) + "\n"


def _build(source: str) -> Path:
    command = cxx()
    if command is None:
        raise BackendError("no C++ compiler found (set $CXX or install c++)")
    return compile_shared([source], FLAGS, command=command)


def compile_emulated(rendered: Rendered, source: UOp) -> CompiledProgram:
    """The program built for the CPU and loaded like a C backend program; `source` is the
    program as written (its outputs' shapes)."""
    return CompiledProgram(_build(emulated_source(rendered)), rendered.abi, source)


def compile_many(schedules: Sequence[Schedule]) -> list[CompiledProgram]:
    """Several programs' schedules built by one compiler run, program i with entry point
    `uir_program_i` (each C++ compile costs a good fraction of a second)."""
    entries = [f"{ENTRY}_{i}" for i in range(len(schedules))]
    rendered = [render_cuda(s, f"uir_p{i}") for i, s in enumerate(schedules)]
    units = [
        r.source + "\n" + host_entry(r, e) + "\n" for r, e in zip(rendered, entries, strict=True)
    ]
    library = _build(HEADER + "\n\n" + bundle(units))
    return [
        CompiledProgram(library, r.abi, s.source, e)
        for r, s, e in zip(rendered, schedules, entries, strict=True)
    ]

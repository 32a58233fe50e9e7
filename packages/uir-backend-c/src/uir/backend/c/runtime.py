"""Loading a compiled program with ctypes and running it on numpy buffers (ABI in abi.py).

The compiled code runs in a forked child, on buffers in memory shared with this process: a crash
of generated code (a student's, or ours running out of memory) then kills the child, and this
process reports it as a BackendError naming the signal instead of dying with it.
"""

from __future__ import annotations

import ctypes
import faulthandler
import mmap
import os
import resource
import signal
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

import numpy as np

from uir.core.arrays import buffer_contents
from uir.core.errors import BackendError
from uir.core.uop import UOp

from .abi import ENTRY, Layout, abi_numpy, from_abi, to_abi

# Each array starts on a cache line: what numpy's own allocations and the C code's vector loads
# are used to.
_ALIGN = 64


def initial_contents(abi: Layout, inputs: Mapping[int, np.ndarray] | None) -> dict[int, np.ndarray]:
    """Each global buffer's starting contents in ABI form: an input, its init CONST, or zeros."""
    inputs = inputs or {}
    return {
        b.slot: to_abi(buffer_contents(b.buffer, inputs.get(b.slot)), b.type.dtype)
        for b in abi.buffers
    }


def shared_copies(arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Flat copies of `arrays` in one anonymous shared mapping: what a forked child writes there,
    this process reads."""
    offsets, end = [], 0
    for a in arrays:
        start = -(-end // _ALIGN) * _ALIGN
        offsets.append(start)
        end = start + a.nbytes
    memory = mmap.mmap(-1, max(end, 1))  # MAP_SHARED; each view keeps the mapping alive
    copies = []
    for a, start in zip(arrays, offsets, strict=True):
        copy = np.frombuffer(memory, dtype=a.dtype, count=a.size, offset=start)
        copy[...] = a.reshape(-1)
        copies.append(copy)
    return copies


def _describe(status: int) -> str:
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        try:
            name = signal.Signals(number).name
        except ValueError:
            name = f"signal {number}"
        return f"was killed by {name} ({signal.strsignal(number) or 'unknown signal'})"
    return f"exited with status {os.waitstatus_to_exitcode(status)}"


# prctl's option that asks the kernel to signal this process when its parent dies (linux/prctl.h).
_PR_SET_PDEATHSIG = 1


def _die_with(parent: int) -> None:
    """In the child: be killed when `parent` dies, however it dies. A parent killed by a plain
    SIGTERM runs no Python code, so only the kernel can take the child down with it."""
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
    if os.getppid() != parent:  # the parent died before prctl: no signal will ever come
        os._exit(1)


def run_isolated(call: Callable[[], object]) -> None:
    """Run `call` in a forked child and wait for it; a child that does not finish normally
    becomes a BackendError. The child changes nothing here except shared memory."""
    parent = os.getpid()
    try:
        pid = os.fork()
    except OSError as exc:  # a process limit reached
        raise BackendError(f"cannot start a process to run the compiled program: {exc}") from exc
    if pid == 0:  # the child: never return into the caller's code
        code = 1
        try:
            _die_with(parent)
            # The parent reports a crash: no Python traceback dump (pytest enables faulthandler)
            # and no core file from a grader's deliberately bad C.
            faulthandler.disable()
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            call()
            code = 0
        finally:
            os._exit(code)
    try:
        _, status = os.waitpid(pid, 0)
    except BaseException:  # interrupted (Ctrl-C): take the child down too
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise
    if status != 0:
        raise BackendError(f"the compiled program {_describe(status)}")


def default_threads() -> int:
    """The cores this process may run on: what `uir run --threads` defaults to."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


class CompiledProgram:
    """A loaded shared library and the ABI of its entry point. `threads` is how many threads its
    PARALLEL loops use in each run, `min_parallel_work` the least work for which a loop uses
    them (None: render.MIN_PARALLEL_WORK; 0 in tests, to thread small programs too); both reach
    the library through render.py's `ENTRY_threads` (hand-written C has none)."""

    def __init__(self, library: Path, abi: Layout, sink: UOp, entry: str = ENTRY) -> None:
        self.abi = abi
        self.sink = sink
        self.threads = default_threads()
        self.min_parallel_work: int | None = None
        self._library = ctypes.CDLL(str(library))
        # The entry point: `call` runs it, in a forked child for `run`, in this process for a
        # session (session.py).
        self._entry = getattr(self._library, entry)
        self._entry.argtypes = [ctypes.c_void_p] * len(abi.arg_types)
        self._entry.restype = None
        self._set_threads = getattr(self._library, f"{entry}_threads", None)
        if self._set_threads is not None:
            self._set_threads.argtypes = [ctypes.c_int32, ctypes.c_int64]
            self._set_threads.restype = None

    def call(self, pointers: Sequence[int]) -> None:
        """Call the entry point in this process, on `threads` threads (started and joined
        within the call: nothing of them is left for a later fork)."""
        if self._set_threads is not None:
            work = -1 if self.min_parallel_work is None else self.min_parallel_work
            self._set_threads(self.threads, work)
        self._entry(*pointers)

    def run(self, inputs: Mapping[int, np.ndarray] | None = None) -> list[np.ndarray]:
        """Run once on fresh buffers; one array per SINK source, as the interpreter gives it."""
        start = initial_contents(self.abi, inputs)
        fresh = [np.zeros(t.size, dtype=abi_numpy(t.dtype)) for t in self.abi.outputs]
        arrays = shared_copies([*(start[b.slot] for b in self.abi.buffers), *fresh])
        pointers = [a.ctypes.data for a in arrays]
        run_isolated(lambda: self.call(pointers))
        return read_back(self.sink, self.abi, arrays)


def read_back(sink: UOp, abi: Layout, arrays: Sequence[np.ndarray]) -> list[np.ndarray]:
    """One array per SINK source, as the interpreter gives it, from the entry point's arrays
    after a run (ABI form, in parameter order: `abi.arg_types`)."""
    count = len(abi.buffers)
    buffers = dict(zip((b.slot for b in abi.buffers), arrays[:count], strict=True))
    outputs = arrays[count:]
    results = []
    for source, back in zip(sink.src, abi.readbacks, strict=True):
        if back.output is not None:
            raw = outputs[back.output]
        else:
            assert back.slot is not None
            raw = buffers[back.slot][back.begin : back.begin + back.length]
        results.append(from_abi(raw, source.dtype).reshape(source.type.shape))
    return results

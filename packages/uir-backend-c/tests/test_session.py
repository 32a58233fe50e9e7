"""The C backend's session (uir.backend.c.session): the entry point called in this process on
buffers allocated once, 64-byte aligned, and nothing left behind across many runs."""

from __future__ import annotations

import os

import numpy as np
import pytest

from uir.backend.c.toolchain import compiler
from uir.core import parse
from uir.core.runtime import open_session

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

# A buffer of 4096 f32 (16 KiB) that each run adds 1 to, and a value output of 4096 elements: a
# run that leaked a copy of either would grow the process by 16 KiB a run, 320 MB over the loop
# below.
PROGRAM = """
%b = BUFFER f32[4096] 0
%one = CONST f32 1.0
%ones = EXPAND f32[4096] %one
%v = LOAD f32[4096] %b
%w = ADD f32[4096] %v %ones
%s = STORE void %b %w
%b1 = AFTER f32[4096] %b %s
%twice = ADD f32[4096] %w %w
%out = SINK void %twice %b1
"""

RUNS = 20_000
# The most the process may grow over RUNS runs: far below one leaked 16 KiB array per run
# (320 MB), above what Python's allocator may keep for itself.
BOUND = 2 * 1024 * 1024


def resident_bytes() -> int:
    """This process's resident set, from /proc/self/statm (its second field, in pages)."""
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_buffers_and_outputs_are_aligned_and_the_run_is_in_this_process() -> None:
    with open_session(parse(PROGRAM).sink, "c") as session:
        memory = session.memory[0]
        assert memory.contents().ctypes.data % 64 == 0
        pid = os.getpid()
        twice, after = session.run()
        assert os.getpid() == pid
        assert twice.shape == (4096,) and set(twice.tolist()) == {2.0}
        assert set(after.tolist()) == {1.0}
        # The outputs are copies: the next run does not change what this one returned.
        session.run()
        assert set(twice.tolist()) == {2.0} and set(memory.read().tolist()) == {2.0}


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="no /proc/self/statm")
def test_twenty_thousand_runs_do_not_grow_the_process() -> None:
    with open_session(parse(PROGRAM).sink, "c") as session:
        for _ in range(1000):  # warm: Python's allocator settles on its pools
            session.run()
        before = resident_bytes()
        for _ in range(RUNS):
            session.run()
        grown = resident_bytes() - before
        assert session.memory[0].read()[0] == np.float32(RUNS + 1000)
    assert grown < BOUND, f"the process grew by {grown} bytes over {RUNS} runs"

"""The C backend's session (uir.backend.c.session): the entry point called in this process on
buffers allocated once, 64-byte aligned, and nothing left behind across many runs."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from uir.backend.c.plugin import compile_many
from uir.backend.c.session import CompiledSession
from uir.backend.c.toolchain import compiler
from uir.core import parse, print_program
from uir.core.calls import inline_calls
from uir.core.dtypes import DTYPES
from uir.core.interpret import execute
from uir.core.runtime import open_session
from uir.testing.backends import scheduled
from uir.testing.compare import same_outputs
from uir.testing.programs import programs

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")

ALL_DTYPES = tuple(d for d in DTYPES.values() if not d.is_void)
BENCHMARK = Path(__file__).resolve().parents[3] / "benchmarks" / "session_bench.py"

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


# Random programs with global buffers in every dtype, windows, LOCALs, loops, shaped values and
# several kernels: three session runs each, the last compared with the forked runner and the
# interpreter started from the contents the first two left.
STRATEGIES = [programs(week=week, dtypes=ALL_DTYPES, approximate=False) for week in (2, 3, 4, 5, 6)]


# KNOWN BUG, open (issue 22, closing note of 2026-12-02): in CI's full run one week-6 draw makes
# rangeify produce a program whose gated index it cannot prove (exit 4 naming the pass, never a
# wrong answer); the same draw passes alone, so some process state changes rangeify's output.
# Marked non-strict xfail so the rest of CI can land; remove the mark when it is found.
_WEEK6_KNOWN_BUG = pytest.mark.xfail(
    reason="rangeify: unprovable gated index on one week-6 draw after other tests (issue 22)",
    strict=False,
)


@pytest.mark.parametrize("week", [2, 3, 4, 5, pytest.param(6, marks=_WEEK6_KNOWN_BUG)])
@settings(
    max_examples=4,
    phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(data=st.data())
def test_a_third_run_equals_the_forked_runner_and_the_interpreter_on_its_contents(
    week: int, data: st.DataObject
) -> None:
    sinks = [inline_calls(s) for s in data.draw(st.lists(STRATEGIES[week - 2], min_size=6))]
    for sink, program in zip(sinks, compile_many([scheduled(s) for s in sinks]), strict=True):
        session = CompiledSession(program, "c", {})
        session.run()
        session.run()
        contents = {slot: m.read() for slot, m in session.memory.items()}
        got = session.run()
        after = {slot: m.read() for slot, m in session.memory.items()}
        forked, interpreted = program.run(contents), execute(sink, contents)
        text = print_program(sink)
        assert same_outputs(got, forked), f"the forked runner differs on:\n{text}"
        assert same_outputs(got, interpreted[0]), f"the interpreter differs on:\n{text}"
        for slot, contents in interpreted[1].items():
            want = np.asarray(contents, dtype=after[slot].dtype)
            assert same_outputs([after[slot]], [want]), f"buffer {slot} differs on:\n{text}"
        session.close()


def test_the_benchmark_runs(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("session_bench", BENCHMARK)
    assert spec is not None and spec.loader is not None
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench.main(["--runs", "20", "--backends", "interp,c"]) == 0
    rows = capsys.readouterr().out.splitlines()
    assert rows[0].split()[0] == "backend" and [r.split()[0] for r in rows[1:]] == ["interp", "c"]

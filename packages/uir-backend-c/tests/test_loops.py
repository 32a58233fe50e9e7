"""Week-3 loops on the C backend: the rendered text's contract (one C `for` per RANGE, never
unrolled; arrays allocated once, outside every loop) and corners the suite does not reach. The
suite programs themselves run in test_suites.py and test_sanitizers.py."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from uir.backend.c.harness import run_sanitized
from uir.backend.c.plugin import CBackend, compile_many
from uir.backend.c.render import render_c
from uir.backend.c.toolchain import compiler
from uir.core import parse, verify
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")


def program(body: str):
    p = parse(body, "t.uir")
    verify(p)
    return p.sink


def counter_sum(n: int) -> str:
    """The suite's 0 + 1 + ... + (n-1) in i32 through a loop-carried accumulator, for any n."""
    text = (ROOT / "suites" / "week3" / "counter_sum_10.uir").read_text()
    assert text.count("%n = CONST i32 10\n") == 1
    return text.replace("%n = CONST i32 10\n", f"%n = CONST i32 {n}\n")


def wrapped_i32(value: int) -> int:
    return (value + 2**31) % 2**32 - 2**31


def test_the_rendered_size_does_not_grow_with_the_trip_count():
    small, large = (render_c(scheduled(program(counter_sum(n)))) for n in (10, 100_000))
    assert small.replace("(int32_t)10;", "(int32_t)100000;") == large
    assert small.count("for (int32_t v") == 1  # the program's loop (the thread pool has its own)


def test_loops_run_every_iteration_with_wrapping_sums():
    ends = [0, -5, 1, 10, 100_000]
    compiled = compile_many([scheduled(s) for s in [program(counter_sum(n)) for n in ends]])
    got = [int(c.run()[0]) for c in compiled]
    assert got == [wrapped_i32(sum(range(max(n, 0)))) for n in ends]


def test_a_counter_up_to_int32_max_ends_without_overflowing():
    # o[0] = k in every iteration of k in [0, 2^31 - 2]: the last iteration wins. An `i++` past
    # the end, or a counter compared as `i <= end`, would overflow (UB, caught by UBSan).
    text = """
%o = BUFFER i32[1] 0
%n = CONST i32 2147483647
%z = CONST i32 0
%k = RANGE i32 %n 0
%p = INDEX i32 %o %z
%s = STORE void %p %k
%e = END void %s %k
%o1 = AFTER i32[1] %o %e
%out = SINK void %o1
"""
    (compiled,) = compile_many([scheduled(s) for s in [program(text)]])
    assert compiled.run()[0].tolist() == [2**31 - 2]


# A 64 KiB LOCAL fills the stack budget, so the STACK in the loop body lives on the heap: it must
# be allocated once before the loop (one allocation per iteration would leak all but the last).
# o[k] = (k, 0)[0] + k = 2k.
HEAP_IN_LOOP = """
%o = BUFFER i32[3] 0
%big = LOCAL i32[16384] 0
%z = CONST i32 0
%pz = INDEX i32 %big %z
%zero = LOAD i32 %pz
%n = CONST i32 3
%k = RANGE i32 %n 0
%v = STACK i32[2] %k %zero
%first = INDEX i32 %v %z
%twice = ADD i32 %first %k
%p = INDEX i32 %o %k
%s = STORE void %p %twice
%end = END void %s %k
%o1 = AFTER i32[3] %o %end
%out = SINK void %o1
"""


def test_heap_arrays_are_allocated_once_before_every_loop():
    lines = render_c(scheduled(program(HEAP_IN_LOOP))).splitlines()
    allocations = [i for i, line in enumerate(lines) if "uir_alloc(" in line and "=" in line]
    first_loop = next(
        i for i, line in enumerate(lines) if line.strip().startswith("for (int32_t v")
    )
    assert len(allocations) == 1 and allocations[0] < first_loop
    (compiled,) = compile_many([scheduled(s) for s in [program(HEAP_IN_LOOP)]])
    assert compiled.run()[0].tolist() == [0, 2, 4]


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
def test_heap_arrays_in_loops_neither_leak_nor_overrun_under_sanitizers(tmp_path):
    (outputs,) = run_sanitized(
        [scheduled(s) for s in [program(HEAP_IN_LOOP)]], tmp_path, compiler()
    )
    assert np.array_equal(outputs[0], [0, 2, 4])

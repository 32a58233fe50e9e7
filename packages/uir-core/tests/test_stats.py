"""Counting a run on the loop nest: each figure worked out by hand from the program's text."""

from __future__ import annotations

from pathlib import Path

from uir.core.parse import parse
from uir.core.stats import Stats, program_stats

ROOT = Path(__file__).resolve().parents[3]


def test_the_accumulator_loop_counts_each_statement_once_per_iteration():
    sink = parse((ROOT / "suites" / "week3" / "sum_accumulator.uir").read_text()).sink
    # 4 iterations of: load acc, load x[k] (8 bytes), add, store acc (4 bytes); outside the loop
    # the init store, the final load and the store to the output (4 bytes each)
    assert program_stats(sink) == Stats(
        kernels=1, loops=1, bytes_read=4 * 8 + 4, bytes_written=4 * 4 + 4 + 4, ops=4
    )


NESTED = """
%n = CONST i32 {n}
%m = CONST i32 3
%o = BUFFER i32[{size}] 0
%i = RANGE i32 %n 0
%j = RANGE i32 %m 1
%three = CONST i32 3
%row = MUL i32 %i %three
%at = ADD i32 %row %j
%p = INDEX i32 %o %at
%s = STORE void %p %at
%e = END void %s %i %j
%o1 = AFTER i32[{size}] %o %e
%out = SINK void %o1
"""


def test_trip_counts_multiply_down_the_nest():
    # i*3 runs 5 times (hoisted out of j), i*3 + j 15 times; 15 stores of 4 bytes
    stats = program_stats(parse(NESTED.format(n=5, size=15)).sink)
    assert stats == Stats(kernels=1, loops=2, bytes_read=0, bytes_written=60, ops=5 + 15)


def test_a_zero_trip_loop_counts_nothing_inside():
    stats = program_stats(parse(NESTED.format(n=-2, size=1)).sink)
    assert (stats.ops, stats.bytes_written, stats.exact) == (0, 0, True)


def test_a_loaded_loop_end_gives_upper_bounds():
    text = (ROOT / "suites" / "week3" / "end_loaded_from_memory.uir").read_text()
    assert not program_stats(parse(text).sink).exact


def test_shaped_values_count_once_per_element():
    # rangeify lowers the shaped MUL to one loop writing the output: one kernel of 3 multiplies
    text = "%a = CONST i32[3] (1, 2, 3)\n%b = MUL i32[3] %a %a\n%out = SINK void %b\n"
    assert program_stats(parse(text).sink) == Stats(kernels=1, ops=3)

"""schedule(): a valid execution order for memory programs (uir.md section 6.3)."""

from __future__ import annotations

import pytest

from uir.core import Op, VerifyError, parse, verify
from uir.core.schedule import memory_order, schedule

CHAIN = """\
%d  = CONST i32[2] (5, 7)
%b  = BUFFER i32[2] %d 0
%z  = CONST i32 0
%o  = CONST i32 1
%p0 = INDEX i32 %b %z
%v  = LOAD i32 %p0
%p1 = INDEX i32 %b %o
%s1 = STORE void %p1 %v
%b1 = AFTER i32[2] %b %s1
%q0 = INDEX i32 %b1 %z
%s2 = STORE void %q0 %z
%b2 = AFTER i32[2] %b1 %s2
%out = SINK void %b2
"""


def test_schedule_lists_every_statement_once_with_the_sink_last():
    program = parse(CHAIN)
    order = schedule(program.sink)
    assert len(order) == len(set(order)) == len(program.sink.toposort())
    assert order[-1] is program.sink


def test_schedule_runs_sources_first_and_stores_in_chain_order():
    program = parse(CHAIN)
    order = schedule(program.sink)
    at = {u: i for i, u in enumerate(order)}
    for u in order:
        assert all(at[s] < at[u] for s in u.src)
    by_line = {line: u for u, line in program.lines.items()}
    assert at[by_line[6]] < at[by_line[8]] < at[by_line[11]]  # load, store 1, store 2


def test_load_of_a_version_runs_before_the_store_replacing_it():
    # The load of %b (line 6) has no data path to the store on line 7, which replaces %b.
    text = """\
%b  = BUFFER f32[1] 0
%z  = CONST i32 0
%p  = INDEX f32 %b %z
%one = CONST f32 1
%s  = STORE void %p %one
%b1 = AFTER f32[1] %b %s
%v  = LOAD f32 %p
%out = SINK void %b1 %v
"""
    program = parse(text)
    by_line = {line: u for u, line in program.lines.items()}
    order = schedule(program.sink)
    assert order.index(by_line[7]) < order.index(by_line[5])


def test_memory_order_states_and_chain_positions():
    program = parse(CHAIN)
    by_line = {line: u for u, line in program.lines.items()}
    mo = memory_order(program.sink)
    buffer, s1, s2 = by_line[2], by_line[8], by_line[11]
    assert mo.state[buffer] is buffer
    assert mo.state[by_line[9]] is s1 and mo.state[by_line[12]] is s2
    assert mo.replaced_by == {buffer: s1, s1: s2}
    assert mo.position == {buffer: 0, s1: 1, s2: 2}
    assert mo.loads_before == {s1: [by_line[6]]}


def test_schedule_rejects_a_cycle_without_lines():
    text = """\
%b  = BUFFER i32[2] 0
%z  = CONST i32 0
%p  = INDEX i32 %b %z
%s  = STORE void %p %z
%b1 = AFTER i32[2] %b %s
%q  = INDEX i32 %b1 %z
%i  = LOAD i32 %q
%r  = INDEX i32 %b %i
%v  = LOAD i32 %r
%out = SINK void %v
"""
    with pytest.raises(VerifyError, match="cycle"):
        schedule(parse(text).sink)


def test_a_long_chain_verifies_and_schedules_without_recursion():
    # Also a guard against quadratic walks down the chain of versions (minutes instead of seconds).
    lines = ["%b0 = BUFFER i32[1] 0", "%z = CONST i32 0"]
    n = 10000
    for k in range(n):
        lines += [
            f"%p{k} = INDEX i32 %b{k} %z",
            f"%v{k} = LOAD i32 %p{k}",
            f"%c{k} = CONST i32 {k}",
            f"%w{k} = ADD i32 %v{k} %c{k}",
            f"%s{k} = STORE void %p{k} %w{k}",
            f"%b{k + 1} = AFTER i32[1] %b{k} %s{k}",
        ]
    lines.append(f"%out = SINK void %b{n}")
    program = parse("\n".join(lines))
    verify(program)
    order = schedule(program.sink)
    assert order[-1].op is Op.SINK and len(order) == len(program.sink.toposort())

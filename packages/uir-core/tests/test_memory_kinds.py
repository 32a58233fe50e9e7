"""memory.py: what a UOp denotes, and which buffer, version and offset a reference names."""

from __future__ import annotations

from uir.core import parse
from uir.core.memory import Kind, buffer_of, kind, version_of, window_begin

TEXT = """\
%d = CONST i32[8] (0, 1, 2, 3, 4, 5, 6, 7)
%b = BUFFER i32[8] %d 0
%z = CONST i32 0
%p = INDEX i32 %b %z
%s = STORE void %p %z
%b1 = AFTER i32[8] %b %s
%w1 = SHRINK i32[4] %b1 ((4, 8))
%w2 = SHRINK i32[2] %w1 ((1, 3))
%q = INDEX i32 %w2 %z
%v = LOAD i32 %q
%e = INDEX i32 %d %z
%l = LOCAL f32[2] 3
%out = SINK void %v %e %w2 %l
"""


def _by_line() -> dict[int, object]:
    program = parse(TEXT)
    return {line: uop for uop, line in program.lines.items()}


def test_kinds():
    u = _by_line()
    assert [kind(u[n]) for n in (1, 2, 4, 5, 6, 8, 9, 10, 11, 12)] == [
        Kind.VALUE,  # CONST
        Kind.MEMORY,  # BUFFER
        Kind.PLACE,  # INDEX of memory
        Kind.EFFECT,  # STORE
        Kind.MEMORY,  # AFTER
        Kind.MEMORY,  # SHRINK of a SHRINK of memory
        Kind.PLACE,  # INDEX of a window
        Kind.VALUE,  # LOAD
        Kind.VALUE,  # INDEX of a vector value
        Kind.MEMORY,  # LOCAL
    ]


def test_versions_and_buffers():
    u = _by_line()
    assert version_of(u[9]) is u[6] and version_of(u[4]) is u[2] and version_of(u[5]) is u[2]
    assert buffer_of(u[9]) is u[2] and buffer_of(u[6]) is u[2] and buffer_of(u[12]) is u[12]


def test_window_begins_add_up():
    u = _by_line()
    assert (window_begin(u[2]), window_begin(u[7]), window_begin(u[8])) == (0, 4, 5)

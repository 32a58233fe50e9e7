"""The interpreter's memory semantics (uir.md section 6), against hand-worked values."""

from __future__ import annotations

import numpy as np

from uir.core import parse, verify
from uir.core.interpret import evaluate


def run(text: str, inputs: dict[int, np.ndarray] | None = None) -> list[list]:
    program = parse(text)
    verify(program)
    return [np.ravel(v).tolist() for v in evaluate(program.sink, inputs)]


SPEC_EXAMPLE = """\
%d  = CONST i32[3] (10, 20, 30)
%b  = BUFFER i32[3] %d 0
%i1 = CONST i32 1
%p  = INDEX i32 %b %i1
%v  = LOAD i32 %p
%w  = ADD i32 %v %v
%s  = STORE void %p %w
%b1 = AFTER i32[3] %b %s
%out = SINK void %b1
"""


def test_spec_example_doubles_element_one():
    assert run(SPEC_EXAMPLE) == [[10, 40, 30]]


def test_inputs_replace_initial_contents_by_slot():
    assert run(SPEC_EXAMPLE, {0: np.array([1, 2, 3], dtype=np.int32)}) == [[1, 4, 3]]


def test_load_of_old_version_reads_before_the_store():
    text = """\
%d = CONST i32[1] (1)
%b = BUFFER i32[1] %d 0
%z = CONST i32 0
%two = CONST i32 2
%p = INDEX i32 %b %z
%s = STORE void %p %two
%b1 = AFTER i32[1] %b %s
%v = LOAD i32 %p
%out = SINK void %v %b1
"""
    assert run(text) == [[1], [2]]


def test_gated_off_load_yields_positive_zero_and_store_writes_nothing():
    text = """\
%d = CONST f32[2] (-0.0, 5)
%b = BUFFER f32[2] %d 0
%z = CONST i32 0
%one = CONST i32 1
%f = CONST bool false
%p = INDEX f32 %b %z %f
%v = LOAD f32 %p
%q = INDEX f32 %b %one %f
%x = CONST f32 9
%s = STORE void %q %x
%b1 = AFTER f32[2] %b %s
%out = SINK void %v %b1
"""
    (v,), contents = run(text)
    assert v == 0.0 and np.signbit(v) == False  # noqa: E712 (a numpy bool)
    assert contents[1] == 5.0 and np.signbit(contents[0])


def test_nested_windows_offset_once():
    text = """\
%b = BUFFER i32[8] 0
%w1 = SHRINK i32[4] %b ((4, 8))
%w2 = SHRINK i32[2] %w1 ((1, 3))
%one = CONST i32 1
%m = CONST i32 -1
%p = INDEX i32 %w2 %one
%s = STORE void %p %m
%b1 = AFTER i32[8] %b %s
%w3 = SHRINK i32[2] %b1 ((5, 7))
%out = SINK void %b1 %w3
"""
    assert run(text) == [[0, 0, 0, 0, 0, 0, -1, 0], [0, -1]]


def test_local_scratch_starts_zeroed_and_is_not_an_input():
    text = """\
%l = LOCAL i32[2] 0
%o = BUFFER i32[1] 0
%z = CONST i32 0
%one = CONST i32 1
%p = INDEX i32 %l %one
%v = LOAD i32 %p
%q = INDEX i32 %o %z
%s = STORE void %q %v
%o1 = AFTER i32[1] %o %s
%out = SINK void %o1
"""
    assert run(text, {0: np.array([7], dtype=np.int32)}) == [[0]]

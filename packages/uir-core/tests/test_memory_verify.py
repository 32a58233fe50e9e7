"""The verifier's memory rules (uir.md section 6): every rejection names its line."""

from __future__ import annotations

import pytest

from uir.core import VerifyError, parse, verify

# name -> (statements, the line blamed, part of the message).
CASES = {
    "two_stores_one_version": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%one = CONST i32 1",
            "%p0 = INDEX i32 %b %z",
            "%p1 = INDEX i32 %b %one",
            "%s1 = STORE void %p0 %one",
            "%s2 = STORE void %p1 %one",
            "%b1 = AFTER i32[2] %b %s1 %s2",
            "%out = SINK void %b1",
        ],
        7,
        "same version of the buffer as the STORE on line 6",
    ),
    "load_cycle": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%one = CONST i32 1",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %one",
            "%b1 = AFTER i32[2] %b %s",
            "%q = INDEX i32 %b1 %z",
            "%i = LOAD i32 %q",
            "%m = AND i32 %i %one",
            "%r = INDEX i32 %b %m",
            "%v = LOAD i32 %r",
            "%out = SINK void %v %b1",
        ],
        11,
        "that the STORE on line 5 replaces, but it can only run after that store",
    ),
    "sink_two_versions": (
        [
            "%b = BUFFER i32[4] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %z",
            "%b1 = AFTER i32[4] %b %s",
            "%w = SHRINK i32[2] %b ((0, 2))",
            "%out = SINK void %b1 %w",
        ],
        7,
        "the SINK names two versions of buffer 0",
    ),
    "sink_non_final_version": (
        [
            "%b = BUFFER i32[1] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %z",
            "%b1 = AFTER i32[1] %b %s",
            "%q = INDEX i32 %b1 %z",
            "%v = LOAD i32 %q",
            "%out = SINK void %b %v",
        ],
        8,
        "that the STORE on line 4 replaces: it must name the last version",
    ),
    "sink_local": (["%l = LOCAL i32[2] 0", "%out = SINK void %l"], 2, "a LOCAL is scratch"),
    "sink_place": (
        ["%b = BUFFER i32[2] 0", "%z = CONST i32 0", "%p = INDEX i32 %b %z", "%out = SINK void %p"],
        4,
        "an INDEX of memory is a place",
    ),
    "sink_store": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %z",
            "%out = SINK void %s",
        ],
        5,
        "a STORE is an effect",
    ),
    "duplicate_slot": (
        ["%a = BUFFER i32[2] 0", "%b = BUFFER f32[2] 0", "%out = SINK void %a %b"],
        2,
        "slot 0 is already the BUFFER on line 1",
    ),
    "buffer_rank2": (["%b = BUFFER i32[2,2] 0", "%out = SINK void %b"], 1, "flat type"),
    "buffer_bad_init": (
        ["%d = CONST i32[3] (1, 2, 3)", "%b = BUFFER i32[2] %d 0", "%out = SINK void %b"],
        2,
        "must be a CONST i32[2]",
    ),
    "buffer_bad_slot": (["%b = BUFFER i32[2] -1", "%out = SINK void %b"], 1, "slot number"),
    "local_bad_id": (
        [
            "%l = LOCAL i32[2] true",
            "%z = CONST i32 0",
            "%p = INDEX i32 %l %z",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        1,
        "LOCAL takes an id",
    ),
    "shrink_outside": (
        ["%b = BUFFER i32[4] 0", "%w = SHRINK i32[3] %b ((2, 5))", "%out = SINK void %w"],
        2,
        "the window [2, 5) does not lie inside i32[4]",
    ),
    "shrink_bad_type": (
        ["%b = BUFFER i32[4] 0", "%w = SHRINK i32[2] %b ((0, 3))", "%out = SINK void %w"],
        2,
        "has type i32[3], not i32[2]",
    ),
    "shrink_bad_arg": (
        ["%b = BUFFER i32[4] 0", "%w = SHRINK i32[2] %b (0, 2)", "%out = SINK void %w"],
        2,
        "SHRINK takes one window ((begin, end))",
    ),
    # A SHRINK of a value is the week-5 movement op: a value, not a window to LOAD from.
    "shrink_of_value_is_no_memory": (
        [
            "%d = CONST i32[2] (1, 2)",
            "%w = SHRINK i32[1] %d ((0, 1))",
            "%z = CONST i32 0",
            "%p = INDEX i32 %w %z",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        5,
        "LOAD needs an INDEX of memory, not INDEX (a value)",
    ),
    "gate_not_bool": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z %z",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        3,
        "the gate must be bool, got i32",
    ),
    "out_of_range": (
        [
            "%b = BUFFER i32[2] 0",
            "%two = CONST i32 2",
            "%p = INDEX i32 %b %two",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        3,
        "it lies in [2, 2], the size is 2",
    ),
    "gated_unprovable": (
        [
            "%xd = CONST i32[1] (1)",
            "%x = BUFFER i32[1] %xd 0",
            "%b = BUFFER i32[4] 1",
            "%z = CONST i32 0",
            "%four = CONST i32 4",
            "%px = INDEX i32 %x %z",
            "%i = LOAD i32 %px",
            "%g = CMPLT bool %i %four",
            "%p = INDEX i32 %b %i %g",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        9,
        "where its gate holds: it lies in [-2147483648, 3], the size is 4",
    ),
    "after_no_deps": (
        ["%b = BUFFER i32[2] 0", "%b1 = AFTER i32[2] %b", "%out = SINK void %b1"],
        2,
        "at least one effect",
    ),
    "after_of_shrink": (
        [
            "%b = BUFFER i32[4] 0",
            "%w = SHRINK i32[2] %b ((0, 2))",
            "%z = CONST i32 0",
            "%p = INDEX i32 %w %z",
            "%s = STORE void %p %z",
            "%w1 = AFTER i32[2] %w %s",
            "%out = SINK void %w1",
        ],
        6,
        "not a SHRINK window",
    ),
    "after_dep_other_buffer": (
        [
            "%a = BUFFER i32[2] 0",
            "%c = BUFFER i32[2] 1",
            "%z = CONST i32 0",
            "%p = INDEX i32 %c %z",
            "%s = STORE void %p %z",
            "%a1 = AFTER i32[2] %a %s",
            "%out = SINK void %a1",
        ],
        6,
        "the STORE on line 5 writes another buffer",
    ),
    "after_dep_value": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%b1 = AFTER i32[2] %b %z",
            "%out = SINK void %b1",
        ],
        3,
        "AFTER waits for STOREs, ENDs or RANGEs, not CONST",
    ),
    "store_type": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%x = CONST f32 1",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %x",
            "%b1 = AFTER i32[2] %b %s",
            "%out = SINK void %b1",
        ],
        5,
        "STORE of f32 to an element of type i32",
    ),
    "store_not_void": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%s = STORE i32 %p %z",
            "%b1 = AFTER i32[2] %b %s",
            "%out = SINK void %b1",
        ],
        4,
        "STORE has type void",
    ),
    "load_type": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%v = LOAD f32 %p",
            "%out = SINK void %v",
        ],
        4,
        "has that type, not f32",
    ),
    "whole_buffer_load_type": (
        ["%b = BUFFER i32[2] 0", "%v = LOAD i32[3] %b", "%out = SINK void %v"],
        2,
        "a whole-buffer LOAD of BUFFER i32[2] has type i32[2], not i32[3]",
    ),
    "load_of_value_element": (
        [
            "%d = CONST i32[2] (1, 2)",
            "%z = CONST i32 0",
            "%e = INDEX i32 %d %z",
            "%v = LOAD i32 %e",
            "%out = SINK void %v",
        ],
        4,
        "LOAD needs an INDEX of memory, not INDEX (a value)",
    ),
    "memory_in_alu": (
        ["%b = BUFFER i32[2] 0", "%c = ADD i32[2] %b %b", "%out = SINK void %c"],
        2,
        "ADD takes values, and BUFFER is a memory reference",
    ),
    "place_in_alu": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%c = ADD i32 %p %z",
            "%out = SINK void %c",
        ],
        4,
        "ADD takes values, and INDEX is an INDEX of memory",
    ),
    "memory_in_call_argument": (
        [
            "%x = PARAM i32 0",
            "%b = BUFFER i32[2] 0",
            "%c = CALL i32 %x %b",
            "%out = SINK void %c",
        ],
        3,
        "CALL takes values, and BUFFER is a memory reference",
    ),
    "index_dtype": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX f32 %b %z",
            "%v = LOAD f32 %p",
            "%out = SINK void %v",
        ],
        3,
        "names an element of type i32, not f32",
    ),
    "after_type": (
        [
            "%b = BUFFER i32[2] 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %b %z",
            "%s = STORE void %p %z",
            "%b1 = AFTER i32[3] %b %s",
            "%out = SINK void %b1",
        ],
        5,
        "has that type, not i32[3]",
    ),
    "whole_buffer_store_type": (
        [
            "%b = BUFFER i32[2] 0",
            "%d = CONST f32[2] (1, 2)",
            "%s = STORE void %b %d",
            "%b1 = AFTER i32[2] %b %s",
            "%out = SINK void %b1",
        ],
        3,
        "a whole-buffer STORE to BUFFER i32[2] writes a value of type i32[2], not f32[2]",
    ),
    "index_not_i32": (
        [
            "%b = BUFFER i32[2] 0",
            "%t = CONST bool true",
            "%p = INDEX i32 %b %t",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        3,
        "the index must be i32, got bool",
    ),
    "local_with_operand": (
        [
            "%d = CONST i32[2] (1, 2)",
            "%l = LOCAL i32[2] %d 0",
            "%z = CONST i32 0",
            "%p = INDEX i32 %l %z",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        2,
        "LOCAL takes 0 operand(s), got 1",
    ),
    "stores_through_disjoint_windows": (
        [
            "%b = BUFFER i32[4] 0",
            "%wa = SHRINK i32[2] %b ((0, 2))",
            "%wb = SHRINK i32[2] %b ((2, 4))",
            "%z = CONST i32 0",
            "%pa = INDEX i32 %wa %z",
            "%pb = INDEX i32 %wb %z",
            "%s1 = STORE void %pa %z",
            "%s2 = STORE void %pb %z",
            "%b1 = AFTER i32[4] %b %s1 %s2",
            "%out = SINK void %b1",
        ],
        8,
        "same version of the buffer as the STORE on line 7",
    ),
    "cycle_across_buffers": (
        [
            "%a = BUFFER i32[2] 0",
            "%c = BUFFER i32[2] 1",
            "%z = CONST i32 0",
            "%one = CONST i32 1",
            "%pa = INDEX i32 %a %z",
            "%sa = STORE void %pa %one",
            "%a1 = AFTER i32[2] %a %sa",
            "%qa = INDEX i32 %a1 %one",
            "%x = LOAD i32 %qa",
            "%pc = INDEX i32 %c %z",
            "%sc = STORE void %pc %x",
            "%c1 = AFTER i32[2] %c %sc",
            "%qc = INDEX i32 %c1 %z",
            "%y = LOAD i32 %qc",
            "%m = AND i32 %y %one",
            "%ra = INDEX i32 %a %m",
            "%v = LOAD i32 %ra",
            "%out = SINK void %v %a1 %c1",
        ],
        17,
        "that the STORE on line 6 replaces",
    ),
    "gated_index_checked_in_call_argument": (
        [
            "%x = PARAM i32 0",
            "%four = CONST i32 4",
            "%body = ADD i32 %x %four",
            "%one = CONST i32 1",
            "%j = CALL i32 %body %one",
            "%b = BUFFER i32[4] 0",
            "%t = CONST bool true",
            "%p = INDEX i32 %b %j %t",
            "%v = LOAD i32 %p",
            "%out = SINK void %v",
        ],
        8,
        "where its gate holds: it lies in [5, 5], the size is 4",
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_memory_rejection_names_its_line(name: str) -> None:
    lines, line, message = CASES[name]
    program = parse("\n".join(lines) + "\n")
    with pytest.raises(VerifyError) as caught:
        verify(program)
    assert caught.value.line == line
    assert message in caught.value.message


ACCEPTED = {
    "spec_example": [
        "%d  = CONST i32[3] (10, 20, 30)",
        "%b  = BUFFER i32[3] %d 0",
        "%i1 = CONST i32 1",
        "%p  = INDEX i32 %b %i1",
        "%v  = LOAD i32 %p",
        "%w  = ADD i32 %v %v",
        "%s  = STORE void %p %w",
        "%b1 = AFTER i32[3] %b %s",
        "%out = SINK void %b1",
    ],
    "dead_buffer_repeats_slot": [
        "%b = BUFFER i32[1] 0",
        "%dead = BUFFER f32[1] 0",
        "%out = SINK void %b",
    ],
    "gate_never_holds": [
        "%b = BUFFER i32[2] 0",
        "%nine = CONST i32 9",
        "%g = CMPLT bool %nine %nine",
        "%p = INDEX i32 %b %nine %g",
        "%v = LOAD i32 %p",
        "%out = SINK void %v",
    ],
    "window_and_whole_of_one_version": [
        "%b = BUFFER i32[4] 0",
        "%w = SHRINK i32[2] %b ((2, 4))",
        "%out = SINK void %b %w %b",
    ],
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_memory_program_is_accepted(name: str) -> None:
    verify(parse("\n".join(ACCEPTED[name]) + "\n"))

"""The interpreter on week-4 programs (uir.md section 8): shaped values run as whole arrays.

Expected outputs are worked out by hand (in the comments) or with numpy and Python loops.
"""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from uir.core.dtypes import VOID, Type, f32
from uir.core.elements import Elements
from uir.core.interpret import evaluate
from uir.core.ops import Op
from uir.core.output import format_value
from uir.core.parse import parse
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.core.verify import verify


def run(*lines: str) -> list[str]:
    program = parse("\n".join(lines) + "\n")
    verify(program)
    outputs = evaluate(program.sink)
    return [format_value(v, s.dtype) for v, s in zip(outputs, program.sink.src, strict=True)]


def test_sum_of_a_whole_buffer() -> None:
    assert run(
        "%d = CONST f32[4] (1.5, 2, 3, 4)",
        "%b = BUFFER f32[4] %d 0",
        "%x = LOAD f32[4] %b",
        "%s = REDUCE f32 %x (ADD, (0))",
        "%out = SINK void %s",
    ) == ["10.5"]


def test_elementwise_multiply_add_stored_to_an_output() -> None:
    # (1*4+7, 2*5+8, 3*6+9) = (11, 18, 27); x is read again afterwards, unchanged.
    assert run(
        "%ad = CONST f32[3] (1, 2, 3)",
        "%a = BUFFER f32[3] %ad 0",
        "%bd = CONST f32[3] (4, 5, 6)",
        "%b = BUFFER f32[3] %bd 1",
        "%cd = CONST f32[3] (7, 8, 9)",
        "%c = BUFFER f32[3] %cd 2",
        "%o = BUFFER f32[3] 3",
        "%x = LOAD f32[3] %a",
        "%y = LOAD f32[3] %b",
        "%z = LOAD f32[3] %c",
        "%m = MUL f32[3] %x %y",
        "%r = ADD f32[3] %m %z",
        "%s = STORE void %o %r",
        "%o1 = AFTER f32[3] %o %s",
        "%out = SINK void %o1 %a",
    ) == ["11 18 27", "1 2 3"]


def test_expand_follows_numpys_rule_and_prints_row_major() -> None:
    # column (1, 2) times row (10, 20, 30): [[10, 20, 30], [20, 40, 60]]
    assert run(
        "%col = CONST i32[2,1] (1, 2)",
        "%row = CONST i32[3] (10, 20, 30)",
        "%c = EXPAND i32[2,3] %col",
        "%r = EXPAND i32[2,3] %row",
        "%p = MUL i32[2,3] %c %r",
        "%s = REDUCE i32[3] %p (ADD, (0))",
        "%t = REDUCE i32[2] %p (MAX, (1))",
        "%seven = CONST i32 7",
        "%e = EXPAND i32[3] %seven",
        "%out = SINK void %p %s %t %e",
    ) == ["10 20 30 20 40 60", "30 60 90", "30 60", "7 7 7"]


def test_reduce_of_nan_and_signed_zeros() -> None:
    assert run(
        "%z = CONST f32[3] (-0.0, -0.0, -0.0)",
        "%zs = REDUCE f32 %z (ADD, (0))",  # -0: the fold starts at the first element, not +0
        "%mixed = CONST f32[2] (-0.0, 0.0)",
        "%mx = REDUCE f32 %mixed (MAX, (0))",  # +0: -0 < +0
        "%mn = REDUCE f32 %mixed (MIN, (0))",  # -0
        "%n = CONST f32[3] (1, nan, 5)",
        "%nx = REDUCE f32 %n (MAX, (0))",  # NaN propagates
        "%ns = REDUCE f32 %n (ADD, (0))",
        "%out = SINK void %zs %mx %mn %nx %ns",
    ) == ["-0", "0", "-0", "nan", "nan"]


def test_integer_reduce_wraps() -> None:
    # 3 * 2^30 = 3221225472 wraps to -1073741824; 2^30 * 2^30 * 2^30 wraps to 0.
    assert run(
        "%x = CONST i32 1073741824",
        "%e = EXPAND i32[3] %x",
        "%s = REDUCE i32 %e (ADD, (0))",
        "%p = REDUCE i32 %e (MUL, (0))",
        "%out = SINK void %s %p",
    ) == ["-1073741824", "0"]


def test_windows_are_loaded_and_stored_whole() -> None:
    # The window [1, 3) of (1, 2, 3, 4) is (2, 3); doubled and stored back: (1, 4, 6, 4).
    assert run(
        "%d = CONST i32[4] (1, 2, 3, 4)",
        "%b = BUFFER i32[4] %d 0",
        "%w = SHRINK i32[2] %b ((1, 3))",
        "%x = LOAD i32[2] %w",
        "%y = ADD i32[2] %x %x",
        "%s = STORE void %w %y",
        "%b1 = AFTER i32[4] %b %s",
        "%out = SINK void %b1 %x",
    ) == ["1 4 6 4", "2 3"]


def test_whole_and_element_accesses_see_each_others_versions() -> None:
    # v0 = (0, 0, 0); the element store makes (0, 5, 0); the whole LOAD of v1 sees it, the whole
    # LOAD of v0 runs before that store and sees zeros; the whole store of (1, 2, 3) makes v2,
    # whose element 1 the last LOAD reads.
    assert run(
        "%b = BUFFER i32[3] 0",
        "%one = CONST i32 1",
        "%five = CONST i32 5",
        "%old = LOAD i32[3] %b",
        "%p = INDEX i32 %b %one",
        "%s1 = STORE void %p %five",
        "%b1 = AFTER i32[3] %b %s1",
        "%mid = LOAD i32[3] %b1",
        "%v = CONST i32[3] (1, 2, 3)",
        "%s2 = STORE void %b1 %v",
        "%b2 = AFTER i32[3] %b %s2",
        "%q = INDEX i32 %b2 %one",
        "%e = LOAD i32 %q",
        "%out = SINK void %old %mid %e %b2",
    ) == ["0 0 0", "0 5 0", "2", "1 2 3"]


def test_call_body_takes_and_returns_shaped_values() -> None:
    # f(v) = v*v + v; f(1, 2, 3) = (2, 6, 12), its sum 20; f(-1, 0, 1) = (0, 0, 2)
    assert run(
        "%p = PARAM i32[3] 0",
        "%sq = MUL i32[3] %p %p",
        "%f = ADD i32[3] %sq %p",
        "%a = CONST i32[3] (1, 2, 3)",
        "%b = CONST i32[3] (-1, 0, 1)",
        "%fa = CALL i32[3] %f %a",
        "%fb = CALL i32[3] %f %b",
        "%sum = REDUCE i32 %fa (ADD, (0))",
        "%out = SINK void %fa %fb %sum",
    ) == ["2 6 12", "0 0 2", "20"]


def test_stage_is_the_identity() -> None:
    assert run(
        "%x = CONST f32[2] (0.5, -2)",
        "%s = STAGE f32[2] %x",
        "%t = ADD f32[2] %s %s",
        "%c = CONST f32 3",
        "%u = STAGE f32 %c",
        "%out = SINK void %t %u",
    ) == ["1 -4", "3"]


def test_ten_thousand_tenths_fold_in_order() -> None:
    # The reference fold: f32 steps from the first element, by a Python loop.
    tenth = np.float32(0.1)
    acc = tenth
    for _ in range(9999):
        acc = np.float32(acc + tenth)
    assert run(
        "%x = CONST f32 0.1",
        "%e = EXPAND f32[10000] %x",
        "%s = REDUCE f32 %e (ADD, (0))",
        "%out = SINK void %s",
    ) == [f"{float(acc):.9g}"]


def test_sixteen_million_element_sum_through_the_interpreter() -> None:
    # Built as UOps: the text of a 16.8M-element CONST would be 50 MB. 2^24 + 10 ones fold to
    # 2^24 (see test_reduce), and the sum of 2^24 + 10 copies of -0.0 is -0.
    n = 2**24 + 10
    ones = UOp(Op.CONST, Type(f32, (n,)), (), Elements.fill(1.0, n))
    zeros = UOp(Op.CONST, Type(f32, (n,)), (), Elements.fill(-0.0, n))
    sums = [UOp(Op.REDUCE, Type(f32), (x,), (Op.ADD, (0,))) for x in (ones, zeros)]
    sink = UOp(Op.SINK, VOID, tuple(sums))
    got = evaluate(sink)
    assert format_value(got[0], f32) == "16777216"
    assert format_value(got[1], f32) == "-0"


@settings(deadline=None, max_examples=50)
@given(st.integers(1, 50), st.integers(0, 2**32 - 1))
def test_multiply_add_on_random_inputs_matches_numpy(n: int, seed: int) -> None:
    # a*b+c rounds twice, once per op, as numpy's float32 arithmetic does.
    rng = np.random.default_rng(seed)
    a, b, c = (rng.standard_normal(n).astype(np.float32) for _ in range(3))
    program = parse(
        "\n".join(
            [
                f"%a = BUFFER f32[{n}] 0",
                f"%b = BUFFER f32[{n}] 1",
                f"%c = BUFFER f32[{n}] 2",
                f"%o = BUFFER f32[{n}] 3",
                f"%x = LOAD f32[{n}] %a",
                f"%y = LOAD f32[{n}] %b",
                f"%z = LOAD f32[{n}] %c",
                f"%m = MUL f32[{n}] %x %y",
                f"%r = ADD f32[{n}] %m %z",
                "%s = STORE void %o %r",
                f"%o1 = AFTER f32[{n}] %o %s",
                "%out = SINK void %o1",
            ]
        )
    )
    verify(program)
    (got,) = evaluate(program.sink, {0: a, 1: b, 2: c})
    assert np.array_equal(got, a * b + c)


def test_reduce_argument_prints_canonically_and_parses_back() -> None:
    text = "\n".join(
        [
            "%t = CONST i32[2,3,2] (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)",
            "%r = REDUCE i32[3] %t ( MIN,(0 ,2,) )",
            "%s = REDUCE i32 %r (ADD, (0))",
            "%e = EXPAND i32[2,3] %r",
            "%g = STAGE i32[2,3] %e",
            "%out = SINK void %s %g",
        ]
    )
    sink = parse(text).sink
    printed = print_program(sink)
    assert "REDUCE i32[3] %0 (MIN, (0, 2))" in printed
    assert "REDUCE i32 %1 (ADD, (0))" in printed
    assert parse(printed).sink is sink
    assert print_program(parse(printed).sink) == printed


def test_a_whole_load_is_a_copy_taken_before_the_loop_that_overwrites_it() -> None:
    # The loop stores o[k] = all[1 - k] + 1 over o = (7, 8): (9, 8). The LOAD read version 0 before
    # the loop replaced it, so every iteration sees (7, 8), and so does the SINK.
    assert run(
        "%d = CONST i32[2] (7, 8)",
        "%o = BUFFER i32[2] %d 0",
        "%all = LOAD i32[2] %o",
        "%n = CONST i32 2",
        "%one = CONST i32 1",
        "%k = RANGE i32 %n 0",
        "%j = SUB i32 %one %k",
        "%x = INDEX i32 %all %j",
        "%y = ADD i32 %x %one",
        "%p = INDEX i32 %o %k",
        "%s = STORE void %p %y",
        "%e = END void %s %k",
        "%o1 = AFTER i32[2] %o %e",
        "%out = SINK void %o1 %all",
    ) == ["9 8", "7 8"]

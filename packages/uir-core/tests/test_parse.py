import math

import pytest

from uir.core.dtypes import F32, I32, Type, f32, i32
from uir.core.errors import ParseError
from uir.core.ops import Op
from uir.core.parse import FloatLiteral, parse, parse_argument, parse_prefix
from uir.core.uop import UOp


def program(*lines: str):
    return parse("\n".join(lines) + "\n", "t.uir")


def parse_error(*lines: str) -> ParseError:
    with pytest.raises(ParseError) as info:
        program(*lines)
    return info.value


def test_add_2_3_builds_the_expected_graph():
    p = program("%a = CONST i32 2", "%b = CONST i32 3", "%c = ADD i32 %a %b", "%out = SINK void %c")
    (add,) = p.sink.src
    assert add.op is Op.ADD and add.type == I32
    assert [s.arg for s in add.src] == [2, 3]
    assert p.lines[add] == 3


def test_comments_blank_lines_and_trailing_comments_are_ignored():
    p = program("# header", "", "%a = CONST i32 7   # seven", "   ", "%out = SINK void %a # end")
    assert p.sink.src[0].arg == 7


@pytest.mark.parametrize(
    ("text", "value"),
    [("010", 10), ("0x10", 16), ("-0x10", -16), ("0xfF", 255), ("-7", -7), ("0", 0)],
)
def test_int_literals_are_values(text, value):
    assert program(f"%a = CONST i32 {text}", "%o = SINK void %a").sink.src[0].arg == value


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1.", 1.0),
        (".5", 0.5),
        ("1e3", 1000.0),
        ("1E-3", float.fromhex("0x1.0624dep-10")),
        ("2.5e+1", 25.0),
        ("0x1.8p1", 3.0),
        ("0x1p-2", 0.25),
        ("-0x1.p0", -1.0),
        ("inf", math.inf),
        ("-inf", -math.inf),
        ("7", 7.0),
        ("-2.5", -2.5),
        ("-1e-1", float.fromhex("-0x1.99999ap-4")),
    ],
)
def test_float_literals_round_to_the_const_type(text, value):
    assert program(f"%a = CONST f32 {text}", "%o = SINK void %a").sink.src[0].arg == value


def test_int_literal_minus_zero_is_positive_zero_but_float_minus_zero_is_negative():
    plus = program("%a = CONST f32 -0", "%o = SINK void %a").sink.src[0].arg
    minus = program("%a = CONST f32 -0.0", "%o = SINK void %a").sink.src[0].arg
    assert math.copysign(1, plus) == 1 and math.copysign(1, minus) == -1


def test_nan_literal():
    assert math.isnan(program("%a = CONST f32 nan", "%o = SINK void %a").sink.src[0].arg)


def test_identical_statements_and_equal_values_denote_one_uop():
    p = program(
        "%a = CONST i32 16", "%b = CONST i32 0x10", "%c = CONST f32 1.5", "%d = CONST f32 1.50",
        "%o = SINK void %a %b %c %d",
    )  # fmt: skip
    a, b, c, d = p.sink.src
    assert a is b and c is d


def test_zero_and_minus_zero_are_different_uops():
    a, b = program("%a = CONST f32 0.0", "%b = CONST f32 -0.0", "%o = SINK void %a %b").sink.src
    assert a is not b


def test_tuples_and_words():
    assert parse_argument("(5)", 1) == (5,)
    assert parse_argument("((1, 3))", 1) == ((1, 3),)
    assert parse_argument("(1, 2,)", 1) == (1, 2)
    assert parse_argument("()", 1) == ()
    assert parse_argument("(ADD, (0, 1))", 1) == (Op.ADD, (0, 1))
    assert parse_argument("true", 1) is True
    assert parse_argument("-1.5", 1) == FloatLiteral("15", -1, negative=True)


def test_shaped_types_and_float_tuples():
    p = program("%a = CONST f32[2,2] (1, 0.5, -0.0, inf)", "%o = SINK void %a")
    const = p.sink.src[0]
    assert const.type == Type(f32, (2, 2))
    assert const.arg[:2] == (1.0, 0.5) and math.copysign(1, const.arg[2]) == -1


def test_dead_statements_parse_but_stay_out_of_the_graph():
    p = program("%dead = CONST i32 99999999999", "%a = CONST i32 1", "%o = SINK void %a")
    assert len(p.sink.toposort()) == 2


@pytest.mark.parametrize(
    ("lines", "line", "words"),
    [
        (["%a = FOO i32 1", "%o = SINK void %a"], 1, "unknown op 'FOO'"),
        (["%a = add i32 1", "%o = SINK void %a"], 1, "unknown op 'add'"),
        (["%a = CONST i33 1", "%o = SINK void %a"], 1, "bad type 'i33'"),
        (["%a = CONST i32[0] (1)", "%o = SINK void %a"], 1, "at least 1"),
        (["%a = CONST f32[2, 3] 1", "%o = SINK void %a"], 1, "bad type"),
        (["%a = CONST i32 1.2.3", "%o = SINK void %a"], 1, "bad literal '1.2.3'"),
        (["%a = CONST f32 0X1p1", "%o = SINK void %a"], 1, "bad literal"),
        (["%a = CONST f32 0x1P1", "%o = SINK void %a"], 1, "bad literal"),
        # digits are 0-9 only: Arabic-Indic three and one-point-five are no numbers
        (["%a = CONST i32 \u0663", "%o = SINK void %a"], 1, "bad literal"),
        (["%a = CONST f32 \u0661.\u0665", "%o = SINK void %a"], 1, "bad literal"),
        (["%a = CONST f32 0x1p\u0663", "%o = SINK void %a"], 1, "bad literal"),
        (["%a = CONST i32[\u0663] (1, 2, 3)", "%o = SINK void %a"], 1, "bad type"),
        (["%a = CONST i32 1 2", "%o = SINK void %a"], 1, "unexpected '2'"),
        (["%a = CONST i32 1 %a", "%o = SINK void %a"], 1, "unexpected '%a'"),
        (["%a CONST i32 1", "%o = SINK void %a"], 1, "expected '='"),
        (["a = CONST i32 1", "%o = SINK void %a"], 1, "expected a name"),
        (["%a = CONST i32 1", "%o = SINK void %b"], 2, "undefined name %b"),
        (["%o = SINK void %a", "%a = CONST i32 1"], 1, "SINK must be the last"),
        (["%b = NEG i32 %a", "%a = CONST i32 1", "%o = SINK void %b"], 1, "before its definition"),
        (["%a = CONST i32 1", "%a = CONST i32 1", "%o = SINK void %a"], 2, "already defined"),
        (["%a = CONST i32 1"], 1, "no SINK"),
        (["%a = CONST i32 1", "%o = SINK void %a", "%p = SINK void %a"], 3, "second SINK"),
        (["%a = CONST i32 (1", "%o = SINK void %a"], 1, "unclosed"),
        (["%a = CONST i32 1)", "%o = SINK void %a"], 1, "unexpected ')'"),
        (["%a = CONST i32 )", "%o = SINK void %a"], 1, "unbalanced"),
        (["%a = CONST i32 (1 2)", "%o = SINK void %a"], 1, "missing ','"),
        (["%a = CONST i32 (,)", "%o = SINK void %a"], 1, "unexpected ','"),
        (["%a = CONST i32 FOO", "%o = SINK void %a"], 1, "unknown word 'FOO'"),
        (["%a = ADD i32 %x, %y", "%o = SINK void %a"], 1, "bad name '%x,'"),
        (["%dead = BAD i32", "%a = CONST i32 1", "%o = SINK void %a"], 1, "unknown op"),
        (["%a =", "%o = SINK void %a"], 1, "expected an op"),
        (["%a = CONST", "%o = SINK void %a"], 1, "expected a type"),
    ],
)
def test_each_parse_error_names_its_line(lines, line, words):
    error = parse_error(*lines)
    assert error.line == line
    assert words in error.message
    assert error.exit_code == 2
    assert error.render("t.uir").startswith(f"t.uir:{line}: error: ")


def test_huge_exponents_round_at_once_instead_of_taking_forever():
    p = program(
        "%a = CONST f32 1e100000000", "%b = CONST f64 -0x1p-999999999999",
        "%c = CONST f64 0.000001e-320", "%o = SINK void %a %b %c",
    )  # fmt: skip
    a, b, c = (s.arg for s in p.sink.src)
    assert a == math.inf and b == 0.0 and math.copysign(1, b) == -1
    assert c == 0.0  # 1e-326 is below half the smallest f64 subnormal (4.9e-324)


def test_lines_end_at_line_feeds_only():
    # A form feed inside a comment is part of the comment, not a line break.
    p = program("%a = CONST i32 1 # a\x0cb", "%b = CONST i32 2\r", "%o = SINK void %a %b")
    assert [p.lines[s] for s in p.sink.src] == [1, 2]


def test_blanks_are_spaces_and_tabs_only():
    error = parse_error("%a = CONST\u00a0i32 1", "%o = SINK void %a")
    assert error.line == 1 and "unexpected character" in error.message


def test_an_empty_file_is_a_parse_error():
    with pytest.raises(ParseError):
        parse("# only a comment\n\n", "t.uir")


def test_types_of_parsed_consts():
    a, b = program("%a = CONST i32 1", "%b = CONST f32 1", "%o = SINK void %a %b").sink.src
    assert (a.type, b.type, a.dtype, b.dtype) == (I32, F32, i32, f32)


def test_parse_prefix_builds_the_statements_before_the_error_line():
    text = "%a = CONST i32 2\n%b = CONST i32 3\n# note\n%c = ADD i32 %a %b\n%d = BAD i32\n"
    uops, lines = parse_prefix(text, 5)
    a, b = UOp(Op.CONST, I32, (), 2), UOp(Op.CONST, I32, (), 3)
    add = UOp(Op.ADD, I32, (a, b))
    assert uops == [a, b, add]
    assert lines == {a: 1, b: 2, add: 4}


def test_parse_prefix_stops_at_an_earlier_failing_statement():
    # Line 4's SINK is not last (the error parse reports, on line 4); line 2 names nothing known.
    text = (
        "%a = CONST i32 2\n%b = ADD i32 %a %q\n%c = CONST i32 1\n%o = SINK void %a\n"
        "%e = CONST i32 5\n"
    )
    with pytest.raises(ParseError) as caught:
        parse(text)
    assert caught.value.line == 4
    uops, _ = parse_prefix(text, 4)
    assert uops == [UOp(Op.CONST, I32, (), 2)]


def test_the_one_match_path_reads_every_suite_statement_as_the_word_by_word_path_does():
    # parse.py reads a statement written the usual way with one regex match (SIMPLE_STATEMENT)
    # and every other through the word-by-word path; on each statement of every suite, the
    # first must give what the second gives, or leave it to the second.
    import importlib
    from pathlib import Path

    parsing = importlib.import_module("uir.core.parse")
    suites = Path(__file__).resolve().parents[3] / "suites"
    compared = 0
    for path in sorted(suites.glob("week*/*.uir")):
        for number, raw in enumerate(path.read_text().split("\n"), start=1):
            code = raw.split("#", 1)[0].strip(" \t")
            if not code:
                continue
            try:
                slow = parsing._statement(code, number)  # no type table: the word-by-word path
            except ParseError:
                continue  # a rejected statement: the one-match path defers every mistake
            types = {code.split()[3]: slow.type}  # the type as written: read once already
            fast = parsing._statement(code, number, 0, types)
            assert fast == slow, (path.name, number)
            compared += parsing.SIMPLE_STATEMENT.fullmatch(code) is not None
    assert compared > 10_000  # the one-match path did read most statements

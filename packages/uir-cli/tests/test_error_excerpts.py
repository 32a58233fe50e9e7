"""Error messages a student meets every day (issue 24 item 7): after the `FILE:LINE: error:
message` line, the line it blames and a caret under the offending token; "did you mean" for an
unknown op, dtype, name, pass and backend; a missing type named as such; a pasted Unicode minus
named. Each expected text is written out by hand."""

from __future__ import annotations

import io
import sys

import pytest

from uir.cli.main import main


def write(tmp_path, text: str) -> str:
    path = tmp_path / "p.uir"
    path.write_text(text)
    return str(path)


def uir(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(
    ("text", "code", "expected"),
    [
        (
            "%a = CONST i32 2\n%b = CONST i32 3\n%c = AD i32 %a %b\n%out = SINK void %c\n",
            2,
            "3: error: unknown op 'AD' (did you mean ADD, AND or PAD?)\n"
            " 3 | %c = AD i32 %a %b\n"
            "   |      ^~\n",
        ),
        (
            "%a = CONST i32 2\n%c = add i32 %a %a\n%out = SINK void %c\n",
            2,
            "2: error: unknown op 'add' (did you mean ADD?)\n"
            " 2 | %c = add i32 %a %a\n"
            "   |      ^~~\n",
        ),
        (
            "%a = CONST int 2\n%out = SINK void %a\n",
            2,
            "1: error: bad type 'int': unknown dtype 'int' (did you mean i32?)\n"
            " 1 | %a = CONST int 2\n"
            "   |            ^~~\n",
        ),
        (
            "%a = CONST float[2] (1.0, 2.0)\n%out = SINK void %a\n",
            2,
            "1: error: bad type 'float[2]': unknown dtype 'float' (did you mean f32?)\n"
            " 1 | %a = CONST float[2] (1.0, 2.0)\n"
            "   |            ^~~~~~~~\n",
        ),
        (
            "%a = CONST i32 2\n%c = ADD %a %a\n%out = SINK void %c\n",
            2,
            "2: error: expected a type after ADD, got '%a' (`%x = ADD TYPE ...`)\n"
            " 2 | %c = ADD %a %a\n"
            "   |          ^~\n",
        ),
        (
            "%a = CONST i32 \u22125\n%out = SINK void %a\n",
            2,
            "1: error: bad literal '\u22125': U+2212 MINUS SIGN is not '-'\n"
            " 1 | %a = CONST i32 \u22125\n"
            "   |                ^~\n",
        ),
        (
            "%value = CONST i32 2\n%out = SINK void %valeu\n",
            2,
            "2: error: undefined name %valeu (did you mean %value?)\n"
            " 2 | %out = SINK void %valeu\n"
            "   |                  ^~~~~~\n",
        ),
        (  # the name defined later is said so, and the caret is under its use
            "%a = CONST i32 2\n%c = ADD i32 %a %b\n%b = CONST i32 3\n%out = SINK void %c\n",
            2,
            "2: error: %b is used before its definition on line 3\n"
            " 2 | %c = ADD i32 %a %b\n"
            "   |                 ^~\n",
        ),
        (
            "%a = CONST i32[3] (1, 2 3)\n%out = SINK void %a\n",
            2,
            "1: error: missing ',' before '3'\n"
            " 1 | %a = CONST i32[3] (1, 2 3)\n"
            "   |                         ^\n",
        ),
        (
            "%a = CONST i32[2] (1, (2)\n%out = SINK void %a\n",
            2,
            "1: error: unclosed '(' in argument\n"
            " 1 | %a = CONST i32[2] (1, (2)\n"
            "   |                   ^\n",
        ),
        (
            "%v = CONST f32[2] (1.0, 2.0)\n%r = REDUCE f32 %v (AD, (0))\n%out = SINK void %r\n",
            2,
            "2: error: unknown word 'AD' in argument (did you mean ADD, AND or PAD?)\n"
            " 2 | %r = REDUCE f32 %v (AD, (0))\n"
            "   |                     ^~\n",
        ),
        (  # the ranges an END closes written as a tuple
            "%n = CONST i32 2\n%i = RANGE i32 %n 0\n%b = BUFFER i32[2] 0\n%p = INDEX i32 %b %i\n"
            "%st = STORE void %p %i\n%e = END void %st (%i)\n%out = SINK void %e\n",
            2,
            "6: error: bad literal '%i': a name is an operand, and operands come before the "
            "argument, without parentheses or commas\n"
            " 6 | %e = END void %st (%i)\n"
            "   |                    ^~\n",
        ),
        (  # a verification error blames the whole statement, not its comment or blanks
            "%a = CONST i32 2\n\t%c = ADD f32 %a %a   # the sum\n%out = SINK void %c\n",
            3,
            "2: error: ADD of i32 must have type i32, not f32\n"
            " 2 | \t%c = ADD f32 %a %a   # the sum\n"
            "   | \t^~~~~~~~~~~~~~~~~~\n",
        ),
    ],
    ids=[
        "op",
        "lower-case-op",
        "dtype",
        "shaped-dtype",
        "missing-type",
        "unicode-minus",
        "name",
        "name-later",
        "comma",
        "unclosed",
        "word",
        "operand-as-argument",
        "verify",
    ],
)
def test_an_error_shows_its_line_and_a_caret(tmp_path, capsys, text, code, expected) -> None:
    path = write(tmp_path, text)
    for command in ("check", "run"):
        assert uir([command, path], capsys) == (code, "", f"{path}:{expected}")


def test_a_long_line_is_shown_around_the_error(tmp_path, capsys) -> None:
    values = ", ".join(["1"] * 200)
    path = write(tmp_path, f"%a = CONST i32[201] ({values}, x)\n%out = SINK void %a\n")
    code, _, err = uir(["check", path], capsys)
    first, source, caret = err.splitlines()
    assert (code, first) == (2, f"{path}:1: error: bad literal 'x'")
    # A window of 100 characters from 25 before the 'x' (cut there, so '...' first): ' 1', seven
    # ', 1' and ', ' make those 25.
    assert source == " 1 | ... 1" + ", 1" * 7 + ", x)"
    assert caret == "   | " + " " * (len(source) - len(" 1 | ") - 2) + "^"


def test_stdin_is_shown_too(monkeypatch, capsys) -> None:
    stdin = io.TextIOWrapper(io.BytesIO(b"%a = CONST i32 2\n%out = SNK void %a\n"))
    monkeypatch.setattr(sys, "stdin", stdin)
    assert uir(["check", "-"], capsys) == (
        2,
        "",
        "<stdin>:2: error: unknown op 'SNK' (did you mean SINK?)\n"
        " 2 | %out = SNK void %a\n"
        "   |        ^~~\n",
    )


def test_a_line_number_of_two_digits_widens_the_gutter(tmp_path, capsys) -> None:
    lines = "".join(f"%a{i} = CONST i32 {i}\n" for i in range(11))
    path = write(tmp_path, lines + "%out = SINK void %a11\n")
    assert uir(["check", path], capsys) == (
        2,
        "",
        f"{path}:12: error: undefined name %a11 (did you mean %a1?)\n"
        " 12 | %out = SINK void %a11\n"
        "    |                  ^~~~\n",
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["opt", "--passes", "rangify"],
            "unknown pass 'rangify' (did you mean rangeify?) "
            "(installed: fold, inline, rangeify, simplify)",
        ),
        (
            ["run", "--skip", "simplfy"],
            "unknown pass 'simplfy' (did you mean simplify?) "
            "(installed: fold, inline, rangeify, simplify)",
        ),
        (
            ["run", "--backend", "inter"],
            "unknown backend 'inter' (did you mean interp?) (installed: c, cuda, cuda-emu, interp)",
        ),
    ],
)
def test_an_unknown_pass_or_backend_names_the_nearest(tmp_path, capsys, args, message) -> None:
    path = write(tmp_path, "%a = CONST i32 2\n%out = SINK void %a\n")
    code, out, err = uir([*args, path], capsys)
    assert (code, out) == (1, "")
    assert err == f"{path}: error: {message}\n"


def test_nothing_near_suggests_nothing(tmp_path, capsys) -> None:
    path = write(tmp_path, "%a = QQQQQQ i32 2\n%out = SINK void %a\n")
    code, _, err = uir(["check", path], capsys)
    assert (code, err.splitlines()[0]) == (2, f"{path}:1: error: unknown op 'QQQQQQ'")

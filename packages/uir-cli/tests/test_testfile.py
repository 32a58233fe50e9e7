"""Test-file directives (uir.md section 12) and what the compiler under test is given."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.cli.grading.testfile import TestFileError, collect_tests, parse_test, read_test

PROGRAM = "%a = CONST i32 5\n%out = SINK void %a\n"


def test_directives_give_lines_exit_and_tolerance() -> None:
    test = parse_test(
        "# sin of one\n# tolerance: 2 ulp\n# expect: 0.841470957\n# expect: 1 2\n" + PROGRAM, "t"
    )
    assert test.expected_lines == ("0.841470957", "1 2")
    assert test.expected_exit == 0
    assert test.tolerance_ulp == 2


def test_rel_and_abs_tolerances_may_be_given_together() -> None:
    test = parse_test("# tolerance: 1e-5 rel\n# tolerance: 0.001 abs\n# expect: 5\n" + PROGRAM, "t")
    assert (test.tolerance.rel, test.tolerance.abs, test.tolerance.ulp) == (1e-5, 0.001, None)
    assert str(test.tolerance) == "0.001 abs + 1e-05 rel"
    assert parse_test("# tolerance: 2 rel\n" + PROGRAM, "t").tolerance.rel == 2.0


@pytest.mark.parametrize(
    ("directives", "message"),
    [
        ("# tolerance: 1 rel\n# tolerance: 2 rel\n", "line 2: a second '# tolerance: ... rel'"),
        ("# tolerance: 1 abs\n# tolerance: 1 abs\n", "line 2: a second '# tolerance: ... abs'"),
        ("# tolerance: 2 ulp\n# tolerance: 1e-3 rel\n", "line 2: a tolerance in ulp and one in"),
        ("# tolerance: -1 rel\n", "line 1: malformed directive '# tolerance: -1 rel'"),
        ("# tolerance: nan abs\n", "line 1: malformed directive"),
        ("# tolerance: 1e999 abs\n", "line 1: tolerance 1e999 abs is not a finite number"),
        ("# tolerance: 1e-3 ulp\n", "line 1: malformed directive"),  # ulps are whole
        ("# tolerance: 1e-3\n", "line 1: malformed directive"),
        ("# tolerance: 1e-3 relative\n", "line 1: malformed directive"),
    ],
)
def test_a_malformed_rel_or_abs_tolerance_makes_a_bad_test(directives: str, message: str) -> None:
    with pytest.raises(TestFileError) as caught:
        parse_test(directives + PROGRAM, "t")
    assert str(caught.value).startswith(message)


def test_the_exit_code_defaults_to_zero_and_tolerance_to_none() -> None:
    test = parse_test("# expect: 5\n" + PROGRAM, "t")
    assert (test.expected_exit, test.tolerance_ulp) == (0, None)


def test_an_error_test_expects_no_output() -> None:
    test = parse_test("# expect-exit: 3\n" + PROGRAM, "t")
    assert (test.expected_exit, test.expected_lines) == (3, ())


def test_the_program_keeps_its_comments_and_line_numbers_without_the_directives() -> None:
    test = parse_test("# adds\n\n# expect: 5\n# expect-exit: 0\n" + PROGRAM, "t")
    assert test.program == "# adds\n\n\n\n" + PROGRAM
    assert "expect" not in test.program


def test_blank_lines_may_separate_directives() -> None:
    test = parse_test("# expect: 1\n\n# expect: 2\n" + PROGRAM, "t")
    assert test.expected_lines == ("1", "2")


def test_an_only_comments_file_is_a_test_of_a_parse_error() -> None:
    test = parse_test("# expect-exit: 2\n# nothing here\n", "t")
    assert test.expected_exit == 2


@pytest.mark.parametrize(
    "text",
    [
        "# expect-exit: three\n",
        "# tolerance: 2\n",
        "# tolerance: 2 ulps\n",
        "# expect-exit: \u0663\n",  # an Arabic-Indic three: int() takes it, the format does not
        "# tolerance: \uff12 ulp\n",  # a full-width two
    ],
)
def test_a_malformed_directive_is_an_error_not_a_comment(text: str) -> None:
    with pytest.raises(TestFileError, match="malformed directive"):
        parse_test(text + PROGRAM, "t")


@pytest.mark.parametrize("text", ["# expect 5\n", "# expected: 5\n", "# Expect: 5\n"])
def test_comments_that_are_not_directive_shaped_are_free_text(text: str) -> None:
    test = parse_test(text + PROGRAM, "t")
    assert test.expected_lines == ()
    assert test.program == text + PROGRAM


def test_directive_shaped_comments_after_the_first_statement_are_comments() -> None:
    text = "# expect: 5\n%a = CONST i32 5\n# expect: 6\n%out = SINK void %a\n"
    test = parse_test(text, "t")
    assert test.expected_lines == ("5",)
    assert test.program == "\n%a = CONST i32 5\n# expect: 6\n%out = SINK void %a\n"


def test_crlf_lines_and_surrounding_blanks_are_not_part_of_the_text() -> None:
    test = parse_test("#expect:\t1 2 \r\n# expect-exit: 0\r\n" + PROGRAM, "t")
    assert test.expected_lines == ("1 2",)


def test_bytes_that_are_not_utf8_reach_the_compiler_unchanged(tmp_path: Path) -> None:
    path = tmp_path / "latin1.uir"
    data = b"# expect-exit: 2\n%a = CONST i32 5 # caf\xe9\n%out = SINK void %a\n"
    path.write_bytes(data)
    test = read_test(str(path))
    assert test.expected_exit == 2
    assert test.program_bytes == data.replace(b"# expect-exit: 2", b"")


def test_expect_lines_with_an_error_exit_are_contradictory() -> None:
    with pytest.raises(TestFileError, match="expects no"):
        parse_test("# expect-exit: 2\n# expect: 5\n" + PROGRAM, "t")


@pytest.mark.parametrize(
    "text", ["# expect-exit: 0\n# expect-exit: 0\n", "# tolerance: 1 ulp\n# tolerance: 1 ulp\n"]
)
def test_a_directive_given_twice_is_an_error(text: str) -> None:
    with pytest.raises(TestFileError, match="second"):
        parse_test(text + PROGRAM, "t")


def test_an_exit_code_outside_section_11_is_an_error() -> None:
    with pytest.raises(TestFileError, match="not an exit code"):
        parse_test("# expect-exit: 7\n" + PROGRAM, "t")


def test_directories_are_searched_in_sorted_order(tmp_path: Path) -> None:
    for name in ("b.uir", "a.uir", "notes.txt", "sub/c.uir"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text(PROGRAM)
    found = collect_tests([str(tmp_path), str(tmp_path / "a.uir")])
    assert [Path(p).relative_to(tmp_path).as_posix() for p in found] == [
        "a.uir",
        "b.uir",
        "sub/c.uir",
    ]


def test_a_missing_path_is_reported() -> None:
    with pytest.raises(FileNotFoundError):
        collect_tests(["/nonexistent/suite"])

"""Every rejection a week's spec lists has a suite test that the reference rejects for it.

The specs of weeks 2 to 5 and 7 list what they reject in tables whose first column is
`program`, one row per rejection (week 1 in its table of what each UOp must hold, one row per
op), and name in a `test` column the suite tests that break it (a bare name is a test of that
week's suite, `weekN/name` one of another). This fails when such a table has no `test` column,
when a row names no test, when a named test is missing or does not expect exit 3, and, where the
row gives the reference's message, when the reference rejects the test with
another message: a suite test must pin the rejection it is listed for, not another one.

Messages are compared as skeletons: a type (`f32[4]`, `bool`) stands for any type and a number
for any number (a tuple of numbers for any such tuple), since a test may break the rule on other
operands than the spec's example; the
spec's `L` and `M` are line numbers, and its `...` ends the part that is compared.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import pytest

from uir.cli.grading.testfile import read_test
from uir.core import parse, verify
from uir.core.errors import VerifyError

ROOT = Path(__file__).resolve().parents[3]
WEEKS = (1, 2, 3, 4, 5, 7)
# How a table of rejections starts: one row per rejection, or (week 1) per op and what it must hold.
HEADS = ("| program |", "| UOp | must hold |")
TYPE = re.compile(r"\b(bool|bf16|[fiu]\d+)(\[[\d,]+\])?")
NUMBER = re.compile(r"-?\b\d+\b")
LINE = re.compile(r"\b[LM]\b")
TUPLE = re.compile(r"\(N(, N)*\)")


@dataclass(frozen=True)
class Rejection:
    week: int
    line: int  # of the row in spec/uir-weekN.md
    program: str
    message: str | None  # the reference's message as the row gives it, when it gives one
    tests: tuple[str, ...]  # suite tests, `weekN/name`

    def __str__(self) -> str:
        return f"spec/uir-week{self.week}.md:{self.line}: {self.program}"


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


def rejection_tables(week: int) -> list[tuple[int, list[str], list[tuple[int, list[str]]]]]:
    """The tables of a week's spec that list rejections (HEADS): (line, header, rows)."""
    lines = (ROOT / "spec" / f"uir-week{week}.md").read_text().splitlines()
    tables = []
    k = 0
    while k < len(lines):
        if lines[k].startswith(HEADS):
            start, header, rows = k + 1, _cells(lines[k]), []
            k += 2  # the header and its |---| line
            while k < len(lines) and lines[k].startswith("|"):
                rows.append((k + 1, _cells(lines[k])))
                k += 1
            tables.append((start, header, rows))
        k += 1
    return tables


def rejections() -> list[Rejection]:
    found = []
    for week in WEEKS:
        for _, header, rows in rejection_tables(week):
            if "test" not in header:
                continue  # test_every_rejection_table_names_its_tests reports it
            message = next((i for i, h in enumerate(header) if h.startswith("message")), None)
            for line, cells in rows:
                tests = re.findall(r"`([^`]+)`", cells[header.index("test")])
                quoted = re.findall(r"`([^`]+)`", cells[message]) if message is not None else []
                found.append(
                    Rejection(
                        week,
                        line,
                        cells[0],
                        quoted[0] if quoted else None,
                        tuple(t if "/" in t else f"week{week}/{t}" for t in tests),
                    )
                )
    return found


def skeleton(message: str) -> str:
    return TUPLE.sub("(N)", NUMBER.sub("N", TYPE.sub("T", message)))


def listed_skeleton(message: str) -> str:
    """What a test's message must start with: the spec's message up to any `...`."""
    return skeleton(LINE.sub("N", message.split("...")[0])).rstrip()


def reference_message(test: str) -> str | None:
    path = ROOT / "suites" / f"{test}.uir"
    try:
        verify(parse(path.read_text(), str(path)))
    except VerifyError as error:
        return error.message
    return None


REJECTIONS = rejections()


def test_every_rejection_table_names_its_tests() -> None:
    for week in WEEKS:
        tables = rejection_tables(week)
        assert tables, f"spec/uir-week{week}.md lists no rejections in a table"
        for line, header, _ in tables:
            assert "test" in header, f"spec/uir-week{week}.md:{line}: the table has no test column"
    assert len(REJECTIONS) >= 100


@pytest.mark.parametrize("rejection", REJECTIONS, ids=str)
def test_every_listed_rejection_has_a_suite_test(rejection: Rejection) -> None:
    assert rejection.tests, f"{rejection}: no suite test"
    for test in rejection.tests:
        path = ROOT / "suites" / f"{test}.uir"
        assert path.is_file(), f"{rejection}: {test} is not a suite test"
        assert read_test(str(path)).expected_exit == 3, f"{rejection}: {test} does not expect 3"


@pytest.mark.parametrize("rejection", [r for r in REJECTIONS if r.message is not None], ids=str)
def test_each_listed_test_is_rejected_with_the_listed_message(rejection: Rejection) -> None:
    assert rejection.message is not None
    want = listed_skeleton(rejection.message)
    for test in rejection.tests:
        got = reference_message(test)
        assert got is not None, f"{rejection}: the reference accepts {test}"
        assert skeleton(got).startswith(want), f"{rejection}: {test} is rejected with {got!r}"


def test_the_skeleton_stands_for_types_numbers_and_lines() -> None:
    assert listed_skeleton("ADD operands differ: f32[4] and f32") == "ADD operands differ: T and T"
    assert skeleton("ADD operands differ: i32[2,3] and i32") == "ADD operands differ: T and T"
    assert listed_skeleton("the RANGE on line L ... and after it") == "the RANGE on line N"
    assert skeleton("got (2)") == skeleton("got (1, 0)") == "got (N)"
    assert not skeleton("REDUCE takes numbers").startswith(listed_skeleton("REDUCE folds"))


def test_every_rejecting_test_a_spec_names_is_a_suite_test_that_rejects() -> None:
    # Prose names tests too (`sink_two_versions_rejected`): each must exist and expect a failure.
    named = re.compile(r"`((?:week\d/)?[a-z0-9_]+_rejected)`")
    wrong = []
    for week in WEEKS:
        text = (ROOT / "spec" / f"uir-week{week}.md").read_text()
        for name in sorted(set(named.findall(text))):
            path = ROOT / "suites" / f"{name if '/' in name else f'week{week}/{name}'}.uir"
            if not path.is_file() or read_test(str(path)).expected_exit == 0:
                wrong.append(f"uir-week{week}.md: {name}")
    assert not wrong, f"named as rejecting tests, but not: {wrong}"

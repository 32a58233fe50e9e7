"""spec/pins.md: every rule of the contract is pinned by a test on each side, the table lists the
tests that the suites' `# pins:` lines name, and every pinned rule is one of the table's."""

from __future__ import annotations

import os
import re
from pathlib import Path

from uir.cli.grading.guide import read_guide
from uir.cli.grading.testfile import read_test

ROOT = Path(__file__).resolve().parents[3]
SPEC = ROOT / "spec" / "pins.md"
SUITES = ROOT / "suites"
# The weeks whose rules must each have an accepting and a rejecting test (a later week joins once
# its suite pins its rules).
ENFORCED_WEEKS = {1, 2, 3, 4, 5}
ROW = re.compile(r"\| `([^`]+)` \| (\d+) \| ([^|]*) \|([^|]*)\|([^|]*)\|")
SIDES = ("accepted", "rejected")


def pinned_tests() -> dict[str, dict[str, list[str]]]:
    """rule -> side -> the tests pinning it there (`week1/bounds_add_exact`), in name order."""
    found: dict[str, dict[str, list[str]]] = {}
    for path in sorted(SUITES.glob("*/*.uir")):
        test = read_test(str(path))
        side = SIDES[test.expected_exit != 0]
        name = f"{path.parent.name}/{path.stem}"
        for rule in read_guide(test.program_bytes.decode("utf-8", "replace"), str(path)).pins:
            found.setdefault(rule, {s: [] for s in SIDES})[side].append(name)
    return found


def table_rows() -> list[re.Match[str]]:
    return [m for line in SPEC.read_text().splitlines() if (m := ROW.fullmatch(line))]


def rendered_row(row: re.Match[str], pins: dict[str, dict[str, list[str]]]) -> str:
    rule, week, what = row.group(1), row.group(2), row.group(3)
    sides = pins.get(rule, {s: [] for s in SIDES})
    cells = [", ".join(f"`{t}`" for t in sides[s]) for s in SIDES]
    return f"| `{rule}` | {week} | {what.strip()} | {cells[0]} | {cells[1]} |".replace("  |", " |")


def test_pin_lines_read_from_the_program_copy_and_the_file_agree():
    # The program copy blanks only the grader's directives, so pins survive in it.
    path = SUITES / "week1" / "bounds_add_exact.uir"
    text = path.read_text()
    assert read_guide(text, str(path)).pins == ("bounds.add",)
    assert read_guide(read_test(str(path)).program, str(path)).pins == ("bounds.add",)


def test_every_pinned_rule_is_in_the_table():
    rules = {row.group(1) for row in table_rows()}
    unknown = {rule: sides for rule, sides in pinned_tests().items() if rule not in rules}
    assert not unknown, f"tests pin rules spec/pins.md does not have: {unknown}"


def test_every_rule_of_the_enforced_weeks_is_pinned_from_both_sides():
    pins = pinned_tests()
    missing = [
        f"{row.group(1)} ({side})"
        for row in table_rows()
        if int(row.group(2)) in ENFORCED_WEEKS
        for side in SIDES
        if not pins.get(row.group(1), {}).get(side)
    ]
    assert not missing, f"rules with no test on a side: {', '.join(missing)}"


def test_the_table_lists_the_tests_that_pin_each_rule():
    pins = pinned_tests()
    text = SPEC.read_text()
    rows = table_rows()
    assert len({r.group(1) for r in rows}) == len(rows) > 30, "one row per rule"
    expected = text
    for row in rows:
        expected = expected.replace(row.group(0), rendered_row(row, pins))
    if os.environ.get("UIR_WRITE_PINS") and expected != text:
        SPEC.write_text(expected)
        text = expected
    assert text == expected, (
        "spec/pins.md is out of date: UIR_WRITE_PINS=1 uv run pytest "
        "packages/uir-cli/tests/test_pins.py rewrites its test columns"
    )

"""The guide to a failing test: explanations, topics, what each test catches (caught.toml), and how
`uir test` shows them; and that each suite's caught.toml is consistent with its suite."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from uir.cli.grading.guide import (
    Catch,
    Guide,
    Mistake,
    annotate,
    caught_toml,
    details,
    grouped_summary,
    guide_entry,
    guide_for,
    likely_mistakes,
    load_caught,
    merged_catches,
    read_guide,
)
from uir.cli.grading.testfile import TestFileError

ROOT = Path(__file__).resolve().parents[3]
SUITES = sorted(p.parent for p in (ROOT / "suites").glob("*/caught.toml"))

IDIV_TEST = """\
# expect: -3
# expect-exit: 0
# topic: IDIV rounding
# -7 / 2 = -3.5, truncated toward zero: -3
#
# (floor division would give -4)
%a = CONST i32 -7
# not part of the explanation: after the first statement
%out = SINK void %a
"""


def test_the_explanation_is_the_leading_comments_without_directives():
    guide = read_guide(IDIV_TEST, "suite/idiv_negative.uir")
    assert guide.explanation == (
        "-7 / 2 = -3.5, truncated toward zero: -3",
        "(floor division would give -4)",
    )
    assert guide.topic == "IDIV rounding"
    assert guide.pins == ()


def test_the_topic_defaults_to_the_first_pinned_rule_then_the_file_name_prefix():
    pinned = "# expect-exit: 3\n# pins: bounds.add bounds.wrap\n# pins: bounds.mod.signed\n%a = X\n"
    guide = read_guide(pinned, "s/anything.uir")
    assert guide.pins == ("bounds.add", "bounds.wrap", "bounds.mod.signed")
    assert guide.topic == "bounds.add"
    assert read_guide("# free text\n", "s/xor_i32_basic.uir").topic == "xor"


@pytest.mark.parametrize("line", ["# pins:", "# pins: Bounds.ADD", "# topic:", "# pins: a,b"])
def test_malformed_guide_lines_are_errors(line):
    with pytest.raises(TestFileError):
        read_guide(f"# expect: 1\n{line}\n%a = CONST i32 1\n", "s/t.uir")


def test_caught_toml_round_trips_and_names_that_need_quotes_are_quoted(tmp_path):
    record = {"idiv_negative": ("floor-division", "python-modulo"), 'odd "name"': ("x\\y",)}
    (tmp_path / "caught.toml").write_text(caught_toml(record))
    assert load_caught(tmp_path) == record


def test_a_missing_or_broken_record_gives_no_catches(tmp_path):
    assert load_caught(tmp_path) == {}
    (tmp_path / "caught.toml").write_text("[tests\n")
    assert load_caught(tmp_path) == {}


def test_recording_replaces_the_run_bugs_entries_and_keeps_the_others():
    recorded = {"a": ("c-bug", "old-bug"), "b": ("old-bug",), "c": ("gone-bug",)}
    run = {"a": ["new-bug"], "d": ["old-bug"]}
    merged = merged_catches(recorded, run, ["old-bug", "new-bug", "gone-bug"])
    assert merged == {"a": ("c-bug", "new-bug"), "d": ("old-bug",)}


def test_guide_for_reads_the_suite_record(tmp_path):
    test = tmp_path / "idiv_negative.uir"
    test.write_text(IDIV_TEST)
    (tmp_path / "caught.toml").write_text('[tests]\nidiv_negative = ["floor-division", "x"]\n')
    (tmp_path / "mutants.toml").write_text(
        '[[mutant]]\nname = "floor-division"\ndescription = "IDIV floors"\n'
    )
    guide = guide_for(str(test))
    assert guide is not None
    assert guide.catches == (Catch("floor-division", "IDIV floors"), Catch("x", ""))
    assert details(guide) == [
        "  topic: IDIV rounding",
        "  about this test:",
        "    -7 / 2 = -3.5, truncated toward zero: -3",
        "    (floor division would give -4)",
        "  known to catch these mistakes (planted bugs of `uir mutants`):",
        "    floor-division: IDIV floors",
        "    x",
    ]


def test_bytes_that_are_not_utf8_reach_the_guide_as_replacement_characters(tmp_path):
    test = tmp_path / "t.uir"
    test.write_bytes(b"# expect-exit: 2\n# bad byte \xff here\n%a = CONST i32 1\n")
    guide = guide_for(str(test))
    assert guide is not None and guide.explanation == ("bad byte \ufffd here",)
    json.dumps(guide_entry(guide), ensure_ascii=False).encode("utf-8")  # the report can hold it


def test_a_long_list_of_catches_is_cut_short_in_the_details():
    guide = Guide((), (), "t", tuple(Catch(f"bug{i}", "") for i in range(7)))
    assert details(guide)[-3:] == ["    bug3", "    bug4", "    ... and 2 more"]


def test_the_mistakes_that_fit_are_the_bugs_all_of_whose_catching_tests_failed(tmp_path):
    (tmp_path / "caught.toml").write_text(
        "[tests]\n"
        'a = ["floor-division", "xor-as-or"]\n'
        'b = ["floor-division"]\n'
        'c = ["xor-as-or", "no-wrap"]\n'
        'd = ["no-wrap"]\n'
    )
    (tmp_path / "mutants.toml").write_text(
        '[[mutant]]\nname = "floor-division"\ndescription = "IDIV floors"\n'
    )
    ran = [str(tmp_path / f"{t}.uir") for t in "abcd"]
    a, b, _, d = ran
    # a and b fail: floor-division fits (both its tests failed); xor-as-or does not (c passed)
    assert likely_mistakes(ran, [a, b]) == [Mistake("floor-division", "IDIV floors", (a, b))]
    # only the tests that ran count: with c not run, xor-as-or fits a's failure too
    fits = likely_mistakes([a, b, d], [a, b])
    assert [(m.name, len(m.tests)) for m in fits] == [("floor-division", 2), ("xor-as-or", 1)]
    assert likely_mistakes(ran, []) == []


def test_failures_are_grouped_by_topic_largest_first():
    guides = {f"s/x{i}.uir": Guide((), (), "XOR not implemented") for i in range(5)}
    guides["s/i.uir"] = Guide((), (), "IDIV rounding")
    failed = [*guides, "s/parse_bad.uir"]
    lines = grouped_summary(failed, guides)
    assert lines[0] == "not passed, by topic (3 topics):"
    words = [" ".join(line.split()) for line in lines]  # the columns' padding aside
    assert words[1] == "XOR not implemented 5 tests x0, x1, x2, and 2 more"
    # ties in size are in name order; a test without a guide is grouped by its name's prefix
    assert words[2:] == ["IDIV rounding 1 test i", "parse 1 test parse_bad"]
    assert grouped_summary([], guides) == []


def test_the_json_report_carries_the_guide_and_the_topics():
    document = {
        "tests": [
            {"path": "s/a.uir", "name": "a", "verdict": "fail"},
            {"path": "s/b.uir", "name": "b", "verdict": "pass"},
            {"path": "s/c.uir", "name": "c", "verdict": "wrong-exit"},
        ]
    }
    guides = {"s/a.uir": Guide(("why",), ("bounds.add",), "bounds.add", (Catch("bug", "b"),))}
    mistakes = [Mistake("bug", "b", ("s/a.uir",))]
    annotate(document, guides, mistakes)
    first, second, third = document["tests"]
    assert first["guide"] == {
        "topic": "bounds.add",
        "pins": ["bounds.add"],
        "explanation": ["why"],
        "catches": [{"name": "bug", "description": "b"}],
    }
    assert second["guide"] is None and third["guide"] is None
    assert document["topics"] == [
        {"topic": "bounds.add", "not_passed": 1, "tests": ["a"]},
        {"topic": "c", "not_passed": 1, "tests": ["c"]},
    ]
    assert document["likely_mistakes"] == [{"name": "bug", "description": "b", "tests": ["a"]}]


@pytest.mark.parametrize("suite", SUITES, ids=[s.name for s in SUITES])
def test_each_suite_record_names_its_own_tests_and_planted_bugs(suite):
    """Cheap consistency, not a rerun: `uir mutants SUITE --record` writes the record."""
    bugs = set()
    for mutants_file in suite.glob("mutants*.toml"):
        with open(mutants_file, "rb") as stream:
            bugs |= {m["name"] for m in tomllib.load(stream)["mutant"]}
    record = load_caught(suite)
    assert record, f"{suite}/caught.toml is empty or unreadable"
    unknown_tests = [t for t in record if not (suite / f"{t}.uir").is_file()]
    unknown_bugs = {b for caught in record.values() for b in caught} - bugs
    assert not unknown_tests, f"caught.toml names tests that are gone: {unknown_tests}"
    assert not unknown_bugs, f"caught.toml names planted bugs that are gone: {unknown_bugs}"

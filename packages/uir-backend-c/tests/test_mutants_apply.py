"""Every planted bug of the mutants_c.toml files of weeks 2 to 6 still applies: its `find` text
occurs exactly once in its file under packages/*/src. (Whether the suites catch each one is
`uir mutants`'s job; it takes minutes, so it is not run here.)"""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
WEEKS = ("week2", "week3", "week4", "week5", "week6")
BY_WEEK = {
    week: tomllib.loads((ROOT / "suites" / week / "mutants_c.toml").read_text())["mutant"]
    for week in WEEKS
}
MUTANTS = [m for week in WEEKS for m in BY_WEEK[week]]


@pytest.mark.parametrize("week", WEEKS)
def test_there_are_at_least_fifteen_with_unique_names(week):
    names = [m["name"] for m in BY_WEEK[week]]
    assert len(names) >= 15 and len(set(names)) == len(names)


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_the_planted_bug_applies(mutant):
    required = {"name", "description", "file", "find", "replace"}
    assert required <= set(mutant) <= required | {"options"}  # spec/grading.md
    path = ROOT / mutant["file"]
    assert path.parts[len(ROOT.parts)] == "packages" and "src" in path.parts
    text = path.read_text()
    assert text.count(mutant["find"]) == 1
    assert mutant["replace"] != mutant["find"]

"""Every planted bug of the mutants_c.toml files of weeks 2 to 6 and 8 still applies: its `find`
text occurs exactly once in its file under packages/*/src; week 8's (the contraction of FAST
folds) are each recorded as caught in its caught.toml. (Whether the suites catch each one is
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
FAST_SUITE = ROOT / "suites" / "week8"
FAST_MUTANTS = tomllib.loads((FAST_SUITE / "mutants_c.toml").read_text())["mutant"]
MUTANTS = [m for week in WEEKS for m in BY_WEEK[week]] + FAST_MUTANTS


@pytest.mark.parametrize("week", WEEKS)
def test_there_are_at_least_fifteen_with_unique_names(week):
    names = [m["name"] for m in BY_WEEK[week]]
    assert len(names) >= 15 and len(set(names)) == len(names)


def test_the_contraction_bugs_are_recorded_as_caught_by_the_week8_suite():
    caught = tomllib.loads((FAST_SUITE / "caught.toml").read_text())["tests"]
    names = {m["name"] for m in FAST_MUTANTS}
    assert len(names) == len(FAST_MUTANTS) >= 4
    assert names <= {bug for bugs in caught.values() for bug in bugs}


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_the_planted_bug_applies(mutant):
    required = {"name", "description", "file", "find", "replace"}
    assert required <= set(mutant) <= required | {"options"}  # spec/grading.md
    path = ROOT / mutant["file"]
    assert path.parts[len(ROOT.parts)] == "packages" and "src" in path.parts
    text = path.read_text()
    assert text.count(mutant["find"]) == 1
    assert mutant["replace"] != mutant["find"]

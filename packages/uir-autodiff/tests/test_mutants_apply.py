"""Every planted bug of suites/week9/mutants.toml still applies: its `find` text occurs exactly
once in its file. (That the suite catches each one is `uir mutants suites/week9`'s job, and
suites/week9/caught.toml its record; it takes minutes, so it is not run here.)"""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
MUTANTS = tomllib.loads((ROOT / "suites" / "week9" / "mutants.toml").read_text())["mutant"]
CAUGHT = tomllib.loads((ROOT / "suites" / "week9" / "caught.toml").read_text())


def test_at_least_thirty_with_unique_names_each_recorded_as_caught():
    names = [m["name"] for m in MUTANTS]
    assert len(names) >= 30 and len(set(names)) == len(names)
    caught = {bug for bugs in CAUGHT["tests"].values() for bug in bugs}
    assert set(names) <= caught


@pytest.mark.parametrize("mutant", MUTANTS, ids=[m["name"] for m in MUTANTS])
def test_the_planted_bug_applies(mutant):
    assert set(mutant) == {"name", "description", "file", "find", "replace"}
    text = (ROOT / mutant["file"]).read_text()
    assert text.count(mutant["find"]) == 1
    assert mutant["replace"] != mutant["find"]

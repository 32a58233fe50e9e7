"""Every planted bug of suites/week7/mutants_cuda.toml and suites/week8/mutants_cuda.toml (the
CUDA renderer's and launch mapping's, caught through cuda-emu) still applies: its `find` text
occurs exactly once in its file under packages/*/src, and its suite's caught.toml records a test
catching it. (That the suite catches each one is `uir mutants suites/week7 --mutants
suites/week7/mutants_cuda.toml --backend cuda-emu`'s job, and the same for week 8; it takes about
twenty minutes, so it is not run here.)"""

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]
SUITE = ROOT / "suites" / "week7"
MUTANTS = tomllib.loads((SUITE / "mutants_cuda.toml").read_text())["mutant"]
CAUGHT = tomllib.loads((SUITE / "caught.toml").read_text())
# The FAST block folds' planted bugs (week 8's flag) are caught by suites/week8's tests.
FAST_SUITE = ROOT / "suites" / "week8"
FAST_MUTANTS = tomllib.loads((FAST_SUITE / "mutants_cuda.toml").read_text())["mutant"]
FAST_CAUGHT = tomllib.loads((FAST_SUITE / "caught.toml").read_text())


def _caught(caught: dict) -> set[str]:
    return {bug for bugs in caught["tests"].values() for bug in bugs}


def test_at_least_twenty_with_unique_names_each_recorded_as_caught() -> None:
    names = [m["name"] for m in MUTANTS]
    assert len(names) >= 20 and len(set(names)) == len(names)
    others = [m["name"] for m in tomllib.loads((SUITE / "mutants.toml").read_text())["mutant"]]
    assert not set(names) & set(others)  # caught.toml keys bugs by name across both files
    assert set(names) <= _caught(CAUGHT)


def test_the_block_fold_bugs_are_recorded_as_caught_by_the_week8_suite() -> None:
    names = [m["name"] for m in FAST_MUTANTS]
    assert len(names) >= 3 and not set(names) & {m["name"] for m in MUTANTS}
    assert set(names) <= _caught(FAST_CAUGHT)


@pytest.mark.parametrize(
    "mutant", MUTANTS + FAST_MUTANTS, ids=[m["name"] for m in MUTANTS + FAST_MUTANTS]
)
def test_the_planted_bug_applies(mutant: dict[str, str]) -> None:
    assert set(mutant) == {"name", "description", "file", "find", "replace"}
    path = ROOT / mutant["file"]
    assert path.parts[len(ROOT.parts)] == "packages" and "src" in path.parts
    assert path.read_text().count(mutant["find"]) == 1
    assert mutant["replace"] != mutant["find"]

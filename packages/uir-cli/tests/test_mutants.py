"""Planted bugs: the mutants file, planting in a copy, and that a planted bug really changes what
the copy computes (the copy's `uir.core` shadows the installed one), started or forked."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from uir.cli.grading.limits import Limits
from uir.cli.grading.mutants import (
    Mutant,
    MutantsFileError,
    MutantStatus,
    apply_mutant,
    copy_sources,
    load_mutants,
    repository_root,
    run_mutants,
)

HERE = Path(__file__).resolve().parent
ROOT = repository_root(HERE)
SEMANTICS = "packages/uir-core/src/uir/core/semantics.py"
ADD_TEST = HERE / "fixtures" / "suite" / "add.uir"  # 2 + 3, expects 5

ADD_SUBTRACTS = Mutant(
    "add-subtracts",
    "",
    SEMANTICS,
    "    Op.ADD: _number(np.add),",
    "    Op.ADD: _number(np.subtract),",
)
COMMENT_ONLY = Mutant(
    "comment-only",
    "",
    SEMANTICS,
    "# the count is b mod the width",
    "# a comment changes nothing",
)
STALE = Mutant("stale", "", SEMANTICS, "this text is not in the file", "x")


def _write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "mutants.toml"
    path.write_text(text)
    return path


def test_the_repository_is_found() -> None:
    assert ROOT is not None and (ROOT / SEMANTICS).is_file()


def test_a_mutants_file_is_read(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "[[mutant]]\nname = 'a'\ndescription = 'd'\nfile = 'f.py'\n"
        "find = '''\nx = 1'''\nreplace = '''\nx = 2'''\n"
        "[[mutant]]\nname = 'b'\ndescription = 'd'\nfile = 'f.py'\n"
        "find = 'y'\nreplace = 'z'\noptions = ['--no-opt']\n",
    )
    assert load_mutants(path) == [
        Mutant("a", "d", "f.py", "x = 1", "x = 2"),
        Mutant("b", "d", "f.py", "y", "z", ("--no-opt",)),
    ]


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("name = 'a'\ndescription = 'd'\nfile = 'f.py'\nfind = 'x'\n", "missing keys"),
        (
            "name = 'a'\ndescription = 'd'\nfile = 'f.py'\nfind = 'x'\nreplace = 'y'\nz = 1\n",
            "unknown",
        ),
        ("name = 'a b'\ndescription = 'd'\nfile = 'f.py'\nfind = 'x'\nreplace = 'y'\n", "one word"),
        ("name = 'a'\ndescription = 'd'\nfile = 'f.py'\nfind = ''\nreplace = 'y'\n", "empty"),
        ("name = 'a'\ndescription = 'd'\nfile = 'f.py'\nfind = 'x'\nreplace = 'x'\n", "equals"),
        ("name = 'a'\ndescription = 'd'\nfile = '../f.py'\nfind = 'x'\nreplace = 'y'\n", "inside"),
    ],
)
def test_a_malformed_mutant_is_an_error(tmp_path: Path, body: str, message: str) -> None:
    with pytest.raises(MutantsFileError, match=message):
        load_mutants(_write(tmp_path, "[[mutant]]\n" + body))


def test_two_mutants_with_one_name_are_an_error(tmp_path: Path) -> None:
    one = "[[mutant]]\nname = 'a'\ndescription = 'd'\nfile = 'f.py'\nfind = 'x'\nreplace = 'y'\n"
    with pytest.raises(MutantsFileError, match="second mutant named a"):
        load_mutants(_write(tmp_path, one + one))


def test_a_bug_applies_only_when_its_text_occurs_once(tmp_path: Path) -> None:
    assert ROOT is not None
    copy_sources(ROOT, tmp_path)
    assert apply_mutant(ROOT, tmp_path, STALE) == (
        f"its 'find' text occurs 0 times in {SEMANTICS}, not once"
    )
    twice = Mutant("twice", "", SEMANTICS, "Op.", "Op .")
    assert "not once" in (apply_mutant(ROOT, tmp_path, twice) or "")
    outside = Mutant("outside", "", "pyproject.toml", "[project]", "[x]")
    assert "not under packages/*/src" in (apply_mutant(ROOT, tmp_path, outside) or "")
    assert apply_mutant(ROOT, tmp_path, ADD_SUBTRACTS) is None
    planted = (tmp_path / SEMANTICS).read_text()
    assert "_number(np.subtract)," in planted and "_number(np.add)," not in planted
    assert "_number(np.add)," in (ROOT / SEMANTICS).read_text()  # the original is untouched


@pytest.mark.parametrize("fork", [True, False], ids=["fork", "exec"])
def test_a_planted_bug_changes_what_the_copy_computes(tmp_path: Path, fork: bool) -> None:
    assert ROOT is not None
    suite = tmp_path / "suite"
    suite.mkdir()
    shutil.copy(ADD_TEST, suite / "add.uir")
    run = run_mutants(
        ROOT,
        [str(suite / "add.uir")],
        [ADD_SUBTRACTS, COMMENT_ONLY, STALE],
        ("run",),
        Limits(),
        2,
        fork,
    )
    assert [r.verdict.value for r in run.baselines[()]] == ["pass"]
    statuses = {m.mutant.name: m.status for m in run.mutants}
    assert statuses == {
        "add-subtracts": MutantStatus.CAUGHT,
        "comment-only": MutantStatus.NOT_CAUGHT,
        "stale": MutantStatus.DOES_NOT_APPLY,
    }
    caught = run.mutants[0].catching
    assert [r.actual_lines for r in caught] == [("-1",)]  # 2 - 3: the copy's ADD ran
    assert run.caught == 1 and not run.ok


def test_no_bug_runs_when_the_suite_fails_unchanged(tmp_path: Path) -> None:
    assert ROOT is not None
    wrong = tmp_path / "wrong.uir"
    wrong.write_text(ADD_TEST.read_text().replace("# expect: 5", "# expect: 6"))
    run = run_mutants(ROOT, [str(wrong)], [ADD_SUBTRACTS], ("run",), Limits(), 1)
    assert [r.verdict.value for r in run.baselines[()]] == ["fail"]
    assert run.mutants == [] and not run.ok


@pytest.mark.parametrize(
    ("week", "at_least"),
    [("week1", 60), ("week2", 30), ("week3", 45), ("week4", 30), ("week5", 30), ("week7", 15)],
)
def test_every_bug_applies_to_the_current_sources(week: str, at_least: int) -> None:
    assert ROOT is not None
    mutants = load_mutants(ROOT / "suites" / week / "mutants.toml")
    assert len(mutants) >= at_least
    stale = [m.name for m in mutants if (ROOT / m.file).read_text().count(m.find) != 1]
    assert stale == []


def test_no_bug_runs_when_a_test_is_malformed(tmp_path: Path) -> None:
    assert ROOT is not None
    malformed = tmp_path / "malformed.uir"
    malformed.write_text("# expect-exit: three\n" + ADD_TEST.read_text())
    run = run_mutants(ROOT, [str(malformed)], [ADD_SUBTRACTS], ("run",), Limits(), 1)
    assert [r.verdict.value for r in run.bad_tests] == ["bad-test"]
    assert run.baselines == {} and run.mutants == [] and not run.ok


def test_options_run_a_bug_where_folding_would_hide_it(tmp_path: Path) -> None:
    # The interpreter's ADD subtracts; the fold pass computes 2 + 3 before the interpreter sees
    # it, so only `uir run --no-opt` shows the bug. Each option set gets its own baseline.
    assert ROOT is not None
    find = "        Op.ADD: lambda a, b: wrap(a + b),"
    replace = "        Op.ADD: lambda a, b: wrap(a - b),"
    interpret = "packages/uir-core/src/uir/core/scalar.py"
    hidden = Mutant("interpreter-add-subtracts", "", interpret, find, replace)
    shown = Mutant("interpreter-add-subtracts-no-opt", "", interpret, find, replace, ("--no-opt",))
    run = run_mutants(ROOT, [str(ADD_TEST)], [hidden, shown], ("run",), Limits(), 2)
    assert sorted(run.baselines) == [(), ("--no-opt",)]
    assert [m.status for m in run.mutants] == [MutantStatus.NOT_CAUGHT, MutantStatus.CAUGHT]

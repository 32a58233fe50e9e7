"""Submissions frozen at the deadline: `uir collect` records each team's commit and keeps it,
`uir grade --manifest` grades what was collected however the branches move, a late day is a
second collection under the syllabus's rule, and every run of a week is kept with its history."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from uir.testing.cli import run_uir as _uir

MakeRepo = Callable[[Path, dict[str, str]], Path]
ADD_5 = "# expect: 5\n%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"
SUBMISSION = 'command = "python3 c.py"\n'

COURSE = """\
roster = "roster.toml"
timezone = "America/New_York"
late_days = 1

[[week]]
week = 1
deadline = "2020-01-29 10:00"

[[week]]
week = 2
deadline = "2020-02-05T10:00:00-05:00"

[[week]]
week = 3
deadline = "2999-01-01 10:00"
"""

ROSTER = """\
[[team]]
name = "ada"
repo = "repos/ada"
ref = "main"
members = [{id = "a1", name = "Ada", email = "a1@example.edu"}, {id = "a2"}]

[[team]]
name = "bob"
repo = "repos/bob"
ref = "main"
members = [{id = "b1"}]
"""


@pytest.fixture
def course(tmp_path: Path, make_repo: MakeRepo) -> Path:
    (tmp_path / "course.toml").write_text(COURSE)
    (tmp_path / "roster.toml").write_text(ROSTER)
    for team in ("ada", "bob"):
        make_repo(
            tmp_path / "repos" / team, {"uir-submission.toml": SUBMISSION, "c.py": "print(5)\n"}
        )
    (tmp_path / "tests" / "staff").mkdir(parents=True)
    (tmp_path / "tests" / "staff" / "add.uir").write_text(ADD_5)
    return tmp_path


def _head(course: Path, team: str, git: Callable[..., str]) -> str:
    return git(course / "repos" / team, "rev-parse", "main")


def _push(course: Path, team: str, program: str, git: Callable[..., str]) -> str:
    """A new commit on the team's main: its compiler now runs `program`."""
    (course / "repos" / team / "c.py").write_text(program)
    git(course / "repos" / team, "commit", "--quiet", "-am", "after the deadline")
    return _head(course, team, git)


def _manifest(course: Path, week: int) -> list[dict]:
    path = course / "weeks" / f"week{week}" / "manifest.json"
    return json.loads(path.read_text())["collections"]


def _grade(course: Path, week: int, *more: str) -> subprocess.CompletedProcess[str]:
    manifest = f"weeks/week{week}/manifest.json"
    return _uir(course, "grade", "roster.toml", "--manifest", manifest, "--tests", "tests", *more)


def _run(course: Path, week: int, run: int) -> dict:
    path = course / "weeks" / f"week{week}" / "runs" / str(run) / "grades.json"
    return {
        r["name"]: (r["commit"], r["percent"]) for r in json.loads(path.read_text())["compilers"]
    }


def test_a_moved_branch_never_changes_a_frozen_grade(course: Path, git: Callable[..., str]) -> None:
    collected = {"ada": _head(course, "ada", git), "bob": _head(course, "bob", git)}
    done = _uir(course, "collect", "course.toml", "--week", "1")
    assert f"ada: {collected['ada']}" in done.stdout
    entries = _manifest(course, 1)
    assert {e["team"]: e["commit"] for e in entries} == collected
    assert all(not e["late"] and not e["early"] for e in entries)
    # Pushed after the deadline, and even the collected commit rewritten away on the remote.
    _push(course, "ada", "print(6)\n", git)
    git(course / "repos" / "bob", "commit", "--quiet", "--amend", "-m", "history rewritten")
    (course / "tests" / "staff" / "visibility.toml").write_text('default = "after-deadline"\n')
    _grade(course, 1)
    # Graded from a collection, after the deadline: an after-deadline test is shown.
    feedback = course / "weeks" / "week1" / "runs" / "1" / "feedback" / "ada" / "results.json"
    (test,) = json.loads(feedback.read_text())["tests"]
    assert (test["name"], test["visibility"], test["extra_data"]["shown"]) == (
        "add",
        "after_due_date",
        "visible",
    )
    assert _run(course, 1, 1) == {
        "reference": (None, 100.0),
        "ada": (collected["ada"], 100.0),
        "bob": (collected["bob"], 100.0),
    }
    # Collecting again changes nothing: every team is collected already.
    again = _uir(course, "collect", "course.toml", "--week", "1")
    assert "ada: collected at" in again.stdout and "; kept" in again.stdout
    assert _manifest(course, 1) == entries
    # A rerun of a finished week is a new run; the first is kept as it was.
    before = (course / "weeks" / "week1" / "runs" / "1" / "grades.json").read_text()
    rerun = _grade(course, 1, "--reason", "a second look")
    assert "resuming: 3 results kept" in rerun.stderr  # the new run starts from the last log
    assert (course / "weeks" / "week1" / "runs" / "1" / "grades.json").read_text() == before
    assert _run(course, 1, 2) == _run(course, 1, 1)
    history = [json.loads(line) for line in (course / "weeks" / "week1" / "history.jsonl").open()]
    assert [(h["run"], h["reason"], h["changes"]) for h in history] == [
        ("1", None, []),
        ("2", "a second look", []),
    ]


def test_a_late_day_is_a_second_collection_under_the_syllabus_rule(
    course: Path, git: Callable[..., str]
) -> None:
    on_time = _head(course, "ada", git)
    _uir(course, "collect", "course.toml", "--week", "1")
    _grade(course, 1)
    late = _push(course, "ada", "print(6)\n", git)  # a wrong compiler, pushed in its late day
    done = _uir(course, "collect", "course.toml", "--week", "1", "--late", "ada")
    assert f"ada: {late} (a late day)" in done.stdout
    last = _manifest(course, 1)[-1]
    assert (last["team"], last["commit"], last["late"]) == ("ada", late, True)
    regraded = _grade(course, 1, "--reason", "ada's late day")
    assert "resuming: 2 results kept" in regraded.stderr  # the reference's and bob's
    assert f"ada: graded at its last collection {late}" in regraded.stderr
    assert _run(course, 1, 2)["ada"] == (late, 0.0)
    history = [json.loads(line) for line in (course / "weeks" / "week1" / "history.jsonl").open()]
    assert history[-1]["changes"] == [
        {
            "name": "ada",
            "before": {"run": "1", "name": "ada", "commit": on_time, "percent": 100.0},
            "after": {"name": "ada", "commit": late, "percent": 0.0},
        }
    ]
    # At most one late day per submission; a student with none left cannot spend one (the
    # course gives one each), nor can a team of which one partner has none.
    twice = _uir(course, "collect", "course.toml", "--week", "1", "--late", "ada", check=1)
    assert "ada has spent a late day on week 1 already" in twice.stderr
    _uir(course, "collect", "course.toml", "--week", "2")
    spent = _uir(course, "collect", "course.toml", "--week", "2", "--late", "ada", check=1)
    assert "ada: a1 has spent all 1 late days" in spent.stderr
    _uir(course, "collect", "course.toml", "--week", "2", "--late", "bob")
    unknown = _uir(course, "collect", "course.toml", "--week", "2", "--late", "eve", check=1)
    assert "--late eve: no such team" in unknown.stderr
    # The gradebook says who spent what (a course without weights: only the late days here).
    _uir(course, "gradebook", "course.toml", "--out", "book")
    book = json.loads((course / "book" / "gradebook.json").read_text())
    assert {s["id"]: s["late_days_spent"] for s in book["students"]} == {"a1": 1, "a2": 1, "b1": 1}


def test_no_collection_before_the_deadline_unless_said_so(course: Path) -> None:
    done = _uir(course, "collect", "course.toml", "--week", "3", check=1)
    assert "week 3: it is due at 2999-01-01T10:00:00-05:00" in done.stderr
    assert not (course / "weeks" / "week3" / "manifest.json").exists()
    _uir(course, "collect", "course.toml", "--week", "3", "--early")
    assert all(e["early"] for e in _manifest(course, 3))
    unknown = _uir(course, "collect", "course.toml", "--week", "9", check=1)
    assert "course.toml: error: no week 9 (it lists 1, 2, 3)" in unknown.stderr


def test_a_team_not_collected_is_graded_with_that_verdict(course: Path) -> None:
    (course / "roster.toml").write_text(
        ROSTER + '\n[[team]]\nname = "gone"\nrepo = "repos/none"\nref = "main"\n'
    )
    _uir(course, "collect", "course.toml", "--week", "1")
    (course / "roster.toml").write_text(
        ROSTER.replace("repos/ada", "repos/none")
        + '\n[[team]]\nname = "gone"\nrepo = "repos/none"\nref = "main"\n'
        + '\n[[team]]\nname = "new"\ncommand = "python3 x.py"\n'
    )
    _grade(course, 1)
    path = course / "weeks" / "week1" / "runs" / "1" / "grades.json"
    rows = {r["name"]: r for r in json.loads(path.read_text())["compilers"]}
    assert rows["ada"]["percent"] == 100.0  # from its store, whatever the roster says now
    assert rows["gone"]["problem"].startswith("not collected: git ls-remote failed")
    assert rows["new"]["problem"].startswith("not collected (not in weeks/week1/manifest.json)")


def test_perf_measures_the_collected_commits_too(course: Path, git: Callable[..., str]) -> None:
    collected = _head(course, "ada", git)
    _uir(course, "collect", "course.toml", "--week", "1")
    _push(course, "ada", "print(6)\n", git)  # wrong after the deadline: would score 0
    argv = ["perf", "roster.toml", "--manifest", "weeks/week1/manifest.json", "--bench", "tests"]
    _uir(course, *argv, "--out", "perf", "-n", "1", "--no-reference")
    teams = {t["name"]: t for t in json.loads((course / "perf" / "perf.json").read_text())["teams"]}
    assert teams["ada"]["commit"] == collected
    assert teams["ada"]["benchmarks"]["add"]["verdict"] == "pass"


def test_grading_the_refs_of_now_says_when_a_branch_moved(
    course: Path, git: Callable[..., str]
) -> None:
    argv = ["grade", "roster.toml", "--tests", "tests", "--out", "practice"]
    before = _head(course, "ada", git)
    _uir(course, *argv)
    after = _push(course, "ada", "print(6)\n", git)
    done = _uir(course, *argv)
    assert f"WARNING: ada moved from {before} to {after} since its results" in done.stderr
    again = _uir(course, *argv)  # graded at that commit now: nothing to say
    assert "WARNING" not in again.stderr and "resuming: 3 results kept" in again.stderr

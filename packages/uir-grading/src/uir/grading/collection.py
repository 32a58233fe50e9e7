"""Submissions frozen at the deadline (spec/grading.md section 19): `uir collect` records, for
each team of a course, the commit its ref names at the moment of collection, and keeps that
commit in the week's own store, so that grading, however often it is rerun, grades what was
there at the deadline. A late day is a second collection, 24 hours later, of a team that spends
one (the syllabus: three per student, at most one per submission, both partners spend one).

The week's directory holds `manifest.json` (every collection, in order, never rewritten but
appended to) and `collected/NAME`, a git repository per team in which each collected commit
is kept by a tag `collected/COMMIT`: a branch moved or force-pushed later changes nothing.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from uir.cli.grading.limits import CHECKOUT_MB
from uir.cli.grading.report import write_json
from uir.core.errors import UsageError

from .course import Course
from .roster import Team
from .submissions import SubmissionError, checkout

MANIFEST = "manifest.json"
STORE = "collected"
MANIFEST_KIND = "uir-manifest"
LATE = timedelta(hours=24)


def tag(commit: str) -> str:
    """The tag that keeps a collected commit in its team's store."""
    return f"collected/{commit}"


@dataclass(frozen=True)
class Collected:
    """One collection of one team: the commit (None for a local command, or when it failed)."""

    team: str
    source: str
    commit: str | None
    at: str  # ISO 8601, UTC
    late: bool = False
    early: bool = False  # collected before its deadline (or a late one before its 24 hours)
    problem: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {
            "team": self.team,
            "source": self.source,
            "commit": self.commit,
            "at": self.at,
            "late": self.late,
            "early": self.early,
            "problem": self.problem,
        }


def read_manifest(path: str) -> list[Collected]:
    """The collections a manifest records, in the order they happened ([] when there is none)."""
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read the manifest {path}: {e}") from None
    if not isinstance(document, dict) or document.get("kind") != MANIFEST_KIND:
        raise UsageError(f"{path} is not a manifest of `uir collect`")
    try:
        return [Collected(**entry) for entry in document["collections"]]
    except (KeyError, TypeError) as e:
        raise UsageError(f"{path}: malformed manifest ({e})") from None


def current(collections: Sequence[Collected]) -> dict[str, Collected]:
    """Each team's collection that is graded: its last one (the late one, when it spent a day)."""
    return {c.team: c for c in collections}


def late_days_spent(course: Course, before: int | None = None) -> dict[str, int]:
    """Late days each student has spent (a team without members counts as one student named
    after it), over the weeks of the course (those before week `before`, when given)."""
    spent: dict[str, int] = {}
    members = {t.name: [m.id for m in t.members] or [t.name] for t in course.teams}
    for week in course.weeks:
        if before is not None and week.number >= before:
            continue
        manifest = os.path.join(course.week_dir(week.number), MANIFEST)
        for collected in read_manifest(manifest):
            if collected.late:
                for student in members.get(collected.team, [collected.team]):
                    spent[student] = spent.get(student, 0) + 1
    return spent


def _store(team: Team, store: str, max_mb: int) -> str:
    """Fetch the team's ref into its store and tag the commit; the commit."""
    _, commit = checkout(team, store, max_mb)
    directory = os.path.join(store, team.name)
    done = subprocess.run(
        ["git", "tag", "--force", tag(commit), commit],
        cwd=directory,
        capture_output=True,
        text=True,
        env={**os.environ, "LC_ALL": "C"},
    )
    if done.returncode != 0:
        raise SubmissionError(f"git tag failed: {done.stderr.strip()}")
    return commit


def collect(
    course: Course,
    week: int,
    late: Sequence[str] = (),
    early: bool = False,
    now: datetime | None = None,
    max_mb: int = CHECKOUT_MB,
) -> tuple[list[Collected], list[str]]:
    """Collect week `week`: every team not yet collected (no `late`), or a late day's second
    collection of the teams `late`. Appends to the week's manifest; (what was collected now,
    the notes to show: teams left alone and why)."""
    moment = now or datetime.now().astimezone()
    due = course.week(week).deadline + (LATE if late else timedelta(0))
    if moment < due and not early:
        what = "its late day ends" if late else "it is due"
        raise UsageError(
            f"week {week}: {what} at {due.isoformat()}, and it is {moment.isoformat()}: collect "
            "after that (--early collects now, and the manifest says so)"
        )
    directory = course.week_dir(week)
    path = os.path.join(directory, MANIFEST)
    history = read_manifest(path)
    graded = current(history)
    teams = {t.name: t for t in course.teams}
    notes: list[str] = []
    if late:
        unknown = sorted(set(late) - set(teams))
        if unknown:
            raise UsageError(f"--late {unknown[0]}: no such team in {course.roster}")
        chosen = [teams[name] for name in dict.fromkeys(late)]
        spent = late_days_spent(course)
        for team in chosen:
            if graded.get(team.name) is not None and graded[team.name].late:
                raise UsageError(f"{team.name} has spent a late day on week {week} already")
            for student in [m.id for m in team.members] or [team.name]:
                if spent.get(student, 0) >= course.late_days:
                    raise UsageError(
                        f"{team.name}: {student} has spent all {course.late_days} late days "
                        "(both partners must have one)"
                    )
    else:
        chosen = [t for t in course.teams if t.name not in graded]
        for name, collected in graded.items():
            when = collected.commit or collected.problem or "its command"
            notes.append(f"{name}: collected at {collected.at} ({when}); kept")
    store = os.path.join(directory, STORE)
    at = moment.astimezone().isoformat(timespec="seconds")
    done = []
    for team in chosen:
        entry = Collected(team.name, team.source, None, at, bool(late), moment < due)
        if team.repo is not None:
            try:
                entry = replace(entry, commit=_store(team, store, max_mb))
            except SubmissionError as e:
                entry = replace(entry, problem=str(e))
        done.append(entry)
    if done:
        document = {
            "schema_version": 1,
            "kind": MANIFEST_KIND,
            "week": week,
            "deadline": course.week(week).deadline.isoformat(),
            "collections": [c.as_dict() for c in [*history, *done]],
        }
        os.makedirs(directory, exist_ok=True)
        write_json(path, document)
    return done, notes


def frozen_teams(
    teams: Sequence[Team], manifest: str
) -> tuple[list[Team], dict[str, tuple[str | None, str]]]:
    """The roster's teams as the manifest collected them: a team from git is graded from its
    store at the collected commit. Also the teams that cannot be graded, with (commit, why):
    not collected, or a collection that failed."""
    collections = read_manifest(manifest)
    if not collections:
        raise UsageError(f"no manifest at {manifest}: run `uir collect` first")
    graded = current(collections)
    store = os.path.join(os.path.dirname(os.path.abspath(manifest)), STORE)
    frozen, problems = [], {}
    for team in teams:
        collected = graded.get(team.name)
        if collected is None:
            problems[team.name] = (None, f"not collected (not in {manifest})")
        elif collected.problem is not None:
            problems[team.name] = (None, f"not collected: {collected.problem}")
        elif collected.commit is not None:
            team = replace(team, repo=os.path.join(store, team.name), ref=tag(collected.commit))
        frozen.append(team)
    return frozen, problems

"""A week's grading runs (spec/grading.md section 19): `uir grade --manifest WEEK/manifest.json`
grades into WEEK/runs/K, one directory per run, never overwritten. A rerun resumes the last run
while it is unfinished; a finished week graded again (a regrade: a disputed test removed, a late
collection, a grader fixed) is a new run, which starts from the last run's log, so that only
what changed runs again. Each finished run appends a line to WEEK/history.jsonl: every team's
commit and grade, and for each grade that changed what it was before and in which run."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from datetime import datetime
from typing import Any

from uir.core.errors import UsageError

from .crossgrade import LOG_FILE
from .matrix import REFERENCE

RUNS = "runs"
HISTORY = "history.jsonl"
GRADES = "grades.json"


def _numbers(week_dir: str) -> list[int]:
    try:
        names = os.listdir(os.path.join(week_dir, RUNS))
    except FileNotFoundError:
        return []
    return sorted(int(n) for n in names if n.isdigit())


def _finished(run: str) -> bool:
    try:
        with open(os.path.join(run, GRADES), encoding="utf-8") as f:
            return bool(json.load(f).get("complete"))
    except (OSError, ValueError, AttributeError):
        return False


def _header(log: str) -> dict[str, Any] | None:
    try:
        with open(log, encoding="utf-8") as f:
            return json.loads(f.readline())
    except (OSError, ValueError):
        return None


def run_directory(week_dir: str, header: Mapping[str, Any]) -> str:
    """Where this run of the week goes: the last run while it is unfinished and of the same
    log (`header`: the log's first line), else a new one, its log started from the last run's
    when that is of the same log."""
    numbers = _numbers(week_dir)
    last = os.path.join(week_dir, RUNS, str(numbers[-1])) if numbers else None
    if (
        last is not None
        and not _finished(last)
        and _header(os.path.join(last, LOG_FILE))
        in (
            None,
            dict(header),
        )
    ):
        return last
    run = os.path.join(week_dir, RUNS, str(numbers[-1] + 1 if numbers else 1))
    try:
        os.makedirs(run)
        if last is not None and _header(os.path.join(last, LOG_FILE)) == dict(header):
            shutil.copyfile(os.path.join(last, LOG_FILE), os.path.join(run, LOG_FILE))
    except OSError as e:
        raise UsageError(f"cannot make the run directory {run}: {e.strerror or e}") from e
    return run


def week_files(week_dir: str, run: str) -> list[str]:
    """What of the week's directory a team's build or run must not see, beside this run's own
    files: every file and directory of it but the one holding `run`, and the other runs."""
    run = os.path.abspath(run)
    hidden = []
    for directory in (week_dir, os.path.join(week_dir, RUNS)):
        for name in sorted(os.listdir(directory)) if os.path.isdir(directory) else []:
            path = os.path.abspath(os.path.join(directory, name))
            if path != run and not run.startswith(path + os.sep):
                hidden.append(path)
    return hidden


def history(week_dir: str) -> list[dict[str, Any]]:
    """The finished runs of a week, oldest first."""
    try:
        with open(os.path.join(week_dir, HISTORY), encoding="utf-8") as f:
            return [json.loads(line) for line in f if line.strip()]
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {os.path.join(week_dir, HISTORY)}: {e}") from None


def record(week_dir: str, run: str, document: Mapping[str, Any], reason: str | None) -> None:
    """Append the finished run `run` (its grades `document`) to the week's history."""
    before = {}
    for entry in history(week_dir):
        for team in entry["teams"]:
            before[team["name"]] = {"run": entry["run"], **team}
    teams = [
        {"name": row["name"], "commit": row["commit"], "percent": row["percent"]}
        for row in document["compilers"]
        if row["name"] != REFERENCE
    ]
    changes = []
    for team in teams:
        old = before.get(team["name"])
        moved = old is not None and (old["commit"], old["percent"]) != (
            team["commit"],
            team["percent"],
        )
        if moved or (old is None and before):  # the first run changes nothing
            changes.append({"name": team["name"], "before": old, "after": team})
    entry = {
        "run": os.path.basename(run),
        "finished_at": datetime.now().astimezone().isoformat(timespec="seconds"),
        "reason": reason,
        "teams": teams,
        "changes": changes,
    }
    with open(os.path.join(week_dir, HISTORY), "a", encoding="utf-8") as f:
        f.write(json.dumps(entry, ensure_ascii=False) + "\n")


def current_grades(week_dir: str) -> dict[str, Any] | None:
    """The grades of the week's last finished run, or None when it has none."""
    runs = history(week_dir)
    if not runs:
        return None
    with open(os.path.join(week_dir, RUNS, runs[-1]["run"], GRADES), encoding="utf-8") as f:
        return json.load(f)

"""The gradebook (spec/grading.md section 21): every week of a course combined into each
student's final grade, by the syllabus's weights, and a CSV that an LMS imports.

A student's components, each a score from 0 to 100 weighed by the course file:
- tests: per week with validate-tests reports, the team's correct tests (valid ones, and
  duplicates at `duplicate_credit`) out of `tests_per_week`, at most 100; wrong tests count 0;
- correctness: per week with a compiler, the team's grade in the week's last finished run;
- performance: per week with a perf.json, the team's score there;
- each [[entered]] component: the student's score in its CSV, else the team's.
A component's score is the mean of its weeks that have a grade yet. The bonus is the team's raw
bonus points over the weeks' runs times `per_point`, at most `max`, added to the total; the
letter is the first whose cutoff the total reaches.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from uir.cli.grading.report import write_json
from uir.cli.grading.validate import DUPLICATE, VALID, entry_status
from uir.core.errors import UsageError

from .collection import late_days_spent
from .course import Course, Entered
from .roster import Member, Team
from .runs import current_grades

KIND = "uir-gradebook"


def _read_json(path: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"cannot read {path}: {e}") from None


def _tests_week(reports: Sequence[str]) -> dict[str, dict[str, int]]:
    """Per team (the author of its tests: their directory's name), its valid, duplicate and
    wrong tests in the week's validate-tests reports."""
    counts: dict[str, dict[str, int]] = {}
    for path in reports:
        document = _read_json(path)
        for entry in document.get("tests", []):
            team = Path(str(entry.get("name", ""))).parent.name
            tally = counts.setdefault(team, {"valid": 0, "duplicate": 0, "wrong": 0})
            tally[entry_status(entry)] += 1
    return counts


def _entered_scores(entered: Entered) -> dict[tuple[str, str], float]:
    """(`student` or `team`, id): score, from the component's CSV."""
    try:
        text = Path(entered.file).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {entered.file} ({entered.name}): {e}") from None
    rows = csv.DictReader(io.StringIO(text))
    fields = set(rows.fieldnames or ())
    if "score" not in fields or not fields & {"student", "team"}:
        raise UsageError(f"{entered.file}: needs a column score and a column student or team")
    scores = {}
    for line, row in enumerate(rows, start=2):
        try:
            score = float(row["score"])
        except (TypeError, ValueError):
            raise UsageError(
                f"{entered.file}:{line}: score {row['score']!r} is no number"
            ) from None
        if not 0 <= score <= 100:
            raise UsageError(f"{entered.file}:{line}: score {score:g} is not from 0 to 100")
        for kind in ("student", "team"):
            if row.get(kind):
                scores[kind, row[kind]] = score
    return scores


def _mean(values: Sequence[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _weekly(course: Course) -> tuple[dict[str, dict[int, float]], list[str], dict[str, Any]]:
    """Per computed component, per team, per week, the team's score; the notes; the raw bonus
    points per team and the weeks that have a grade, per component."""
    scores: dict[str, dict[str, dict[int, float]]] = {
        "tests": {},
        "correctness": {},
        "performance": {},
    }
    details: dict[str, dict[int, Any]] = {}
    graded: dict[str, list[int]] = {k: [] for k in scores}
    bonus: dict[str, int] = {}
    notes = []
    names = [t.name for t in course.teams]
    for week in course.weeks:
        if week.tests:
            counts = _tests_week(week.tests)
            graded["tests"].append(week.number)
            for team in names:
                found = counts.get(team, {"valid": 0, "duplicate": 0, "wrong": 0})
                correct = found[VALID] + course.duplicate_credit * found[DUPLICATE]
                score = 100 * min(correct, course.tests_per_week) / course.tests_per_week
                scores["tests"].setdefault(team, {})[week.number] = score
                details.setdefault(team, {})[week.number] = found
        if week.compiler:
            document = current_grades(course.week_dir(week.number))
            if document is None:
                notes.append(f"week {week.number}: no finished run of `uir grade --manifest` yet")
            else:
                graded["correctness"].append(week.number)
                rows = {r["name"]: r["percent"] for r in document["compilers"]}
                authors = {a["author"]: a["bonus"] for a in document["authors"] if a["team"]}
                for team in names:
                    scores["correctness"].setdefault(team, {})[week.number] = rows.get(team, 0.0)
                    bonus[team] = bonus.get(team, 0) + authors.get(team, 0)
        if week.perf is not None:
            document = _read_json(week.perf)
            graded["performance"].append(week.number)
            rows = {r["name"]: r["score"] for r in document.get("teams", [])}
            for team in names:
                scores["performance"].setdefault(team, {})[week.number] = rows.get(team, 0.0)
    return scores, notes, {"bonus": bonus, "graded": graded, "tests": details}


def gradebook(course: Course) -> dict[str, Any]:
    """The gradebook document: every student's components, bonus, total and letter."""
    weekly, notes, found = _weekly(course)
    found["late_days"] = late_days_spent(course)
    entered = {e.name: _entered_scores(e) for e in course.entered}
    students = []
    for team in course.teams:
        if not team.members:
            notes.append(f"team {team.name} has no members: it is in no student's row")
        for member in team.members:
            students.append(_student(course, team, member, weekly, entered, found))
    return {
        "schema_version": 1,
        "kind": KIND,
        "course": course.path,
        "weights": {
            **course.weights,
            **{e.name: e.weight for e in course.entered},
        },
        "bonus_rule": {"max": course.bonus_max, "per_point": course.bonus_per_point},
        "letters": dict(course.letters),
        "graded_weeks": found["graded"],
        "students": students,
        "notes": notes,
    }


def _student(
    course: Course,
    team: Team,
    member: Member,
    weekly: Mapping[str, Mapping[str, Mapping[int, float]]],
    entered: Mapping[str, Mapping[tuple[str, str], float]],
    found: Mapping[str, Any],
) -> dict[str, Any]:
    components: dict[str, dict[str, Any]] = {}
    missing = []
    for name, weight in course.weights.items():
        weeks = dict(weekly[name].get(team.name, {}))
        components[name] = {"weight": weight, "score": _mean(list(weeks.values())), "weeks": weeks}
    if "tests" in components:
        components["tests"]["counts"] = found["tests"].get(team.name, {})
    for component in course.entered:
        scores = entered[component.name]
        score = scores.get(("student", member.id), scores.get(("team", team.name)))
        if score is None:
            missing.append(component.name)
        components[component.name] = {"weight": component.weight, "score": score}
    points = found["bonus"].get(team.name, 0)
    bonus = min(course.bonus_max, points * course.bonus_per_point)
    total = bonus + sum(c["weight"] * (c["score"] or 0.0) / 100 for c in components.values())
    total = round(total, 4)
    return {
        "id": member.id,
        "name": member.name,
        "email": member.email,
        "team": team.name,
        "components": components,
        "bonus": {"points": points, "percent": round(bonus, 4)},
        "total": total,
        "letter": course.letter(total),
        "missing": missing,
        "late_days_spent": found["late_days"].get(member.id, 0),
    }


def columns(document: Mapping[str, Any]) -> list[tuple[str, str, int | None]]:
    """The assignments of the LMS's CSV, in order: (column title, component, week or None)."""
    found = []
    weeks = document["graded_weeks"]
    for name, label in (("tests", "tests"), ("correctness", "compiler"), ("performance", "perf")):
        if name in document["weights"]:
            found += [(f"{label} week {w}", name, w) for w in weeks[name]]
    for name in document["weights"]:
        if name not in ("tests", "correctness", "performance"):
            found.append((name, name, None))
    return found


def _cell(value: float | None) -> str:
    return "" if value is None else f"{value:.2f}"


def lms_csv(document: Mapping[str, Any]) -> str:
    """One row per student, one column per assignment (a score 0-100; empty: none), then the
    bonus (percent of the final grade), the total and the letter."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    assignments = columns(document)
    titles = (c[0] for c in assignments)
    writer.writerow(["id", "name", "email", "team", *titles, "bonus", "total", "letter"])
    for student in document["students"]:
        cells = []
        for _, component, week in assignments:
            entry = student["components"][component]
            cells.append(_cell(entry["score"] if week is None else entry["weeks"].get(week)))
        who = [student[key] for key in ("id", "name", "email", "team")]
        bonus, total = _cell(student["bonus"]["percent"]), _cell(student["total"])
        writer.writerow([*who, *cells, bonus, total, student["letter"]])
    return out.getvalue()


def text(document: Mapping[str, Any]) -> str:
    lines = [f"{'student':<16} {'team':<16} {'total':>7}  letter  late days"]
    for s in sorted(document["students"], key=lambda s: (-s["total"], s["id"])):
        missing = f"  (missing: {', '.join(s['missing'])})" if s["missing"] else ""
        lines.append(
            f"{s['id']:<16} {s['team']:<16} {s['total']:7.2f}  {s['letter']:<6}  "
            f"{s['late_days_spent']}{missing}"
        )
    lines += [f"note: {note}" for note in document["notes"]]
    return "\n".join(lines) + "\n"


def write(directory: str, document: Mapping[str, Any]) -> list[str]:
    """gradebook.json and gradebook.csv in `directory`; their paths."""
    try:
        os.makedirs(directory, exist_ok=True)
        json_path = os.path.join(directory, "gradebook.json")
        write_json(json_path, dict(document))
        csv_path = os.path.join(directory, "gradebook.csv")
        with open(f"{csv_path}.tmp", "w", encoding="utf-8", newline="") as f:
            f.write(lms_csv(document))
        os.replace(f"{csv_path}.tmp", csv_path)
    except OSError as e:
        raise UsageError(f"cannot write the gradebook to {directory}: {e.strerror or e}") from e
    return [json_path, csv_path]

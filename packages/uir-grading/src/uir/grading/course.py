"""A course file (spec/grading.md section 20): the semester around the grader. It names the
roster, the weeks with their deadlines and the reports each week's grade comes from, the late
days, the weights of the syllabus, how raw bonus points become a bonus, and the letter
cutoffs. `uir collect` reads it for deadlines and late days, `uir gradebook` for the rest.

    roster = "roster.toml"
    timezone = "America/New_York"
    late_days = 3

    [weights]
    tests = 5
    correctness = 25
    performance = 10

    [[week]]
    week = 1
    deadline = "2027-01-27 10:00"
    tests = ["validity/week1.json"]
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from uir.core.errors import UsageError

from .roster import Team, load_roster

WEIGHTS = ("tests", "correctness", "performance")
_KEYS = {
    "roster",
    "timezone",
    "late_days",
    "weeks_dir",
    "weights",
    "tests",
    "bonus",
    "letters",
    "week",
    "entered",
}
_WEEK_KEYS = {"week", "deadline", "tests", "perf", "compiler"}
_ENTERED_KEYS = {"name", "weight", "file"}
_NAME = re.compile(r"[a-z][a-z0-9_-]*")


class FileError(UsageError):
    """A usage error in a file the command read (the course file, its roster): reported as
    `FILE:LINE: error: ...` against that file."""

    def __init__(self, message: str, path: str, line: int | None = None) -> None:
        super().__init__(message, line)
        self.path = path


@dataclass(frozen=True)
class Week:
    """One week of the course: when its compiler is due, and where its other grades come from."""

    number: int
    deadline: datetime  # aware: the course's timezone, or the offset written
    tests: tuple[str, ...] = ()  # validate-tests reports (JSON) of the week's tests
    perf: str | None = None  # the perf.json of `uir perf`, in performance weeks
    compiler: bool = True  # a compiler is due and graded by `uir grade`


@dataclass(frozen=True)
class Entered:
    """A component entered by hand (style, quizzes, the project): a CSV of scores 0-100."""

    name: str
    weight: float
    file: str


@dataclass(frozen=True)
class Course:
    path: str
    roster: str
    teams: tuple[Team, ...]
    weeks: tuple[Week, ...]
    weights: dict[str, float]
    late_days: int = 3
    weeks_dir: str = "weeks"
    tests_per_week: int = 10
    duplicate_credit: float = 1.0
    bonus_max: float = 0.0
    bonus_per_point: float = 0.0
    letters: tuple[tuple[str, float], ...] = (("A", 90.0), ("B", 80.0), ("C", 70.0), ("F", 0.0))
    entered: tuple[Entered, ...] = ()

    def week(self, number: int) -> Week:
        for week in self.weeks:
            if week.number == number:
                return week
        raise FileError(f"no week {number} (it lists {self._numbers()})", self.path)

    def _numbers(self) -> str:
        return ", ".join(str(w.number) for w in self.weeks) or "none"

    def week_dir(self, number: int) -> str:
        """Where week `number`'s collections and grading runs are kept."""
        return os.path.join(self.weeks_dir, f"week{number}")

    def letter(self, percent: float) -> str:
        for letter, cutoff in self.letters:
            if percent >= cutoff:
                return letter
        return self.letters[-1][0]


def _number(table: dict[str, object], key: str, where: str, low: float = 0.0) -> float:
    value = table[key]
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value < low:
        raise UsageError(f"{where}: {key} must be a number of at least {low:g}")
    return float(value)


def _deadline(text: object, zone: ZoneInfo, where: str) -> datetime:
    if not isinstance(text, str):
        raise UsageError(f'{where}: deadline must be a string such as "2027-01-27 10:00"')
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise UsageError(f"{where}: deadline {text!r} is not an ISO 8601 date and time") from None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=zone)


def _paths(value: object, base: str, where: str) -> tuple[str, ...]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
        raise UsageError(f"{where}: must be a path or a list of paths")
    return tuple(os.path.join(base, i) for i in items)


def _week(entry: object, zone: ZoneInfo, base: str) -> Week:
    if not isinstance(entry, dict) or not isinstance(entry.get("week"), int):
        raise UsageError("each [[week]] needs week = N")
    where = f"week {entry['week']}"
    unknown = sorted(set(entry) - _WEEK_KEYS)
    if unknown:
        raise UsageError(f"{where}: unknown key {unknown[0]!r} ({', '.join(sorted(_WEEK_KEYS))})")
    if "deadline" not in entry:
        raise UsageError(f"{where}: needs a deadline")
    perf = entry.get("perf")
    if perf is not None and not isinstance(perf, str):
        raise UsageError(f"{where}: perf must be the path of a perf.json")
    compiler = entry.get("compiler", True)
    if not isinstance(compiler, bool):
        raise UsageError(f"{where}: compiler must be true or false")
    return Week(
        entry["week"],
        _deadline(entry["deadline"], zone, where),
        _paths(entry.get("tests", []), base, f"{where}: tests"),
        os.path.join(base, perf) if perf else None,
        compiler,
    )


def _entered(entry: object, base: str) -> Entered:
    if not isinstance(entry, dict):
        raise UsageError("each [[entered]] must be a table")
    unknown = sorted(set(entry) - _ENTERED_KEYS)
    missing = sorted(_ENTERED_KEYS - set(entry))
    if unknown or missing:
        raise UsageError(f"[[entered]] has name, weight and file (not {(unknown or missing)[0]})")
    name = entry["name"]
    if not isinstance(name, str) or not _NAME.fullmatch(name) or name in WEIGHTS:
        raise UsageError(f"[[entered]] name {name!r}: lower case, not one of {', '.join(WEIGHTS)}")
    file = entry["file"]
    if not isinstance(file, str):
        raise UsageError(f"[[entered]] {name}: file must be a path")
    return Entered(name, _number(entry, "weight", f"[[entered]] {name}"), os.path.join(base, file))


def _table(data: dict[str, object], key: str) -> dict[str, object]:
    table = data.get(key, {})
    if not isinstance(table, dict):
        raise UsageError(f"[{key}] must be a table")
    return table


def _letters(table: dict[str, object]) -> tuple[tuple[str, float], ...]:
    letters = tuple(
        sorted(
            ((name, _number(table, name, "[letters]")) for name in table),
            key=lambda item: -item[1],
        )
    )
    if letters and letters[-1][1] != 0:
        raise UsageError("[letters] needs a letter at 0 (the syllabus's F), for every grade below")
    return letters or Course.letters


def load_course(path: str) -> Course:
    """The course file at `path`; relative paths in it are taken against its directory."""
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read the course file {path}: {e}") from None
    except tomllib.TOMLDecodeError as e:
        raise FileError(f"not valid TOML: {e}", path) from None
    try:
        return _course(data, path)
    except FileError:
        raise
    except UsageError as e:
        raise FileError(e.message, path, e.line) from None


def _course(data: dict[str, object], path: str) -> Course:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise UsageError(f"unknown key {unknown[0]!r} (a course has {', '.join(sorted(_KEYS))})")
    base = os.path.dirname(os.path.abspath(path))
    roster = data.get("roster")
    if not isinstance(roster, str):
        raise UsageError('needs roster = "FILE"')
    roster = os.path.join(base, roster)
    try:
        zone = ZoneInfo(str(data.get("timezone", "UTC")))
    except (ZoneInfoNotFoundError, ValueError):
        raise UsageError(f"unknown timezone {data.get('timezone')!r}") from None
    weeks = tuple(_week(entry, zone, base) for entry in _list(data, "week"))
    numbers = [w.number for w in weeks]
    if len(set(numbers)) != len(numbers):
        raise UsageError("a week is listed twice")
    weights_table = _table(data, "weights")
    unknown = sorted(set(weights_table) - set(WEIGHTS))
    if unknown:
        raise UsageError(
            f"[weights]: unknown {unknown[0]!r} (computed: {', '.join(WEIGHTS)}; a "
            "component entered by hand is an [[entered]] table)"
        )
    weights = {k: _number(weights_table, k, "[weights]") for k in WEIGHTS if k in weights_table}
    tests, bonus = _table(data, "tests"), _table(data, "bonus")
    late = data.get("late_days", Course.late_days)
    if isinstance(late, bool) or not isinstance(late, int) or late < 0:
        raise UsageError("late_days must be a whole number of at least 0")
    weeks_dir = data.get("weeks_dir", Course.weeks_dir)
    if not isinstance(weeks_dir, str):
        raise UsageError("weeks_dir must be a path")
    entered = tuple(_entered(entry, base) for entry in _list(data, "entered"))
    if len({e.name for e in entered}) != len(entered):
        raise UsageError("an [[entered]] component is listed twice")
    return Course(
        path=path,
        roster=roster,
        teams=_roster(roster),
        weeks=tuple(sorted(weeks, key=lambda w: w.number)),
        weights=weights,
        late_days=late,
        weeks_dir=os.path.join(base, weeks_dir),
        tests_per_week=int(_number(tests, "per_week", "[tests]", 1)) if "per_week" in tests else 10,
        duplicate_credit=(
            _number(tests, "duplicate_credit", "[tests]") if "duplicate_credit" in tests else 1.0
        ),
        bonus_max=_number(bonus, "max", "[bonus]") if "max" in bonus else 0.0,
        bonus_per_point=_number(bonus, "per_point", "[bonus]") if "per_point" in bonus else 0.0,
        letters=_letters(_table(data, "letters")),
        entered=entered,
    )


def _roster(path: str) -> tuple[Team, ...]:
    try:
        return tuple(load_roster(path))
    except UsageError as e:
        raise FileError(e.message, path, e.line) from None


def _list(data: dict[str, object], key: str) -> list[object]:
    value = data.get(key, [])
    if not isinstance(value, list):
        raise UsageError(f"{key} must be an array of tables ([[{key}]])")
    return value

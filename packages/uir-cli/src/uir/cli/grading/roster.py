"""A course's roster: the teams whose compilers are graded, and how each gets its compiler.

A roster is a TOML file with one `[[team]]` table per team (spec/grading.md section 14):

    [[team]]
    name = "alice"
    command = "python3 alice/compiler.py"     # a compiler on this machine

    [[team]]
    name = "bob"
    repo = "https://git.example.edu/bob.git"  # or a path; relative to the roster's directory
    ref = "week3"                             # a branch, a tag or a commit

A team from git declares in its repository's `uir-submission.toml` how its compiler is run
(`command`, relative to the checkout) and, optionally, built (`build`).
"""

from __future__ import annotations

import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

from uir.core.errors import UsageError

SUBMISSION_FILE = "uir-submission.toml"
_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]*")
_KEYS = {"name", "command", "repo", "ref"}


@dataclass(frozen=True)
class Team:
    """One roster entry: either a local `command` (resolved against `base`), or `repo` at `ref`."""

    name: str
    line: int | None  # the line of its `[[team]]` header in the roster
    base: str  # the roster's directory, which relative paths are taken against
    command: str | None = None
    repo: str | None = None
    ref: str | None = None

    @property
    def source(self) -> str:
        return self.command if self.command is not None else f"{self.repo}@{self.ref}"


def _header_lines(text: str) -> list[int]:
    """The line number of each `[[team]]` header: tomllib keeps no positions, and a roster's
    errors should still point at the team they concern."""
    return [
        n
        for n, line in enumerate(text.splitlines(), start=1)
        if re.fullmatch(r"\s*\[\[\s*team\s*\]\]\s*(#.*)?", line)
    ]


def _team(entry: object, line: int | None, base: str) -> Team:
    if not isinstance(entry, dict):
        raise UsageError("a team must be a table", line)
    unknown = sorted(set(entry) - _KEYS)
    if unknown:
        raise UsageError(
            f"unknown key {unknown[0]!r} (a team has {', '.join(sorted(_KEYS))})", line
        )
    for key, value in entry.items():
        if not isinstance(value, str) or not value.strip():
            raise UsageError(f"{key} must be a non-empty string", line)
    name = entry.get("name")
    if name is None:
        raise UsageError("a team needs a name", line)
    if not _NAME.fullmatch(name):
        raise UsageError(f"team name {name!r} must be letters, digits, '_', '.' or '-'", line)
    command, repo, ref = entry.get("command"), entry.get("repo"), entry.get("ref")
    if (command is None) == (repo is None):
        raise UsageError(f"team {name!r} needs exactly one of command and repo", line)
    if repo is not None and ref is None:
        raise UsageError(f"team {name!r} needs a ref (branch, tag or commit) for its repo", line)
    if command is not None and ref is not None:
        raise UsageError(f"team {name!r} has a ref but no repo", line)
    if ref is not None and ref.startswith("-"):  # git would read it as an option
        raise UsageError(f"team {name!r}: a ref cannot start with '-'", line)
    return Team(name, line, base, command, repo, ref)


def load_roster(path: str) -> list[Team]:
    """The teams of a roster file, in file order; a UsageError with the line for a bad roster."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read the roster: {e}") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        found = re.search(r"line (\d+)", str(e))  # Python 3.11 gives the line only in words
        line = int(found[1]) if found else None
        raise UsageError(f"not valid TOML: {e}", line) from None
    unknown = sorted(set(data) - {"team"})
    if unknown:
        raise UsageError(f"unknown top-level key {unknown[0]!r} (a roster has [[team]] tables)")
    entries = data.get("team")
    if not isinstance(entries, list) or not entries:
        raise UsageError("the roster lists no team (add [[team]] tables)")
    headers = _header_lines(text)
    lines = headers if len(headers) == len(entries) else [None] * len(entries)
    base = os.path.dirname(os.path.abspath(path))
    teams = [_team(entry, line, base) for entry, line in zip(entries, lines, strict=True)]
    seen: set[str] = set()
    for team in teams:
        if team.name in seen:
            raise UsageError(f"team {team.name!r} is listed twice", team.line)
        seen.add(team.name)
    return teams

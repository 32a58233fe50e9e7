"""A course's roster: the teams whose compilers are graded, and how each gets its compiler.

A roster is a TOML file with one `[[team]]` table per team (spec/grading.md section 14):

    [[team]]
    name = "alice"
    command = "python3 alice/compiler.py"     # a compiler on this machine

    [[team]]
    name = "bob"
    repo = "https://git.example.edu/bob.git"  # or a path; relative to the roster's directory
    ref = "week3"                             # a branch, a tag or a commit
    members = [{id = "bob7", name = "Bob", email = "bob7@example.edu"}]

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
_KEYS = {"name", "command", "repo", "ref", "members"}
_MEMBER_KEYS = {"id", "name", "email"}


@dataclass(frozen=True)
class Member:
    """A student of a team: `id` (the LMS's, unique in the roster), and how to address them."""

    id: str
    name: str = ""
    email: str = ""


@dataclass(frozen=True)
class Team:
    """One roster entry: either a local `command` (resolved against `base`), or `repo` at `ref`."""

    name: str
    line: int | None  # the line of its `[[team]]` header in the roster
    base: str  # the roster's directory, which relative paths are taken against
    command: str | None = None
    repo: str | None = None
    ref: str | None = None
    members: tuple[Member, ...] = ()

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
    members = _members(entry.pop("members", []), line)
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
    return Team(name, line, base, command, repo, ref, members)


def _members(entries: object, line: int | None) -> tuple[Member, ...]:
    """`members = [{id = "ada1", name = "Ada L.", email = "ada1@example.edu"}, ...]`."""
    if not isinstance(entries, list) or not all(isinstance(e, dict) for e in entries):
        raise UsageError(
            "members must be a list of tables: [{id = ..., name = ..., email = ...}]", line
        )
    members = []
    for entry in entries:
        unknown = sorted(set(entry) - _MEMBER_KEYS)
        if unknown:
            raise UsageError(
                f"unknown member key {unknown[0]!r} (a member has email, id, name)", line
            )
        for key, value in entry.items():
            if not isinstance(value, str) or not value.strip():
                raise UsageError(f"a member's {key} must be a non-empty string", line)
        if "id" not in entry:
            raise UsageError("a member needs an id", line)
        members.append(Member(entry["id"], entry.get("name", ""), entry.get("email", "")))
    return tuple(members)


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
    students: dict[str, str] = {}
    for team in teams:
        if team.name in seen:
            raise UsageError(f"team {team.name!r} is listed twice", team.line)
        seen.add(team.name)
        for member in team.members:
            if member.id in students:
                where = students[member.id]
                raise UsageError(f"student {member.id!r} is a member of {where!r} too", team.line)
            students[member.id] = team.name
    return teams

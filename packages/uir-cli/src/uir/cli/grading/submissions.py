"""Turning a roster's teams into compilers to grade: a local command as it is; a repository is
cloned (or updated), checked out at its ref, built with the command it declares, and its commit
recorded. A team that cannot be prepared gets a verdict saying why, and grading goes on."""

from __future__ import annotations

import os
import subprocess
import tomllib
from dataclasses import dataclass

from .harness import Compiler, student_compiler
from .roster import SUBMISSION_FILE, Team

GIT_TIMEOUT_S = 300.0
BUILD_TIMEOUT_S = 600.0
_SUBMISSION_KEYS = {"command", "build"}


class SubmissionError(Exception):
    """Why a team's compiler could not be prepared: its verdict in every report."""


@dataclass(frozen=True)
class Submission:
    """A team ready to grade (`compiler` set), or not (`problem` says why)."""

    team: Team
    compiler: Compiler | None
    commit: str | None  # the commit graded, for a team from git
    problem: str | None = None

    @property
    def name(self) -> str:
        return self.team.name


def _git(args: list[str], cwd: str | None = None) -> str:
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0"},  # never wait for a password
        )
    except FileNotFoundError:
        raise SubmissionError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise SubmissionError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = done.stderr.strip().splitlines() or [f"exit status {done.returncode}"]
        raise SubmissionError(f"git {args[0]} failed: {lines[-1]}")
    return done.stdout.strip()


def _repo_url(team: Team) -> str:
    """A URL as written; a path (no scheme, not scp-like `host:path`) against the roster's dir."""
    repo = team.repo or ""
    if "://" in repo or (":" in repo and not os.path.exists(repo)):
        return repo
    return os.path.normpath(os.path.join(team.base, repo))


def checkout(team: Team, workdir: str) -> tuple[str, str]:
    """Clone or update the team's repository under `workdir` and check out its ref, detached;
    (the checkout's directory, the commit's full hash)."""
    directory = os.path.join(workdir, team.name)
    if os.path.isdir(os.path.join(directory, ".git")):
        _git(["remote", "set-url", "origin", _repo_url(team)], directory)
        _git(["fetch", "--quiet", "--force", "--tags", "origin"], directory)
    else:
        os.makedirs(workdir, exist_ok=True)
        _git(["clone", "--quiet", "--no-checkout", _repo_url(team), directory])
    ref = team.ref or ""
    for candidate in (f"refs/remotes/origin/{ref}", f"refs/tags/{ref}", ref):
        try:
            commit = _git(
                ["rev-parse", "--verify", "--quiet", f"{candidate}^{{commit}}"], directory
            )
            break
        except SubmissionError:
            continue
    else:
        raise SubmissionError(f"no branch, tag or commit {ref!r} in {team.repo}")
    _git(["checkout", "--quiet", "--force", "--detach", commit], directory)
    _git(["clean", "--quiet", "-d", "--force", "-x"], directory)  # no leftovers of a last build
    return directory, commit


def _declared(directory: str) -> tuple[str, str | None]:
    """The submission's (command, build) from its SUBMISSION_FILE."""
    path = os.path.join(directory, SUBMISSION_FILE)
    try:
        with open(path, "rb") as f:
            data = tomllib.load(f)
    except FileNotFoundError:
        raise SubmissionError(f"the repository has no {SUBMISSION_FILE}") from None
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise SubmissionError(f"{SUBMISSION_FILE}: {e}") from None
    unknown = sorted(set(data) - _SUBMISSION_KEYS)
    if unknown:
        raise SubmissionError(f"{SUBMISSION_FILE}: unknown key {unknown[0]!r}")
    command, build = data.get("command"), data.get("build")
    if not isinstance(command, str) or not command.strip():
        raise SubmissionError(f"{SUBMISSION_FILE}: command must be a non-empty string")
    if build is not None and (not isinstance(build, str) or not build.strip()):
        raise SubmissionError(f"{SUBMISSION_FILE}: build must be a non-empty string")
    return command, build


def build(directory: str, command: str) -> None:
    """Run a submission's build command in its checkout; a SubmissionError if it fails."""
    try:
        done = subprocess.run(
            command,
            shell=True,
            cwd=directory,
            capture_output=True,
            text=True,
            timeout=BUILD_TIMEOUT_S,
            stdin=subprocess.DEVNULL,
        )
    except subprocess.TimeoutExpired:
        raise SubmissionError(f"the build took longer than {BUILD_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        lines = (done.stderr or done.stdout).strip().splitlines() or [""]
        raise SubmissionError(f"the build failed (exit {done.returncode}): {lines[-1]}")


def prepare(team: Team, workdir: str) -> Submission:
    """The team's compiler, ready to run; for a team from git, checked out and built under
    `workdir`. Never raises for the team's sake: a problem becomes the Submission's verdict."""
    commit = None
    try:
        if team.command is not None:
            return Submission(team, student_compiler(team.command, team.base), None)
        directory, commit = checkout(team, workdir)
        command, build_command = _declared(directory)
        if build_command is not None:
            build(directory, build_command)
        return Submission(team, student_compiler(command, directory), commit)
    except (SubmissionError, ValueError) as e:
        return Submission(team, None, commit, str(e))

"""Turning a roster's teams into compilers to grade (spec/grading.md section 14): a local command
as it is; a repository is fetched (shallow where its ref is a branch or a tag, within the
checkout limit), checked out at its ref, built with the command it declares, and its commit
recorded. git runs as the grader (it needs the network); the build is the team's code, so it
runs in the sandbox, without network, under BUILD_LIMITS. A team that cannot be prepared gets a
verdict saying why, and grading goes on."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass, replace

from uir.cli.grading.harness import Compiler, student_compiler
from uir.cli.grading.isolation import NO_ISOLATION, Isolation, compiler_environment, isolate
from uir.cli.grading.judge import signal_name
from uir.cli.grading.limits import CHECKOUT_MB, MIB, Limits, apply_rlimits
from uir.cli.grading.sandbox import ExecLauncher, Outcome, RunStatus, cannot_start, run_limited

from .roster import SUBMISSION_FILE, Team

GIT_TIMEOUT_S = 300.0
# A build is a compiler's compiler: more time, memory, processes and file size than one test run.
BUILD_LIMITS = Limits(
    wall_s=600.0, cpu_s=1200, memory_mb=8192, output_bytes=4 * MIB, file_mb=2048, processes=512
)
BUILD_LINE_KEPT = 300
# The team's log, next to its checkout (CHECKOUT + TEAM_LOG): the whole output of its build
# (standard error into standard output, as a terminal shows them), or git's whole standard error
# when its repository could not be fetched.
TEAM_LOG = ".log"
# What a line that says what went wrong says.
_MEANINGFUL = re.compile(r"error|fatal|failed|cannot|can't|not found|no such|denied", re.I)
_SUBMISSION_KEYS = {"command", "build"}


class SubmissionError(Exception):
    """Why a team's compiler could not be prepared: its verdict in every report; `log`, what the
    tool that failed said in full, for the team's log."""

    def __init__(self, message: str, log: str = "") -> None:
        super().__init__(message)
        self.log = log


class TooLarge(SubmissionError):
    """A repository over the checkout limit."""


@dataclass(frozen=True)
class Submission:
    """A team ready to grade (`compiler` set), or not (`problem` says why)."""

    team: Team
    compiler: Compiler | None
    commit: str | None  # the commit graded, for a team from git
    problem: str | None = None
    isolation: str | None = None  # the isolation.Mode its compiler runs in, once isolated

    @property
    def name(self) -> str:
        return self.team.name


def _git(args: list[str], cwd: str | None = None, max_mb: int = 0) -> str:
    """Run git as the grader; its standard output. With `max_mb`, no file git writes (a pack, a
    checked-out file) may pass that size: SIGXFSZ stays ignored, as Python leaves it, so git
    fails with EFBIG ("File too large") instead of dying of a signal, and that is a verdict."""
    rlimits = Limits(cpu_s=0, memory_mb=0, file_mb=max_mb).rlimits() if max_mb else []
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            # Never wait for a password; messages in English, which the check below reads.
            env={**os.environ, "GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C"},
            restore_signals=False,
            preexec_fn=(lambda: apply_rlimits(rlimits)) if rlimits else None,
        )
    except FileNotFoundError:
        raise SubmissionError("git is not installed") from None
    except subprocess.TimeoutExpired:
        raise SubmissionError(f"git {args[0]} took longer than {GIT_TIMEOUT_S:g} s") from None
    if done.returncode != 0:
        if max_mb and "File too large" in done.stderr:
            raise TooLarge(f"the repository is over the checkout limit of {max_mb} MiB")
        line = first_meaningful(done.stderr) or f"exit status {done.returncode}"
        raise SubmissionError(f"git {args[0]} failed: {line}", done.stderr)
    return done.stdout.strip()


def _repo_url(team: Team) -> str:
    """A URL as written; a path (no scheme, not scp-like `host:path`) against the roster's dir."""
    repo = team.repo or ""
    if "://" in repo or (":" in repo and not os.path.exists(repo)):
        return repo
    return os.path.normpath(os.path.join(team.base, repo))


def _fetch(directory: str, team: Team, max_mb: int) -> str:
    """Fetch the team's ref into the repository at `directory`; the commit's full hash. A branch
    (looked up first) or a tag is fetched alone and shallow, its commit without its history;
    any other ref (a commit) needs the history: every branch and tag is fetched."""
    ref = team.ref or ""
    wanted = [f"refs/heads/{ref}", f"refs/tags/{ref}"]
    listed = _git(["ls-remote", "--", "origin", *wanted], directory).splitlines()
    remote = {line.partition("\t")[2] for line in listed}
    for name in wanted:
        if name in remote:
            fetch = ["fetch", "--quiet", "--force", "--no-tags", "--depth", "1", "origin", name]
            _git(fetch, directory, max_mb)
            return _git(["rev-parse", "--verify", "--quiet", "FETCH_HEAD^{commit}"], directory)
    everything = ["fetch", "--quiet", "--force", "--tags", "origin"]
    if _git(["rev-parse", "--is-shallow-repository"], directory) == "true":
        everything.append("--unshallow")
    _git(everything, directory, max_mb)
    try:
        return _git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], directory)
    except SubmissionError:
        raise SubmissionError(f"no branch, tag or commit {ref!r} in {team.repo}") from None


def _files_bytes(directory: str) -> int:
    """The bytes of every file under `directory` (links not followed, each inode once)."""
    seen, total = set(), 0
    for root, _, files in os.walk(directory):
        for name in files:
            info = os.lstat(os.path.join(root, name))
            if (info.st_dev, info.st_ino) not in seen:
                seen.add((info.st_dev, info.st_ino))
                total += info.st_size
    return total


def _tree_bytes(directory: str, commit: str) -> int:
    """The bytes of the files a checkout of `commit` writes, from git's listing of its tree."""
    listing = _git(["ls-tree", "-r", "-l", "-z", commit], directory)
    fields = (entry.partition("\t")[0].split() for entry in listing.split("\0") if entry)
    return sum(int(f[3]) for f in fields if len(f) == 4 and f[3].isdigit())


def checkout(team: Team, workdir: str, max_mb: int = CHECKOUT_MB) -> tuple[str, str]:
    """Fetch the team's repository into `workdir`/NAME (a new one, or the one an earlier run
    left, its `origin` set to the roster's URL) and check out its ref, detached; (the
    checkout's directory, the commit's full hash). When the fetch would write a file over
    `max_mb` MiB (0: no limit), or the repository and the commit's files would take more, the
    checkout is removed and the team gets that verdict; the files are measured before they
    are written (and the build, `build`, is held to the same limit)."""
    directory = os.path.join(workdir, team.name)
    url = _repo_url(team)
    try:
        if os.path.isdir(os.path.join(directory, ".git")):
            _git(["remote", "set-url", "--", "origin", url], directory)
        else:
            os.makedirs(directory, exist_ok=True)
            _git(["init", "--quiet"], directory)
            _git(["remote", "add", "--", "origin", url], directory)
        commit = _fetch(directory, team, max_mb)
        if max_mb:
            size = _files_bytes(os.path.join(directory, ".git")) + _tree_bytes(directory, commit)
            if size > max_mb * MIB:
                raise TooLarge(
                    f"the checkout would be {size / MIB:.1f} MiB, over the checkout limit of "
                    f"{max_mb} MiB"
                )
        _git(["checkout", "--quiet", "--force", "--detach", commit], directory)
        _git(["clean", "--quiet", "-d", "--force", "-x"], directory)  # no leftovers of a build
    except TooLarge:
        shutil.rmtree(directory, ignore_errors=True)  # what it fetched takes no room here
        raise
    return directory, commit


def _declared(directory: str) -> tuple[str, str | None]:
    """The submission's (command, build) from its SUBMISSION_FILE."""
    path = os.path.join(directory, SUBMISSION_FILE)
    if os.path.islink(path):  # read outside the sandbox: it must not point out of the checkout
        raise SubmissionError(f"{SUBMISSION_FILE} is a symbolic link")
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


def first_meaningful(text: str) -> str:
    """The line of a failed tool's output that says what went wrong: the first that reads like
    an error, else the last; at most BUILD_LINE_KEPT characters."""
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    chosen = next((line for line in lines if _MEANINGFUL.search(line)), lines[-1] if lines else "")
    return chosen[:BUILD_LINE_KEPT]


def _said(outcome: Outcome) -> str:
    return first_meaningful(outcome.stdout.decode("utf-8", errors="replace"))


def build_problem(outcome: Outcome, limits: Limits) -> str | None:
    """Why a build run failed, or None when it succeeded."""
    status = outcome.status
    if status is RunStatus.EXITED and outcome.exit_code == 0:
        return None
    if status is RunStatus.EXITED:
        return f"the build failed (exit {outcome.exit_code}): {_said(outcome)}"
    if status is RunStatus.TIMEOUT or outcome.signal == signal.SIGXCPU:
        return f"the build took longer than {limits.wall_s:g} s (or {limits.cpu_s} s of CPU)"
    if status is RunStatus.OUTPUT_LIMIT:
        return f"the build wrote more than {limits.output_bytes} bytes of output"
    if status is RunStatus.WATCHED:
        return outcome.message
    if status is RunStatus.SIGNALED:
        assert outcome.signal is not None
        if outcome.signal == signal.SIGXFSZ:
            return f"the build wrote a file over {limits.file_mb} MiB: {_said(outcome)}"
        return f"the build was killed by {signal_name(outcome.signal)}: {_said(outcome)}"
    return f"the build could not start: {outcome.message}"


@dataclass(frozen=True)
class _Growth:
    """A build's watch: the checkout's size, .git included, against the checkout limit. It is
    looked at four times a second while the build runs, and each file the build writes is
    capped by BUILD_LIMITS.file_mb as it is written."""

    directory: str
    limit_mb: int

    def problem(self) -> str | None:
        if self.limit_mb and _files_bytes(self.directory) > self.limit_mb * MIB:
            return (
                f"the build made the checkout larger than the checkout limit of {self.limit_mb} MiB"
            )
        return None


def _own(directory: str, uid: int, gid: int, skip: str = ".git") -> None:
    """Give `directory` and everything in it but `skip` to uid:gid (links not followed)."""
    for root, dirs, files in os.walk(directory):
        if root == directory and skip in dirs:
            dirs.remove(skip)
        for name in [*dirs, *files]:
            os.chown(os.path.join(root, name), uid, gid, follow_symlinks=False)
    os.chown(directory, uid, gid)


def build(
    directory: str,
    command: str,
    isolation: Isolation,
    limits: Limits = BUILD_LIMITS,
    checkout_mb: int = CHECKOUT_MB,
) -> str:
    """Run a submission's build command (`sh -c COMMAND`) in its checkout, in the sandbox
    `isolation` gives with the checkout as the only writable directory, which must stay within
    `checkout_mb` MiB (0: no limit); its output, standard error included, which is also kept
    in CHECKOUT + TEAM_LOG. Raises a SubmissionError when it fails."""
    env = compiler_environment(os.environ) if isolation.bwrap else dict(os.environ)
    env["HOME"] = directory  # what a build caches stays in the checkout it counts against
    argv = ["/bin/sh", "-c", f"exec 2>&1\n{command}"]
    identity = isolation.identity
    if identity is not None:  # the sandbox's uid builds; git (the grader) keeps .git
        _own(directory, identity.uid, identity.gid)
    watch = _Growth(directory, checkout_mb)
    try:
        outcome = run_limited(ExecLauncher(isolation), argv, directory, env, limits, watch=watch)
    finally:
        if identity is not None:  # git works only in a checkout whose top its user owns
            os.chown(directory, os.getuid(), os.getgid())
    with open(directory.rstrip(os.sep) + TEAM_LOG, "wb") as log:
        log.write(outcome.stdout)
    problem = build_problem(outcome, limits)
    if problem is not None:
        raise SubmissionError(problem)
    return outcome.stdout.decode("utf-8", errors="replace")


def build_isolation(workdir: str, hidden: Sequence[str] = (), isolated: bool = True) -> Isolation:
    """The sandbox builds run in: no network, the system read-only, the other teams' checkouts
    (all of `workdir`), the grader's working directory and `hidden` out of sight; each build
    then sees its own checkout, writable, on top. NO_ISOLATION when `isolated` is false."""
    if not isolated:
        return NO_ISOLATION
    return isolate([*hidden, workdir, os.curdir], [])


def prepare(
    team: Team,
    workdir: str,
    isolation: Isolation | None = None,
    limits: Limits = BUILD_LIMITS,
    checkout_mb: int = CHECKOUT_MB,
) -> Submission:
    """The team's compiler, ready to run; for a team from git, checked out (at most
    `checkout_mb` MiB) and built under `workdir`, in `isolation` (by default
    `build_isolation(workdir)`) under `limits`. Never raises for the team's sake: a problem
    becomes the Submission's verdict."""
    commit, workdir = None, os.path.abspath(workdir)  # bwrap binds absolute paths only
    try:
        if team.command is not None:
            return Submission(team, student_compiler(team.command, team.base), None)
        directory, commit = checkout(team, workdir, checkout_mb)
        command, build_command = _declared(directory)
        if build_command is not None:
            sandbox = isolation if isolation is not None else build_isolation(workdir)
            build(directory, build_command, sandbox, limits, checkout_mb)
        return Submission(team, student_compiler(command, directory), commit)
    except (SubmissionError, ValueError) as e:
        if isinstance(e, SubmissionError) and e.log:
            with open(os.path.join(workdir, team.name + TEAM_LOG), "w", encoding="utf-8") as log:
                log.write(e.log)
        return Submission(team, None, commit, str(e))


def prepare_isolated(
    team: Team,
    teams: Sequence[Team],
    workdir: str,
    hidden: Sequence[str],
    isolated: bool = True,
    passed_env: Sequence[str] = (),
    checkout_mb: int = CHECKOUT_MB,
) -> Submission:
    """`team` of the roster `teams` prepared (`prepare`, under BUILD_LIMITS) and its compiler put
    in the sandbox every run of it gets: the grader's `hidden` paths (tests or benchmarks,
    reports) and the other teams' checkouts under `workdir` out of sight of the build and of
    every run, the environment of an isolated compiler plus `passed_env`. Unisolated (and
    said so in `isolation`) when `isolated` is false; a checkout over `checkout_mb` MiB is a
    verdict. The one way `uir grade` and `uir perf`
    ready a team (spec/grading.md section 14)."""
    workdir = os.path.abspath(workdir)
    others = [os.path.join(workdir, t.name) for t in teams if t.name != team.name]
    grader = [*hidden, *others]
    sandbox = build_isolation(workdir, grader, isolated)
    submission = prepare(team, workdir, sandbox, BUILD_LIMITS, checkout_mb)
    if submission.compiler is None:
        return submission
    compiler = submission.compiler
    # Its own files: the paths on its command line, and its checkout, read-only (isolation.py).
    checkout = [os.path.join(workdir, team.name)] if team.repo is not None else []
    own = [*compiler.argv, *checkout]
    isolation = isolate([*grader, os.curdir], own) if isolated else NO_ISOLATION
    confined = compiler.confined(isolation, passed_env)
    env = os.environ if confined.env is None else confined.env
    problem = cannot_start(confined.argv, env, isolation)
    if problem is not None:  # the team's one verdict, not a cannot-start on every test
        return replace(submission, compiler=None, problem=f"the command cannot start: {problem}")
    return replace(submission, compiler=confined, isolation=isolation.mode)

"""Running one untrusted command with limits (spec/grading.md, "The sandbox").

The command runs in its own session (so a timeout can kill it and everything it started), with
resource limits on CPU time, address space, file size and core dumps, a wall-clock deadline, and
its standard output and error read with a size cap. Whatever the command does (crash, hang, flood
its output, fail to exist) ends in an Outcome; nothing here raises for the command's misbehaviour.

How the process is started is a Launcher: ExecLauncher runs a program (`subprocess`), inside
the namespaces and cgroup of isolation.py when given an Isolation, and the fork server of
forkserver.py starts a preloaded Python; both hand back a Started process that `run_limited`
supervises the same way.
"""

from __future__ import annotations

import contextlib
import enum
import os
import selectors
import shutil
import signal
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Protocol

from .isolation import NO_ISOLATION, Cgroup, Isolation
from .limits import Limits, apply_rlimits

# How much of standard error is kept for the report; the rest is read and counted, not kept.
STDERR_KEPT = 16 * 1024
# After a kill, how long to wait for the process to be reaped before giving up on it.
REAP_S = 5.0
# How often the reader looks whether the process has exited, and how long after its exit it
# still reads what is on its way through the pipes.
POLL_S = 0.05
EXITED_GRACE_S = 0.25
# How often a run's watch (run_limited) looks at what the run has done.
WATCH_S = 0.25


class RunStatus(enum.Enum):
    EXITED = "exited"  # ran to its end; see exit_code
    SIGNALED = "signaled"  # killed by a signal we did not send; see signal
    TIMEOUT = "timeout"  # still running at the deadline: killed
    OUTPUT_LIMIT = "output-limit"  # wrote more than the cap: killed
    CANNOT_START = "cannot-start"  # never ran; see message
    STOPPED = "stopped"  # killed because the grader was told to stop
    WATCHED = "watched"  # killed because the run's watch said so (a build's bytes); see message


@dataclass(frozen=True)
class Outcome:
    status: RunStatus
    exit_code: int | None
    signal: int | None
    stdout: bytes
    stderr: bytes  # the first STDERR_KEPT bytes
    duration_s: float
    message: str = ""


class CannotStart(Exception):
    """The command could not be started (not found, not executable, ...)."""


class Started(Protocol):
    """A running command whose output comes through two pipes."""

    pid: int  # also its process group: it runs in a session of its own
    stdout: int  # read ends of its standard output and error
    stderr: int

    def wait(self, timeout: float) -> int | None:
        """The return code once it has exited (negative: killed by that signal), or None when it
        is still running after `timeout` seconds."""
        ...

    def close(self) -> None:
        """Release the pipes and whatever else the launcher holds for this process."""
        ...


class Launcher(Protocol):
    def start(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], limits: Limits
    ) -> Started:
        """Start `argv` in `cwd` under `limits`, in a new session. Raises CannotStart."""
        ...


class _Popen:
    def __init__(
        self, process: subprocess.Popen[bytes], isolation: Isolation, group: Cgroup | None
    ) -> None:
        self.process = process
        self.isolation = isolation
        self.group = group
        self.pid = process.pid
        assert process.stdout is not None and process.stderr is not None
        self.stdout = process.stdout.fileno()
        self.stderr = process.stderr.fileno()

    def wait(self, timeout: float) -> int | None:
        try:
            return self.isolation.exit_code(self.process.wait(timeout))
        except subprocess.TimeoutExpired:
            return None

    def close(self) -> None:
        if self.group is not None:
            self.group.kill()
        for stream in (self.process.stdout, self.process.stderr):
            if stream is not None:
                stream.close()


def _preexec(rlimits: list[tuple[int, int, int]], procs_files: list[str]) -> Callable[[], None]:
    # Runs in the forked child before exec: only setrlimit and raw writes, no imports, no locks,
    # which is what keeps preexec_fn safe while other threads supervise other tests.
    def apply() -> None:
        apply_rlimits(rlimits)
        for name in procs_files:  # join the run's cgroup before anything can fork
            fd = os.open(name, os.O_WRONLY)
            try:
                os.write(fd, b"0")
            finally:
                os.close(fd)

    return apply


def _program(name: str, env: Mapping[str, str]) -> str | None:
    """The file `name` runs: itself when it holds a `/`, else the first along `env`'s PATH."""
    if os.sep in name:
        return name
    return shutil.which(name, path=env.get("PATH", os.defpath))


def cannot_start(argv: Sequence[str], env: Mapping[str, str], isolation: Isolation) -> str | None:
    """Why `argv` cannot start in `isolation` with `env`, found without running it: the
    program or the interpreter its `#!` line names is missing, not executable, or not inside
    the sandbox. None when nothing is found wrong (it may still fail to start)."""
    name = argv[0]
    program = _program(name, env)
    if program is None:
        where = "the sandbox's PATH" if isolation.bwrap else "PATH"
        return f"{name}: no such command on {where} ({env.get('PATH', os.defpath)})"
    for depth in range(2):  # the program, then its interpreter
        if not os.path.exists(program):
            return f"{program}: no such file"
        if os.path.isdir(program) or not os.access(program, os.X_OK):
            return f"{program}: permission denied (not an executable file)"
        seen = (os.path.abspath(program), os.path.realpath(program))  # as named, as resolved
        if not all(isolation.shows(path) for path in seen):
            return f"{program}: not inside the sandbox (spec/grading.md section 3.2)"
        try:
            with open(program, "rb") as f:
                first = f.readline(256)
        except OSError as exc:
            return f"{program}: {exc.strerror or exc}"
        words = first[2:].split() if first.startswith(b"#!") else []
        if depth == 1 or not words:
            return None
        interpreter = os.fsdecode(words[0])
        if not os.path.exists(interpreter):
            return f"{program}: its interpreter {interpreter} (line 1) does not exist"
        program = interpreter
    return None


class ExecLauncher:
    """Start a program with subprocess: the way any student compiler runs, isolated as
    `isolation` says (isolation.py)."""

    def __init__(self, isolation: Isolation = NO_ISOLATION) -> None:
        self.isolation = isolation

    def start(
        self, argv: Sequence[str], cwd: str, env: Mapping[str, str], limits: Limits
    ) -> Started:
        if self.isolation.bwrap is not None:
            # Inside the sandbox a program that cannot start is bwrap's failure, exit 1: say it.
            problem = cannot_start(argv, env, self.isolation)
            if problem is not None:
                raise CannotStart(problem)
            identity = self.isolation.identity
            if identity is not None:  # its working directory and the files in it are its own
                for entry in [cwd, *(e.path for e in os.scandir(cwd) if e.is_file())]:
                    os.chown(entry, identity.uid, identity.gid, follow_symlinks=False)
        cgroups = self.isolation.cgroups
        try:
            group = cgroups.create(limits) if cgroups is not None else None
        except OSError as exc:
            raise CannotStart(f"cannot make the run's cgroup: {exc}") from exc
        procs = group.procs_files if group is not None else []
        try:
            # bwrap's options go through a file, not its command line (isolation.py).
            with tempfile.TemporaryFile() as options:
                options.write(self.isolation.options(cwd))
                options.seek(0)
                process = subprocess.Popen(
                    self.isolation.wrap(argv, cwd, options.fileno()),
                    pass_fds=(options.fileno(),),
                    cwd=cwd,
                    env=dict(env),
                    stdin=subprocess.DEVNULL,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    start_new_session=True,
                    close_fds=True,
                    preexec_fn=_preexec(limits.rlimits(), procs),
                )
        except (OSError, ValueError, subprocess.SubprocessError) as exc:
            if group is not None:
                group.kill()
            if isinstance(exc, FileNotFoundError):
                raise CannotStart(f"{argv[0]}: no such file or command") from exc
            if isinstance(exc, PermissionError):
                raise CannotStart(f"{argv[0]}: permission denied") from exc
            raise CannotStart(f"{argv[0]}: {exc}") from exc
        return _Popen(process, self.isolation, group)


def kill_group(pid: int, alone_too: bool = True) -> None:
    """SIGKILL the process group `pid` leads, and with `alone_too` the process itself in case it
    has not made its session yet. Only a process not yet reaped may be killed alone: once reaped,
    its pid may belong to someone else (a group id stays taken while any member lives)."""
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if alone_too:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)


@dataclass
class _Streams:
    cap: int
    stdout: bytearray
    stderr: bytearray
    stderr_total: int = 0

    @property
    def over(self) -> bool:
        return len(self.stdout) > self.cap or self.stderr_total > self.cap

    def add(self, is_stdout: bool, chunk: bytes) -> None:
        if is_stdout:
            self.stdout += chunk
        else:
            self.stderr_total += len(chunk)
            room = STDERR_KEPT - len(self.stderr)
            if room > 0:
                self.stderr += chunk[:room]


def _read_until(
    process: Started,
    streams: _Streams,
    deadline: float,
    stop: threading.Event | None,
    watch: Watch | None = None,
) -> str:
    """Read both pipes until both close ("eof"), the cap is passed ("over"), the deadline,
    `stop` is set ("stopped"), or `watch` finds something wrong ("watched").

    When the process has exited but something it started still holds a pipe open, reading
    stops EXITED_GRACE_S later ("eof" too): the run is over, and the leftovers get killed.
    """
    exited_at: float | None = None
    watched_at = time.monotonic()
    with selectors.DefaultSelector() as selector:
        selector.register(process.stdout, selectors.EVENT_READ, True)
        selector.register(process.stderr, selectors.EVENT_READ, False)
        while selector.get_map():
            now = time.monotonic()
            if now >= deadline:
                return "deadline"
            if stop is not None and stop.is_set():
                return "stopped"
            if watch is not None and now - watched_at >= WATCH_S:
                watched_at = now
                if watch.problem() is not None:
                    return "watched"
            if exited_at is None and process.wait(0) is not None:
                exited_at = now
            if exited_at is not None and now - exited_at > EXITED_GRACE_S:
                return "eof"
            for key, _ in selector.select(min(deadline - now, POLL_S)):
                chunk = os.read(key.fd, 65536)
                if not chunk:
                    selector.unregister(key.fd)
                    continue
                streams.add(key.data, chunk)
                if streams.over:
                    return "over"
    return "eof"


class Watch(Protocol):
    def problem(self) -> str | None:
        """Why the run must be stopped now, or None. Called every WATCH_S while it runs, and
        once after it ends."""
        ...


def run_limited(
    launcher: Launcher,
    argv: Sequence[str],
    cwd: str,
    env: Mapping[str, str],
    limits: Limits,
    stop: threading.Event | None = None,
    watch: Watch | None = None,
) -> Outcome:
    """Run `argv` to its end, or until a limit, `stop` or `watch` stops it, and say how it
    ended."""
    began = time.monotonic()
    deadline = began + limits.wall_s
    try:
        process = launcher.start(argv, cwd, env, limits)
    except CannotStart as exc:
        return Outcome(RunStatus.CANNOT_START, None, None, b"", b"", 0.0, str(exc))
    streams = _Streams(limits.output_bytes, bytearray(), bytearray())
    try:
        ended = _read_until(process, streams, deadline, stop, watch)
        code = None
        if ended == "eof":
            # The process exited, or closed both pipes and may still be running.
            code = process.wait(max(0.0, deadline - time.monotonic()))
            if code is None:
                ended = "deadline"
        if code is None:
            kill_group(process.pid)
            process.wait(REAP_S)
    finally:
        kill_group(process.pid, alone_too=False)  # whatever it left behind in its session
        process.close()
    duration = time.monotonic() - began
    stdout = bytes(streams.stdout[: limits.output_bytes])
    stderr = bytes(streams.stderr)
    if ended == "stopped":
        return Outcome(RunStatus.STOPPED, None, None, stdout, stderr, duration)
    problem = watch.problem() if watch is not None else None
    if problem is not None:  # found while it ran, or what it left when it ended
        return Outcome(RunStatus.WATCHED, None, None, stdout, stderr, duration, problem)
    if ended == "over":
        return Outcome(RunStatus.OUTPUT_LIMIT, None, None, stdout, stderr, duration)
    if ended == "deadline":
        return Outcome(RunStatus.TIMEOUT, None, None, stdout, stderr, duration)
    assert code is not None
    if code < 0:
        return Outcome(RunStatus.SIGNALED, None, -code, stdout, stderr, duration)
    return Outcome(RunStatus.EXITED, code, None, stdout, stderr, duration)

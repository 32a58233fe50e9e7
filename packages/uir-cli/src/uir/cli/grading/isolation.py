"""Isolating each run of an untrusted compiler (spec/grading.md, "Isolation").

With bubblewrap (`bwrap`) every run gets its own PID, mount, IPC, UTS, network and user
namespaces, runs as uid and gid 65534 inside them, sees the system read-only with only its
scratch directory writable and a private /tmp, and does not see the grader's files (the suite,
the report, the grader's working directory). Killing the run's bwrap takes every process of the
run with it: the sandbox's init dies (--die-with-parent) and with it the PID namespace.

Where the machine lets the grader make cgroups (v1 `memory` and `pids` hierarchies, or v2 with
both controllers delegated), each run also gets a cgroup that caps its processes and its total
memory, whatever it forks. Elsewhere those two limits fall back to the per-process RLIMIT_AS.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from .limits import MIB, Limits

NOBODY = 65534
CGROUP_ROOT = Path("/sys/fs/cgroup")
# A run's exit status as bwrap reports a command killed by signal N: 128 + N.
SIGNAL_BASE = 128
# How long to wait for a killed run's cgroup to empty before leaving it to the system.
CGROUP_EMPTY_S = 2.0


class Mode:
    """The isolation a run gets, as the JSON report records it."""

    FULL = "namespaces+cgroups"
    NAMESPACES = "namespaces"
    NONE = "none"


@dataclass(frozen=True)
class Cgroup:
    """One run's cgroup: a directory per hierarchy (one under cgroup v2)."""

    directories: tuple[Path, ...]

    @property
    def procs_files(self) -> list[str]:
        return [str(d / "cgroup.procs") for d in self.directories]

    def kill(self) -> None:
        """SIGKILL every process in the group, then remove it."""
        deadline = time.monotonic() + CGROUP_EMPTY_S
        while True:
            pids = set()
            for name in self.procs_files:
                with contextlib.suppress(OSError, ValueError):
                    pids.update(int(p) for p in Path(name).read_text().split())
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            if not pids or time.monotonic() > deadline:
                break
            time.sleep(0.001)
        for directory in self.directories:
            with contextlib.suppress(OSError):
                directory.rmdir()


@dataclass(frozen=True)
class Cgroups:
    """Where the grader makes its runs' cgroups, and the files that set their limits."""

    parents: tuple[Path, ...]
    version: int
    _counter = itertools.count()

    def create(self, limits: Limits) -> Cgroup:
        name = f"uir-run-{os.getpid()}-{next(self._counter)}"
        group = Cgroup(tuple(p / name for p in self.parents))
        try:
            for directory in group.directories:
                directory.mkdir()
            for file, value in self._settings(limits):
                for directory in group.directories:
                    if (directory / file).exists():
                        (directory / file).write_text(value)
        except OSError:
            group.kill()
            raise
        return group

    def _settings(self, limits: Limits) -> list[tuple[str, str]]:
        settings = []
        if self.version == 1:
            if limits.memory_mb:
                settings.append(("memory.limit_in_bytes", str(limits.memory_mb * MIB)))
                settings.append(("memory.memsw.limit_in_bytes", str(limits.memory_mb * MIB)))
            if limits.processes:
                settings.append(("pids.max", str(limits.processes)))
        else:
            if limits.memory_mb:
                settings.append(("memory.max", str(limits.memory_mb * MIB)))
                settings.append(("memory.swap.max", "0"))
            if limits.processes:
                settings.append(("pids.max", str(limits.processes)))
        return settings


def _own_cgroup(hierarchy: str) -> str | None:
    """The grader's cgroup path in a v1 hierarchy (`memory`), or in v2 (``)."""
    with contextlib.suppress(OSError):
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            _, controllers, path = line.split(":", 2)
            if controllers.split(",").count(hierarchy) or (hierarchy == "" == controllers):
                return path.lstrip("/")
    return None


def _usable(parent: Path, files: Sequence[str]) -> bool:
    """Whether a child group of `parent` can be made and has the limit files."""
    probe = parent / f"uir-probe-{os.getpid()}"
    try:
        probe.mkdir()
    except OSError:
        return False
    try:
        return all((probe / f).exists() for f in files)
    finally:
        with contextlib.suppress(OSError):
            probe.rmdir()


def find_cgroups() -> Cgroups | None:
    """Cgroups the grader may make for its runs, or None where the machine does not allow it."""
    memory, pids = _own_cgroup("memory"), _own_cgroup("pids")
    if memory is not None and pids is not None:
        parents = (CGROUP_ROOT / "memory" / memory, CGROUP_ROOT / "pids" / pids)
        if _usable(parents[0], ["memory.limit_in_bytes"]) and _usable(parents[1], ["pids.max"]):
            return Cgroups(parents, 1)
    unified = _own_cgroup("")
    if unified is not None and (CGROUP_ROOT / "cgroup.controllers").exists():
        parent = CGROUP_ROOT / unified
        if _usable(parent, ["memory.max", "pids.max"]):
            return Cgroups((parent,), 2)
    return None


def find_bwrap() -> str | None:
    """The path of a bwrap that can make every namespace here, or None."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None
    probe = [bwrap, *_namespace_options(), "--ro-bind", "/", "/", "--", "true"]
    try:
        done = subprocess.run(probe, capture_output=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return bwrap if done.returncode == 0 else None


def _namespace_options() -> list[str]:
    return [
        "--unshare-all",  # user, IPC, PID, network, UTS and cgroup namespaces
        "--unshare-user",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        "--hostname",
        "uir-test",
        "--die-with-parent",
        "--new-session",
    ]


@dataclass(frozen=True)
class Isolation:
    """How each run of one compiler is isolated; the grader builds it once per run of a suite."""

    bwrap: str | None
    cgroups: Cgroups | None
    hidden: tuple[str, ...] = ()  # the grader's paths the compiler must not see
    visible: tuple[str, ...] = ()  # the compiler's own paths, shown even inside hidden ones

    @property
    def mode(self) -> str:
        if self.bwrap is None:
            return Mode.NONE
        return Mode.FULL if self.cgroups is not None else Mode.NAMESPACES

    def wrap(self, argv: Sequence[str], scratch: str, options_fd: int) -> list[str]:
        """`argv` as run inside the sandbox, in `scratch` (its only writable directory).

        bwrap reads its options from `options_fd`, a file of `options(scratch)`: its command
        line stays visible to the sandbox (its init is a copy of it), and must not name the
        grader's paths.
        """
        if self.bwrap is None:
            return list(argv)
        return [self.bwrap, "--args", str(options_fd), "--", *argv]

    def options(self, scratch: str) -> bytes:
        """bwrap's options for a run in `scratch`, NUL-separated as `--args` reads them."""
        if self.bwrap is None:
            return b""
        words = ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
        words += ["--tmpfs", "/tmp", "--tmpfs", "/run", "--tmpfs", "/dev/shm"]
        # Mounts stack in order: what is hidden covers what is shown, except the compiler's own
        # files inside a hidden directory, shown on top of it.
        inner = [p for p in self.visible if any(_inside(p, h) for h in self.hidden)]
        for path in [p for p in self.visible if p not in inner]:
            words += ["--ro-bind", path, path]
        for path in self.hidden:
            if os.path.isdir(path):
                words += ["--tmpfs", path]
            elif os.path.exists(path):
                words += ["--ro-bind", "/dev/null", path]
        for path in inner:
            words += ["--ro-bind", path, path]
        words += ["--bind", scratch, scratch, "--chdir", scratch, *_namespace_options()]
        return b"".join(os.fsencode(w) + b"\0" for w in words)

    def exit_code(self, code: int) -> int:
        """A run's status as subprocess reports it: bwrap reports a signal N as 128 + N."""
        if self.bwrap is not None and SIGNAL_BASE < code < SIGNAL_BASE + signal.NSIG:
            return SIGNAL_BASE - code
        return code


NO_ISOLATION = Isolation(None, None)


def hidden_paths(
    grader_paths: Sequence[str], compiler_paths: Sequence[str], grader_tools: Sequence[str] = ()
) -> tuple[list[str], list[str]]:
    """What to hide from the compiler (the grader's paths: suites, reports, its working
    directory) and what of its own to show (the paths on its command line).

    The working directory, the last of `grader_paths`, is hidden only when it holds none of the
    compiler's files, since a compiler may live under it whole (a virtual environment, an
    editable install). Nothing inside the other grader paths is ever shown. Each of the
    compiler's files is shown read-only with its directory, unless that directory holds
    something hidden or is a shared one (/, /tmp): then the file alone. `grader_tools`, the
    directories of the grader's own code that runs in the sandbox too (the render grader's
    checker), are shown whole even inside the working directory.
    """
    *paths, cwd = [os.path.realpath(p) for p in grader_paths]
    # Shortest first, so that what lies inside a hidden directory is not hidden twice.
    hidden: list[str] = []
    for path in sorted(set(paths) - {"/"}, key=len):
        if _inside(path, "/proc") or _inside(path, "/dev"):
            continue  # a report to /dev/stdout: the sandbox has its own /proc and /dev
        if not any(_inside(path, h) for h in hidden):
            hidden.append(path)
    # A path as named and as resolved: a virtual environment's python is a link out of it.
    named = [os.path.abspath(p) for p in compiler_paths if os.path.exists(p)]
    own = [
        path
        for path in dict.fromkeys([*named, *(os.path.realpath(p) for p in named)])
        if not any(_inside(path, h) or _inside(h, path) for h in hidden)
    ]
    strict = list(hidden)  # what is hidden whatever the compiler or the grader needs
    if cwd != "/" and not any(_inside(o, cwd) for o in own):
        hidden.append(cwd)
    visible = []
    for path in own:
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        shared = directory in ("/", "/tmp") or any(_inside(h, directory) for h in hidden)
        visible.append(path if shared else directory)
    for path in [os.path.realpath(p) for p in grader_tools]:
        if not any(_inside(path, h) or _inside(h, path) for h in strict):
            visible.append(path)
    return hidden, list(dict.fromkeys(visible))


def isolate(
    grader_paths: Sequence[str], compiler_paths: Sequence[str], grader_tools: Sequence[str] = ()
) -> Isolation:
    """The strongest isolation this machine allows for an untrusted command: bwrap and cgroups
    where they work, hiding `grader_paths` and showing `compiler_paths` as `hidden_paths` says.
    Its `mode` says how much of it there is; the caller warns when it is short of FULL."""
    hidden, visible = hidden_paths(grader_paths, compiler_paths, grader_tools)
    return Isolation(find_bwrap(), find_cgroups(), tuple(hidden), tuple(visible))


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# What an isolated compiler inherits of the grader's environment unless told more with --env:
# enough to find programs and pick a locale, nothing that may hold a course's secrets.
KEPT_ENVIRONMENT = ("PATH", "HOME", "LANG", "LANGUAGE", "TZ", "TERM", "CC")


def compiler_environment(
    environment: Mapping[str, str], passed: Sequence[str] = ()
) -> dict[str, str]:
    """The environment of an isolated compiler: KEPT_ENVIRONMENT and the locale's LC_*
    variables of `environment`, and each `NAME` (its value here) or `NAME=VALUE` of `passed`."""
    kept = {
        name: value
        for name, value in environment.items()
        if name in KEPT_ENVIRONMENT or name.startswith("LC_")
    }
    for item in passed:
        name, equals, value = item.partition("=")
        if equals:
            kept[name] = value
        elif name in environment:
            kept[name] = environment[name]
    return kept

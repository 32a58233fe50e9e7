"""Isolating each run of an untrusted compiler (spec/grading.md, "Isolation").

With bubblewrap (`bwrap`) every run gets its own PID, mount, IPC, UTS and network namespaces and
a root of its own, built as a contest judge builds one: the system's programs and libraries
(`/usr`, `/bin`, `/lib*`) and a few files of `/etc` read-only, the compiler's own files
read-only, a private `/tmp`, and its scratch directory, the only place it may write. Nothing
else of the machine is there: not the grader's installation, suites, reports or working
directory, not other checkouts or users' homes, not `/var` or `/run` with their sockets.

It runs as an unprivileged user outside too: when the grader is root, as SANDBOX_UIDS' first
free uid (bwrap runs as root without a user namespace, and `setpriv` drops to that uid, every
capability and the right to gain any before the compiler starts); otherwise in a user namespace
as uid 65534, which outside is the grader's own user. Killing the run's bwrap takes every
process of the run with it: the sandbox's init dies (--die-with-parent) and with it the PID
namespace.

Where the machine lets the grader make cgroups (v1 `memory` and `pids` hierarchies, or v2 with
both controllers delegated), each run also gets a cgroup that caps its processes and its total
memory, whatever it forks. Elsewhere those two limits fall back to the per-process RLIMIT_AS.
"""

from __future__ import annotations

import contextlib
import grp
import itertools
import os
import pwd
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import uir

from .limits import MIB, Limits

NOBODY = 65534
# Where a compiler's uid outside the sandbox comes from when the grader is root: the first uid
# (and gid) of this range that no account or group of the machine has.
SANDBOX_UIDS = range(60000, 61000)
# What of the machine the sandbox shows, read-only: the system's programs and libraries...
SYSTEM_DIRECTORIES = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# ...and the files of /etc that programs need to start (the dynamic linker's cache, the
# alternatives `cc` and `python3` go through, the time zone), none that says who uses the
# machine (passwd, shadow, group) or how to reach it.
ETC_FILES = (
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "alternatives",
    "localtime",
    "timezone",
    "nsswitch.conf",
    "host.conf",
    "hosts",
    "os-release",
    "debian_version",
)
# The PATH inside: the grader's names directories the sandbox does not have.
SANDBOX_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
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


@dataclass(frozen=True)
class Identity:
    """Who an isolated compiler is outside the sandbox when the grader is root."""

    uid: int
    gid: int
    setpriv: str  # the program that drops to it, inside the sandbox

    def command(self, argv: Sequence[str]) -> list[str]:
        return [
            self.setpriv,
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",  # a setuid program of /usr gains nothing
            "--",
            *argv,
        ]


def _free_id(taken: Sequence[int]) -> int | None:
    return next((i for i in SANDBOX_UIDS if i not in taken), None)


def find_identity() -> Identity | None:
    """The unprivileged identity isolated compilers get here: None unless the grader is root,
    whose uid 65534 inside a user namespace would be root outside."""
    if os.geteuid() != 0:
        return None
    setpriv = shutil.which("setpriv", path=SANDBOX_PATH)
    taken = {p.pw_uid for p in pwd.getpwall()} | {g.gr_gid for g in grp.getgrall()}
    uid = _free_id(sorted(taken))
    if setpriv is None or uid is None:
        return None
    return Identity(uid, uid, setpriv)


def find_bwrap(identity: Identity | None = None) -> str | None:
    """The path of a bwrap that can build the sandbox here (as `identity` when given), or None."""
    bwrap, _ = _probe(identity)
    return bwrap


def no_bwrap_reason(identity: Identity | None = None) -> str | None:
    """Why this machine has no working sandbox, in a line; None when it has one."""
    return _probe(identity)[1]


def _probe(identity: Identity | None) -> tuple[str | None, str | None]:
    """(bwrap, None) when bwrap builds the sandbox here and runs `true` in it, else (None, why)."""
    bwrap = shutil.which("bwrap")
    if bwrap is None:
        return None, "bwrap is not installed (Debian and Ubuntu: apt-get install bubblewrap)"
    scratch = tempfile.mkdtemp(prefix="uir-probe-")
    try:
        if identity is not None:
            os.chown(scratch, identity.uid, identity.gid)
        probe = Isolation(bwrap, None, identity=identity)
        with tempfile.TemporaryFile() as options:
            options.write(probe.options(scratch))
            options.seek(0)
            done = subprocess.run(
                probe.wrap(["true"], scratch, options.fileno()),
                pass_fds=(options.fileno(),),
                env={"PATH": SANDBOX_PATH},
                capture_output=True,
                timeout=30,
                check=False,
            )
    except (OSError, subprocess.SubprocessError) as exc:
        return None, f"{bwrap} cannot run: {exc}"
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", errors="replace").strip().splitlines()
        line = said[0] if said else f"exit status {done.returncode}"
        return None, f"{bwrap} cannot build the sandbox here: {line}"
    return bwrap, None


def _namespace_options(identity: Identity | None) -> list[str]:
    common = ["--hostname", "uir-test", "--die-with-parent", "--new-session"]
    if identity is not None:
        # Root without a user namespace, so that setpriv can become the sandbox's uid, which is
        # then the same inside and out.
        unshare = ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts"]
        return [*unshare, "--unshare-cgroup-try", *common]
    return [
        "--unshare-all",  # user, IPC, PID, network, UTS and cgroup namespaces
        "--unshare-user",
        "--uid",
        str(NOBODY),
        "--gid",
        str(NOBODY),
        *common,
    ]


def _system_options() -> list[str]:
    """The machine's part of the sandbox's root: SYSTEM_DIRECTORIES (as links where they are
    links, as merged-/usr systems have them) and ETC_FILES."""
    words = []
    for path in SYSTEM_DIRECTORIES:
        if os.path.islink(path):
            words += ["--symlink", os.readlink(path), path]
        elif os.path.isdir(path):
            words += ["--ro-bind", path, path]
    words += ["--perms", "0755", "--dir", "/etc"]  # bwrap would make it private to root
    for name in ETC_FILES:
        path = os.path.join("/etc", name)
        if os.path.exists(path):
            words += ["--ro-bind", path, path]
    return words


@dataclass(frozen=True)
class Isolation:
    """How each run of one compiler is isolated; the grader builds it once per run of a suite."""

    bwrap: str | None
    cgroups: Cgroups | None
    hidden: tuple[str, ...] = ()  # the grader's paths, covered wherever they would show
    visible: tuple[str, ...] = ()  # the compiler's own paths, shown read-only
    identity: Identity | None = None  # who it is outside; None: the grader's user (or nobody)

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
        inner = self.identity.command(argv) if self.identity is not None else list(argv)
        return [self.bwrap, "--args", str(options_fd), "--", *inner]

    def options(self, scratch: str) -> bytes:
        """bwrap's options for a run in `scratch`, NUL-separated as `--args` reads them."""
        if self.bwrap is None:
            return b""
        words = [*_system_options(), "--dev", "/dev", "--proc", "/proc"]
        for path in ("/tmp", "/dev/shm"):  # private, and writable as /tmp always is
            words += ["--perms", "1777", "--tmpfs", path]
        words += ["--tmpfs", "/run"]
        shown = [*SYSTEM_DIRECTORIES, *self.visible, scratch]
        made = {"/", "/tmp", "/dev/shm", "/run"}
        fixed = ["/dev", "/proc", *SYSTEM_DIRECTORIES]  # nothing is made inside these
        for path in [*self.visible, scratch]:
            # bwrap makes the directories leading to a mount private to root: open them.
            for parent in map(str, reversed(Path(path).parents)):
                if parent not in made and not any(_inside(parent, d) for d in fixed):
                    made.add(parent)
                    words += ["--perms", "0755", "--dir", parent]
            if path != scratch:
                words += ["--ro-bind", path, path]
        # Mounts stack in order: a grader's path inside what is shown (a suite in /usr/share, a
        # reference installed in /usr/local) is covered by an empty one.
        for path in self.hidden:
            if not any(_inside(path, s) for s in shown) or path in shown:
                continue
            if os.path.isdir(path):
                words += ["--tmpfs", path]
            elif os.path.exists(path):
                words += ["--ro-bind", "/dev/null", path]
        words += ["--bind", scratch, scratch, "--chdir", scratch]
        words += _namespace_options(self.identity)
        return b"".join(os.fsencode(w) + b"\0" for w in words)

    def shows(self, path: str) -> bool:
        """Whether `path` (absolute, resolved) is inside the sandbox's root, a scratch aside."""
        if self.bwrap is None:
            return True
        system = [*SYSTEM_DIRECTORIES, *(os.path.join("/etc", n) for n in ETC_FILES)]
        for root in [r for r in [*system, *self.visible] if _inside(path, r)]:
            # options() covers a hidden path that lies inside what is shown
            covers = [h for h in self.hidden if _inside(h, root) and h != root]
            if not any(_inside(path, h) for h in covers):
                return True
        return False

    def exit_code(self, code: int) -> int:
        """A run's status as subprocess reports it: bwrap reports a signal N as 128 + N."""
        if self.bwrap is not None and SIGNAL_BASE < code < SIGNAL_BASE + signal.NSIG:
            return SIGNAL_BASE - code
        return code


NO_ISOLATION = Isolation(None, None)


def grader_installation() -> list[str]:
    """What of the grader's own installation no sandbox may see: its virtual environment (not a
    system Python's prefix, which is /usr) and the directories of its `uir` packages, so that
    the reference cannot run inside."""
    paths = [os.path.realpath(p) for p in uir.__path__]
    if sys.prefix != sys.base_prefix:
        paths += [sys.prefix, os.path.realpath(sys.prefix)]
    return list(dict.fromkeys(paths))


def hidden_paths(
    grader_paths: Sequence[str], compiler_paths: Sequence[str]
) -> tuple[list[str], list[str]]:
    """What to hide from the compiler (the grader's paths: suites, reports, its working
    directory, and its own installation) and what of its own to show (the paths on its command
    line, a team's checkout).

    Nothing inside a grader's path is shown, the working directory aside: a compiler may live
    under it (a team's checkout under `--out`), but never the directory itself. Each of the
    compiler's paths is shown read-only with its directory, unless that directory holds
    something hidden or is a shared one (/, /tmp): then the file alone.
    """
    *paths, cwd = [os.path.realpath(p) for p in grader_paths]
    installation = grader_installation()
    # Shortest first, so that what lies inside a hidden directory is not hidden twice.
    hidden: list[str] = []
    for path in sorted(set(paths + installation) - {"/"}, key=len):
        if _inside(path, "/proc") or _inside(path, "/dev"):
            continue  # a report to /dev/stdout: the sandbox has its own /proc and /dev
        if not any(_inside(path, h) for h in hidden):
            hidden.append(path)

    # A path as named and as resolved: a link may lead out of the directory it is in.
    def clear(path: str) -> bool:
        return not any(_inside(path, h) or _inside(h, path) for h in hidden)

    named = [os.path.abspath(p) for p in compiler_paths if os.path.exists(p)]
    named = [p for p in named if clear(p)]
    own = [p for p in dict.fromkeys([*named, *map(os.path.realpath, named)]) if clear(p)]
    if cwd != "/":
        hidden.append(cwd)
    visible = []
    for path in [p for p in own if p != cwd]:
        directory = path if os.path.isdir(path) else os.path.dirname(path)
        shared = directory in ("/", "/tmp") or any(_inside(h, directory) for h in hidden)
        visible.append(path if shared else directory)
    return hidden, list(dict.fromkeys(visible))


def isolate(grader_paths: Sequence[str], compiler_paths: Sequence[str]) -> Isolation:
    """The strongest isolation this machine allows for an untrusted command: bwrap and cgroups
    where they work, as an unprivileged uid where the grader is root, hiding `grader_paths`
    and showing `compiler_paths` as `hidden_paths` says. Its `mode` says how much of it there
    is; the caller warns when it is short of FULL."""
    hidden, visible = hidden_paths(grader_paths, compiler_paths)
    identity = find_identity()
    bwrap = find_bwrap(identity)
    return Isolation(bwrap, find_cgroups(), tuple(hidden), tuple(visible), identity)


def _inside(path: str, directory: str) -> bool:
    return path == directory or path.startswith(directory.rstrip("/") + "/")


# What an isolated compiler inherits of the grader's environment unless told more with --env:
# enough to pick a locale and a C compiler, nothing that may hold a course's secrets. Its PATH is
# SANDBOX_PATH and its HOME its scratch directory.
KEPT_ENVIRONMENT = ("LANG", "LANGUAGE", "TZ", "TERM", "CC")


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
    kept["PATH"] = SANDBOX_PATH
    for item in passed:
        name, equals, value = item.partition("=")
        if equals:
            kept[name] = value
        elif name in environment:
            kept[name] = environment[name]
    return kept

"""CUDA C -> cubin with NVRTC (the `nvidia-cuda-nvrtc-cu12` wheel, through cuda-bindings): no
CUDA toolkit and no GPU needed.

Options keep floating point UIR's: no fused multiply-add (`--fmad=false`: UIR rounds a*b+c
twice), IEEE division and square root, no flush of subnormals. `-default-device` makes the
helpers, plain `static inline` C functions shared with the C backend, device functions.

Compiling is bounded (spec/uir-week7.md section 2.4). NVRTC runs its assembler, ptxas, inside
the calling process, and ptxas at its default -O3 can run away on a small program: a 10,000-step
MAX reduction of a constant, unrolled, took 17.8 GB and three minutes before failing, where -O1
compiles it in 0.2 s. So each compile runs in a child process (nvrtc_worker.py) under an
address-space and a CPU-time limit (`Bounds`), at ptxas -O3, then -O1, then NVRTC's fastest
compile (`LEVELS`), the first that fits winning; a source error is reported at once, never
retried. A child also keeps NVRTC's
memory out of the calling process, which matters to one that compiles thousands of programs.
"""

from __future__ import annotations

import os
import re
import resource
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uir.core.errors import BackendError

OPTIONS = (
    "--fmad=false",
    "--prec-div=true",
    "--prec-sqrt=true",
    "--ftz=false",
    "-default-device",
    "--std=c++17",
)
# The architectures the course targets: the H200 the project is checked on, the RTX 3080.
ARCHITECTURES = ("sm_90", "sm_86")


@dataclass(frozen=True)
class Level:
    """An optimisation level of the compile: its name and the NVRTC options that make it."""

    name: str
    options: tuple[str, ...]


# Tried in turn while an attempt exceeds its bounds: ptxas at its default -O3, then at -O1 (the
# runaway unrolling above is ptxas's), then NVRTC's fastest compile, which also spares the
# front end (a chain of a thousand MAXs and MINs: 2.3 s of CPU at -O1, 0.6 s this way).
LEVELS = (
    Level("-O3", ("--ptxas-options=-O3",)),
    Level("-O1", ("--ptxas-options=-O1",)),
    Level("fast-compile", ("--Ofast-compile=max",)),
)

_ERROR = re.compile(r"^.*\berror\b.*$", re.MULTILINE)
# A line where NVRTC's front end reports an error in the source: `program.cu(12): error: ...`.
_SOURCE_ERROR = re.compile(r"^.*\(\d+\): (catastrophic )?error\b", re.MULTILINE)

# How the worker reports a failure (its exit status); anything else is a crash.
EXIT_NOT_COMPILED = 10  # NVRTC compiled and failed: its log follows on stderr
EXIT_ERROR = 11  # NVRTC could not start: the BackendError's message on stderr
EXIT_NO_MEMORY = 12  # Python itself ran out of the address space


@dataclass(frozen=True)
class Bounds:
    """What one compile attempt may use: the child's address space (bytes) and CPU seconds.

    2 GiB is 14 times what the largest bundle of 150 suite programs takes (148 MB) and 20 times
    a single program (about 100 MB); 10 CPU seconds is four times that bundle's 2.4 s, and 1.5
    times the slowest -O3 compile of uir.testing.large that fits (200 kernels, 6.6 s). A program
    that exceeds them at -O3 compiles at a lower level instead of failing."""

    memory: int = 2 << 30
    cpu_seconds: int = 10

    def wall_seconds(self) -> float:
        """How long the parent waits for a child before killing it: a child blocked without
        using CPU (which the CPU limit never stops) is stopped too, with room for a loaded
        machine, where a CPU second takes several wall seconds."""
        return 4.0 * self.cpu_seconds + 60.0


BOUNDS = Bounds()


@dataclass(frozen=True)
class Attempt:
    """One compile attempt: its level, why it did not produce a cubin ("" when it did), and the
    wall seconds it took."""

    level: Level
    failure: str
    seconds: float


@dataclass(frozen=True)
class Compilation:
    """A cubin and the attempts that led to it, the last one the successful."""

    cubin: bytes
    attempts: tuple[Attempt, ...]

    @property
    def level(self) -> Level:
        return self.attempts[-1].level


def compile_cubin(
    source: str, arch: str = "sm_90", name: str = "program.cu", bounds: Bounds = BOUNDS
) -> bytes:
    """The cubin of `source` for `arch` (`sm_90`, `sm_86`, ...), within `bounds`. A source that
    does not compile is a BackendError whose message starts with NVRTC's first error line."""
    return compile_bounded(source, arch, name, bounds).cubin


def compile_bounded(
    source: str, arch: str = "sm_90", name: str = "program.cu", bounds: Bounds = BOUNDS
) -> Compilation:
    """`compile_cubin`, with the attempts it took: each level of LEVELS in turn, in a child
    process within `bounds`, until one fits."""
    attempts: list[Attempt] = []
    for level in LEVELS:
        start = time.perf_counter()
        cubin, failure = _attempt(source, arch, name, level, bounds)
        attempts.append(Attempt(level, failure, time.perf_counter() - start))
        if cubin is not None:
            return Compilation(cubin, tuple(attempts))
    tried = "; ".join(f"{a.level.name}: {a.failure}" for a in attempts)
    raise BackendError(f"NVRTC could not compile the kernel within its bounds ({tried})")


def _attempt(
    source: str, arch: str, name: str, level: Level, bounds: Bounds
) -> tuple[bytes | None, str]:
    """(the cubin, "") or (None, why this level did not fit); a BackendError for a failure no
    other level would mend (an error in the source, NVRTC missing)."""
    number = str(LEVELS.index(level))
    command = [sys.executable, "-m", "uir.backend.cuda.nvrtc_worker", arch, number, name]
    command += [str(bounds.memory), str(bounds.cpu_seconds)]
    # The child imports this package the way this process did, whatever put it on sys.path.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in sys.path if p)}
    try:
        done = subprocess.run(
            command,
            input=source.encode(),
            capture_output=True,
            env=env,
            timeout=bounds.wall_seconds(),
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"no result after {bounds.wall_seconds():.0f} s"
    err = done.stderr.decode(errors="replace").strip()
    if done.returncode == 0:
        return done.stdout, ""
    if done.returncode == EXIT_NOT_COMPILED:
        if _SOURCE_ERROR.search(err):
            raise BackendError(failure_message(err))
        # The assembler gave up; its own first line says why (often "Memory allocation failure").
        return None, f"not compiled: {err.splitlines()[0] if err else '?'}"
    if done.returncode == EXIT_ERROR:
        raise BackendError(err)
    if done.returncode == EXIT_NO_MEMORY:
        return None, f"out of its {bounds.memory >> 20} MiB"
    if done.returncode < 0:
        killed = signal.Signals(-done.returncode).name
        over = (
            " (over its CPU time)" if -done.returncode in (signal.SIGXCPU, signal.SIGKILL) else ""
        )
        return None, f"killed by {killed}{over}"
    raise BackendError(f"the NVRTC worker failed (exit {done.returncode}): {err}")


def failure_message(log: str) -> str:
    """A BackendError's message for NVRTC's log of a failed compile: its first error line, then
    the whole log."""
    first = _ERROR.search(log)
    line = first.group(0).strip() if first else log.splitlines()[0] if log else "?"
    return f"NVRTC could not compile the kernel: {line}\n{log}"


class NotCompiled(BackendError):
    """NVRTC compiled and failed: the source has an error, or the assembler gave up; `log` is
    NVRTC's log."""

    def __init__(self, log: str) -> None:
        super().__init__(failure_message(log))
        self.log = log


def limit_self(bounds: Bounds) -> None:
    """Put this process (the worker) under `bounds`, never above the limits it inherited, and
    without core dumps: a killed attempt is expected."""
    _lower(resource.RLIMIT_AS, bounds.memory, bounds.memory)
    # The soft CPU limit sends SIGXCPU; the hard one, a second later, kills.
    _lower(resource.RLIMIT_CPU, bounds.cpu_seconds, bounds.cpu_seconds + 1)
    _lower(resource.RLIMIT_CORE, 0, 0)


def _lower(which: int, soft: int, hard: int) -> None:
    _, inherited = resource.getrlimit(which)
    if inherited != resource.RLIM_INFINITY:
        soft, hard = min(soft, inherited), min(hard, inherited)
    resource.setrlimit(which, (soft, hard))


def _nvrtc() -> Any:
    try:
        from cuda.bindings import nvrtc
    except ImportError as exc:  # the wheels are missing or broken
        raise BackendError(f"NVRTC is not available: {exc}") from exc
    return nvrtc


def _check(nvrtc: Any, result: tuple[Any, ...], what: str) -> tuple[Any, ...]:
    err, *rest = result
    if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
        _, text = nvrtc.nvrtcGetErrorString(err)
        raise BackendError(f"NVRTC {what} failed: {text.decode(errors='replace')}")
    return tuple(rest)


def _read(nvrtc: Any, prog: Any, size: Callable[..., Any], get: Callable[..., Any]) -> bytes:
    (n,) = _check(nvrtc, size(prog), "output size")
    data = b" " * n
    _check(nvrtc, get(prog, data), "output")
    return data


def compile_here(source: str, arch: str, name: str, level: Level) -> bytes:
    """One NVRTC compile in this process, unbounded, at `level`: what the worker runs.
    NotCompiled when NVRTC rejects the source or its assembler fails, MemoryError when NVRTC
    runs out of memory, another BackendError when NVRTC cannot start."""
    nvrtc = _nvrtc()
    (prog,) = _check(
        nvrtc, nvrtc.nvrtcCreateProgram(source.encode(), name.encode(), 0, [], []), "setup"
    )
    try:
        options = [
            f"--gpu-architecture={arch}".encode(),
            *(o.encode() for o in OPTIONS + level.options),
        ]
        (err,) = nvrtc.nvrtcCompileProgram(prog, len(options), options)
        if err == nvrtc.nvrtcResult.NVRTC_ERROR_OUT_OF_MEMORY:
            raise MemoryError("NVRTC ran out of memory")
        if err != nvrtc.nvrtcResult.NVRTC_SUCCESS:
            log = _read(nvrtc, prog, nvrtc.nvrtcGetProgramLogSize, nvrtc.nvrtcGetProgramLog)
            text = log.rstrip(b"\0 ").decode(errors="replace").strip()
            if err == nvrtc.nvrtcResult.NVRTC_ERROR_COMPILATION:
                raise NotCompiled(text)
            raise BackendError(failure_message(text))  # an option NVRTC does not take
        return _read(nvrtc, prog, nvrtc.nvrtcGetCUBINSize, nvrtc.nvrtcGetCUBIN)
    finally:
        nvrtc.nvrtcDestroyProgram(prog)


def version() -> str:
    """NVRTC's version, as `major.minor`."""
    nvrtc = _nvrtc()
    major, minor = _check(nvrtc, nvrtc.nvrtcVersion(), "version")
    return f"{major}.{minor}"

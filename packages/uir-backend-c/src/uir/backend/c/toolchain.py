"""Compiling rendered C into a shared library, cached by a hash of everything that shapes it.

The compiler is `$CC`, else `cc`. FLAGS keep C's floating point IEEE's: no contraction into fused
multiply-add (it would round once where UIR rounds twice), no fast-math, no excess precision.
`build_flags` adds what this machine and compiler allow (spec/uir-week2-c.md, "Compiler flags"):
`-march=x86-64-v3` (AVX2) on a CPU that has it. No flag changes a result bit: vectorizing
without fast-math never reassociates, and contraction stays off.
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from pathlib import Path

from uir.core.errors import BackendError

FLAGS = (
    "-std=c99",
    # -O3 over -O2: it vectorizes loops (gcc 12's -O2 only very cheap ones) and unrolls; without
    # fast-math neither reorders a float operation.
    "-O3",
    "-ffp-contract=off",
    "-fexcess-precision=standard",
    "-fno-fast-math",
    # errno is never read by generated code; without it sqrt is one instruction (and vectorizes)
    # instead of a call on the negative path. No value changes.
    "-fno-math-errno",
    # No code reads the floating-point exception flags, so an operation may run where the source
    # guards it: without this, gcc will not if-convert a select whose arm holds a float
    # operation, and the EXP2/LOG2/SIN kernels (transcendental.py) would not vectorize. No value
    # changes: only the exception flags a program never reads.
    "-fno-trapping-math",
    # PARALLEL loops run on POSIX threads (render.py's THREAD_POOL).
    "-pthread",
    "-fPIC",
    "-shared",
)
LIBS = ("-lm",)

# x86-64-v3 is AVX2, FMA, BMI1/2, F16C, LZCNT, MOVBE (and v2's SSE4.2, POPCNT, CX16, LAHF): a
# named level, not -march=native, so one library serves every machine of the level and a shared
# cache never hands one CPU's code to another. FMA instructions are allowed but contraction is off,
# so the compiler emits one only where the source asks for fma().
_X86_64_V3 = frozenset(
    {"avx", "avx2", "bmi1", "bmi2", "f16c", "fma", "abm", "movbe", "xsave", "cx16", "lahf_lm"}
    | {"popcnt", "sse4_1", "sse4_2", "ssse3"}
)
MACHINE_FLAGS = ("-march=x86-64-v3",)


def compiler() -> list[str] | None:
    """The C compiler command ($CC may carry arguments), or None when there is none."""
    words = shlex.split(os.environ.get("CC", "") or "cc")
    if not words or shutil.which(words[0]) is None:
        return None
    return [shutil.which(words[0]) or words[0], *words[1:]]


def cache_dir() -> Path:
    """$UIR_CACHE_DIR, else $XDG_CACHE_HOME/uir/c, else ~/.cache/uir/c."""
    explicit = os.environ.get("UIR_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "uir" / "c"


def cpu_has_x86_64_v3() -> bool:
    """Whether /proc/cpuinfo lists every feature of x86-64-v3 for this machine's CPU."""
    try:
        with open("/proc/cpuinfo") as info:
            line = next((x for x in info if x.startswith("flags")), "")
    except OSError:
        return False
    return set(line.split(":", 1)[-1].split()) >= _X86_64_V3


def _accepts(command: list[str], extra: tuple[str, ...]) -> bool:
    """Whether the compiler builds a shared library with `extra`."""
    with tempfile.TemporaryDirectory() as work:
        file = Path(work) / "probe.c"
        file.write_text("int uir_probe(void) { return 0; }\n")
        argv = [*command, *FLAGS, *extra, str(file), "-o", str(Path(work) / "probe.so")]
        try:
            done = subprocess.run(argv, capture_output=True, check=False)
        except OSError:
            return False
        return done.returncode == 0


def build_flags(command: list[str] | None = None) -> tuple[str, ...]:
    """FLAGS plus the machine flags this CPU and compiler support. The compiler is asked once
    per compiler identity and CPU; the answer is kept beside the cache's libraries (every
    `uir run` is a fresh process, and a probe compile costs about 0.05 s)."""
    command = command or compiler()
    if command is None:
        return FLAGS
    wanted = list(MACHINE_FLAGS) if cpu_has_x86_64_v3() else []
    note = cache_dir() / f"flags-{_key(wanted, command, FLAGS)[:32]}.txt"
    try:
        return (*FLAGS, *note.read_text().split())
    except OSError:
        pass
    chosen = [f for f in wanted if _accepts(command, (f,))]
    try:
        note.parent.mkdir(parents=True, exist_ok=True)
        partial = note.with_suffix(f".{os.getpid()}")
        partial.write_text(" ".join(chosen))
        os.replace(partial, note)
    except OSError:
        pass  # an unwritable cache fails the compile that follows, with its own message
    return (*FLAGS, *chosen)


def _key(sources: Sequence[str], command: list[str], flags: tuple[str, ...]) -> str:
    stat = os.stat(command[0])
    # The compiler's path, size and time stand for its version without running it on every hit.
    identity = [*command, str(stat.st_size), str(stat.st_mtime_ns), *flags, *sources]
    return hashlib.sha256("\0".join(identity).encode()).hexdigest()


def compile_shared(
    sources: Sequence[str],
    flags: tuple[str, ...] | None = None,
    use_cache: bool = True,
    command: list[str] | None = None,
) -> Path:
    """The path of a shared library built from the translation units `sources` (one compiler
    run for all of them), compiled now or found in the cache. `command` is the compiler, `$CC`
    or `cc` by default (another language's compiler, with its own `flags`, for other backends);
    `flags` are `build_flags()` by default. The flags are part of the cache key."""
    command = command or compiler()
    if command is None:
        raise BackendError("no C compiler found (set $CC or install cc)")
    if flags is None:
        flags = build_flags(command)
    directory = cache_dir()
    target = directory / f"{_key(sources, command, flags)}.so"
    if use_cache and target.exists():
        return target
    try:
        directory.mkdir(parents=True, exist_ok=True)
        # Build under a temporary name and rename: a concurrent reader never sees half a library.
        with tempfile.TemporaryDirectory(dir=directory) as work:
            files = [Path(work) / f"program{i}.c" for i in range(len(sources))]
            for file, source in zip(files, sources, strict=True):
                file.write_text(source)
            built = Path(work) / "program.so"
            run_compiler([*command, *flags, *map(str, files), "-o", str(built), *LIBS])
            os.replace(built, target)
    except OSError as exc:
        raise BackendError(f"cannot write the compile cache {directory}: {exc}") from exc
    return target


def run_compiler(argv: list[str]) -> None:
    """Run the compiler; its diagnostics become a BackendError."""
    try:
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
    except OSError as exc:
        raise BackendError(f"cannot run the compiler {argv[0]}: {exc}") from exc
    if done.returncode != 0:
        raise BackendError(f"the compiler {argv[0]} failed:\n{done.stderr.strip()}")

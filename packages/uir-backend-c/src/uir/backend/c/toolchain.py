"""Compiling rendered C into a shared library, cached by a hash of everything that shapes it.

The compiler is `$CC`, else `cc`. Flags keep C's floating point IEEE's: no contraction into fused
multiply-add (it would round once where UIR rounds twice), no fast-math, no excess precision.
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
    "-O2",
    "-ffp-contract=off",
    "-fexcess-precision=standard",
    "-fno-fast-math",
    "-fPIC",
    "-shared",
)
LIBS = ("-lm",)


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


def _key(sources: Sequence[str], command: list[str], flags: tuple[str, ...]) -> str:
    stat = os.stat(command[0])
    # The compiler's path, size and time stand for its version without running it on every hit.
    identity = [*command, str(stat.st_size), str(stat.st_mtime_ns), *flags, *sources]
    return hashlib.sha256("\0".join(identity).encode()).hexdigest()


def compile_shared(
    sources: Sequence[str],
    flags: tuple[str, ...] = FLAGS,
    use_cache: bool = True,
    command: list[str] | None = None,
) -> Path:
    """The path of a shared library built from the translation units `sources` (one compiler
    run for all of them), compiled now or found in the cache. `command` is the compiler, `$CC`
    or `cc` by default (another language's compiler, with its own `flags`, for other backends)."""
    command = command or compiler()
    if command is None:
        raise BackendError("no C compiler found (set $CC or install cc)")
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

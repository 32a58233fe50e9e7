"""The child process of one bounded NVRTC compile (uir.backend.cuda.nvrtc.compile_bounded).

    python -m uir.backend.cuda.nvrtc_worker ARCH LEVEL NAME MEMORY_BYTES CPU_SECONDS < SOURCE

It puts itself under the bounds before NVRTC is loaded, compiles the source it reads from
standard input at LEVELS[LEVEL], and answers with its exit status: 0 with the cubin on standard
output; EXIT_NOT_COMPILED with NVRTC's log on standard error; EXIT_ERROR with a message; and
EXIT_NO_MEMORY. A run past its CPU time ends by a signal.
"""

from __future__ import annotations

import sys

from uir.core.errors import BackendError

from .nvrtc import (
    EXIT_ERROR,
    EXIT_NO_MEMORY,
    EXIT_NOT_COMPILED,
    LEVELS,
    Bounds,
    NotCompiled,
    compile_here,
    limit_self,
)


def main(argv: list[str]) -> int:
    arch, level, name, memory, cpu_seconds = argv
    limit_self(Bounds(int(memory), int(cpu_seconds)))
    source = sys.stdin.buffer.read().decode()
    try:
        cubin = compile_here(source, arch, name, LEVELS[int(level)])
    except NotCompiled as failed:
        sys.stderr.write(failed.log)
        return EXIT_NOT_COMPILED
    except BackendError as exc:
        sys.stderr.write(str(exc))
        return EXIT_ERROR
    except MemoryError:
        return EXIT_NO_MEMORY
    sys.stdout.buffer.write(cubin)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

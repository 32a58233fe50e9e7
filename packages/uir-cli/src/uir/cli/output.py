"""Writing to standard output: a write that fails (a full disk, a closed pipe or descriptor) is an
I/O error of the environment, exit 1 with a message (uir.md 11), not an internal error."""

from __future__ import annotations

import contextlib
import os
import sys

from uir.core.errors import UsageError


def write_output(text: str) -> None:
    """Write `text` to standard output and flush it, so that a failure is reported here."""
    if sys.stdout is None:  # descriptor 1 was closed when the process started
        raise UsageError("cannot write standard output: it is closed")
    try:
        sys.stdout.write(text)
        sys.stdout.flush()
    except OSError as exc:
        raise output_error(exc) from exc


def flush_output() -> None:
    """Flush what print() left in standard output's buffer, reporting a failure as write_output."""
    if sys.stdout is not None:
        try:
            sys.stdout.flush()
        except OSError as exc:
            raise output_error(exc) from exc


def output_error(exc: OSError) -> UsageError:
    """The error for a failed write to standard output. What is still buffered goes to the null
    device: the interpreter flushes stdout once more at exit, and a second failure there would
    print 'Exception ignored' and change the exit status to 120."""
    with contextlib.suppress(OSError, ValueError):  # ValueError: a stdout with no descriptor
        null = os.open(os.devnull, os.O_WRONLY)
        os.dup2(null, sys.stdout.fileno())
        os.close(null)
    return UsageError(f"cannot write standard output: {exc.strerror or exc}")

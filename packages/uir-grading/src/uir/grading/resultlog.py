"""The append-only JSON-lines log of a long grading run (`uir grade`'s results.jsonl, `uir perf`'s
measurements): one line per result, written as each completes, so that a run cut short (SIGTERM,
Ctrl-C, a killed machine) keeps what it computed and a rerun does only what is missing. Appending
costs the same however long the log is, and the log is read back one line at a time."""

from __future__ import annotations

import contextlib
import json
import os
import threading
from collections.abc import Iterator
from typing import Any, BinaryIO

from uir.core.errors import UsageError

from .shards import Shard


class Log:
    """A header naming the run's fingerprint and shard, then one line per result, appended and
    flushed as each completes. Opening it checks the header (a log of another run is refused) and
    cuts a torn last line (a run killed mid-write), so appends start on a line of their own."""

    def __init__(self, path: str, print_: str, shard: Shard | None) -> None:
        self.path = path
        self.header = self.header_of(print_, shard)
        self.lock = threading.Lock()
        self._check()
        self.stream = open(self.path, "a", encoding="utf-8")  # noqa: SIM115  (closed by close)
        if os.path.getsize(self.path) == 0:
            self._write(self.header)

    @staticmethod
    def header_of(print_: str, shard: Shard | None) -> dict[str, Any]:
        """The first line of the log of a run of fingerprint `print_` and `shard`."""
        return {"fingerprint": print_, "shard": None if shard is None else str(shard)}

    def _check(self) -> None:
        try:
            f = open(self.path, "r+b")  # noqa: SIM115  (closed by the with below)
        except FileNotFoundError:
            return
        with f:
            first = f.readline()
            if not first.endswith(b"\n"):
                f.truncate(0)  # empty, or only a torn header: a fresh start
                return
            try:
                header = json.loads(first)
            except ValueError:
                header = None
            if header != self.header:
                raise UsageError(
                    f"{self.path} holds the results of another grading run (another roster, "
                    "other tests, benchmarks or limits, or another shard): give a new --out, or "
                    "remove it to start over"
                )
            f.truncate(_end_of_last_line(f))

    def entries(self) -> Iterator[dict[str, Any]]:
        """The logged results, read one line at a time (a line that is not a JSON object, which
        only a damaged log has, is skipped)."""
        with open(self.path, "rb") as f:
            f.readline()  # the header
            for line in f:
                try:
                    entry = json.loads(line)
                except ValueError:
                    continue
                if isinstance(entry, dict):
                    yield entry

    def _write(self, entry: dict[str, Any]) -> None:
        self.stream.write(json.dumps(entry, ensure_ascii=False) + "\n")
        self.stream.flush()

    def append(self, entry: dict[str, Any]) -> None:
        with self.lock:
            self._write(entry)

    def close(self) -> None:
        self.stream.close()


def _end_of_last_line(f: BinaryIO, chunk: int = 1 << 16) -> int:
    """The size of the file up to and with its last newline, read backwards from its end."""
    position = f.seek(0, os.SEEK_END)
    while position > 0:
        start = max(0, position - chunk)
        f.seek(start)
        found = f.read(position - start).rfind(b"\n")
        if found >= 0:
            return start + found + 1
        position = start
    return 0


@contextlib.contextmanager
def opened_log(path: str, print_: str, shard: Shard | None) -> Iterator[Log]:
    """The log at `path` (its directory made if need be), closed on leaving; a UsageError when
    it cannot be written or belongs to another run."""
    directory = os.path.dirname(path) or os.curdir
    try:
        os.makedirs(directory, exist_ok=True)
        log = Log(path, print_, shard)
    except OSError as e:
        raise UsageError(f"cannot write the results to {directory}: {e.strerror or e}") from e
    try:
        yield log
    finally:
        log.close()

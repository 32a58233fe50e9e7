"""Splitting a grading run into shards that run anywhere, and merging their partial results.

Any command whose work is a list of independent items (the (compiler, test) pairs of
`uir grade`, the (compiler, benchmark) pairs of `uir perf`) can be sharded the same way:

- `Shard.parse("K/N")`, then `select(items, shard)`: the K-th of N slices, items K-1, K-1+N, ...
  of the list. The slices are disjoint, cover the list, and differ in length by one at most;
  interleaving spreads each compiler's (or each test's) runs over all shards, so no shard gets
  all the slow ones.
- `fingerprint(value)`: a hash of everything that decides the work (the roster, the tests or
  benchmarks and their contents (uir.cli.grading.testfile.file_digest), the limits), recorded
  in every partial, so that results of different inputs are never merged.
- `write_partial(...)` writes one shard's results as JSON; `read_partials(...)` reads a set of
  them back and checks they share a kind and fingerprint, that every slice of 1..N is there
  exactly once, and that each is complete. Its ShardError is a usage error (exit 1), so every
  merge command refuses the same inputs with the same messages.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

from uir.cli.grading.report import write_json
from uir.core.errors import UsageError

T = TypeVar("T")

PARTIAL_FILE = "partial.json"
MAX_SHARDS = 100_000


class ShardError(UsageError):
    """Partial results that cannot be merged, or a malformed K/N."""


@dataclass(frozen=True)
class Shard:
    """The `index`-th (from 1) of `count` slices."""

    index: int
    count: int

    @classmethod
    def parse(cls, text: str) -> Shard:
        found = re.fullmatch(r"\s*(\d+)\s*/\s*(\d+)\s*", text)
        if not found:
            raise ShardError(f"a shard is K/N (the K-th of N, from 1), got {text!r}")
        index, count = int(found[1]), int(found[2])
        if not 1 <= count <= MAX_SHARDS or not 1 <= index <= count:
            raise ShardError(f"a shard K/N needs 1 <= K <= N <= {MAX_SHARDS}, got {text!r}")
        return cls(index, count)

    def __str__(self) -> str:
        return f"{self.index}/{self.count}"

    def holds(self, position: int) -> bool:
        """Whether the item at `position` (from 0) of the work list is this shard's."""
        return position % self.count == self.index - 1


def select(items: Sequence[T], shard: Shard | None) -> list[T]:
    """The items of `shard` (all of them for None), in their order."""
    return [item for i, item in enumerate(items) if shard is None or shard.holds(i)]


def fingerprint(value: object) -> str:
    """A hash of a JSON-able value, the same on every machine and Python."""
    text = json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)
    return hashlib.sha256(text.encode("ascii")).hexdigest()


def write_partial(
    path: str,
    kind: str,
    print_: str,
    shard: Shard,
    results: list[Any],
    complete: bool,
    meta: dict[str, Any],
) -> None:
    """One shard's results: `complete` when every item of its slice has one."""
    document = {
        "kind": kind,
        "fingerprint": print_,
        "shard": str(shard),
        "complete": complete,
        "meta": meta,
        "results": results,
    }
    write_json(path, document)


@dataclass(frozen=True)
class Partial:
    """A shard's partial result, checked; its results are read when asked for (`results`), so
    that a merge holds one shard's results at a time, not all of them."""

    path: str
    kind: str
    fingerprint: str
    shard: Shard
    meta: dict[str, Any]

    def results(self) -> list[Any]:
        """The shard's results, read again from its file (which must not have changed)."""
        document = _document(self.path, self.kind)
        if [document.get("fingerprint"), document.get("shard")] != [
            self.fingerprint,
            str(self.shard),
        ]:
            raise ShardError(f"{self.path} changed while it was merged")
        return document["results"]


def _document(path: str, kind: str) -> dict[str, Any]:
    try:
        with open(path, encoding="utf-8") as f:
            document = json.load(f)
    except FileNotFoundError:
        raise ShardError(f"{path}: no partial result (was the shard run?)") from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ShardError(f"{path}: cannot read a partial result: {e}") from None
    if not isinstance(document, dict) or document.get("kind") != kind:
        raise ShardError(f"{path}: not a partial result of kind {kind}")
    if not isinstance(document.get("results"), list):
        raise ShardError(f"{path}: malformed partial result")
    return document


def _read_partial(path: str, kind: str) -> Partial:
    if os.path.isdir(path):
        path = os.path.join(path, PARTIAL_FILE)
    document = _document(path, kind)
    try:
        shard = Shard.parse(str(document["shard"]))
        print_, complete, meta = (
            str(document["fingerprint"]),
            document["complete"],
            document["meta"],
        )
    except KeyError as e:
        raise ShardError(f"{path}: the partial result has no {e.args[0]!r}") from None
    if not isinstance(meta, dict):
        raise ShardError(f"{path}: malformed partial result")
    if complete is not True:
        raise ShardError(f"{path}: shard {shard} did not finish; run it again to complete it")
    return Partial(path, kind, print_, shard, meta)


def read_partials(paths: Sequence[str], kind: str) -> list[Partial]:
    """The partial results at `paths` (files, or directories holding PARTIAL_FILE), in shard
    order; a ShardError unless they are the complete shards 1..N of one piece of work."""
    if not paths:
        raise ShardError("no partial results to merge")
    read = [_read_partial(p, kind) for p in paths]
    prints = {p.fingerprint for p in read}
    if len(prints) > 1:
        names = ", ".join(f"{p.path} ({p.fingerprint[:12]})" for p in read)
        raise ShardError(
            "the partial results come from different runs (another roster, other tests or "
            f"benchmarks or their contents, other limits or options): {names}"
        )
    partials = sorted(read, key=lambda p: p.shard.index)
    counts = {p.shard.count for p in partials}
    if len(counts) > 1:
        raise ShardError(f"the partial results split the work differently: N = {sorted(counts)}")
    count = counts.pop()
    seen: dict[int, str] = {}
    for partial in partials:
        if partial.shard.index in seen:
            raise ShardError(
                f"shard {partial.shard} is given twice: {seen[partial.shard.index]} and "
                f"{partial.path}"
            )
        seen[partial.shard.index] = partial.path
    missing = [str(k) for k in range(1, count + 1) if k not in seen]
    if missing:
        raise ShardError(f"missing shards (of {count}): {', '.join(missing)}")
    return partials

"""What keeping `uir perf`'s measurements costs as a run goes on: appending each to the log
(resultlog.Log, what `uir perf` does now) against rewriting the whole measurement file after
every pair (what it did before), for runs of growing numbers of (team, benchmark) pairs.

Run: uv run python benchmarks/perf_log_bench.py [PAIRS...]
Prints, per number of pairs, the seconds and bytes written each way, and the seconds a rerun
takes to read the log back (`actions.logged_measurements`). Nothing here asserts a time.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time

from uir.grading import actions, perf_report, resultlog
from uir.grading.perf import Measurement
from uir.grading.shards import Shard, write_partial

SHARD = Shard(1, 1)


def _measurements(pairs: int) -> list[Measurement]:
    return [
        Measurement(f"team{i // 20}", f"bench{i % 20}", "0" * 40, "pass", "", (0.1, 0.2, 0.3))
        for i in range(pairs)
    ]


def _rewriting(directory: str, measured: list[Measurement]) -> int:
    path, written = os.path.join(directory, "rewritten.json"), 0
    for done in range(1, len(measured) + 1):
        results = [m.as_dict() for m in measured[:done]]
        write_partial(path, perf_report.MEASUREMENTS_KIND, "f", SHARD, results, False, {})
        written += os.path.getsize(path)
    return written


def _appending(directory: str, measured: list[Measurement]) -> int:
    path = os.path.join(directory, "log.jsonl")
    with resultlog.opened_log(path, "f", SHARD) as log:
        for m in measured:
            log.append(m.as_dict())
    return os.path.getsize(path)


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [250, 500, 1000, 2000]
    print(
        f"{'pairs':>6} {'rewrite s':>10} {'rewrite MB':>11} {'append s':>9} {'log MB':>7} "
        f"{'read back s':>12}"
    )
    for pairs in sizes:
        measured = _measurements(pairs)
        with tempfile.TemporaryDirectory() as directory:
            began = time.perf_counter()
            rewritten = _rewriting(directory, measured)
            rewrite_s = time.perf_counter() - began
            began = time.perf_counter()
            appended = _appending(directory, measured)
            append_s = time.perf_counter() - began
            log_path = os.path.join(directory, "log.jsonl")
            began = time.perf_counter()
            with resultlog.opened_log(log_path, "f", SHARD) as log:
                kept = actions.logged_measurements(log, [(m.team, m.benchmark) for m in measured])
            read_s = time.perf_counter() - began
            assert len(kept) == pairs
        print(
            f"{pairs:>6} {rewrite_s:>10.3f} {rewritten / 1e6:>11.1f} {append_s:>9.3f} "
            f"{appended / 1e6:>7.2f} {read_s:>12.3f}"
        )


if __name__ == "__main__":
    main()

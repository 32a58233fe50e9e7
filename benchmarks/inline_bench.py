"""CALL inlining cost: the one inliner (uir.core.calls.inline_calls) on the program of
core_scale_bench.py, with its CALLs and with each CALL replaced by an ADD (nothing to inline:
the graph must come back as the same object, nothing rebuilt).

Run: uv run python benchmarks/inline_bench.py [STATEMENTS]
Prints CPU seconds, best of 3; nothing here asserts a time. Measured on the course's 2-core
machine, 50,000 statements: the hand-written inliner core had before the engine moved into core
took 348 ms with CALLs and 183 ms without (it rebuilt every UOp); the engine's top-down rule takes
311 ms and 74 ms.
"""

from __future__ import annotations

import re
import sys
import time

from core_scale_bench import program_text

from uir.core.calls import inline_calls
from uir.core.parse import parse


def best_cpu(fn, *args, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn(*args)
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    statements = int(sys.argv[1]) if len(sys.argv) > 1 else 50_000
    text = program_text(statements)
    no_call = re.sub(r"CALL i32 %body (\S+) (\S+)", r"ADD i32 \1 \2", text)
    for label, source in (("with CALLs", text), ("no CALL", no_call)):
        sink = parse(source, "bench.uir").sink
        seconds = best_cpu(inline_calls, sink, {})
        same = inline_calls(sink) is sink
        print(f"inline_calls, {label:<10} {seconds * 1000:8.1f} ms CPU  (unchanged: {same})")


if __name__ == "__main__":
    main()

"""The per-run overhead of a tiny program: a session (uir.core.runtime, one load, the entry point
called in this process on persistent buffers) against `compile().run()` (fresh buffers, for C
and cuda-emu the forked runner), on each backend usable here. It prints figures and asserts
nothing about time; it checks that both runners agree on the counter they computed.

The program is the counter (one i32 buffer, STORE of LOAD + 1) with a value output: what remains
is the runners' own cost, the compiled code's is a few nanoseconds.

Run: uv run python benchmarks/session_bench.py [--runs N] [--backends interp,c,cuda-emu,cuda]
"""

from __future__ import annotations

import argparse
import statistics
import time

from uir.core.parse import parse
from uir.core.plugins import form_of, load_registry, prepare
from uir.core.runtime import open_session

PROGRAM = """
%z = CONST i32 0
%b = BUFFER i32[1] 0
%p = INDEX i32 %b %z
%v = LOAD i32 %p
%one = CONST i32 1
%w = ADD i32 %v %one
%s = STORE void %p %w
%b1 = AFTER i32[1] %b %s
%twice = ADD i32 %w %w
%out = SINK void %b1 %twice
"""


def per_run_us(run: object, runs: int, repeats: int = 5) -> float:
    """The median over `repeats` rounds of the microseconds one call of `run` took."""
    rounds = []
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(runs):
            run()  # type: ignore[operator]
        rounds.append((time.perf_counter() - start) / runs * 1e6)
    return statistics.median(rounds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=2000, help="session runs per round")
    parser.add_argument("--backends", default="interp,c,cuda-emu,cuda")
    args = parser.parse_args(argv)
    registry = load_registry()
    sink = parse(PROGRAM).sink
    print(f"{'backend':<9} {'session us/run':>15} {'compile().run() us/run':>23} {'ratio':>7}")
    for name in args.backends.split(","):
        backend = registry.backends.get(name)
        ok, why = backend.available() if backend is not None else (False, "not installed")
        if not ok:
            print(f"{name:<9} skipped: {why}")
            continue
        form = form_of(backend)
        compiled = backend.compile(prepare(sink, form, registry.pipeline(form=form)))
        with open_session(sink, backend, registry=registry) as session:
            session.run()  # warm
            ours = per_run_us(session.run, args.runs)
            counted = session.run()[0][0]
        forked_runs = max(args.runs // 20, 20)  # a fork costs far more: fewer calls suffice
        theirs = per_run_us(compiled.run, forked_runs)
        assert counted == 5 * args.runs + 2 and compiled.run()[0][0] == 1  # both really ran
        print(f"{name:<9} {ours:>15.1f} {theirs:>23.1f} {theirs / ours:>6.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

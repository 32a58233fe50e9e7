"""Rewrite benchmark: throughput on a 100,000-UOp graph, and simplification power on the index
expressions movement ops produce, and on the index corpus of packages/uir-rewrite/tests.

    uv run python benchmarks/rewrite_bench.py
    uv run python benchmarks/rewrite_bench.py --baseline DIR

With --baseline, DIR is another checkout (say main's, from `git worktree add` or `git archive`):
the corpus and the throughput are also measured with its packages, in a subprocess, and printed
beside this tree's figures. Prints figures only; nothing here is asserted (speed is measured,
never tested).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import time
from pathlib import Path

from uir.core.dtypes import I32
from uir.core.ops import Op
from uir.core.uop import UOp
from uir.rewrite.passes import simplify

P0, P1, P2 = (UOp(Op.PARAM, I32, (), slot) for slot in range(3))


def const(value: int) -> UOp:
    return UOp(Op.CONST, I32, (), value)


def op(name: Op, *src: UOp) -> UOp:
    return src[0].alu(name, *src[1:])


def bounded(x: UOp, top: int) -> UOp:
    """x AND top: known to lie in [0, top]."""
    return op(Op.AND, x, const(top))


def big_graph(target: int) -> UOp:
    """A chain of index arithmetic ((x & 1023)*4 + j)/4 + n%7, about `target` UOps in all."""
    x = P0
    n = 0
    while True:
        j = bounded(op(Op.ADD, P1, const(n)), 3)
        flat = op(Op.ADD, op(Op.MUL, bounded(x, 1023), const(4)), j)
        x = op(Op.ADD, op(Op.IDIV, flat, const(4)), const(n % 7))
        n += 1
        if n % 256 == 0 and len(x.toposort()) >= target:
            return x


CORPUS = Path(__file__).resolve().parent.parent / "packages/uir-rewrite/tests/index_corpus.py"


def load_corpus():
    spec = importlib.util.spec_from_file_location("index_corpus", CORPUS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("index_corpus", module)
    spec.loader.exec_module(module)
    return module.CASES


def alu_ops(expr: UOp) -> int:
    from uir.core.ops import ALU

    return sum(u.op in ALU for u in expr.toposort())


def corpus_figures() -> dict:
    """Per family: the corpus's ALU ops as written, after simplify, and by hand."""
    families: dict[str, list[int]] = {}
    for case in load_corpus():
        row = families.setdefault(case.family, [0, 0, 0, 0, 0])
        after = alu_ops(simplify(case.expr))
        row[0] += 1
        row[1] += alu_ops(case.expr)
        row[2] += after
        row[3] += case.ops
        row[4] += after == case.ops
    return families


def timed(graph: UOp) -> tuple[float, UOp]:
    start = time.perf_counter()
    result = simplify(graph)
    return time.perf_counter() - start, result


def throughput(runs: int = 3) -> dict:
    """Best of `runs`, each on a freshly built graph: UOps are hash-consed and cache their bounds,
    so the graph and its result are dropped between runs to start cold each time."""
    best = again = float("inf")
    for _ in range(runs):
        graph = big_graph(100_000)
        size = len(graph.toposort())
        seconds, result = timed(graph)
        best = min(best, seconds)
        seconds, unchanged = timed(result)  # a second pass finds nothing left to do
        assert unchanged is result
        again = min(again, seconds)
        after = len(result.toposort())
        del graph, result, unchanged
    return {"size": size, "after": after, "best": best, "again": again, "runs": runs}


def print_throughput(figures: dict, label: str) -> None:
    size, after, best, again = (figures[k] for k in ("size", "after", "best", "again"))
    print(
        f"throughput, {label}, on a {size:,}-UOp graph (best of {figures['runs']}; {after:,} after)"
    )
    print(f"  simplify:                  {best:6.2f} s  {size / best:10,.0f} UOps/s")
    print(f"  simplify of its result:    {again:6.2f} s  {after / again:10,.0f} UOps/s")


def print_corpus(mine: dict, baseline: dict | None) -> None:
    print("index corpus: ALU ops as lowered, after simplify (and with --baseline's code), by hand")
    head = f"  {'family':<10} {'cases':>5} {'lowered':>7} {'after':>6}"
    head += f" {'base':>6}" if baseline else ""
    print(head + f" {'hand':>5}  {'reached':>7}  removed")
    totals = [0] * 6
    for family, (cases, lowered, after, hand, reached) in mine.items():
        base = baseline[family][2] if baseline else None
        line = f"  {family:<10} {cases:>5} {lowered:>7} {after:>6}"
        line += f" {base:>6}" if baseline else ""
        removed = f"{lowered - after}" + (f" (base {lowered - base})" if baseline else "")
        print(line + f" {hand:>5}  {reached:>3}/{cases:<3}  {removed}")
        for n, v in enumerate((cases, lowered, after, hand, reached, base or 0)):
            totals[n] += v
    cases, lowered, after, hand, reached, base = totals
    line = f"  {'total':<10} {cases:>5} {lowered:>7} {after:>6}" + (
        f" {base:>6}" if baseline else ""
    )
    removed = f"{lowered - after}" + (f" (base {lowered - base})" if baseline else "")
    print(line + f" {hand:>5}  {reached:>3}/{cases:<3}  {removed}")


def baseline_figures(root: Path, with_throughput: bool) -> dict:
    """The figures of another checkout's packages, measured in a subprocess."""
    paths = [str(p) for p in sorted((root / "packages").glob("*/src"))]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    args = [sys.executable, __file__, "--json"] + ([] if with_throughput else ["--no-throughput"])
    out = subprocess.run(args, env=env, check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


i, j, k = bounded(P0, 1023), bounded(P1, 3), bounded(P2, 3)
flat = op(Op.ADD, op(Op.MUL, i, const(4)), j)  # i*4 + j: a [1024, 4] view flattened
flat3 = op(Op.ADD, op(Op.ADD, op(Op.MUL, i, const(12)), op(Op.MUL, j, const(4))), k)  # [.., 3, 4]

# (what it is, the expression, what it must become)
EXPRESSIONS = [
    ("(i*4+j)/4", op(Op.IDIV, flat, const(4)), i),
    ("(i*4+j)%4", op(Op.MOD, flat, const(4)), j),
    ("(i*12+j*4+k)/4", op(Op.IDIV, flat3, const(4)), op(Op.ADD, op(Op.MUL, i, const(3)), j)),
    ("(i*12+j*4+k)%4", op(Op.MOD, flat3, const(4)), k),
    (
        "((i*12+j*4+k)/4)%3",
        op(Op.MOD, op(Op.IDIV, flat3, const(4)), const(3)),
        op(Op.MOD, j, const(3)),
    ),
    ("((i*4+j)/2)%2", op(Op.MOD, op(Op.IDIV, flat, const(2)), const(2)), op(Op.IDIV, j, const(2))),
    ("(i*4+j)/4*4 + (i*4+j)%4", None, flat),
    ("((i+1)*4 + j)/4 - 1", None, i),
    ("(i*4+j) < 4096", op(Op.CMPLT, flat, const(4096)), None),
    ("min(max(j, 0), 3)", op(Op.MIN, op(Op.MAX, j, const(0)), const(3)), j),
    ("(x/4)/8", op(Op.IDIV, op(Op.IDIV, P0, const(4)), const(8)), op(Op.IDIV, P0, const(32))),
    ("(x%12)%4", op(Op.MOD, op(Op.MOD, P0, const(12)), const(4)), op(Op.MOD, P0, const(4))),
]
# the two built from pieces
EXPRESSIONS[6] = (
    EXPRESSIONS[6][0],
    op(Op.ADD, op(Op.MUL, op(Op.IDIV, flat, const(4)), const(4)), op(Op.MOD, flat, const(4))),
    flat,
)
EXPRESSIONS[7] = (
    EXPRESSIONS[7][0],
    op(
        Op.SUB,
        op(Op.IDIV, op(Op.ADD, op(Op.MUL, op(Op.ADD, i, const(1)), const(4)), j), const(4)),
        const(1),
    ),
    i,
)


def power() -> None:
    print("simplification of index expressions (0 <= i < 1024, 0 <= j, k < 4; UOps incl. leaves)")
    print(f"  {'expression':<28} {'before':>6} {'after':>6}  {'ideal':>5}  reached")
    for name, expr, ideal in EXPRESSIONS:
        after = simplify(expr)
        ideal_size = "" if ideal is None else len(simplify(ideal).toposort())
        reached = "" if ideal is None else ("yes" if after is simplify(ideal) else "no")
        if name.endswith("< 4096"):
            reached = "yes" if after.op is Op.CONST and after.arg is True else "no"
            ideal_size = 1
        size = (len(expr.toposort()), len(after.toposort()))
        print(f"  {name:<28} {size[0]:>6} {size[1]:>6}  {ideal_size!s:>5}  {reached}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout to measure beside this")
    parser.add_argument("--no-throughput", action="store_true", help="skip the 100,000-UOp runs")
    parser.add_argument("--json", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.json:  # a baseline's figures, for the parent process
        figures = {"corpus": corpus_figures()}
        if not args.no_throughput:
            figures["throughput"] = throughput()
        print(json.dumps(figures))
        return
    base = baseline_figures(args.baseline, not args.no_throughput) if args.baseline else None
    if not args.no_throughput:
        print_throughput(throughput(), "this tree")
        if base:
            print_throughput(base["throughput"], f"baseline {args.baseline}")
        print()
    power()
    print()
    print_corpus(corpus_figures(), base["corpus"] if base else None)


if __name__ == "__main__":
    main()

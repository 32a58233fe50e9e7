"""`uir viz` cost: building the page's data (parse, verify, every pass traced) and the page, for
programs of growing size, and tracing's own cost on the passes.

Run: uv run python benchmarks/viz_bench.py [UOPS ...]
Prints CPU seconds, best of 3, and the page's size; nothing here asserts a time. The program is
x_k = x_(k-1) * c_k + x_0 (three UOps a link), which `simplify` rewrites once per link.
On the course's shared 2-core machine, 10,000 UOps (6,800 rule applications): the passes took
1.18 s untraced and 1.22 s traced, the page's data 1.77 s, the HTML 0.03 s, for a 1.6 MB page.
"""

from __future__ import annotations

import sys
import time

from uir.cli.viz.data import page_data
from uir.cli.viz.page import render_page
from uir.core import parse
from uir.core.plugins import load_registry, run_passes
from uir.core.trace import tracing
from uir.testing.chains import chain_text


def best_cpu(fn, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.process_time()
        fn()
        best = min(best, time.process_time() - start)
    return best


def traced_passes(text: str, passes: list) -> None:
    with tracing():
        run_passes(parse(text).sink, passes)


def measure(size: int, passes: list) -> str:
    """One row of figures for a program of about `size` UOps."""
    text = chain_text((size - 5) // 3)
    untraced = best_cpu(lambda: run_passes(parse(text).sink, passes))
    traced = best_cpu(lambda: traced_passes(text, passes))
    built = best_cpu(lambda: page_data(text, "chain.uir", passes))
    data = page_data(text, "chain.uir", passes)
    rendered = best_cpu(lambda: render_page(data))
    kb = len(render_page(data).encode()) / 1024
    seconds = " ".join(f"{t:>7.2f}s" for t in (untraced, traced, built, rendered))
    return f"{size:>7} {seconds} {kb:>7.0f}kB"


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000]
    passes = list(load_registry().pipeline())
    print(f"{'UOps':>7} {'passes':>8} {'traced':>8} {'data':>8} {'page':>8} {'size':>9}")
    for size in sizes:
        print(measure(size, passes))


if __name__ == "__main__":
    main()

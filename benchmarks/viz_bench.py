"""`uir viz` cost: building the page's data (parse, verify, every pass traced) and the page, for
programs of growing size, and tracing's own cost on the passes; `+kernels` is the page's data
with its kernels entry too (the pipeline of the compiling backends run again, traced, and each
kernel's C rendered), as `uir viz` builds it.

Run: uv run python benchmarks/viz_bench.py [UOPS ...]
Prints CPU seconds, best of 3, and the page's size; nothing here asserts a time. The program is
x_k = x_(k-1) * c_k + x_0 (three UOps a link), which `simplify` rewrites once per link.
On the course's shared 2-core machine, 10,000 UOps (6,800 rule applications): the passes took
1.18 s untraced and 1.22 s traced, the page's data 1.77 s, the HTML 0.03 s, for a 1.6 MB page.
"""

from __future__ import annotations

import argparse
import sys
import time

from uir.cli.viz.command import kernel_setup
from uir.cli.viz.data import KernelSetup, page_data
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


def measure(size: int, passes: list, setup: KernelSetup) -> str:
    """One row of figures for a program of about `size` UOps."""
    text = chain_text((size - 5) // 3)
    untraced = best_cpu(lambda: run_passes(parse(text).sink, passes))
    traced = best_cpu(lambda: traced_passes(text, passes))
    built = best_cpu(lambda: page_data(text, "chain.uir", passes))
    with_kernels = best_cpu(lambda: page_data(text, "chain.uir", passes, setup))
    data = page_data(text, "chain.uir", passes, setup)
    rendered = best_cpu(lambda: render_page(data))
    kb = len(render_page(data).encode()) / 1024
    figures = (untraced, traced, built, with_kernels, rendered)
    seconds = " ".join(f"{t:>7.2f}s" for t in figures)
    return f"{size:>7} {seconds} {kb:>7.0f}kB"


def main() -> None:
    sizes = [int(a) for a in sys.argv[1:]] or [1_000, 10_000]
    registry = load_registry()
    passes = list(registry.pipeline())
    setup = kernel_setup(registry, argparse.Namespace(passes=None, skip=None))
    print(
        f"{'UOps':>7} {'passes':>8} {'traced':>8} {'data':>8} {'+kernels':>8} {'page':>8} "
        f"{'size':>9}"
    )
    for size in sizes:
        print(measure(size, passes, setup))


if __name__ == "__main__":
    main()

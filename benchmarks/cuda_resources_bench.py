"""What compiling and running CUDA programs costs and keeps; prints figures, asserts nothing.

1. Each large program of uir.testing.large compiled within the bounds (nvrtc.BOUNDS): every
   attempt's level, outcome and seconds.
2. The price of the child process: one small program compiled in this process
   (nvrtc.compile_here) and through a bounded child (nvrtc.compile_cubin), best of 10.
3. What this process keeps across N bounded compiles (default 1000): its resident memory and
   open file descriptors before and after, and the children's peak memory.
4. On a GPU (skipped without one): N programs loaded, run and dropped; the device's free memory
   and this process's resident memory before and after.

Run: uv run python benchmarks/cuda_resources_bench.py [--compiles N] [--runs N] [--skip-large]
"""

from __future__ import annotations

import argparse
import os
import resource
import time

from uir.backend.cuda import driver
from uir.backend.cuda.nvrtc import BOUNDS, LEVELS, compile_bounded, compile_cubin, compile_here
from uir.backend.cuda.render import render_cuda
from uir.core import parse, verify
from uir.core.uop import UOp
from uir.testing.backends import scheduled
from uir.testing.large import many_kernels, programs


def load(text: str) -> UOp:
    program = parse(text)
    verify(program)
    return program.sink


def resident_mb() -> float:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def open_fds() -> int:
    return len(os.listdir("/proc/self/fd"))


def large_programs() -> None:
    print(
        f"bounds: {BOUNDS.memory >> 20} MiB, {BOUNDS.cpu_seconds} CPU s an attempt; levels "
        + ", ".join(level.name for level in LEVELS)
    )
    for p in programs():
        source = render_cuda(scheduled(load(p.text))).source
        start = time.perf_counter()
        compiled = compile_bounded(source)
        steps = "; ".join(
            f"{a.level.name} {a.seconds:.1f} s {a.failure or 'ok'}" for a in compiled.attempts
        )
        print(
            f"  {p.name:28s} {len(source) / 1e3:8.0f} kB {time.perf_counter() - start:6.1f} s"
            f"  {steps}"
        )


def child_price() -> None:
    source = render_cuda(scheduled(load(many_kernels(1, 64)))).source
    here, child = [], []
    for _ in range(10):
        start = time.perf_counter()
        compile_here(source, "sm_90", "program.cu", LEVELS[0])
        here.append(time.perf_counter() - start)
        start = time.perf_counter()
        compile_cubin(source)
        child.append(time.perf_counter() - start)
    print(
        f"one small program: {min(here) * 1e3:.0f} ms in this process, "
        f"{min(child) * 1e3:.0f} ms through a bounded child"
    )


def many_compiles(count: int) -> None:
    source = render_cuda(scheduled(load(many_kernels(1, 64)))).source
    compile_cubin(source)
    rss, fds = resident_mb(), open_fds()
    start = time.perf_counter()
    for _ in range(count):
        compile_cubin(source)
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(
        f"{count} compiles in {time.perf_counter() - start:.0f} s: this process "
        f"{rss:.0f} -> {resident_mb():.0f} MB resident, {fds} -> {open_fds()} open files; "
        f"children's peak {children:.0f} MB"
    )


def many_runs(count: int) -> None:
    ok, why = driver.available()
    if not ok:
        print(f"GPU runs: skipped ({why})")
        return
    sink = load(many_kernels(1, 1 << 20))
    rendered = render_cuda(scheduled(sink))
    cubin = compile_cubin(rendered.source, driver.architecture())
    device = driver.default_device()
    device.make_current()
    driver.GpuProgram(rendered, cubin, sink).run()
    free, _ = device.check("memory query", device.driver.cuMemGetInfo())
    rss = resident_mb()
    start = time.perf_counter()
    for _ in range(count):
        driver.GpuProgram(rendered, cubin, sink).run()
    after, _ = device.check("memory query", device.driver.cuMemGetInfo())
    print(
        f"{count} GPU programs loaded, run (4 MiB each) and dropped in "
        f"{time.perf_counter() - start:.1f} s: device free {free / 2**20:.0f} -> "
        f"{after / 2**20:.0f} MiB, this process {rss:.0f} -> {resident_mb():.0f} MB resident"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--compiles", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=2000)
    parser.add_argument("--skip-large", action="store_true")
    args = parser.parse_args()
    if not args.skip_large:
        large_programs()
    child_price()
    many_compiles(args.compiles)
    many_runs(args.runs)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

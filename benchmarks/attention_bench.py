"""Flash attention against the naive formula (uir.tensor.attention, spec/uir-week10.md).

Two tables, for one head of f32 q, k, v [T, 64] read from buffers:

1. Memory, from the schedule alone (nothing runs): the kernels and the peak of scratch memory
   that `uir run --stats` prints (uir.core.stats.peak_scratch), at T = 1024 and 4096. The naive
   formula holds two T x T values (the masked scores and the probabilities), the flash schedule
   k transposed, the output and a row's accumulators: O(T^2) against O(T d).
2. Time on the C backend at T = 2048 (by default), causal and not: compile time (the pipeline
   and cc) and the best of REPEATS runs (the forked runtime included). Both outputs are checked
   against float64 numpy within the bound spec/uir-week10.md derives (uir.testing.tolerance.
   attention_bound), and so against each other within the sum of the two bounds; the largest
   error seen is printed beside the bound. Nothing here asserts a time.

Run: nice -n 10 uv run python benchmarks/attention_bench.py [T] [--block B] [--repeats N]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from uir.backend.c.plugin import CBackend
from uir.core.dtypes import Type, f32
from uir.core.ops import Op
from uir.core.stats import peak_scratch
from uir.core.uop import UOp
from uir.tensor.attention import flash_attention, naive_attention
from uir.testing.backends import scheduled
from uir.testing.tolerance import attention_bound, reference_attention

D = 64


def program(builder, t: int, causal: bool, **options) -> UOp:
    """Attention of q, k, v: BUFFERs of slots 0, 1, 2 (their contents given at run time)."""
    values = [UOp(Op.BUFFER, Type(f32, (t * D,)), (), s).load().reshape((t, D)) for s in range(3)]
    return UOp.sink(builder(*values, causal=causal, **options))


def builders(block: int) -> list[tuple[str, object, dict]]:
    return [("naive", naive_attention, {}), ("flash", flash_attention, {"block": block})]


def memory_table(block: int) -> None:
    print(f"peak scratch (causal, one head, d = {D}, flash block {block})")
    print(f"{'T':>6} {'version':>8} {'kernels':>8} {'peak scratch bytes':>20} {'/ (T*d*4)':>10}")
    for t in (1024, 4096):
        for name, builder, options in builders(block):
            schedule = scheduled(program(builder, t, True, **options), optimize=True)
            peak = peak_scratch(schedule).bytes
            ratio = peak / (t * D * 4)
            print(f"{t:>6} {name:>8} {len(schedule.kernels):>8} {peak:>20} {ratio:>10.1f}")


def time_table(t: int, block: int, repeats: int) -> None:
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((t, D)).astype(np.float32) for _ in range(3))
    inputs = {slot: x.ravel() for slot, x in enumerate((q, k, v))}
    print(f"\nC backend, T = {t}, d = {D}, best of {repeats} runs")
    print(
        f"{'mask':>7} {'version':>8} {'compile s':>10} {'run s':>8} "
        f"{'max |err|':>10} {'bound':>10} {'agree':>6}"
    )
    for causal in (True, False):
        exact = reference_attention(q, k, v, causal)
        outputs, bounds, times = {}, {}, {}
        for name, builder, options in builders(block):
            start = time.perf_counter()
            compiled = CBackend().compile(scheduled(program(builder, t, causal, **options), True))
            compile_s = time.perf_counter() - start
            best = float("inf")
            for _ in range(repeats):
                start = time.perf_counter()
                out = compiled.run(inputs)[0].reshape(t, D)
                best = min(best, time.perf_counter() - start)
            outputs[name], times[name] = out, best
            bounds[name] = attention_bound(q, k, v, causal, options.get("block"))
            error = np.abs(out - exact)
            ok = bool(np.all(error <= bounds[name]))
            mask = "causal" if causal else "full"
            print(
                f"{mask:>7} {name:>8} {compile_s:>10.2f} {best:>8.3f} "
                f"{error.max():>10.2e} {bounds[name].max():>10.2e} {'yes' if ok else 'NO':>6}"
            )
        between = np.abs(outputs["flash"] - outputs["naive"])
        agree = bool(np.all(between <= bounds["flash"] + bounds["naive"]))
        print(
            f"{'':>7} flash/naive: speed-up {times['naive'] / times['flash']:.2f}x, "
            f"max |flash - naive| {between.max():.2e} ({'within' if agree else 'NOT within'} "
            "the sum of the bounds)"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("t", nargs="?", type=int, default=2048, help="tokens for the timings")
    parser.add_argument("--block", type=int, default=64, help="flash attention's key block")
    parser.add_argument("--repeats", type=int, default=3, help="runs timed per version")
    args = parser.parse_args()
    memory_table(args.block)
    time_table(args.t, args.block, args.repeats)


if __name__ == "__main__":
    main()

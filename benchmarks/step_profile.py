"""Where examples/train_lm.py's training step spends its time, kernel by kernel (C backend).

Run: nice -n 10 uv run python benchmarks/step_profile.py [--runs N] [--top K] [--c]

The step is built exactly as the example's Trainer builds it (imported from examples/): the
loss, its GRAD and the AdamW update as ONE program, brought to kernels by uir.core.plugins.prepare
with the C backend's pipeline, as a session does. How each kernel is timed: the C that
render_c gives is compiled with the driver's call of each kernel wrapped in two clock_gettime
reads (a text edit of the driver only: the kernels' code is byte for byte what the backend runs),
and the entry point is run in this process `--runs` times on one set of buffers; a kernel's time
is the mean over the runs of its share. The overhead is two clock reads per kernel call (~50 ns,
~150 kernels: well under 1% of a step). Printed: the step (sum of kernels; and the wall time of
a plain, unwrapped call), tokens/s (batch x context per step), effective GFLOP/s (the model's
multiply-adds counted by hand: 2 flops per MAC of each matmul, forward + 2x backward) and
uir.core.stats' ALU ops, then the top K kernels, each with its loop nest (trip counts and what
each level holds) and, with --c, its C.

Measured on the course machine (2 cores shared with other work; min of a few runs each):

    wall min of a step      ALU ops   before            after (BROADCAST_COST rule)
    main c355b7f (1 thread)  9.76 G   1224 ms,  837 tok/s  519 ms, 1973 tok/s (2.2 G ops)
    main + cpuperf (threads) 9.76 G    847 ms, 1209 tok/s  342-496 ms, 2065-2997 tok/s

    (model matmuls 0.73 GFLOP a step: 0.6 -> 1.4 GFLOP/s single-threaded.) The machine is
    shared, so figures move by 30% or more between runs; the op count does not. After the rule,
    the top kernels are the plain matmuls (i, k, j loops, one LOAD + STORE of the accumulator
    row per k): the next cost to attack.

Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import ctypes
import re
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "examples"))

from train_lm import Trainer

from uir.backend.c.abi import abi_numpy, layout
from uir.backend.c.render import render_c
from uir.backend.c.runtime import CompiledProgram, initial_contents
from uir.backend.c.session import aligned_zeros
from uir.backend.c.toolchain import compile_shared
from uir.core.kernels import Kernel, Schedule
from uir.core.ops import Op
from uir.core.plugins import load_registry, prepare
from uir.core.schedule import Block
from uir.core.stats import kernel_stats, schedule_stats
from uir.tensor.buffers import BUFFERS
from uir.tensor.realize import program

VOCAB = 65  # the KJV text's symbols are about this many; the figures hardly depend on it


def trainer_args(a: argparse.Namespace) -> argparse.Namespace:
    return argparse.Namespace(
        d_model=a.d_model, layers=a.layers, heads=a.heads, context=a.context, batch=a.batch,
        lr=3e-3, seed=0,
    )  # fmt: skip


def step_sink(trainer: Trainer):
    """The SINK of one training step, as `Trainer.step` realizes it (loss, GRAD, AdamW)."""
    loss = trainer.loss()
    loss.backward()
    trainer.opt.step()
    return program(loss)


def model_flops(a: argparse.Namespace, vocab: int) -> float:
    """Flops of the matmuls of one step (forward + backward = 3x forward): attention included."""
    t, d, c = a.batch * a.context, a.d_model, a.context
    per_layer = t * d * (3 * d) + t * d * d + t * d * (4 * d) * 2  # qkv, out, mlp up and down
    per_layer += 2 * a.batch * c * c * d  # scores and the weighted sum of values
    forward = 2 * (a.layers * per_layer + t * d * vocab)
    return 3.0 * forward


_CALL = re.compile(r"^    (uir_program_kernel(\d+)\(.*\);)$", re.M)


def timed_source(schedule: Schedule) -> tuple[str, int]:
    """render_c's C with each kernel call of the driver timed into `uir_profile[kernel]`."""
    source = render_c(schedule)
    count = len(schedule.kernels)
    header = (
        "#define _POSIX_C_SOURCE 199309L\n#include <time.h>\n"
        f"double uir_profile[{count}];\n"
        "static double uir_now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t);"
        " return t.tv_sec + 1e-9 * t.tv_nsec; }\n"
    )
    wrapped = _CALL.sub(
        lambda m: (
            f"    {{ double t0 = uir_now(); {m.group(1)} uir_profile[{m.group(2)}] += "
            f"uir_now() - t0; }}"
        ),
        source,
    )
    assert wrapped.count("uir_profile[") == count, "every kernel call is timed once"
    return header + wrapped, count


def nest(kernel: Kernel) -> list[str]:
    """The loop nest: one line a loop (its trip count) with the statements directly in it."""
    lines: list[str] = []

    def walk(items, depth: int) -> None:
        here: dict[str, int] = {}
        for item in items:
            if not isinstance(item, Block):
                here[item.op.name] = here.get(item.op.name, 0) + 1
        if here:
            ops = " ".join(f"{k}x{v}" for k, v in sorted(here.items(), key=lambda kv: -kv[1]))
            lines.append("  " * depth + ops)
        for item in items:
            if isinstance(item, Block):
                end = item.range.src[0]
                trip = end.arg if end.op is Op.CONST else "?"
                tag = " PARALLEL" if item.range.arg and "PARALLEL" in str(item.range.arg) else ""
                lines.append("  " * depth + f"for {trip}{tag}:")
                walk(item.body, depth + 1)

    walk(list(kernel.items), 0)
    return lines


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--top", type=int, default=10)
    p.add_argument("--c", action="store_true", help="print each top kernel's C")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch", type=int, default=16)
    a = p.parse_args(argv)

    trainer = Trainer(trainer_args(a), VOCAB)
    rng = np.random.default_rng(0)
    x = rng.integers(0, VOCAB, (a.batch, a.context)).astype(np.int32)
    trainer.ids.write(x)
    trainer.targets.write(np.roll(x, -1, axis=1))
    sink = step_sink(trainer)
    start = time.perf_counter()
    registry = load_registry()
    schedule = prepare(sink, "kernels", registry.pipeline(form="kernels"))
    assert isinstance(schedule, Schedule)
    lowered = time.perf_counter()
    source, count = timed_source(schedule)
    program = CompiledProgram(compile_shared([source]), layout(schedule.source), schedule.source)
    compiled = time.perf_counter()
    print(f"prepare {lowered - start:.1f} s, C compile {compiled - lowered:.1f} s, {count} kernels")

    abi = program.abi
    # The Trainer's parameters and inputs: their current contents, as the session starts.
    held = {b.slot: BUFFERS[b.slot].read() for b in abi.buffers if b.slot in BUFFERS}
    contents = initial_contents(abi, held)
    arrays = []
    for b in abi.buffers:
        arr = aligned_zeros(b.type.size, abi_numpy(b.type.dtype))
        arr[...] = contents[b.slot].reshape(-1)
        arrays.append(arr)
    arrays += [aligned_zeros(t.size, abi_numpy(t.dtype)) for t in abi.outputs]
    pointers = [arr.ctypes.data for arr in arrays]
    profile = (ctypes.c_double * count).in_dll(program._library, "uir_profile")
    program.call(pointers)  # warm: pages touched, caches filled
    walls = []
    for k in range(count):
        profile[k] = 0.0
    for _ in range(a.runs):
        t0 = time.perf_counter()
        program.call(pointers)
        walls.append(time.perf_counter() - t0)
    per_kernel = [profile[k] / a.runs for k in range(count)]
    step = sum(per_kernel)
    tokens = a.batch * a.context
    flops = model_flops(a, VOCAB)
    ops = schedule_stats(schedule).ops
    print(
        f"step {1e3 * step:.1f} ms (wall min {1e3 * min(walls):.1f} ms), "
        f"{tokens / min(walls):,.0f} tokens/s, model {flops / 1e9:.2f} GFLOP -> "
        f"{flops / min(walls) / 1e9:.2f} GFLOP/s; {ops / 1e9:.2f} G ALU ops counted "
        f"({ops / min(walls) / 1e9:.2f} G/s)"
    )
    order = sorted(range(count), key=lambda k: -per_kernel[k])
    for rank, k in enumerate(order[: a.top], 1):
        kernel = schedule.kernels[k]
        st = kernel_stats(kernel)
        print(
            f"\n#{rank} {kernel.summary}\n   {1e3 * per_kernel[k]:.2f} ms "
            f"({100 * per_kernel[k] / step:.1f}%), {st.ops / 1e6:.1f} M ops, "
            f"{st.bytes_read / 1e6:.1f} MB read, {st.bytes_written / 1e6:.1f} MB written"
        )
        for line in nest(kernel):
            print("   " + line)
        if a.c:
            m = re.search(rf"/\* {kernel.name} .*?\n}}\n", source, re.S)
            print(m.group(0) if m else "(C not found)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

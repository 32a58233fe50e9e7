"""Tokens per second of one training step of examples/train_lm.py's model: through UIR (the C
backend, one compiled program a step, parameters in the session's memory), through plain numpy
(uir.testing.gpt_numpy, gradients by hand) and through PyTorch eager on the CPU when torch
imports. The three start from the same parameters and see the same batches; the first losses
must agree (checked), so each one trains the same model.

Run: uv run python benchmarks/lm_bench.py [--steps N] [--json FILE]

torch is a dependency of no package: the benchmark uses it when it imports (set PYTHONPATH to a
directory holding a CPU build) and says so when it does not. The UIR compile time is that of the
whole training step (forward, GRAD, AdamW), measured as the first step minus a later one.
Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from uir.core.dtypes import i32
from uir.tensor import Tensor, device, nn, optim, realize
from uir.testing.gpt_numpy import AdamW, Config, init_parameters, loss_and_gradients

sys.path.insert(0, str(Path(__file__).parent))

LR, BETAS, EPS = 3e-3, (0.9, 0.99), 1e-8


def batches(steps: int, c: Config, batch: int) -> list[tuple[np.ndarray, np.ndarray]]:
    rng = np.random.default_rng(0)
    return [
        (rng.integers(0, c.vocab, (batch, c.context)).astype(np.int32),
         rng.integers(0, c.vocab, (batch, c.context)).astype(np.int32))
        for _ in range(steps)
    ]  # fmt: skip


def run_uir(params, c: Config, data, backend: str) -> tuple[list[float], float, float]:
    model = nn.GPT(c.vocab, c.d_model, c.layers, c.heads, c.context)
    model.load_state(params)
    opt = optim.AdamW(model.parameters(), lr=LR, betas=BETAS, eps=EPS)
    shape = data[0][0].shape
    ids, targets = Tensor.input(shape, i32), Tensor.input(shape, i32)
    losses, times = [], []
    with device(backend):
        for x, y in data:
            start = time.perf_counter()
            ids.write(x)
            targets.write(y)
            loss = model(ids).cross_entropy(targets)
            loss.backward()
            opt.step()
            losses.append(float(realize(loss)[0]))
            times.append(time.perf_counter() - start)
    steady = min(times[1:])
    return losses, steady, times[0] - steady


def run_numpy(params, c: Config, data) -> tuple[list[float], float]:
    p = {k: v.copy() for k, v in params.items()}
    opt = AdamW(lr=LR, betas=BETAS, eps=EPS)
    losses, times = [], []
    for x, y in data:
        start = time.perf_counter()
        loss, grads = loss_and_gradients(p, c, x, y)
        opt.step(p, grads)
        losses.append(loss)
        times.append(time.perf_counter() - start)
    return losses, min(times)


def run_torch(params, c: Config, data) -> tuple[list[float], float] | str:
    try:
        import torch  # noqa: F401
    except Exception as exc:  # not installed, or a build whose libraries are missing
        return f"torch does not import here ({type(exc).__name__}: {str(exc)[:80]})"
    from lm_torch import TorchTrainer

    trainer = TorchTrainer(params, c, LR, BETAS, EPS)
    losses, times = [], []
    for x, y in data:
        start = time.perf_counter()
        losses.append(trainer.step(x.astype(np.int64), y.astype(np.int64)))
        times.append(time.perf_counter() - start)
    return losses, min(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--backend", default="c")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    c = Config(vocab=73, d_model=64, layers=2, heads=4, context=64)
    batch = 16
    params = init_parameters(c, 0)
    data = batches(args.steps, c, batch)
    tokens = batch * c.context
    rows = {}
    uir_losses, uir_s, compile_s = run_uir(params, c, data, args.backend)
    rows["uir " + args.backend] = (uir_losses, uir_s)
    rows["numpy"] = run_numpy(params, c, data)
    torch_result = run_torch(params, c, data)
    if isinstance(torch_result, str):
        print(f"PyTorch eager: skipped, {torch_result}")
    else:
        rows["pytorch eager"] = torch_result
    reference = rows["numpy"][0]
    print(f"model: {c.layers} layers, width {c.d_model}, {c.heads} heads, context {c.context}, "
          f"batch {batch} ({tokens} tokens a step); best of {args.steps} steps")  # fmt: skip
    print(f"UIR compile of the whole training step: {compile_s:.1f} s")
    print(f"{'':16} {'s/step':>8} {'tokens/s':>10} {'first loss':>11} {'last loss':>10}")
    results = []
    for name, (losses, seconds) in rows.items():
        # the same parameters and batches: losses agree within f32 rounding of the forward
        # pass (about 1e-6 relative) for the first step, and drift slowly after it
        if abs(losses[0] - reference[0]) > 1e-4 * reference[0]:
            raise SystemExit(f"{name}: first loss {losses[0]} differs from numpy's {reference[0]}")
        rate = tokens / seconds
        print(f"{name:16} {seconds:8.3f} {rate:10,.0f} {losses[0]:11.5f} {losses[-1]:10.5f}")
        results.append(
            {"name": name, "seconds_per_step": seconds, "tokens_per_second": tokens / seconds}
        )
    if args.json:
        args.json.write_text(json.dumps({"compile_s": compile_s, "results": results}, indent=2))


if __name__ == "__main__":
    main()

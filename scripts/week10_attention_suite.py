"""Writes the attention tests of suites/week10: programs exported from uir.tensor.attention's
builders, with expectations worked out here in float64 numpy.

Each test loads q, k and v from buffers (slots 0, 1, 2: multiples of 1/16 in [-1, 1], or larger
where a test says so, every one exact in f32), builds `naive_attention` or `flash_attention` on
them and prints the graph with uir.core.printer: the .uir a student's compiler is graded on. The
expected line is softmax(q k^T / sqrt(d) + mask) v computed by numpy in float64 (nothing of the
compiler computes it), printed with `%.9g`; the tolerance is the bound on the error of the f32
computation that spec/uir-week10.md ("Flash attention") derives for that builder
(uir.testing.tolerance.attention_bound, numpy only), its largest element rounded up to two
digits: `# tolerance: A abs`. Rerun it and the files come out the same.

    uv run python scripts/week10_attention_suite.py [DIR]   # rewrites suites/week10/attention_*
"""

from __future__ import annotations

import math
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from uir.core.dtypes import Type, f32
from uir.core.ops import Op
from uir.core.printer import print_program
from uir.core.uop import UOp
from uir.tensor.attention import flash_attention, naive_attention
from uir.testing.tolerance import attention_bound, reference_attention

OUT = Path(__file__).resolve().parents[1] / "suites" / "week10"
PREFIX = "attention_"


@dataclass(frozen=True)
class Case:
    name: str
    about: str
    shapes: tuple[tuple[int, ...], tuple[int, ...], tuple[int, ...]]
    causal: bool
    block: int | None  # None: naive_attention
    scale: float = 1.0  # the inputs' largest magnitude
    seed: int = 0


def cases() -> list[Case]:
    one = ((8, 4),) * 3
    return [
        Case("naive_causal", "the naive formula, causal, one head", one, True, None),
        Case("naive_full", "the naive formula, no mask", one, False, None),
        Case("naive_heads", "the naive formula over 2 heads", ((2, 6, 4),) * 3, True, None),
        Case("flash_causal_block3", "8 keys in blocks of 3: the last is short", one, True, 3),
        Case("flash_full_block3", "no mask, blocks of 3", one, False, 3),
        Case("flash_causal_block4", "blocks that divide T", one, True, 4),
        Case("flash_block1", "one key a block: a rescale at every key", one, True, 1),
        Case("flash_block_over_t", "a block longer than T: one block", one, False, 16),
        Case("flash_heads", "2 x 2 heads as leading axes", ((2, 2, 6, 4),) * 3, True, 4),
        Case(
            "flash_cross",
            "5 queries over 9 keys, v wider than q, no mask",
            ((5, 4), (9, 4), (9, 6)),
            False,
            4,
        ),
        Case(
            "flash_large_scores",
            "inputs up to 32: scores far apart, which only the running max subtracted before"
            " every exp (the rescale too) keeps finite",
            one,
            True,
            3,
            scale=32.0,
        ),
        Case("flash_one_token", "one query, one key: the output is v", ((1, 4),) * 3, True, 4),
        Case("flash_longer", "T = 20, d = 8 in blocks of 6", ((20, 8),) * 3, True, 6, seed=1),
    ]


def inputs(case: Case) -> list[np.ndarray]:
    rng = np.random.default_rng(case.seed)
    return [
        (rng.integers(-16, 17, shape) / 16 * case.scale).astype(np.float32) for shape in case.shapes
    ]


def program(case: Case, arrays: list[np.ndarray]) -> str:
    values = []
    for slot, array in enumerate(arrays):
        flat = Type(f32, (array.size,))
        data = UOp.const(flat, tuple(float(x) for x in array.ravel()))
        values.append(UOp(Op.BUFFER, flat, (data,), slot).load().reshape(array.shape))
    if case.block is None:
        result = naive_attention(*values, causal=case.causal)
    else:
        result = flash_attention(*values, causal=case.causal, block=case.block)
    return print_program(UOp.sink(result))


def rounded_up(x: float) -> str:
    """`x` rounded up to two significant digits, as a tolerance prints."""
    exponent = math.floor(math.log10(x)) - 1
    return f"{math.ceil(x / 10**exponent) * 10**exponent:.2g}"


def text(case: Case) -> str:
    arrays = inputs(case)
    q, k, v = arrays
    exact = reference_attention(q, k, v, case.causal)
    bound = attention_bound(q, k, v, case.causal, case.block) + 1e-9 * np.abs(exact)
    builder = "naive_attention" if case.block is None else f"flash_attention, block {case.block}"
    mask = "causal" if case.causal else "no mask"
    d = q.shape[-1]
    head = [
        f"# expect: {' '.join(f'{x:.9g}' for x in exact.ravel())}",
        f"# tolerance: {rounded_up(float(bound.max()))} abs",
        f"# {case.about}.",
        f"# {builder} ({mask}) of q {q.shape}, k {k.shape}, v {v.shape} (buffers 0, 1, 2):",
        f"# softmax(q k^T / sqrt({d}) + mask) v, worked out in float64 numpy by",
        "# scripts/week10_attention_suite.py; the tolerance is the f32 error bound of",
        '# spec/uir-week10.md ("Flash attention") for this builder, rounded up.',
    ]
    return "\n".join(head) + "\n" + program(case, arrays)


def main(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for case in cases():
        (out / f"{PREFIX}{case.name}.uir").write_text(text(case))


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else OUT)

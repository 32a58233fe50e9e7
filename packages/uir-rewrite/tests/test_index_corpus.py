"""The index-expression corpus (index_corpus.py): each expression simplifies to the op count
worked out by hand, and to the same value at every point of its loops' domain."""

from __future__ import annotations

import importlib.util
import itertools
import sys
from pathlib import Path

import numpy as np
import pytest

from uir.core.ops import ALU, Op
from uir.core.semantics import apply
from uir.core.uop import UOp
from uir.rewrite.passes import simplify


def _load_corpus():
    """index_corpus.py, beside this file (tests import with --import-mode=importlib, so a sibling
    module is loaded by path; benchmarks/rewrite_bench.py loads it the same way)."""
    path = Path(__file__).with_name("index_corpus.py")
    spec = importlib.util.spec_from_file_location("index_corpus", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("index_corpus", module)
    spec.loader.exec_module(module)
    return module


CASES = _load_corpus().CASES


def alu_ops(expr: UOp) -> int:
    return sum(u.op in ALU for u in expr.toposort())


def loops(expr: UOp) -> list[UOp]:
    return sorted({u for u in expr.toposort() if u.op is Op.RANGE}, key=lambda u: u.arg)


def evaluate(expr: UOp, point: dict[UOp, np.ndarray]) -> np.ndarray:
    values = dict(point)
    for u in expr.toposort():
        if u in values:
            continue
        if u.op is Op.CONST:
            values[u] = np.array(u.arg, dtype=u.dtype.storage)
        else:
            values[u] = apply(u.op, u.dtype, [values[s] for s in u.src], [s.dtype for s in u.src])
    return values[expr]


def domain(ranges: list[UOp]) -> dict[UOp, np.ndarray]:
    """Every point of the loops' domain at once, one array per loop index."""
    sizes = [r.src[0].arg for r in ranges]
    grid = np.array(list(itertools.product(*map(range, sizes))), dtype=np.int32).reshape(
        -1, len(sizes)
    )
    return {r: grid[:, n] for n, r in enumerate(ranges)}


@pytest.mark.parametrize("case", CASES, ids=[f"{c.family}: {c.name}" for c in CASES])
def test_simplifies_to_the_hand_count_and_keeps_every_value(case):
    result = simplify(case.expr)
    assert alu_ops(result) == case.ops, case.why
    point = domain(loops(case.expr))
    size = len(next(iter(point.values())))
    before = np.broadcast_to(evaluate(case.expr, point), (size,))
    after = np.broadcast_to(evaluate(result, point), (size,))
    assert before.tobytes() == after.tobytes()


def test_the_corpus_covers_every_family():
    families = {c.family for c in CASES}
    assert {"matmul", "reshape", "conv", "pad", "flip", "divmod", "compare", "linear"} <= families

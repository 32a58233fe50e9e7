"""Every backend gives the interpreter's gradients: random differentiable programs (f64, weeks
4-5) with their GRADs, compiled by C and by cuda-emu (each batch in one compiler run).

The backends compute the same operations in the same order (the REDUCE order is fixed, every op
rounds once), so they agree bit for bit except where SIN and EXP2 round differently (within 2
ulp, uir.md section 4: C's libm against numpy's): the bound is 1e-9 relative to the largest
output, far below any gradient bug and far above those ulps carried through a program."""

from __future__ import annotations

import random

import numpy as np
import pytest

from uir.backend.c.plugin import compile_many as compile_many_c
from uir.backend.cuda.emulation import compile_many as compile_many_cuda
from uir.backend.cuda.emulation import cxx
from uir.core.interpret import evaluate
from uir.core.plugins import load_registry, prepare
from uir.testing.backends import scheduled
from uir.testing.differentiable import differentiable

PROGRAMS = [differentiable(random.Random(seed)).with_grads() for seed in range(30)]


def close(a: list[np.ndarray], b: list[np.ndarray]) -> bool:
    if len(a) != len(b):
        return False
    for x, y in zip(a, b, strict=True):
        x, y = np.asarray(x, np.float64).ravel(), np.asarray(y, np.float64).ravel()
        scale = 1 + max(float(np.max(np.abs(x), initial=0)), float(np.max(np.abs(y), initial=0)))
        if x.shape != y.shape or not np.all(np.abs(x - y) <= 1e-9 * scale):
            return False
    return True


def interpreted() -> list[list[np.ndarray]]:
    registry = load_registry()
    return [evaluate(prepare(p, "program", registry.pipeline())) for p in PROGRAMS]


def test_c_gives_the_interpreters_gradients() -> None:
    compiled = compile_many_c([scheduled(p) for p in PROGRAMS])
    want = interpreted()
    assert [i for i, c in enumerate(compiled) if not close(c.run(), want[i])] == []


@pytest.mark.skipif(cxx() is None, reason="no C++ compiler")
def test_cuda_emu_gives_the_interpreters_gradients() -> None:
    compiled = compile_many_cuda([scheduled(p) for p in PROGRAMS])
    want = interpreted()
    assert [i for i, c in enumerate(compiled) if not close(c.run(), want[i])] == []

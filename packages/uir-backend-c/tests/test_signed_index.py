"""Int ADD, SUB and MUL render as plain signed C exactly where bounds prove the exact result in
range (render.py `_number`): index arithmetic over RANGEs, so that gcc vectorizes the loops,
while arithmetic on loaded values keeps the wrapping unsigned form (uir.md 4: ints wrap)."""

from __future__ import annotations

import numpy as np
import pytest

from uir.backend.c.plugin import CBackend
from uir.backend.c.toolchain import compiler
from uir.core.dtypes import i32
from uir.core.ops import Op
from uir.testing.backends import scheduled
from uir.testing.movement import load, matmul, program

pytestmark = pytest.mark.skipif(compiler() is None, reason="no C compiler")


def kernel_lines(source: str) -> list[str]:
    return [line for line in source.splitlines() if line.startswith("    ") and "=" in line]


def test_loop_index_arithmetic_is_signed_c():
    sink = program(matmul(load(0, i32, (4, 8)), load(1, i32, (8, 16))))
    lines = kernel_lines(CBackend().render(scheduled(sink)))
    index = [line for line in lines if "const int32_t" in line and "buf" not in line]
    assert any(" + " in line for line in index)
    # the only wrapping ops left are the product and sum of loaded i32 values
    wrapped = [line for line in lines if "uir_as_i32(" in line]
    assert len(wrapped) == 2  # a[i,k] * b[k,j] and its add to the accumulator, nothing else
    assert " * (uint32_t)" in wrapped[0] and " + (uint32_t)" in wrapped[1]
    assert all("buf" not in line for line in index)


def test_loaded_values_still_wrap():
    # 2^31 - 1 + 1 wraps to -2^31 in i32: a loaded pair has no bounds, so the add stays unsigned
    a = load(0, i32, (2,))
    sink = program(a.alu(Op.ADD, load(1, i32, (2,))))
    source = CBackend().render(scheduled(sink))
    assert "uir_as_i32(" in source
    (got,) = (
        CBackend()
        .compile(scheduled(sink))
        .run({0: np.array([2**31 - 1, -(2**31)], np.int32), 1: np.array([1, -1], np.int32)})
    )
    assert got.tolist() == [-(2**31), 2**31 - 1]

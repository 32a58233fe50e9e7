"""A MUL whose only user is a FAST REDUCE is fused with the fold's adds (design brief 10.3,
spec/uir-week8.md 1.2): C and CUDA render each such update as one `fmaf`, one rounding where the
MUL and the ADD round twice; nothing else is contracted. Through the real CLI, on numbers chosen
so that the two roundings and the one give different answers, worked out by hand:

    u = 1 + 2^-12, so u * u = 1 + 2^-11 + 2^-24 exactly; in f32 (24 bits, spacing 2^-23 above
    1) that is a tie between 1 + 2^-11 and 1 + 2^-11 + 2^-23, rounded to the even 1 + 2^-11.
    With an accumulator at a = -(1 + 2^-11): round(round(u * u) + a) = 0, fmaf(u, u, a) = 2^-24.

The interpreter folds in the week-4 order with every op rounded (0): a FAST answer too. What
must not be fused (an elementwise update under a FAST range, a product with a second reader, an
f64 fold in single precision) is pinned by suites/week8's contraction_* tests, which the suite
tests run on every backend.
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from uir.cli.main import main

A, U = "-1.00048828125", "1.000244140625"  # -(1 + 2^-11), 1 + 2^-12
FUSED, ROUNDED_TWICE = 2.0**-24, 0.0

# An accumulator starting at a, carried across a loop of one iteration adding u * u.
CARRIED = f"""\
%init = CONST f32[1] ({A})
%acc = BUFFER f32[1] %init 0
%uv = CONST f32[1] ({U})
%ub = BUFFER f32[1] %uv 1
%n = CONST i32 1
%z = CONST i32 0
%k = RANGE i32 %n RANGE_ARG
%accK = AFTER f32[1] %acc %k
%p = INDEX f32 %accK %z
%old = LOAD f32 %p
%pu = INDEX f32 %ub %k
%x = LOAD f32 %pu
%sq = MUL f32 %x %x
%new = ADD f32 %old %sq
%upd = STORE void %p %new
%e = END void %upd %k
%accD = AFTER f32[1] %acc %e
%pd = INDEX f32 %accD %z
%r = LOAD f32 %pd
%out = SINK void %r
"""


def carried(range_arg: str = "(0, FAST)") -> str:
    return CARRIED.replace("RANGE_ARG", range_arg)


def fold(size: int, fast: bool) -> str:
    """A shaped fold of x * y, x = (a, 0, ..., 0, u) and y = (1, 0, ..., 0, u) of `size`
    elements: its terms are a, then zeros, then u * u. On the GPU thread t of 256 folds elements
    t, t + 256, ...: with 257 elements thread 0 folds the first and the last, so fused it holds
    2^-24 and every other thread -0 or 0."""
    zeros = ", ".join(["0"] * (size - 2))
    flag = ", FAST" if fast else ""
    return (
        f"%xv = CONST f32[{size}] ({A}, {zeros}, {U})\n%xb = BUFFER f32[{size}] %xv 0\n"
        f"%yv = CONST f32[{size}] (1, {zeros}, {U})\n%yb = BUFFER f32[{size}] %yv 1\n"
        f"%x = LOAD f32[{size}] %xb\n%y = LOAD f32[{size}] %yb\n%p = MUL f32[{size}] %x %y\n"
        f"%s = REDUCE f32 %p (ADD, (0){flag})\n%out = SINK void %s\n"
    )


def run(tmp_path: Path, capsys, text: str, backend: str) -> list[np.float32]:
    """The printed f32 values (9 significant digits: each reads back as the f32 printed)."""
    path = tmp_path / "p.uir"
    path.write_text(text)
    assert main(["run", str(path), "--backend", backend]) == 0
    return [np.float32(line) for line in capsys.readouterr().out.split()]


def render(tmp_path: Path, capsys, text: str, backend: str) -> str:
    path = tmp_path / "p.uir"
    path.write_text(text)
    assert main(["render", str(path), "--backend", backend]) == 0
    return capsys.readouterr().out


@pytest.mark.parametrize("backend", ["c", "cuda-emu"])
@pytest.mark.parametrize(
    ("text", "want"),
    [
        (carried(), FUSED),
        (fold(257, fast=True), FUSED),
        (carried(range_arg="0"), ROUNDED_TWICE),  # not FAST: the week-4 roundings
        (fold(257, fast=False), ROUNDED_TWICE),
    ],
    ids=["carried", "fold-257", "plain-range", "plain-fold"],
)
def test_a_fast_fold_rounds_each_multiply_add_once(tmp_path, capsys, backend, text, want):
    assert run(tmp_path, capsys, text, backend)[0] == want


def test_the_interpreter_rounds_every_op(tmp_path, capsys):
    for text in (carried(), fold(257, fast=True)):
        assert run(tmp_path, capsys, text, "interp")[0] == ROUNDED_TWICE


def test_each_fused_update_is_one_fmaf_and_its_mul_is_not_rendered(tmp_path, capsys):
    source = render(tmp_path, capsys, carried(), "c")
    assert source.count("fmaf(") == 1
    assert re.search(r"= \(v\d+ \* v\d+\);", source) is None  # no MUL of its own
    plain = render(tmp_path, capsys, carried(range_arg="0"), "c")
    assert "fmaf(" not in plain and re.search(r"= \(v\d+ \* v\d+\);", plain)

"""Memory in proportion to a program's size through `uir check` (issue 24 item 4), for the shapes
an audit found superlinear, and their outputs worked out by hand. No figure here is a time: the
peak of Python's allocations is the same on a fast and a loaded machine, and a quadratic cost
shows as 16 times the memory for 4 times the program, a linear one as 4."""

from __future__ import annotations

import tracemalloc

import pytest

from uir.cli.main import main
from uir.testing.chains import (
    constants_text,
    nested_calls_text,
    sequential_loops_text,
    wide_sink_text,
    wide_stack_text,
)

SHAPES = {
    "sequential-loops": (sequential_loops_text, 250),  # 2,004 statements, then 8,004
    "wide-sink": (wide_sink_text, 5000),
    "wide-stack": (wide_stack_text, 5000),
    "nested-calls": (nested_calls_text, 500),
    "constants": (constants_text, 2000),
}


def _check_peak(tmp_path, text: str, capsys) -> int:
    path = tmp_path / "p.uir"
    path.write_text(text)
    tracemalloc.start()
    try:
        code = main(["check", str(path)])
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert (code, capsys.readouterr().out) == (0, f"{path}: ok\n")
    return peak


@pytest.mark.slow
@pytest.mark.parametrize("shape", SHAPES)
def test_check_needs_memory_in_proportion_to_the_program(tmp_path, capsys, shape) -> None:
    make, n = SHAPES[shape]
    small = _check_peak(tmp_path, make(n), capsys)
    large = _check_peak(tmp_path, make(4 * n), capsys)
    # Linear: about 4 (measured 3.8 for the loops); the loops were 14.5 before issue 24.
    assert large < 8 * small, (shape, small, large)


def _run(tmp_path, text: str, capsys, *args: str) -> str:
    path = tmp_path / "p.uir"
    path.write_text(text)
    assert main(["run", str(path), *args]) == 0
    out, err = capsys.readouterr()
    assert err == ""
    return out


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_many_sequential_loops_run_right(tmp_path, capsys, backend) -> None:
    # 300 loops each adding 1 to every element of a zeroed buffer.
    out = _run(tmp_path, sequential_loops_text(300), capsys, "--backend", backend)
    assert out == "300 300 300 300\n"


def test_the_other_shapes_run_right(tmp_path, capsys) -> None:
    assert _run(tmp_path, wide_sink_text(2000), capsys) == "0\n" * 2000
    assert _run(tmp_path, wide_stack_text(2000), capsys) == " ".join(["0"] * 2000) + "\n"
    assert _run(tmp_path, nested_calls_text(500), capsys) == "1\n"  # 0 + 1 through 500 calls
    assert _run(tmp_path, constants_text(2000), capsys) == f"{1999 * 2000 // 2}\n"

"""`uir run --threads N` (spec/uir-week8.md section 2): the C backend's PARALLEL loops run on N
threads and print the same text for every N; the interpreter has no threads and ignores it; N
below 1 or not a number is a usage error (exit 1)."""

from __future__ import annotations

import pytest

from uir.backend.c.toolchain import compiler
from uir.cli.main import main

# 100,000 iterations of a PARALLEL loop (above the C backend's work threshold): o[i] = i * i.
SQUARES = """\
%n = CONST i32 100000
%o = BUFFER i32[100000] 0
%i = RANGE i32 %n (0, PARALLEL)
%q = MUL i32 %i %i
%p = INDEX i32 %o %i
%s = STORE void %p %q
%e = END void %s %i
%o1 = AFTER i32[100000] %o %e
%out = SINK void %o1
"""
EXPECTED = " ".join(str((i * i + 2**31) % 2**32 - 2**31) for i in range(100_000)) + "\n"


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(["run", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
@pytest.mark.parametrize("threads", ["1", "2", "3"])
def test_every_thread_count_prints_the_same_wrapped_squares(tmp_path, capsys, threads):
    path = tmp_path / "squares.uir"
    path.write_text(SQUARES)
    assert run([str(path), "--backend", "c", "--threads", threads], capsys) == (0, EXPECTED, "")


def test_the_interpreter_ignores_threads(tmp_path, capsys):
    path = tmp_path / "squares.uir"
    path.write_text(SQUARES.replace("100000", "5"))
    assert run([str(path), "--threads", "4"], capsys) == (0, "0 1 4 9 16\n", "")


@pytest.mark.parametrize("bad", ["0", "-1", "two"])
def test_a_thread_count_below_one_or_not_a_number_is_a_usage_error(tmp_path, capsys, bad):
    path = tmp_path / "squares.uir"
    path.write_text(SQUARES)
    code, out, err = run([str(path), "--threads", bad], capsys)
    assert (code, out) == (1, "")
    assert "argument --threads: must be" in err

"""`uir run` on week-5 programs: movement ops print their results, and every bad movement
argument exits 3 (exit 2 where the grammar rejects it) naming its line, with nothing on stdout."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.cli.main import main

# A 2x3 matrix through each movement op; the outputs are worked out by hand below.
MOVES = """\
%d = CONST i32[6] (1, 2, 3, 4, 5, 6)
%b = BUFFER i32[6] %d 0
%x = LOAD i32[6] %b
%m = RESHAPE i32[2,3] %x
%t = PERMUTE i32[3,2] %m (1, 0)
%p = PAD i32[3,4] %t ((0, 0), (1, 1))
%s = SHRINK i32[2,4] %p ((1, 3), (0, 4))
%f = FLIP i32[2,4] %s (0)
%k = STACK i32[2,2,4] %f %s
%r = REDUCE i32[4] %k (MAX, (0, 1))
%out = SINK void %t %p %f %r
"""


def test_run_prints_each_movement(tmp_path, capsys):
    path = tmp_path / "moves.uir"
    path.write_text(MOVES)
    assert main(["run", str(path)]) == 0
    # t = [[1,4],[2,5],[3,6]]; p pads each row with a zero on both sides; s keeps rows 1 and 2;
    # f swaps those two rows; r is the column maxima over both stacked copies.
    assert capsys.readouterr().out == (
        "1 4 2 5 3 6\n0 1 4 0 0 2 5 0 0 3 6 0\n0 3 6 0 0 2 5 0\n0 3 6 0\n"
    )


@pytest.mark.parametrize(
    ("change", "code", "line"),
    [
        ("%m = RESHAPE i32[4] %x", 3, 4),  # the count changes
        ("%m = RESHAPE i32[2,3] %b", 3, 4),  # a movement op on memory
        ("%t = PERMUTE i32[3,2] %m (1, 1)", 3, 5),  # not a permutation
        ("%t = PERMUTE i32[3,2] %m (1, 0, 2)", 3, 5),  # one axis too many
        ("%p = PAD i32[3,4] %t ((1, 1))", 3, 6),  # one pair for two axes
        ("%p = PAD i32[3,4] %t ((0, 0), (2, -1))", 3, 6),  # a pair below 0
        ("%s = SHRINK i32[2,4] %p ((2, 4), (0, 4))", 3, 7),  # past the end of axis 0
        ("%s = SHRINK i32[2,4] %p ((1, 1), (0, 4))", 3, 7),  # empty: begin == end
        ("%f = FLIP i32[2,4] %s ()", 3, 8),  # no axes
        ("%f = FLIP i32[2,4] %s (1, 0)", 3, 8),  # not increasing
        ("%f = FLIP i32[2,4] %s (2)", 3, 8),  # no axis 2
        ("%k = STACK i32[2,2,4] %f %t", 3, 9),  # sources of different types
        ("%r = REDUCE i32[4] %k (MAX, ())", 3, 10),  # no axes
        ("%t = PERMUTE i32[3,2] %m (1, 0", 2, 5),  # not an argument: a parse error
    ],
)
def test_bad_movement_exits_with_its_line(run_bad_statement, change, code, line):
    run_bad_statement(MOVES, change, code, line)


def test_rank_9_exits_3(tmp_path, capsys):
    path = tmp_path / "rank9.uir"
    path.write_text(
        "%x = CONST f32 1\n%e = EXPAND f32[1,1,1,1,1,1,1,1,1] %x\n%out = SINK void %e\n"
    )
    assert main(["run", str(path)]) == 3
    assert capsys.readouterr().err == (
        f"{path}:2: error: f32[1,1,1,1,1,1,1,1,1] has rank 9: shaped types have rank 1 to 8\n"
        " 2 | %e = EXPAND f32[1,1,1,1,1,1,1,1,1] %x\n"
        "   | ^~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~~\n"
    )


def test_matmul_example_runs(capsys):
    example = Path(__file__).resolve().parents[3] / "examples" / "matmul_movement.uir"
    assert main(["run", str(example)]) == 0
    # [[1,2,3],[4,5,6]] @ [[7,8],[9,10],[11,12]], worked out in the example's comments.
    assert capsys.readouterr().out == "58 64 139 154\n"

"""`uir run` on week-4 programs: outputs, and bad input as exit 3 (or 2) with its line."""

from __future__ import annotations

import pytest

from uir.cli.main import main

SUM = """\
%d = CONST f32[4] (1.5, 2, 3, 4)
%b = BUFFER f32[4] %d 0
%x = LOAD f32[4] %b
%two = CONST f32 2
%e = EXPAND f32[4] %two
%y = MUL f32[4] %x %e
%s = REDUCE f32 %y (ADD, (0))
%out = SINK void %s %y
"""


def test_run_prints_a_reduction_and_a_shaped_value(tmp_path, capsys):
    path = tmp_path / "sum.uir"
    path.write_text(SUM)
    assert main(["run", str(path)]) == 0
    assert capsys.readouterr().out == "21\n3 4 6 8\n"  # 2 * (1.5 + 2 + 3 + 4); each doubled


@pytest.mark.parametrize(
    ("change", "code", "line"),
    [
        ("%y = MUL f32[4] %x %two", 3, 6),  # shape mismatch: no implicit broadcast
        ("%s = REDUCE f32 %y (SUB, (0))", 3, 7),  # not a fold
        ("%s = REDUCE f32 %y (ADD, (1))", 3, 7),  # no axis 1
        ("%s = REDUCE f32 %y (ADD, ())", 3, 7),  # no axes
        ("%x = LOAD f32[3] %b", 3, 3),  # whole-buffer LOAD of the wrong type
        ("%e = EXPAND f32[4] %b", 3, 5),  # EXPAND of a buffer, not a value
        ("%s = STAGE f32 %y", 3, 7),  # STAGE changes no type
        ("%s = REDUCE f32 %y (FOLD, (0))", 2, 7),  # not an op name at all: a parse error
    ],
)
def test_bad_week4_input_exits_with_its_line(run_bad_statement, change, code, line):
    run_bad_statement(SUM, change, code, line)

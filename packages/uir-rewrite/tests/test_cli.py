"""`uir opt` and `uir run` with the installed passes (the rewrite package's entry point)."""

from pathlib import Path

from uir.cli.main import main

ROOT = Path(__file__).resolve().parents[3]

PROGRAM = """\
%i0 = PARAM i32 0
%j0 = PARAM i32 1
%three = CONST i32 3
%j = AND i32 %j0 %three
%k = CONST i32 1000
%i = AND i32 %i0 %k
%four = CONST i32 4
%m = MUL i32 %i %four
%s = ADD i32 %m %j
%d = IDIV i32 %s %four
%r = MOD i32 %s %four
%f = STACK i32[2] %d %r
%a = CONST i32 7
%b = CONST i32 3
%c = CALL i32[2] %f %a %b
%out = SINK void %c
"""


def run_cli(capsys, tmp_path, *args):
    path = tmp_path / "p.uir"
    path.write_text(PROGRAM)
    code = main([*args, str(path)])
    return code, capsys.readouterr().out


def test_plugins_lists_the_four_passes(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    for line in ("inline    inline", "simplify  fold", "simplify  simplify", "rangeify  rangeify"):
        assert line in out


def test_opt_prints_the_folded_program(capsys, tmp_path):
    # i = 7 & 1000 = 0 and j = 3 & 3 = 3, so (i*4 + j)/4 = 0 and (i*4 + j)%4 = 3
    code, out = run_cli(capsys, tmp_path, "opt")
    assert code == 0
    assert out == (
        "%0 = CONST i32 0\n%1 = CONST i32 3\n%2 = STACK i32[2] %0 %1\n%3 = SINK void %2\n"
    )


def test_opt_simplifies_inside_the_body_when_inlining_is_skipped(capsys, tmp_path):
    # rangeify inlines too (a body's shaped values are its caller's): skipped with inline
    code, out = run_cli(capsys, tmp_path, "opt", "--skip", "inline,fold,rangeify")
    assert code == 0
    assert "IDIV" not in out and "MOD" not in out and "MUL" not in out
    assert "CALL i32[2]" in out


def test_opt_with_only_inline_keeps_the_arithmetic(capsys, tmp_path):
    code, out = run_cli(capsys, tmp_path, "opt", "--passes", "inline")
    assert code == 0
    assert "CALL" not in out and "IDIV" in out


def test_run_with_and_without_passes(capsys, tmp_path):
    assert run_cli(capsys, tmp_path, "run") == (0, "0 3\n")
    assert run_cli(capsys, tmp_path, "run", "--no-opt") == (0, "0 3\n")


NESTED = """\
# outer(a, b) = inner(a * 10) + b, where inner(x) = x + 1 uses slot 0 as outer does
%p0 = PARAM i32 0
%p1 = PARAM i32 1
%one = CONST i32 1
%inner = ADD i32 %p0 %one
%ten = CONST i32 10
%a10 = MUL i32 %p0 %ten
%call_inner = CALL i32 %inner %a10
%outer = ADD i32 %call_inner %p1
%two = CONST i32 2
%three = CONST i32 3
%r = CALL i32 %outer %two %three
%out = SINK void %r
"""


def test_inline_keeps_a_nested_body_that_reuses_the_slots_apart(capsys, tmp_path):
    # inner's PARAM 0 is the same UOp as outer's; substituting it in one step would be wrong:
    # outer(2, 3) = inner(20) + 3 = 24 (not inner(2) + 3 = 6, nor 2*10 + 1 + 3 computed twice)
    path = tmp_path / "nested.uir"
    path.write_text(NESTED)
    assert main(["opt", "--passes", "inline", str(path)]) == 0
    assert capsys.readouterr().out == (
        "%0 = CONST i32 2\n"
        "%1 = CONST i32 10\n"
        "%2 = MUL i32 %0 %1\n"
        "%3 = CONST i32 1\n"
        "%4 = ADD i32 %2 %3\n"
        "%5 = CONST i32 3\n"
        "%6 = ADD i32 %4 %5\n"
        "%7 = SINK void %6\n"
    )
    assert main(["run", str(path)]) == 0
    assert capsys.readouterr().out == "24\n"


def test_opt_rewrites_a_loop_program_and_its_output_runs_the_same(capsys, tmp_path):
    # fill2d_1x5: o[i*5 + j] = 10i + j over i < 1, j < 5, so o = 0 1 2 3 4; with i in [0, 0] the
    # passes fold i*5 and i*10 to 0, and the store must stay in the loop over i its END lists
    source = ROOT / "suites" / "week3" / "fill2d_1x5.uir"
    assert main(["opt", str(source)]) == 0
    optimized = capsys.readouterr().out
    assert "MUL" not in optimized
    path = tmp_path / "opt.uir"
    path.write_text(optimized)
    assert main(["run", "--no-opt", str(path)]) == 0
    assert capsys.readouterr().out == "0 1 2 3 4\n"

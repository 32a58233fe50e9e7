"""`uir opt` and `uir run` with the installed passes (the rewrite package's entry point)."""

from uir.cli.main import main

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


def test_plugins_lists_the_three_passes(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    for line in ("inline    inline", "simplify  fold", "simplify  simplify"):
        assert line in out


def test_opt_prints_the_folded_program(capsys, tmp_path):
    # i = 7 & 1000 = 0 and j = 3 & 3 = 3, so (i*4 + j)/4 = 0 and (i*4 + j)%4 = 3
    code, out = run_cli(capsys, tmp_path, "opt")
    assert code == 0
    assert out == (
        "%0 = CONST i32 0\n%1 = CONST i32 3\n%2 = STACK i32[2] %0 %1\n%3 = SINK void %2\n"
    )


def test_opt_simplifies_inside_the_body_when_inlining_is_skipped(capsys, tmp_path):
    code, out = run_cli(capsys, tmp_path, "opt", "--skip", "inline,fold")
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

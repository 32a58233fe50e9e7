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
    (rangeify,) = [line for line in out.splitlines() if "rangeify  rangeify" in line]
    # the interpreter runs shaped values whole; backends taking kernels need rangeify
    assert "(lowering)" in rangeify


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


NEGATED_GATE = """\
# found by the loop-program generator: b[i] gated by 0 <= i < 1, with i = (x & 3)*-2
%xd = CONST i32[1] ({x})
%xb = BUFFER i32[1] %xd 0
%d = CONST i32[1] (7)
%b = BUFFER i32[1] %d 1
%z = CONST i32 0
%p = INDEX i32 %xb %z
%v = LOAD i32 %p
%three = CONST i32 3
%x = AND i32 %v %three
%m = CONST i32 -2
%i = MUL i32 %x %m
%one = CONST i32 1
%lo = CMPLE bool %z %i
%hi = CMPLT bool %i %one
%g = AND bool %lo %hi
%q = INDEX i32 %b %i %g
%r = LOAD i32 %q
%out = SINK void %r
"""


def test_opt_keeps_a_gate_on_a_scaled_index_provable(capsys, tmp_path):
    # The simplifier divides 0 <= x*-2 by -2's gcd and writes it -1 < -x (x*-2 < 1 always holds);
    # the index x*-2 holds no -x, so the verifier must read -1 < -x as x <= 0 to prove it.
    # x = 4 & 3 = 0: i = 0, the gate holds, b[0] = 7; x = 5 & 3 = 1: i = -2, gated off, 0.
    for x, expected in ((4, "7\n"), (5, "0\n")):
        source = tmp_path / "gate.uir"
        source.write_text(NEGATED_GATE.format(x=x))
        assert main(["check", str(source)]) == 0
        capsys.readouterr()
        assert main(["opt", str(source)]) == 0
        optimized = capsys.readouterr().out
        assert "NEG" in optimized  # the rewritten gate this test is about
        path = tmp_path / "opt.uir"
        path.write_text(optimized)
        assert main(["check", str(path)]) == 0  # exit 3 when the index cannot be proven
        capsys.readouterr()
        assert main(["run", "--no-opt", str(source)]) == 0
        assert capsys.readouterr().out == expected
        assert main(["run", "--no-opt", str(path)]) == 0
        assert capsys.readouterr().out == expected

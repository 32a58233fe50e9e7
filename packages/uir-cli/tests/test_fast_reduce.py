"""`REDUCE T x (OP, (axes...), FAST)` (design brief 10.3, spec/uir-week8.md section 1): parsed,
printed, verified and judged through the real CLI. The reference folds a FAST reduction in the
week-4 order, one of the orders it allows, so on every backend it prints what the plain REDUCE
prints; the freedom to reorder is the performance weeks' to take."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from uir.cli.main import main

# 1e8 + 1 rounds back to 1e8 in f32, so the week-4 order gives (((1e8 + 1) - 1e8) + 1) = 1,
# where the order 1e8 - 1e8 + 1 + 1 would give 2: a fold order a FAST reduction may choose.
SUMS = (
    "%d = CONST f32[4] (100000000, 1, -100000000, 1)\n%b = BUFFER f32[4] %d 0\n"
    "%x = LOAD f32[4] %b\n%fast = REDUCE f32 %x (ADD, (0), FAST)\n"
    "%plain = REDUCE f32 %x (ADD, (0))\n%out = SINK void %fast %plain\n"
)


def write(tmp_path: Path, text: str, name: str = "p.uir") -> str:
    path = tmp_path / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_a_fast_sum_folds_in_the_week_4_order_in_the_reference(tmp_path, capsys, backend):
    assert main(["run", write(tmp_path, SUMS), "--backend", backend]) == 0
    assert capsys.readouterr().out == "1\n1\n"


def test_cuda_folds_a_fast_sum_across_a_block_and_the_plain_one_in_order(tmp_path, capsys):
    # spec/uir-week7.md 2.1: thread t of 256 holds element t (the rest -0.0); the tree's last
    # two levels add (1e8 + -1e8) = 0 and (1 + 1) = 2, then 0 + 2 = 2, another FAST answer
    assert main(["run", write(tmp_path, SUMS), "--backend", "cuda-emu"]) == 0
    assert capsys.readouterr().out == "2\n1\n"


def test_fast_prints_back_as_written_and_fmt_keeps_it(tmp_path, capsys):
    assert main(["fmt", write(tmp_path, SUMS)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "%3 = REDUCE f32 %2 (ADD, (0), FAST)" in lines
    assert "%4 = REDUCE f32 %2 (ADD, (0))" in lines


@pytest.mark.parametrize(
    ("arg", "code", "message"),
    [
        ("(ADD, (0), SLOW)", 2, "unknown word 'SLOW' in argument"),
        ("(ADD, (0), FAST, FAST)", 3, "or (OP, (axes...), FAST), got (ADD, (0), FAST, FAST)"),
        ("(ADD, FAST, (0))", 3, "or (OP, (axes...), FAST), got (ADD, FAST, (0))"),
        ("(ADD, (0), PARALLEL)", 3, "or (OP, (axes...), FAST), got (ADD, (0), PARALLEL)"),
    ],
)
def test_a_malformed_fast_flag_is_an_error_at_its_line(tmp_path, capsys, arg, code, message):
    text = f"%a = CONST f32[2] (1, 2)\n%s = REDUCE f32 %a {arg}\n%o = SINK void %s\n"
    path = write(tmp_path, text)
    assert main(["check", path]) == code
    err = capsys.readouterr().err
    assert err.startswith(f"{path}:2: error: ") and message in err and "Traceback" not in err


def test_a_fast_reduction_of_ints_is_accepted_and_exact(tmp_path, capsys):
    # int ADD wraps: associative and commutative, so every order gives 2^31 - 1 + 1 - 5 wrapped
    text = (
        "%a = CONST i32[3] (2147483647, 1, -5)\n"
        "%s = REDUCE i32 %a (ADD, (0), FAST)\n%m = REDUCE i32 %a (MAX, (0), FAST)\n"
        "%o = SINK void %s %m\n"
    )
    assert main(["run", write(tmp_path, text), "--backend", "c"]) == 0
    assert capsys.readouterr().out == "2147483643\n2147483647\n"


@pytest.mark.parametrize(("week", "code"), [(7, 5), (8, 0)])
def test_a_fast_reduction_is_a_test_of_week_8(tmp_path, capsys, week, code):
    write(tmp_path, "# expect: 1\n# expect: 1\n" + SUMS, "t/fast.uir")
    write(tmp_path, "# expect: 42\n%a = CONST i32 42\n%o = SINK void %a\n", "suite/other.uir")
    report = tmp_path / "r.json"
    argv = ["validate-tests", str(tmp_path / "t"), "--week", str(week), "--runs", "1"]
    assert main([*argv, "--suite", str(tmp_path / "suite"), "--json", str(report)]) == code
    [test] = json.loads(report.read_text())["tests"]
    expected = ["uses a FAST REDUCE, of week 8, not allowed in week 7"] if week < 8 else []
    assert test["reasons"] == expected

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from uir.cli.main import main

ADD = "%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"


def write(tmp_path, text: str, name: str = "p.uir") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_run_prints_one_line_per_sink_source(tmp_path, capsys):
    path = write(tmp_path, ADD.replace("SINK void %c", "SINK void %c %a"))
    assert main(["run", path]) == 0
    assert capsys.readouterr().out == "5\n2\n"


@pytest.mark.parametrize(
    ("text", "code", "line"),
    [
        ("%a = CONST i32 2\n%o = SINK void %b\n", 2, 2),
        ("%a = CONST i32 2\n\n%c = ADD i32 %a\n%o = SINK void %c\n", 3, 3),
        (
            "%a = CONST i32 4\n%v = CONST i32[2] (1, 2)\n%e = INDEX i32 %v %a\n%o = SINK void %e\n",
            3,
            3,
        ),
    ],
)
def test_errors_go_to_stderr_with_file_and_line_and_nothing_to_stdout(
    tmp_path, capsys, text, code, line
):
    path = write(tmp_path, text)
    assert main(["run", path]) == code
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{path}:{line}: error: ")
    # The message, then the statement it blames and a caret line under it.
    _, source, caret = captured.err.splitlines()
    assert source == f" {line} | {text.split(chr(10))[line - 1]}"
    assert caret.startswith(f" {' ' * len(str(line))} | ") and "^" in caret


def test_a_missing_file_is_an_io_error(tmp_path, capsys):
    assert main(["run", str(tmp_path / "nope.uir")]) == 1
    assert "cannot read" in capsys.readouterr().err


def test_usage_errors_exit_1(capsys):
    assert main(["run"]) == 1
    assert main(["frobnicate"]) == 1
    assert main(["run", "x.uir", "--backend", "nonesuch"]) == 1
    assert "unknown backend 'nonesuch'" in capsys.readouterr().err


def test_invalid_utf8_is_a_parse_error_on_its_line(tmp_path, capsys):
    path = tmp_path / "bad.uir"
    path.write_bytes(b"%a = CONST i32 1\n%o = SINK void %a # \xff\n")
    assert main(["run", str(path)]) == 2
    assert capsys.readouterr().err.startswith(f"{path}:2: error:")


def test_check_and_fmt(tmp_path, capsys):
    path = write(tmp_path, "%dead = CONST i32 9\n" + ADD)
    assert main(["check", path]) == 0
    assert main(["fmt", path]) == 0
    out = capsys.readouterr().out
    assert out.endswith(
        "%0 = CONST i32 2\n%1 = CONST i32 3\n%2 = ADD i32 %0 %1\n%3 = SINK void %2\n"
    )


def test_fmt_output_is_a_fixed_point(tmp_path, capsys):
    text = "%x = CONST f32 0.1\n%y = CONST f32 -0.0\n%s = ADD f32 %x %y\n%o = SINK void %s %y\n"
    assert main(["fmt", write(tmp_path, text)]) == 0
    once = capsys.readouterr().out
    assert main(["fmt", write(tmp_path, once, "q.uir")]) == 0
    assert capsys.readouterr().out == once
    assert "-0.0" in once and "0.1" in once


def test_plugins_lists_the_interpreter(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    assert (
        "  interp   reference interpreter (Python closures over the kernels' loops, bit-exact); "
        "takes kernels [interp]; available\n"
    ) in out


def test_an_unimportable_plugin_is_a_usage_error(tmp_path, capsys):
    assert main(["run", "-p", "no_such_module_xyz", write(tmp_path, ADD)]) == 1
    assert main(["-p", "no_such_module_xyz", "run", write(tmp_path, ADD)]) == 1
    assert "cannot import plugin module 'no_such_module_xyz'" in capsys.readouterr().err


def test_the_uir_script_reads_standard_input():
    done = subprocess.run(
        [sys.executable, "-m", "uir.cli.main", "run", "-"],
        input=ADD,
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", "")


def test_help_works_for_every_command():
    for command in ([], ["run"], ["check"], ["fmt"], ["opt"], ["plugins"]):
        done = subprocess.run(
            [sys.executable, "-m", "uir.cli.main", *command, "--help"],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 0 and "usage: uir" in done.stdout


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    st.lists(
        st.sampled_from(
            ["%a", "%b", "=", "CONST", "ADD", "INDEX", "SINK", "i32", "f32[2]", "void", "1", "-0.0",
             "(", ")", ",", "#", "\n", " ", "nan", "0x1p3", "STACK", "PARAM", "CALL", "true"]
        ),
        max_size=40,
    )
)  # fmt: skip
def test_no_input_produces_a_traceback(tmp_path, capsys, words):
    path = write(tmp_path, " ".join(words))
    code = main(["run", path])
    captured = capsys.readouterr()
    assert code in (0, 2, 3), captured.err
    assert "Traceback" not in captured.err
    if code:
        assert captured.out == "" and captured.err.startswith(f"{path}:")


def test_run_stats_go_to_stderr_and_leave_the_output_alone(tmp_path, capsys):
    # two 4-byte loads, then (3, 5) squared: rangeify makes one loop of 2 iterations, each one
    # MUL and one 4-byte store into the output. The loads run in order before the loop, so the
    # schedule has two kernels: the loads (reading buf0) and the parallel loop (writing buf1, the
    # output), and no buffer between them (the loaded values cross as scalars)
    text = (
        "%d = CONST i32[2] (3, 5)\n%x = BUFFER i32[2] %d 0\n%z = CONST i32 0\n%one = CONST i32 1\n"
        "%p = INDEX i32 %x %z\n%q = INDEX i32 %x %one\n%a = LOAD i32 %p\n%b = LOAD i32 %q\n"
        "%v = STACK i32[2] %a %b\n%s = MUL i32[2] %v %v\n%o = SINK void %s\n"
    )
    assert main(["run", write(tmp_path, text), "--stats"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "9 25\n"
    assert captured.err == (
        "stats: kernels 2, loops 1, bytes read 8, bytes written 8, ops 2\n"
        "  kernel0 (in order): reads buf0; writes -; loops 0, bytes read 8, bytes written 0,"
        " ops 0\n"
        "  kernel1 (parallel loop): reads -; writes buf1; loops 1, bytes read 0, bytes written 8,"
        " ops 2\n"
        "  intermediate buffers: 0 bytes\n"
        "  peak scratch: 0 bytes\n"
    )


def test_run_stats_peak_scratch_counts_the_buffers_live_while_one_kernel_runs(tmp_path, capsys):
    # four kernels: a = x (writes local a), b = a + a (reads a, writes b), c = b * b (reads b,
    # writes c), the output c + c (reads c). Each STAGE is a LOCAL of 16 bytes; a is dead once
    # b is written, so at most two are live at once: 32 bytes while kernel1 runs, of 48 in all
    text = (
        "%d = CONST f32[4] (1, 2, 3, 4)\n%x = BUFFER f32[4] %d 0\n%l = LOAD f32[4] %x\n"
        "%a = STAGE f32[4] %l\n%a2 = ADD f32[4] %a %a\n%b = STAGE f32[4] %a2\n"
        "%b2 = MUL f32[4] %b %b\n%c = STAGE f32[4] %b2\n%c2 = ADD f32[4] %c %c\n"
        "%out = SINK void %c2\n"
    )
    assert main(["run", write(tmp_path, text), "--stats"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "8 32 72 128\n"
    assert captured.err.startswith("stats: kernels 4,")
    assert captured.err.endswith(
        "  intermediate buffers: 48 bytes\n  peak scratch: 32 bytes, while kernel1 runs\n"
    )


def test_opt_kernels_prints_a_row_softmax_as_one_kernel_that_runs_as_the_program(tmp_path, capsys):
    # spec/uir-week6.md 2.2: the row max, the exps, their sum and the division in one row loop
    text = (
        "%d = CONST f32[6] (1, 2, 3, 4, 6, 5)\n%b = BUFFER f32[6] %d 0\n%l = LOAD f32[6] %b\n"
        "%x = RESHAPE f32[2,3] %l\n%m = REDUCE f32[2] %x (MAX, (1))\n"
        "%mc = RESHAPE f32[2,1] %m\n%me = EXPAND f32[2,3] %mc\n%xs = SUB f32[2,3] %x %me\n"
        "%e = EXP2 f32[2,3] %xs\n%s = REDUCE f32[2] %e (ADD, (1))\n%sc = RESHAPE f32[2,1] %s\n"
        "%se = EXPAND f32[2,3] %sc\n%y = FDIV f32[2,3] %e %se\n%out = SINK void %y\n"
    )
    path = write(tmp_path, text)
    assert main(["opt", path, "--kernels"]) == 0
    listing = capsys.readouterr().out
    headers = [line for line in listing.splitlines() if line.startswith("# kernel")]
    assert headers == [
        "# kernel0 (parallel loop): reads buf0, local1, local2, local0; "
        "writes local1, local0, local2, buf1"
    ]
    assert sum(" = EXP2 " in line for line in listing.splitlines()) == 1
    # the listing is a program: run whole by the interpreter, the original prints the same;
    # rows (1, 2, 3) and (4, 6, 5): exp2(-2), exp2(-1), exp2(0) over their sum 1.75 = 1/7, 2/7, 4/7
    assert main(["run", path]) == 0
    expected = capsys.readouterr().out
    assert expected == "0.142857149 0.285714298 0.571428597 0.142857149 0.571428597 0.285714298\n"
    assert main(["run", write(tmp_path, listing, "listing.uir")]) == 0
    assert capsys.readouterr().out == expected

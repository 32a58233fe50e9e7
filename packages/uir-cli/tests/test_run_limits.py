"""`uir run --timeout` and the interpreter's iteration budget (issue 24 item 8): a loop of 2^31 x
2^31 iterations ends with a message, never a silent hang. No test here depends on the machine's
speed: each program needs 10^18 iterations or more to finish, or is counted before it runs."""

from __future__ import annotations

import pytest

from uir.cli import program_commands
from uir.cli.main import main
from uir.core import interpret

RAISE = "a loop end by mistake? `uir run --max-iterations N` raises the budget, 0 for none"

# Two nested loops of N iterations each, summing i*j into one accumulator.
NESTED = """\
%acc = LOCAL i32[1] 0
%n = CONST i32 {n}
%z = CONST i32 0
%i = RANGE i32 %n 0
%j = RANGE i32 %n 1
%accIJ = AFTER i32[1] %acc %i %j
%p = INDEX i32 %accIJ %z
%old = LOAD i32 %p
%ij = MUL i32 %i %j
%new = ADD i32 %old %ij
%upd = STORE void %p %new
%e = END void %upd %i %j
%accD = AFTER i32[1] %acc %e
%pd = INDEX i32 %accD %z
%r = LOAD i32 %pd
%out = SINK void %r
"""

# An outer loop of 3 and an inner one whose end (1000) is loaded from memory: known only while
# the program runs. It counts the inner iterations: 3000.
LOADED_END = """\
%ends = CONST i32[1] (1000)
%nb = BUFFER i32[1] %ends 0
%acc = LOCAL i32[1] 0
%z = CONST i32 0
%one = CONST i32 1
%three = CONST i32 3
%pn = INDEX i32 %nb %z
%m = LOAD i32 %pn
%i = RANGE i32 %three 0
%j = RANGE i32 %m 1
%accIJ = AFTER i32[1] %acc %i %j
%p = INDEX i32 %accIJ %z
%old = LOAD i32 %p
%new = ADD i32 %old %one
%upd = STORE void %p %new
%e = END void %upd %i %j
%accD = AFTER i32[1] %acc %e
%pd = INDEX i32 %accD %z
%r = LOAD i32 %pd
%out = SINK void %r
"""


def write(tmp_path, text: str) -> str:
    path = tmp_path / "p.uir"
    path.write_text(text)
    return str(path)


def run(args: list[str], capsys) -> tuple[int, str, str]:
    code = main(["run", *args])
    out, err = capsys.readouterr()
    return code, out, err


def test_a_nest_of_2_62_iterations_is_refused_before_it_runs(tmp_path, capsys) -> None:
    path = write(tmp_path, NESTED.format(n=2147483647))
    total = 2147483647 * (1 + 2147483647)  # the outer loop's iterations and the inner ones
    assert run([path], capsys) == (
        4,
        "",
        f"{path}: error: this program runs {total} loop iterations, over the interpreter's "
        f"budget of 1000000000 ({RAISE})\n",
    )


def test_the_budget_counts_every_iteration_of_every_loop(tmp_path, capsys) -> None:
    # 3 outer iterations and 9 inner ones, 12 in all; the sum of i*j is (0+1+2)^2 = 9.
    path = write(tmp_path, NESTED.format(n=3))
    assert run([path, "--max-iterations", "12"], capsys) == (0, "9\n", "")
    assert run([path, "--max-iterations", "0"], capsys) == (0, "9\n", "")
    assert run([path, "--max-iterations", "11"], capsys) == (
        4,
        "",
        f"{path}: error: this program runs 12 loop iterations, over the interpreter's budget "
        f"of 11 ({RAISE})\n",
    )


def test_a_loop_with_a_loaded_end_pays_at_each_start(tmp_path, capsys) -> None:
    path = write(tmp_path, LOADED_END)
    # 3 outer iterations, then 1000 for each start of the inner loop: 3003 in all.
    assert run([path], capsys) == (0, "3000\n", "")
    assert run([path, "--max-iterations", "3003"], capsys) == (0, "3000\n", "")
    code, out, err = run([path, "--max-iterations", "3002"], capsys)
    assert (code, out) == (4, "")
    assert err == (
        f"{path}: error: the interpreter's budget of 3002 loop iterations ran out: a loop of "
        f"1000 iterations started after 2003 ({RAISE})\n"
    )


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_timeout_stops_a_run_that_would_not_end(tmp_path, capsys, backend: str) -> None:
    # 2^62 iterations: no machine finishes them within the timeout.
    path = write(tmp_path, NESTED.format(n=2147483647))
    args = [path, "--backend", backend, "--timeout", "0.5", "--max-iterations", "0"]
    assert run(args, capsys) == (
        4,
        "",
        f"{path}: error: the run took longer than 0.5 s (--timeout) and was stopped\n",
    )


def test_a_run_within_its_timeout_prints_its_outputs(tmp_path, capsys) -> None:
    path = write(tmp_path, NESTED.format(n=3))
    assert run([path, "--timeout", "600"], capsys) == (0, "9\n", "")


@pytest.mark.parametrize(
    ("option", "value", "message"),
    [
        ("--timeout", "0", "must be a number of seconds above 0, got 0"),
        ("--timeout", "nan", "must be a number of seconds above 0, got nan"),
        ("--timeout", "soon", "must be a number of seconds, got 'soon'"),
        ("--max-iterations", "-1", "must be 0 or more, got -1"),
        ("--max-iterations", "1e9", "must be a whole number, got '1e9'"),
    ],
)
def test_a_bad_limit_is_a_usage_error(tmp_path, capsys, option, value, message) -> None:
    path = write(tmp_path, NESTED.format(n=3))
    code, out, err = run([path, option, value], capsys)
    assert (code, out) == (1, "")
    assert message in err


def test_the_parser_states_the_interpreters_default() -> None:
    assert program_commands.DEFAULT_ITERATIONS == interpret.DEFAULT_ITERATIONS

"""The size limits of spec/uir-week1.md section 4 through the CLI (issue 24 item 3): a type of more
than 2^31 - 1 elements is a verification error at its line, and an allocation the machine cannot
make is a backend failure with a message, never an internal error."""

from __future__ import annotations

import resource
import subprocess
import sys

import pytest

from uir.cli import program_commands
from uir.cli.main import main

LIMIT = "a type has at most 2147483647 (2^31 - 1), so that an i32 indexes each"
# A load of one element of a buffer of 2^31 - 1 f64s (16 GiB).
BIGGEST = (
    "%b = BUFFER f64[2147483647] 0\n%z = CONST i32 0\n%i = INDEX f64 %b %z\n"
    "%x = LOAD f64 %i\n%out = SINK void %x\n"
)


def write(tmp_path, text: str) -> str:
    path = tmp_path / "p.uir"
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        (  # past every int dtype
            "%z = CONST i32 0\n%b = BUFFER f32[99999999999999999999999999] 0\n"
            "%i = INDEX f32 %b %z\n%x = LOAD f32 %i\n%out = SINK void %x\n",
            2,
            f"f32[99999999999999999999999999] has 99999999999999999999999999 elements: {LIMIT}",
        ),
        (  # 2^64 elements: a product past int64
            "%x = CONST f32[65536,65536,65536,65536] 0.0\n%out = SINK void %x\n",
            1,
            f"f32[65536,65536,65536,65536] has 18446744073709551616 elements: {LIMIT}",
        ),
        (  # 2^32: one past what an i32 indexes
            "%z = CONST i32 0\n%b = BUFFER u8[4294967296] 0\n"
            "%i = INDEX u8 %b %z\n%x = LOAD u8 %i\n%out = SINK void %x\n",
            2,
            f"u8[4294967296] has 4294967296 elements: {LIMIT}",
        ),
        (  # an EXPAND to 10^10 elements
            "%x = CONST i32[1] (7)\n%e = EXPAND i32[10000000000] %x\n%out = SINK void %e\n",
            2,
            f"i32[10000000000] has 10000000000 elements: {LIMIT}",
        ),
        (  # PAD pairs of 2^63 give a type of 2^64 + 2 elements
            "%x = CONST i32[2] (1, 2)\n"
            "%p = PAD i32[18446744073709551618] %x ((9223372036854775808, 9223372036854775808))\n"
            "%out = SINK void %p\n",
            2,
            f"i32[18446744073709551618] has 18446744073709551618 elements: {LIMIT}",
        ),
    ],
    ids=["huge-dim", "past-int64", "2^32-buffer", "expand", "pad"],
)
@pytest.mark.parametrize("command", ["check", "run"])
def test_a_type_past_the_element_limit_is_a_verification_error(
    tmp_path, capsys, command: str, text: str, line: int, message: str
) -> None:
    path = write(tmp_path, text)
    assert main([command, path]) == 3
    out, err = capsys.readouterr()
    assert (out, err.split("\n")[0]) == ("", f"{path}:{line}: error: {message}")


def test_the_largest_type_allowed_verifies(tmp_path, capsys) -> None:
    # 2^31 - 1 elements: within the limit, so only checked (running it would allocate 16 GiB).
    path = write(tmp_path, BIGGEST)
    assert main(["check", path]) == 0
    assert capsys.readouterr().out == f"{path}: ok\n"


def test_a_dimension_too_long_to_convert_is_a_parse_error(tmp_path, capsys) -> None:
    path = write(tmp_path, f"%b = BUFFER f32[{'9' * 5000}] 0\n%out = SINK void %b\n")
    assert main(["check", path]) == 2
    first = capsys.readouterr().err.split("\n")[0]
    assert first == f"{path}:1: error: bad type: a dimension of over 4300 digits"


def _two_gib_address_space() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (2 << 30, 2 << 30))


@pytest.mark.parametrize("backend", ["interp", "c"])
def test_an_allocation_the_machine_cannot_make_is_reported(tmp_path, backend: str) -> None:
    # A 16 GiB buffer (2^31 - 1 f64s) in a process limited to 2 GiB of address space: the
    # allocation fails on every machine, and the message says what the program needs.
    path = write(tmp_path, BIGGEST)
    done = subprocess.run(
        [sys.executable, "-m", "uir.cli.main", "run", "--backend", backend, path],
        capture_output=True,
        text=True,
        preexec_fn=_two_gib_address_space,
        env={"OPENBLAS_NUM_THREADS": "1", "PATH": "/usr/bin:/bin"},
    )
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr == (
        f"{path}: error: out of memory: this machine could not allocate what the program needs "
        "(its buffers hold 17179869176 bytes, its largest value or buffer 17179869176 bytes)\n"
    )


def test_out_of_memory_in_any_command_is_said_so(tmp_path, capsys, monkeypatch) -> None:
    # Where no command names what it needs (here printing, made to fail), the message still
    # says what happened, exit 4, never "internal error: MemoryError".
    def no_memory(sink: object) -> str:
        raise MemoryError

    monkeypatch.setattr(program_commands, "print_program", no_memory)
    path = write(tmp_path, "%a = CONST i32 2\n%out = SINK void %a\n")
    assert main(["fmt", path]) == 4
    assert capsys.readouterr() == (
        "",
        f"{path}: error: out of memory: this machine could not allocate what the command needs\n",
    )

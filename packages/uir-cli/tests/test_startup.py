"""Start-up cost: checking, formatting and verifying week-1 programs must not load numpy.

Importing numpy was most of every `uir` process's start-up CPU. Each test runs a fresh
interpreter, so modules imported by other tests cannot hide or fake an import.
"""

import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[3] / "examples"
WEEK1 = sorted(EXAMPLES.glob("*.uir"))


def loads_numpy(code: str) -> bool:
    """Whether running `code` in a fresh interpreter leaves numpy in sys.modules."""
    probe = f"{code}\nimport sys\nprint('numpy' in sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    return done.stdout.strip().splitlines()[-1] == "True"


def test_the_examples_exist():
    assert WEEK1, f"no examples under {EXAMPLES}"


@pytest.mark.parametrize("command", ["check", "fmt"])
def test_check_and_fmt_do_not_import_numpy(command):
    calls = "".join(f"main([{command!r}, {str(p)!r}])\n" for p in WEEK1)
    assert not loads_numpy(f"from uir.cli.main import main\n{calls}")


def test_parse_verify_print_do_not_import_numpy():
    paths = [str(p) for p in WEEK1]
    code = (
        "from pathlib import Path\n"
        "from uir.core import parse, print_program, verify\n"
        f"for path in {paths!r}:\n"
        "    program = parse(Path(path).read_text())\n"
        "    verify(program)\n"
        "    print_program(program.sink)\n"
    )
    assert not loads_numpy(code)


def test_running_a_program_does_import_numpy():
    # The probe itself must be able to see numpy: the interpreter computes with it.
    code = f"from uir.cli.main import main\nmain(['run', {str(WEEK1[0])!r}])\n"
    assert loads_numpy(code)


def test_starting_uir_imports_no_grading_module_beyond_the_command_lines():
    probe = (
        "import sys\nfrom uir.cli.main import build_parser\nbuild_parser()\n"
        "print(' '.join(sorted(m for m in sys.modules if m.startswith(('uir.cli.grading.', "
        "'uir.grading.', 'uir.backend.')))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, timeout=120
    )
    # The command lines (uir-cli's, and those the installed uir-grading adds through the hook
    # uir_commands) and the limits they default to; the grader itself loads when it runs, and
    # no backend loads to build the command line.
    assert set(done.stdout.split()) <= {
        "uir.cli.grading.commands",
        "uir.cli.grading.limits",
        "uir.cli.grading.status",
        "uir.grading.commands",
    }

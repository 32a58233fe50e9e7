"""examples/plugin, the example third-party plugin package (issue 24 item 6), installed into a
fresh environment beside uir-core, uir-cli and uir-rewrite only: `uir` finds its pass and its
backend through the entry point, and each runs as its README says. Every expected output is
worked out by hand."""

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[3]

# 21 loaded from a buffer (so that nothing folds it), doubled.
DOUBLE = """\
%init = CONST i32[1] (21)
%b = BUFFER i32[1] %init 0
%z = CONST i32 0
%p = INDEX i32 %b %z
%x = LOAD i32 %p
%two = CONST i32 2
%y = MUL i32 %x %two
%out = SINK void %y
"""


@pytest.fixture(scope="module")
def uir(tmp_path_factory):
    """The `uir` of a fresh environment holding uir-core, uir-cli and the example plugin."""
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (README: pip install uv)"
    venv = tmp_path_factory.mktemp("plugin") / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True)
    python = venv / "bin" / "python"

    def install(*names: str) -> None:
        paths = [str(ROOT / name) for name in names]
        subprocess.run(
            [uv, "pip", "install", "-q", "--python", str(python), *paths], check=True, timeout=300
        )

    def run(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [str(venv / "bin" / "uir"), *args], capture_output=True, text=True, check=False
        )

    install("packages/uir-core", "packages/uir-cli", "examples/plugin")
    # The example's pass runs right after simplify, which uir-rewrite adds: without it, every
    # command says what to install.
    done = run("plugins")
    assert (done.returncode, done.stdout) == (4, "")
    assert done.stderr == (
        "uir: error: pass 'doubling' of plugin 'example' is placed next to 'simplify': no such "
        "pass is installed: it comes with the package uir-rewrite, which is not installed here "
        "(`uv pip install packages/uir-rewrite` in the UIR repository, or `uv sync` there for "
        "every package)\n"
    )
    install("packages/uir-rewrite")
    return run


@pytest.fixture
def program(tmp_path) -> str:
    path = tmp_path / "double.uir"
    path.write_text(DOUBLE)
    return str(path)


def test_plugins_lists_the_pass_and_the_backend(uir) -> None:
    done = uir("plugins")
    assert (done.returncode, done.stderr) == (0, "")
    lines = done.stdout.splitlines()
    assert lines[:4] == ["plugins:", "  example", "  interp", "  rewrite"]
    start, end = lines.index("passes (in pipeline order):"), lines.index("backends:")
    passes = [line.split()[1] for line in lines[start + 1 : end]]
    assert passes[:4] == ["inline", "fold", "simplify", "doubling"]  # right after simplify
    assert (
        "  simplify  doubling     x * 2 of ints as x + x (an example plugin's pass) [example]"
        in (lines)
    )
    assert lines[-1] == (
        "  listing  one line per UOp: op, type, sources, argument (an example plugin's backend); "
        "takes program [example]; available"
    )


def test_the_pass_writes_doubling_as_an_add(uir, program) -> None:
    done = uir("opt", program)
    assert (done.returncode, done.stderr) == (0, "")
    assert done.stdout == DOUBLE_AFTER


DOUBLE_AFTER = """\
%0 = CONST i32[1] (21)
%1 = BUFFER i32[1] %0 0
%2 = CONST i32 0
%3 = INDEX i32 %1 %2
%4 = LOAD i32 %3
%5 = ADD i32 %4 %4
%6 = SINK void %5
"""


def test_the_backend_renders_and_runs(uir, program) -> None:
    rendered = uir("render", "--backend", "listing", program)
    assert (rendered.returncode, rendered.stderr) == (0, "")
    # The program after the passes (the ADD the pass made), sources first.
    assert rendered.stdout == (
        "v0: CONST i32[1] () (21)\n"
        "v1: BUFFER i32[1] (v0) 0\n"
        "v2: CONST i32 () 0\n"
        "v3: INDEX i32 (v1 v2)\n"
        "v4: LOAD i32 (v3)\n"
        "v5: ADD i32 (v4 v4)\n"
        "v6: SINK void (v5)\n"
    )
    for args in ([], ["--no-opt"]):
        done = uir("run", "--backend", "listing", *args, program)
        assert (done.returncode, done.stdout, done.stderr) == (0, "42\n", "")

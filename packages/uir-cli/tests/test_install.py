"""Installing only uir-core and uir-cli gives a working `uir run` (no backend is needed), `uir
viz` (its page assets are package data) and the student's grader (`uir test`)."""

import shutil
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]


def test_core_and_cli_alone_run_a_program(tmp_path):
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (README: pip install uv)"
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True)
    python = venv / "bin" / "python"
    packages = [str(ROOT / "packages" / name) for name in ("uir-core", "uir-cli")]
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), *packages], check=True, timeout=300
    )
    listed = subprocess.run(
        [uv, "pip", "list", "--python", str(python)], capture_output=True, text=True, check=True
    ).stdout
    assert "uir-core" in listed and "uir-cli" in listed and "uir-rewrite" not in listed
    program = tmp_path / "add.uir"
    program.write_text(
        "%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%o = SINK void %c\n"
    )
    done = subprocess.run(
        [str(venv / "bin" / "uir"), "run", str(program)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout, done.stderr) == (0, "5\n", "")
    # A backend of UIR's own that is not installed names the package that adds it.
    done = subprocess.run(
        [str(venv / "bin" / "uir"), "run", "--backend", "c", str(program)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stdout) == (1, "")
    assert done.stderr == (
        f"{program}: error: unknown backend 'c' (installed: interp): it comes with the package "
        "uir-backend-c, which is not installed here (`uv pip install packages/uir-backend-c` in "
        "the UIR repository, or `uv sync` there for every package)\n"
    )
    # The student's grader comes with uir-cli; the staff's commands with uir-grading, whose
    # command names say what to install.
    for command in ("test", "mutants", "validate-tests"):
        done = subprocess.run(
            [str(venv / "bin" / "uir"), command, "--help"], capture_output=True, check=False
        )
        assert done.returncode == 0, done.stderr
    done = subprocess.run(
        [str(venv / "bin" / "uir"), "grade", "roster.toml", "--tests", "t"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 1
    assert (
        "`uir grade` comes with the package uir-grading, which is not installed here "
        "(`uv pip install packages/uir-grading` in the UIR repository)" in done.stderr
    )
    # The viz page's assets are package data: an installed uir-cli writes the whole page.
    page = tmp_path / "add.html"
    done = subprocess.run(
        [str(venv / "bin" / "uir"), "viz", str(program), "--html", str(page)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert (done.returncode, done.stderr) == (0, "")
    assert "dagre" in page.read_text() and "class GraphView" in page.read_text()

"""Installing uir-backend-c next to uir-core and uir-cli adds `--backend c` and `uir render`
with no other change (architecture: backends arrive through the `uir` entry points only)."""

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from uir.backend.c.toolchain import compiler

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.skipif(compiler() is None, reason="no C compiler")
def test_installing_the_package_adds_backend_c(tmp_path):
    uv = shutil.which("uv")
    assert uv, "uv must be on PATH (README: pip install uv)"
    venv = tmp_path / "venv"
    subprocess.run([uv, "venv", "-q", str(venv)], check=True)
    python = venv / "bin" / "python"
    names = ("uir-core", "uir-cli", "uir-backend-c")
    packages = [str(ROOT / "packages" / name) for name in names]
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python), *packages], check=True, timeout=300
    )
    program = tmp_path / "add.uir"
    program.write_text(
        "%a = CONST i32 2147483647\n%b = CONST i32 1\n%c = ADD i32 %a %b\n%o = SINK void %c\n"
    )
    uir = str(venv / "bin" / "uir")
    env = dict(os.environ, UIR_CACHE_DIR=str(tmp_path / "cache"))
    ran = subprocess.run(
        [uir, "run", "--backend", "c", str(program)], capture_output=True, text=True, env=env
    )
    assert (ran.returncode, ran.stdout, ran.stderr) == (0, "-2147483648\n", "")
    rendered = subprocess.run(
        [uir, "render", str(program)], capture_output=True, text=True, env=env
    )
    assert (
        rendered.returncode == 0 and "void uir_program(int32_t *restrict out0)" in rendered.stdout
    )

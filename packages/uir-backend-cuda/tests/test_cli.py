"""The CUDA backend through the CLI on a machine without a driver (issue 24): `uir render
--backend cuda` is text and needs no driver; `uir run --backend cuda` reads and verifies the
program before it asks for one, so a bad program gets its own exit code (2 parse, 3 verify) and
only a good one hears that the backend is unavailable (4). The missing driver is made so here,
whatever the machine has: every way into the driver fails the test if it is taken."""

from __future__ import annotations

from pathlib import Path

import pytest

from uir.backend.cuda import driver
from uir.backend.cuda.plugin import CudaBackend
from uir.cli.main import main

ADD = Path(__file__).resolve().parents[3] / "examples" / "add.uir"
WHY = "no CUDA driver (made so by the test)"


@pytest.fixture
def no_driver(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The backend says it is unavailable; `touched` records any other use of the driver."""
    touched: list[str] = []

    def untouchable(*args: object) -> None:
        touched.append("driver")
        raise AssertionError("the driver was touched")

    monkeypatch.setattr(CudaBackend, "available", lambda self: (False, WHY))
    monkeypatch.setattr(driver, "architecture", untouchable)
    monkeypatch.setattr(driver, "GpuProgram", untouchable)
    return touched


def uir(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_render_needs_no_driver(no_driver: list[str], capsys) -> None:
    code, out, err = uir(["render", "--backend", "cuda", str(ADD)], capsys)
    assert (code, err) == (0, "")
    assert 'extern "C" __global__ void uir_kernel0(' in out
    assert no_driver == []


@pytest.mark.parametrize(
    ("text", "code", "message"),
    [
        ("", 2, "no statements"),
        ("%a = FOO i32 1\n%out = SINK void %a\n", 2, "unknown op 'FOO'"),
        ("%a = CONST i32 1.5\n%out = SINK void %a\n", 3, "error:"),
    ],
    ids=["empty", "parse-error", "verify-error"],
)
@pytest.mark.parametrize("command", ["run", "render"])
def test_a_bad_program_gets_its_own_exit_code(
    command: str, text: str, code: int, message: str, no_driver, tmp_path, capsys
) -> None:
    path = tmp_path / "p.uir"
    path.write_text(text)
    got, out, err = uir([command, "--backend", "cuda", str(path)], capsys)
    assert (got, out) == (code, "")
    assert err.startswith(f"{path}:1: error:") and message in err
    assert "not available" not in err and no_driver == []


def test_run_of_a_good_program_says_the_backend_is_unavailable(no_driver, capsys) -> None:
    code, out, err = uir(["run", "--backend", "cuda", str(ADD)], capsys)
    assert (code, out) == (4, "")
    assert err == f"{ADD}: error: backend 'cuda' is not available here: {WHY}\n"
    assert no_driver == []

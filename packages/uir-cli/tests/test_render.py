"""`uir test --render`: a compiler's C compiled against the ABI of the program, run, and run
again under the sanitizers (spec/uir-week2-c.md section 4)."""

from __future__ import annotations

import json
import shlex
import shutil
import sys
from pathlib import Path

import pytest

from uir.cli.grading.isolation import SANDBOX_PATH, find_bwrap, find_identity
from uir.cli.main import main

RENDERER = Path(__file__).parent / "fixtures" / "renderers" / "renderer.py"
# A --compiler runs in the sandbox, which has the system's Python, not this installation's.
PYTHON = shutil.which("python3", path=SANDBOX_PATH) or sys.executable
WEEK2 = Path(__file__).resolve().parents[3] / "suites" / "week2"


def grade(
    tmp_path: Path, compiler: str | None, *tests: Path, options: tuple[str, ...] = ()
) -> list[dict[str, object]]:
    report = tmp_path / "report.json"
    argv = ["test", *map(str, tests), "--render", "--json", str(report), "-j", "2", *options]
    main([*argv, "--compiler", compiler] if compiler else argv)
    return json.loads(report.read_text())["tests"]


@pytest.fixture
def seven(tmp_path: Path) -> Path:
    """A program whose one output is the i32 7: `void uir_program(int32_t *out0)`."""
    test = tmp_path / "seven.uir"
    test.write_text("# expect: 7\n%a = CONST i32 7\n%out = SINK void %a\n")
    return test


@pytest.mark.parametrize(
    ("kind", "verdict", "detail"),
    [
        ("right", "pass", ""),
        ("wrong", "fail", "line 1: expected '7', got '6'"),
        ("undefined", "undefined-behaviour", "signed integer overflow"),
        ("out-of-bounds", "undefined-behaviour", "AddressSanitizer"),
        ("garbage", "fail", "the rendered C does not compile"),
    ],
)
def test_each_renderer_gets_its_verdict(
    kind: str, verdict: str, detail: str, seven: Path, tmp_path: Path
) -> None:
    [result] = grade(tmp_path, shlex.join([PYTHON, str(RENDERER), kind]), seven)
    assert result["verdict"] == verdict
    assert detail in result["detail"]


def test_the_reference_renderer_passes_as_a_student_compiler(tmp_path: Path) -> None:
    # Loaded operands that a C compiler cannot fold: signed overflow, division by a loaded zero,
    # a program without outputs (its harness must still build under -Werror).
    names = ["alu_int_add_wrap", "alu_idiv_by_loaded_zero", "sink_empty_runs_effects_silently"]
    tests = [WEEK2 / f"{name}.uir" for name in names]
    # The reference cannot run in the sandbox (nothing of this installation is inside), so it
    # is graded unisolated here: what is checked is its C.
    reference = shlex.join([sys.executable, "-m", "uir.cli.main"])
    results = grade(tmp_path, reference, *tests, options=("--no-isolation",))
    assert [r["verdict"] for r in results] == ["pass"] * len(tests)


def test_a_test_expecting_an_error_is_judged_on_the_render_exit_code(tmp_path: Path) -> None:
    test = tmp_path / "bad.uir"
    test.write_text("# expect-exit: 3\n%a = CONST i32 7\n%c = ADD i32 %a\n%out = SINK void %c\n")
    [result] = grade(tmp_path, None, test)  # the reference, `uir render`
    assert result["verdict"] == "pass"
    assert result["actual_exit"] == 3


def test_the_rendered_c_sees_nothing_of_the_grader(
    tmp_path: Path, seven: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Issue 28: the checker ran in the sandbox as this installation's Python, so the C it ran
    # saw the installation and could run the reference. Now the C is built and run by a shell
    # script, and the installation (here: the uir package the grader imports) is not inside.
    import uir.cli

    monkeypatch.setenv("HOSTILE_PATH", uir.cli.__file__)
    compiler = shlex.join([PYTHON, str(RENDERER), "spy"])
    [result] = grade(tmp_path, compiler, seven, options=("--env", "HOSTILE_PATH"))
    [unisolated] = grade(
        tmp_path, compiler, seven, options=("--env", "HOSTILE_PATH", "--no-isolation")
    )
    assert unisolated["verdict"] == "pass"  # the spy works where nothing hides the grader
    if find_bwrap(find_identity()) is not None:
        assert (result["verdict"], result["detail"]) == ("fail", "line 1: expected '7', got '6'")

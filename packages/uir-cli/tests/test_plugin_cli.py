"""`uir -p MODULE` as a user types it: the real `uir` script, run in a directory holding the
module, with nothing added to sys.path or PYTHONPATH."""

import os
import subprocess
import sys
from pathlib import Path

UIR = str(Path(sys.executable).with_name("uir"))
ADD = "%a = CONST i32 2\n%b = CONST i32 3\n%c = ADD i32 %a %b\n%out = SINK void %c\n"

NEGATE = """
from uir.core.ops import Op
from uir.core.plugins import Pass, hookimpl


def negate_outputs(sink):
    return sink.replace(src=tuple(s.replace(op=Op.NEG, src=(s,), arg=None) for s in sink.src))


@hookimpl
def uir_passes():
    return [Pass("negate", "lower", "negates every output (a test plugin)", negate_outputs)]
"""

# A third-party pass that turns the i32 output into CONST f32 1.5: a valid program, but not one
# that prints what the original prints.
TO_FLOAT = """
from uir.core.dtypes import F32
from uir.core.ops import Op
from uir.core.plugins import Pass, hookimpl
from uir.core.uop import UOp


@hookimpl
def uir_passes():
    return [Pass("tofloat", "lower", "breaks the program", lambda sink: sink.replace(
        src=(UOp(Op.CONST, F32, (), 1.5),)))]
"""


def uir(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    return subprocess.run(
        [UIR, *args], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )


def test_the_readme_example_finds_a_module_in_the_current_directory(tmp_path):
    (tmp_path / "mymodule.py").write_text(NEGATE)
    (tmp_path / "p.uir").write_text(ADD)
    listed = uir(tmp_path, "plugins", "-p", "mymodule")
    assert listed.returncode == 0, listed.stderr
    assert "negate" in listed.stdout and "[mymodule]" in listed.stdout
    for args, out in (
        (["-p", "mymodule", "run", "p.uir"], "-5\n"),  # the README's order
        (["run", "-p", "mymodule", "p.uir"], "-5\n"),
        (["run", "-p", "mymodule", "--no-opt", "p.uir"], "5\n"),
        (["run", "-p", "mymodule", "--skip", "negate", "p.uir"], "5\n"),
    ):
        done = uir(tmp_path, *args)
        assert (done.returncode, done.stdout) == (0, out), done.stderr


def test_a_pass_that_changes_an_output_type_is_exit_4_naming_it(tmp_path):
    (tmp_path / "tofloat.py").write_text(TO_FLOAT)
    (tmp_path / "p.uir").write_text(ADD)
    for command in ("run", "opt"):
        done = uir(tmp_path, "-p", "tofloat", command, "p.uir")
        assert done.returncode == 4
        assert done.stdout == ""
        assert done.stderr.startswith("p.uir: error: pass 'tofloat' changed the program's outputs")
    done = uir(tmp_path, "-p", "tofloat", "run", "--skip", "tofloat", "p.uir")
    assert (done.returncode, done.stdout) == (0, "5\n")


def test_uir_test_finds_a_plugin_module_in_the_directory_it_runs_in(tmp_path):
    # The reference runs each test in a scratch directory; `-p mymodule` still means the
    # mymodule.py of the directory `uir test` runs in. The negating pass turns 2 + 3 into -5,
    # so the test passes only if the plugin was loaded.
    (tmp_path / "mymodule.py").write_text(NEGATE)
    (tmp_path / "negated.uir").write_text("# expect: -5\n" + ADD)
    for args in (["test", "-p", "mymodule"], ["-p", "mymodule", "test", "--no-fork-server"]):
        done = uir(tmp_path, *args, "negated.uir")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "1 of 1 passed" in done.stdout


def test_uir_mutants_finds_a_plugin_module_in_the_directory_it_runs_in(tmp_path):
    # As for `uir test`: every copy of the sources runs the suite in a scratch directory, and
    # `-p mymodule` is the mymodule.py of the directory `uir mutants` runs in. Unchanged, the
    # negated 2 + 3 is -5 (the baseline passes only with the plugin loaded); with ADD
    # subtracting it is 1, so the bug is caught.
    root = Path(__file__).resolve().parents[3]
    (tmp_path / "mymodule.py").write_text(NEGATE)
    (tmp_path / "suite").mkdir()
    (tmp_path / "suite" / "negated.uir").write_text("# expect: -5\n" + ADD)
    (tmp_path / "suite" / "mutants.toml").write_text(
        '[[mutant]]\nname = "add-subtracts"\ndescription = ""\n'
        'file = "packages/uir-core/src/uir/core/semantics.py"\n'
        "find = '    Op.ADD: _number(np.add),'\nreplace = '    Op.ADD: _number(np.subtract),'\n"
    )
    for args in (["mutants", "-p", "mymodule"], ["-p", "mymodule", "mutants", "--no-fork-server"]):
        done = uir(tmp_path, *args, "--root", str(root), "suite")
        assert done.returncode == 0, done.stdout + done.stderr
        assert "caught" in done.stderr and "does not pass" not in done.stdout

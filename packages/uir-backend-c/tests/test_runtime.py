"""Where the compiled code's memory lives and what happens when the code crashes.

Arrays too big for the stack go on the heap (render.STACK_BYTES), and the code runs in a forked
child (runtime.run_isolated): a crash becomes a BackendError naming the signal, never the death of
the process that ran it.
"""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from uir.backend.c import plugin, render
from uir.backend.c.plugin import CBackend, compile_many, load_source
from uir.cli.main import main
from uir.core import BackendError, parse, verify
from uir.core.interpret import evaluate
from uir.core.output import format_value
from uir.testing.backends import scheduled

ROOT = Path(__file__).resolve().parents[3]

pytestmark = pytest.mark.skipif(not CBackend().available()[0], reason="no C compiler")

# A 16 MiB LOCAL (4 Mi i32), twice the usual 8 MiB stack, written and read at an index loaded
# from a buffer, so that no C compiler can fold the array away.
BIG_LOCAL = """\
%l = LOCAL i32[4194304] 0
%o = BUFFER i32[2] 0
%init = CONST i32[1] (4194303)
%ib = BUFFER i32[1] %init 1
%z = CONST i32 0
%one = CONST i32 1
%mask = CONST i32 4194303
%pi = INDEX i32 %ib %z
%raw = LOAD i32 %pi
%last = AND i32 %raw %mask
%a = CONST i32 7
%b = CONST i32 3
%m = MUL i32 %a %b
%pl = INDEX i32 %l %last
%s1 = STORE void %pl %m
%l1 = AFTER i32[4194304] %l %s1
%ql = INDEX i32 %l1 %last
%v = LOAD i32 %ql
%q0 = INDEX i32 %l1 %z
%v0 = LOAD i32 %q0
%po = INDEX i32 %o %one
%s2 = STORE void %po %v
%o1 = AFTER i32[2] %o %s2
%out = SINK void %o1 %v0
"""


def program(text: str):
    p = parse(text, "t.uir")
    verify(p)
    return p.sink


def printed(values, sink) -> list[str]:
    return [format_value(v, s.dtype) for v, s in zip(values, sink.src, strict=True)]


def test_a_16_mib_local_runs_and_starts_zeroed():
    # 4194303 & 4194303 = 4194303, the last element: it holds 7 * 3 = 21, copied to output
    # element 1; element 0 of the LOCAL was never written, so it is 0 (zeroed at kernel start).
    sink = program(BIG_LOCAL)
    assert "uir_alloc(4194304" in CBackend().render(scheduled(sink))
    assert printed(CBackend().compile(scheduled(sink)).run(), sink) == ["0 21", "0"]


def runnable_suite_programs() -> list[Path]:
    found = []
    for path in sorted((ROOT / "suites").glob("week[12]/*.uir")):
        text = path.read_text()
        if "# expect-exit: " not in text.replace("# expect-exit: 0", ""):
            found.append(path)
    return found


def test_arrays_on_the_heap_give_the_interpreters_output(monkeypatch):
    # With no stack room every array the C declares (LOCALs, STACKs) goes on the heap: the other
    # path of each declaration.
    monkeypatch.setattr(render, "STACK_BYTES", 0)
    files, sinks, texts = [], [], []
    for path in runnable_suite_programs():
        sink = program(path.read_text())
        text = CBackend().render(scheduled(sink))
        if "uir_alloc(" in text:
            files.append(path.name)
            sinks.append(sink)
            texts.append(text)
    # a shaped result, which rangeify writes in a loop into its output: (1, 2, -3) squared is
    # (1, 4, 9)
    shaped = program(
        "%a = CONST i32[3] (1, 2, -3)\n%b = MUL i32[3] %a %a\n%k = CONST i32 1\n"
        "%e = INDEX i32 %b %k\n%o = SINK void %b %e\n"
    )
    assert printed(CBackend().compile(scheduled(shaped)).run(), shaped) == ["1 4 9", "4"]
    files.append("shaped")
    sinks.append(shaped)
    texts.append(CBackend().render(scheduled(shaped)))
    every = "\n".join(texts)
    # a LOCAL and a STACK filled element by element, on the heap
    assert re.search(r"\*local\d+ = uir_alloc", every)
    assert re.search(r"\bv\d+\[0\] = ", every)
    wrong = [
        name
        for name, sink, compiled in zip(
            files, sinks, compile_many([scheduled(s) for s in sinks]), strict=True
        )
        if printed(compiled.run(), sink) != printed(evaluate(sink), sink)
    ]
    assert wrong == []


ONE_OUTPUT = "%k = CONST i32 5\n%o = SINK void %k\n"


def crashing(body: str) -> str:
    """A student's C for ONE_OUTPUT that does `body` instead of writing 5."""
    return (
        "#include <signal.h>\n#include <stdint.h>\n#include <stdlib.h>\n"
        f"void uir_program(int32_t *out0) {{ (void)out0; {body} }}\n"
    )


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ("raise(SIGSEGV);", "killed by SIGSEGV"),
        ("abort();", "killed by SIGABRT"),
        ("exit(3);", "exited with status 3"),
    ],
)
def test_a_crash_of_the_compiled_code_is_a_backend_error(body, message):
    sink = program(ONE_OUTPUT)
    with pytest.raises(BackendError, match=message):
        load_source(crashing(body), sink).run()
    # this process lives on, and runs the next program
    assert printed(load_source(crashing("out0[0] = 5;"), sink).run(), sink) == ["5"]


def test_uir_run_reports_a_crash_as_exit_4(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(plugin, "render_c", lambda sink: crashing("raise(SIGSEGV);"))
    path = tmp_path / "crash.uir"
    path.write_text(ONE_OUTPUT)
    assert main(["run", "--backend", "c", str(path)]) == 4
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.startswith(f"{path}: error: the compiled program was killed by SIGSEGV")


# Two nested loops of 2**31 - 1 iterations each, a multiply-add carried across them (no closed
# form a C compiler could find): the program runs far longer than any test waits.
ENDLESS = """\
%o    = BUFFER i32[1] 0
%n    = CONST i32 2147483647
%z    = CONST i32 0
%three = CONST i32 3
%a0   = INDEX i32 %o %z
%init = STORE void %a0 %z
%i    = RANGE i32 %n 0
%j    = RANGE i32 %n 1
%oK   = AFTER i32[1] %o %init %i %j
%ak   = INDEX i32 %oK %z
%old  = LOAD i32 %ak
%m    = MUL i32 %old %three
%new  = ADD i32 %m %j
%upd  = STORE void %ak %new
%done = END void %upd %i %j
%o1   = AFTER i32[1] %o %done
%out  = SINK void %o1
"""


def _forked_children(pid: int) -> list[int]:
    """The children of `pid` that are forks of it (the same command line): not the C compiler."""
    proc = Path(f"/proc/{pid}")
    try:
        cmdline = (proc / "cmdline").read_bytes()
        children = (proc / "task" / str(pid) / "children").read_text().split()
    except OSError:  # it has exited
        return []
    forks = []
    for child in map(int, children):
        try:
            if Path(f"/proc/{child}/cmdline").read_bytes() == cmdline:
                forks.append(child)
        except OSError:
            continue
    return forks


def _alive(pid: int) -> bool:
    """Whether `pid` still runs (a zombie, killed and not yet reaped, does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def _wait_for(condition, bound_s: float) -> bool:
    """Poll `condition` until it holds or a generous `bound_s` passes (a bound, not a timing)."""
    deadline = time.monotonic() + bound_s
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return condition()


@pytest.mark.skipif(not Path("/proc/self/task").is_dir(), reason="needs Linux /proc")
def test_sigterm_to_uir_run_takes_the_running_child_down(tmp_path):
    source = tmp_path / "endless.uir"
    source.write_text(ENDLESS)
    command = [sys.executable, "-m", "uir.cli.main", "run", "--backend", "c", str(source)]
    uir = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        forks: list[int] = []
        assert _wait_for(lambda: forks.extend(_forked_children(uir.pid)) or forks, 120), (
            "the compiled program never started"
        )
        uir.send_signal(signal.SIGTERM)
        uir.wait(timeout=60)
        assert _wait_for(lambda: not any(map(_alive, forks)), 60), "the child outlived uir"
    finally:
        uir.kill()
        uir.wait()
        for child in forks:
            if _alive(child):
                os.kill(child, signal.SIGKILL)

"""The render grader's second step (spec/uir-week2-c.md section 4, spec/grading.md section 3):
run the C that a compiler's `render` printed for a program, under the ABI derived from the
program, and again under the sanitizers.

It runs as its own process, `python -m uir.cli.grading.render_check PROGRAM.uir PROGRAM.c`, in
the same sandbox and under the same limits as the compiler: the C is as untrusted as the
compiler that wrote it. It prints the outputs as `uir run` does and exits 0, or exits with one
of the codes below, its reason on standard error. `judge_render` turns that into a verdict.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from .judge import Judgement, Verdict, judge, output_lines
from .sandbox import Outcome, RunStatus
from .testfile import TestFile

# The checker's exit codes, apart from 0 and uir's own (1-4: the program itself is bad).
NOT_C = 20  # the C does not compile, or does not define the entry point
NOT_CLEAN = 21  # it does not build under the warnings-as-errors sanitizer flags
UNDEFINED = 22  # the sanitized run reported undefined behaviour or a bad memory access
REASONS = {
    NOT_C: "the rendered C does not compile",
    NOT_CLEAN: "the rendered C does not build with -Wall -Wextra -Werror and the sanitizers",
}
# Where the sanitizer's report is cut in the verdict's detail.
DETAIL_CHARS = 300


def judge_render(test: TestFile, outcome: Outcome) -> Judgement:
    """The verdict on one run of the checker on a compiler's C for `test`."""
    if outcome.status is RunStatus.EXITED and outcome.exit_code in (NOT_C, NOT_CLEAN, UNDEFINED):
        message = " ".join(outcome.stderr.decode("utf-8", "replace").split())[:DETAIL_CHARS]
        actual = output_lines(outcome.stdout)
        if outcome.exit_code == UNDEFINED:
            return Judgement(Verdict.UNDEFINED, f"the sanitizers report: {message}", actual)
        return Judgement(Verdict.FAIL, f"{REASONS[outcome.exit_code]}: {message}", actual)
    return judge(test, outcome)


def _sanitized(source: str, sink: object, workdir: Path) -> tuple[int, str]:
    """Build `source` with the harness `main` under the sanitizer flags and run it: (exit code
    to report, message), 0 when it ran clean and printed what the normal build computed."""
    from uir.backend.c.abi import ENTRY, layout
    from uir.backend.c.harness import SANITIZE, harness
    from uir.backend.c.toolchain import compiler

    cc = compiler()
    assert cc is not None  # checked before the normal build
    unit, main, exe = workdir / "program.c", workdir / "main.c", workdir / "program"
    unit.write_text(source)
    main.write_text(harness([(ENTRY, layout(sink))]))  # type: ignore[arg-type]
    built = subprocess.run(
        [*cc, *SANITIZE, str(unit), str(main), "-o", str(exe), "-lm"],
        capture_output=True,
        text=True,
        check=False,
    )
    if built.returncode != 0:
        return NOT_CLEAN, built.stderr[-4000:]
    # Leak checking needs ptrace, which a sandbox may refuse; a leak is not undefined behaviour.
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0")
    ran = subprocess.run([str(exe)], capture_output=True, text=True, check=False, env=env)
    if ran.returncode != 0 or ran.stderr:
        return UNDEFINED, ran.stderr[-4000:] or f"exit status {ran.returncode}"
    return 0, ""


def main(program_path: str, c_path: str) -> int:
    from uir.backend.c.plugin import load_source
    from uir.backend.c.toolchain import compiler
    from uir.core import UIRError
    from uir.core.calls import inline_calls
    from uir.core.errors import BackendError
    from uir.core.output import format_value

    from ..source import load_program, read_source

    try:
        program = load_program(read_source(program_path))
    except UIRError as error:
        print(error.render(program_path), file=sys.stderr)
        return error.exit_code
    source = Path(c_path).read_text(encoding="utf-8", errors="replace")
    if compiler() is None:
        print("no C compiler found (set $CC or install cc)", file=sys.stderr)
        return 4
    try:
        outputs = load_source(source, program.sink).run()
    except (BackendError, AttributeError, OSError) as exc:  # AttributeError: no entry point
        print(exc, file=sys.stderr)
        return NOT_C
    sys.stdout.write(
        "".join(
            format_value(v, s.dtype) + "\n" for v, s in zip(outputs, program.sink.src, strict=True)
        )
    )
    sys.stdout.flush()
    with tempfile.TemporaryDirectory() as workdir:
        code, message = _sanitized(source, inline_calls(program.sink), Path(workdir))
    if code:
        print(message, file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))

"""The render grader's second step (spec/uir-week2-c.md section 4, spec/grading.md section 3.3):
run the C that a compiler's `render` printed for a program, under the ABI derived from the
program, and again under the sanitizers.

The grader derives a `main` from the program (uir.backend.c's public API: the buffers' starting
contents, the call, every output dumped as hex) and writes it beside the C with CHECK_SCRIPT, a
shell script that builds and runs both: it runs in the same sandbox and under the same limits as
the compiler, with nothing of the grader's installation inside, since the C is as untrusted as
the compiler that wrote it (and could otherwise run the reference). The script prints the
normal build's dump and exits 0, or exits with one of the codes below, its reason on standard
error; `judge_render` turns that into a verdict and the dump into output lines.
"""

from __future__ import annotations

import dataclasses
import shlex

from uir.backend.c import (
    ENTRY,
    FLAGS,
    LIBS,
    SANITIZE,
    compiler,
    harness_main,
    layout,
    read_results,
)
from uir.core import UIRError, parse, verify
from uir.core.calls import inline_calls
from uir.core.output import format_value
from uir.core.uop import UOp

from .judge import Judgement, Verdict, judge, output_lines
from .sandbox import Outcome, RunStatus
from .testfile import TestFile

# The checker's exit codes, apart from 0 and a signal of the normal build's run.
NOT_C = 20  # the C does not compile, or does not define the entry point
NOT_CLEAN = 21  # it does not build under the warnings-as-errors sanitizer flags
UNDEFINED = 22  # the sanitized run reported undefined behaviour or a bad memory access
REASONS = {
    NOT_C: "the rendered C does not compile",
    NOT_CLEAN: "the rendered C does not build with -Wall -Wextra -Werror and the sanitizers",
}
# Where the sanitizer's report is cut in the verdict's detail.
DETAIL_CHARS = 300
SCRIPT = "check.sh"
# The normal build is the backend's (toolchain.FLAGS) as an executable, not a shared library.
PLAIN_FLAGS = tuple(f for f in FLAGS if f not in ("-fPIC", "-shared"))
# $1: the C compiler's command. A run killed by a signal kills the script with it, so that the
# grader sees a crash; leak checking needs ptrace, which a sandbox refuses (a leak is no UB).
CHECK_SCRIPT = """\
set -u
{cc} {plain} program.c main.c -o plain {libs} 2> plain.err || {{ cat plain.err >&2; exit {not_c}; }}
./plain > plain.out
code=$?
if [ "$code" -gt 128 ]; then kill -s "$(kill -l "$code")" $$; fi
if [ "$code" -ne 0 ]; then exit "$code"; fi
{cc} {sanitize} program.c main.c -o sanitized {libs} 2> sanitized.err || {{
    cat sanitized.err >&2; exit {not_clean}; }}
ASAN_OPTIONS=detect_leaks=0 ./sanitized > /dev/null 2> sanitized.err
code=$?
if [ "$code" -ne 0 ] || [ -s sanitized.err ]; then
    cat sanitized.err >&2; echo "exit status $code" >&2; exit {undefined}
fi
cat plain.out
"""


class CannotCheck(Exception):
    """The grader cannot check rendered C here: no C compiler, or a program that does not load."""


def _sink(test: TestFile) -> UOp:
    try:
        program = parse(test.program, test.path)
        verify(program)
    except UIRError as error:
        raise CannotCheck(f"the program does not load: {error.render(test.path)}") from None
    return inline_calls(program.sink)


def checker_files(test: TestFile, c_source: bytes) -> dict[str, bytes]:
    """The files of the check of `c_source` rendered for `test`: the C, the `main` derived from
    the program, and CHECK_SCRIPT. Raises CannotCheck."""
    cc = compiler()
    if cc is None:
        raise CannotCheck("no C compiler found (set $CC or install cc)")
    script = CHECK_SCRIPT.format(
        cc=shlex.join(cc),
        plain=shlex.join(PLAIN_FLAGS),
        sanitize=shlex.join(SANITIZE),
        libs=shlex.join(LIBS),
        not_c=NOT_C,
        not_clean=NOT_CLEAN,
        undefined=UNDEFINED,
    )
    main = harness_main([(ENTRY, layout(_sink(test)))])
    return {"program.c": c_source, "main.c": main.encode(), SCRIPT: script.encode()}


class RenderChecker:
    """The render grader's check, as harness.RenderCheck: CHECK_SCRIPT run by /bin/sh."""

    argv = ("/bin/sh", SCRIPT)

    def prepare(self, test: TestFile, c_source: bytes) -> dict[str, bytes] | Judgement:
        try:
            return checker_files(test, c_source)
        except CannotCheck as exc:
            return Judgement(Verdict.FAIL, f"the rendered C cannot be checked: {exc}", ())

    def judge(self, test: TestFile, outcome: Outcome) -> Judgement:
        return judge_render(test, outcome)


def _outputs(test: TestFile, dump: bytes) -> bytes:
    """The lines `uir run` would print for the outputs the harness dumped."""
    sink = _sink(test)
    [values] = read_results(dump.decode("utf-8", errors="replace"), [sink])
    lines = [format_value(v, s.dtype) for v, s in zip(values, sink.src, strict=True)]
    return "".join(line + "\n" for line in lines).encode()


def judge_render(test: TestFile, outcome: Outcome) -> Judgement:
    """The verdict on one run of CHECK_SCRIPT on a compiler's C for `test`."""
    if outcome.status is RunStatus.EXITED and outcome.exit_code in (NOT_C, NOT_CLEAN, UNDEFINED):
        message = " ".join(outcome.stderr.decode("utf-8", "replace").split())[:DETAIL_CHARS]
        if outcome.exit_code == UNDEFINED:
            return Judgement(Verdict.UNDEFINED, f"the sanitizers report: {message}", ())
        return Judgement(Verdict.FAIL, f"{REASONS[outcome.exit_code]}: {message}", ())
    if outcome.status is RunStatus.EXITED and outcome.exit_code == 0:
        try:
            outcome = dataclasses.replace(outcome, stdout=_outputs(test, outcome.stdout))
        except (ValueError, IndexError) as exc:  # the C wrote to standard output itself
            detail = f"the rendered C's output is not the harness's: {exc}"
            return Judgement(Verdict.FAIL, detail, output_lines(outcome.stdout))
    return judge(test, outcome)

"""Running tests through a compiler under test, each in a fresh scratch directory.

The compiler never sees a test file: it gets a copy of the program with the directives removed
(testfile.py), alone in a new temporary directory that is its working directory and its TMPDIR,
and it runs under the limits of sandbox.py, isolated as its launcher says (isolation.py). The
contract is `CMD run FILE` (uir.md section 11), or `CMD render FILE` for the render grader, whose
C is then checked (render_check.py) in a second scratch directory, in the same sandbox.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
import shutil
import stat
import sys
import tempfile
import threading
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from .isolation import Isolation, compiler_environment
from .judge import Judgement, Verdict, judge
from .limits import Limits
from .sandbox import POLL_S, ExecLauncher, Launcher, Outcome, RunStatus, run_limited
from .testfile import NO_TOLERANCE, TestFile, TestFileError, Tolerance, read_test


class RenderCheck(Protocol):
    """The render grader's second step (render_check.py): `argv` run in a scratch directory of
    the files `prepare` gives, with the launcher and sandbox of the compiler."""

    argv: tuple[str, ...]

    def prepare(self, test: TestFile, c_source: bytes) -> dict[str, bytes] | Judgement:
        """The files of the check of the C `c_source` rendered for `test`, or the judgement
        when it cannot be checked."""
        ...

    def judge(self, test: TestFile, outcome: Outcome) -> Judgement:
        """The verdict on the check's run."""
        ...


@dataclass(frozen=True)
class Compiler:
    """How to run the compiler under test: `argv + run_args + [FILE]` with FILE in its cwd."""

    argv: tuple[str, ...]
    run_args: tuple[str, ...] = ("run",)
    env: Mapping[str, str] | None = None  # None: the environment `uir test` runs in
    launcher: Launcher = field(default_factory=ExecLauncher)
    # The render grader: the compiler's output is C, which this check runs with the same
    # launcher; None to judge the output itself.
    render_check: RenderCheck | None = None

    @property
    def command(self) -> str:
        """The command line as a shell would take it, FILE left out."""
        return shlex.join([*self.argv, *self.run_args])

    def confined(self, isolation: Isolation, passed_env: Sequence[str] = ()) -> Compiler:
        """This compiler run in `isolation`; in a bwrap sandbox with the plain environment of an
        isolated compiler and `passed_env` (`--env NAME[=VALUE]`), spec/grading.md section 3.1."""
        env = compiler_environment(os.environ, passed_env) if isolation.bwrap else None
        return dataclasses.replace(self, env=env, launcher=ExecLauncher(isolation))


def reference_run_args(
    backend: str | None = None, plugins: Sequence[str] = (), command: str = "run"
) -> tuple[str, ...]:
    """`run` (or `render`), and the options that pick a backend and load plugin modules."""
    words = [command]
    for module in plugins:
        words += ["-p", module]
    if backend:
        words += ["--backend", backend]
    return tuple(words)


def reference_environment(
    plugins: Sequence[str], sources: Sequence[str] = ()
) -> dict[str, str] | None:
    """The reference's environment: PYTHONPATH led by `sources` (the source trees of a copy that
    `uir mutants` runs), then, when it loads `-p` modules, the directory this command runs in,
    then the PYTHONPATH we run with. The reference runs in a scratch directory, and `-p mod`
    must still mean the `mod.py` here, as it does for `uir run -p mod`. None (the environment as
    it is) when there is nothing to add."""
    first = [*sources, *([os.getcwd()] if plugins else [])]
    if not first:
        return None
    path = [*first, os.environ.get("PYTHONPATH", "")]
    return dict(os.environ, PYTHONPATH=os.pathsep.join(path).rstrip(os.pathsep))


def reference_compiler(
    backend: str | None = None, plugins: Sequence[str] = (), command: str = "run"
) -> Compiler:
    """This installation of `uir`, run as `python -m uir.cli.main run [--backend NAME] FILE`."""
    run_args = reference_run_args(backend, plugins, command)
    return Compiler(
        (sys.executable, "-m", "uir.cli.main"), run_args, reference_environment(plugins)
    )


def student_compiler(command: str, base: str | None = None) -> Compiler:
    """A compiler given as a command line (`--compiler CMD`), shell-split.

    The compiler runs in a scratch directory, so relative paths are resolved here, against
    `base` (by default the directory `uir test` runs in): the program when its name has a `/` (a
    bare name stays bare, looked up along the PATH the compiler runs with: inside the sandbox,
    the system's), and every later argument that names an existing file or directory (so that
    `python3 main.py` works).
    """
    argv = shlex.split(command)
    if not argv:
        raise ValueError("the compiler command is empty")
    base = os.path.abspath(base or os.curdir)
    program = argv[0]
    if os.sep in program:
        argv[0] = os.path.normpath(os.path.join(base, program))
    for i, word in enumerate(argv[1:], start=1):
        path = os.path.normpath(os.path.join(base, word))
        if not word.startswith("-") and not os.path.isabs(word) and os.path.exists(path):
            argv[i] = path
    return Compiler(tuple(argv))


@dataclass(frozen=True)
class TestResult:
    __test__ = False  # not a pytest test class

    path: str
    verdict: Verdict
    detail: str
    expected_exit: int | None  # None for a bad test
    actual_exit: int | None  # None unless the compiler exited by itself
    signal: int | None
    expected_lines: tuple[str, ...]
    actual_lines: tuple[str, ...]
    tolerance_ulp: int | None
    stderr: str  # the start of the compiler's standard error
    duration_s: float
    tolerance: Tolerance = NO_TOLERANCE  # tolerance_ulp, or a rel/abs one

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.PASS


def _remove_tree(path: str) -> None:
    """Remove a scratch directory, even one whose permissions the compiler changed."""

    def retry(function: Callable[[str], object], name: str, *_: object) -> None:
        try:
            os.chmod(os.path.dirname(name), stat.S_IRWXU)
            if os.path.isdir(name) and not os.path.islink(name):
                os.chmod(name, stat.S_IRWXU)
            function(name)
        except OSError:
            pass  # left for the system's temporary-file cleaner

    if sys.version_info >= (3, 12):
        shutil.rmtree(path, onexc=retry)
    else:
        shutil.rmtree(path, onerror=retry)


def bad_test_result(path: str, error: TestFileError) -> TestResult:
    """The result of a test file that could not be read as a test: nothing ran."""
    return TestResult(path, Verdict.BAD_TEST, str(error), None, None, None, (), (), None, "", 0.0)


def read_or_bad(path: str) -> TestFile | TestResult:
    """The test at `path`, or the bad-test result of a file that is not one."""
    try:
        return read_test(path)
    except TestFileError as error:
        return bad_test_result(path, error)


def run_test(path: str, compiler: Compiler, limits: Limits) -> TestResult:
    """Run one test file through `compiler` and judge it. Never raises for the compiler's sake."""
    test = read_or_bad(path)
    return test if isinstance(test, TestResult) else run_parsed_test(test, compiler, limits)


def file_argument(name: str) -> str:
    """How the compiler is given the file `name` of its working directory: a name that looks
    like an option (`--help.uir`) goes as `./NAME`, so no option parser takes it for one."""
    return f"./{name}" if name.startswith("-") else name


def _run_in_scratch(
    compiler: Compiler,
    argv: Sequence[str],
    files: Mapping[str, bytes],
    limits: Limits,
    stop: threading.Event | None,
) -> Outcome:
    """Run `argv` in a new scratch directory holding `files`, removed afterwards."""
    scratch = tempfile.mkdtemp(prefix="uir-test-")
    try:
        for name, data in files.items():
            Path(scratch, name).write_bytes(data)
        env = dict(os.environ if compiler.env is None else compiler.env)
        env["TMPDIR"] = scratch  # the compiler's temporary files go where they are cleaned up
        env.setdefault("HOME", scratch)  # an isolated compiler has no other home
        env["UIR_CACHE_DIR"] = os.path.join(scratch, "cache")  # the C backend's compile cache
        return run_limited(compiler.launcher, argv, scratch, env, limits, stop)
    finally:
        _remove_tree(scratch)


def run_parsed_test(
    test: TestFile, compiler: Compiler, limits: Limits, stop: threading.Event | None = None
) -> TestResult | None:
    """Run one parsed test and judge it; None when `stop` was set while it ran."""
    name = Path(test.path).name
    program = {name: test.program_bytes}
    argv = [*compiler.argv, *compiler.run_args, file_argument(name)]
    outcome = _run_in_scratch(compiler, argv, program, limits, stop)
    if outcome.status is RunStatus.STOPPED:
        return None
    duration = outcome.duration_s
    rendered = outcome.status is RunStatus.EXITED and outcome.exit_code == 0
    check = compiler.render_check
    if check is not None and rendered and test.expected_exit == 0:
        files = check.prepare(test, outcome.stdout)
        if isinstance(files, Judgement):
            judgement = files
        else:
            checked = dataclasses.replace(limits, address_space=False)
            outcome = _run_in_scratch(compiler, check.argv, files, checked, stop)
            if outcome.status is RunStatus.STOPPED:
                return None
            duration += outcome.duration_s
            judgement = check.judge(test, outcome)
    else:
        judgement = judge(test, outcome)
    return TestResult(
        path=test.path,
        verdict=judgement.verdict,
        detail=judgement.detail,
        expected_exit=test.expected_exit,
        actual_exit=outcome.exit_code,
        signal=outcome.signal,
        expected_lines=test.expected_lines,
        actual_lines=judgement.actual_lines,
        tolerance_ulp=test.tolerance_ulp,
        tolerance=test.tolerance,
        stderr=outcome.stderr.decode("utf-8", errors="replace"),
        duration_s=duration,
    )


def run_tests(
    paths: Sequence[str],
    compiler: Compiler,
    limits: Limits,
    jobs: int,
    on_result: Callable[[TestResult], None] | None = None,
    stop: threading.Event | None = None,
) -> list[TestResult]:
    """Run every test, `jobs` at a time; the results come back in the order of `paths`.

    Every test is read before the first runs, so nothing a compiler does to the files can
    change a later test. `on_result` is called in this thread as each test finishes (for
    progress). Once `stop` is set, running tests are killed and no more start: the results are
    those of the tests that finished.
    """
    stop = stop or threading.Event()
    # Set on the way out to kill what still runs; the caller's `stop` is left as it was, so
    # that it can run more tests after these.
    halt = threading.Event()
    tests = [read_or_bad(p) for p in paths]
    results: dict[str, TestResult] = {}
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))
    try:
        pending = set()
        for test in tests:
            if isinstance(test, TestResult):
                results[test.path] = test
                if on_result is not None:
                    on_result(test)
            else:
                pending.add(pool.submit(run_parsed_test, test, compiler, limits, halt))
        while pending and not stop.is_set():
            done, pending = wait(pending, timeout=POLL_S, return_when=FIRST_COMPLETED)
            for future in done:
                result = future.result()
                if result is not None:
                    results[result.path] = result
                    if on_result is not None:
                        on_result(result)
    finally:
        halt.set()  # on an interrupt or an error here: kill what runs, start nothing new
        pool.shutdown(wait=True, cancel_futures=True)
    return [results[p] for p in dict.fromkeys(paths) if p in results]

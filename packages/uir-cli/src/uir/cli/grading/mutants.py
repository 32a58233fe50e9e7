"""Planted bugs (spec/grading.md, "Planted bugs"): each is a find/replace on one source file of the
reference compiler. A run applies each bug to its own copy of the sources and runs the suite
against that copy; a bug is caught when at least one test does not pass.

The copy holds every `packages/*/src` tree of the repository, and the copy's directories go first
on PYTHONPATH: `uir` is a namespace package, so the copy's `uir.core` shadows the installed one.
"""

from __future__ import annotations

import compileall
import enum
import shutil
import sys
import tempfile
import tomllib
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from .forkserver import ForkServer
from .harness import (
    Compiler,
    TestResult,
    bad_test_result,
    reference_environment,
    run_parsed_test,
)
from .limits import Limits
from .testfile import TestFile, TestFileError, read_test

FIELDS = ("name", "description", "file", "find", "replace")
# Optional: extra options of `uir run` under which the bug is observed (e.g. --no-opt).
OPTIONAL_FIELDS = ("options",)


class MutantsFileError(Exception):
    """A mutants file that does not follow the format of spec/grading.md."""


@dataclass(frozen=True)
class Mutant:
    name: str
    description: str
    file: str  # relative to the repository root, e.g. packages/uir-core/src/uir/core/semantics.py
    find: str  # must occur exactly once in that file
    replace: str
    options: tuple[str, ...] = ()  # extra options of `uir run`, before FILE


def load_mutants(path: str | Path) -> list[Mutant]:
    """Read a mutants file: a TOML array of tables `[[mutant]]` with the keys of FIELDS, and
    perhaps those of OPTIONAL_FIELDS."""
    try:
        with open(path, "rb") as stream:
            data = tomllib.load(stream)
    except OSError as exc:
        raise MutantsFileError(f"cannot read {path}: {exc.strerror or exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise MutantsFileError(f"{path}: {exc}") from exc
    unknown = set(data) - {"mutant"}
    if unknown:
        raise MutantsFileError(f"{path}: unknown top-level keys {sorted(unknown)}")
    entries = data.get("mutant", [])
    if not isinstance(entries, list) or not entries:
        raise MutantsFileError(f"{path}: no [[mutant]] tables")
    mutants: list[Mutant] = []
    for number, entry in enumerate(entries, start=1):
        where = f"{path}: mutant {number}"
        if not isinstance(entry, dict):
            raise MutantsFileError(f"{where} is not a table")
        missing = [k for k in FIELDS if k not in entry]
        extra = sorted(set(entry) - set(FIELDS) - set(OPTIONAL_FIELDS))
        if missing or extra:
            raise MutantsFileError(f"{where}: missing keys {missing}, unknown keys {extra}")
        if not all(isinstance(entry[k], str) for k in FIELDS):
            raise MutantsFileError(f"{where}: every value must be a string")
        options = entry.get("options", [])
        if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
            raise MutantsFileError(f"{where}: 'options' must be a list of strings")
        mutant = Mutant(**{k: entry[k] for k in FIELDS}, options=tuple(options))
        if not mutant.name or any(c.isspace() for c in mutant.name):
            raise MutantsFileError(f"{where}: the name must be one word")
        if not mutant.find:
            raise MutantsFileError(f"{where} ({mutant.name}): 'find' is empty")
        if mutant.find == mutant.replace:
            raise MutantsFileError(f"{where} ({mutant.name}): 'replace' equals 'find'")
        if Path(mutant.file).is_absolute() or ".." in Path(mutant.file).parts:
            raise MutantsFileError(f"{where} ({mutant.name}): 'file' must be inside the repository")
        if any(m.name == mutant.name for m in mutants):
            raise MutantsFileError(f"{where}: a second mutant named {mutant.name}")
        mutants.append(mutant)
    return mutants


def is_repository(directory: Path) -> bool:
    return any(directory.glob("packages/*/src/uir"))


def find_repository(start: Path) -> Path | None:
    """The nearest directory at or above `start` holding `packages/*/src/uir`."""
    for directory in (start.resolve(), *start.resolve().parents):
        if is_repository(directory):
            return directory
    return None


def repository_root(suite: Path) -> Path | None:
    """Where the sources to mutate live: above the suite, else above this installed package."""
    return find_repository(suite) or find_repository(Path(__file__).parent)


def source_trees(root: Path) -> list[Path]:
    """The `packages/*/src` directories of the repository, relative to it."""
    return sorted(p.relative_to(root) for p in root.glob("packages/*/src") if p.is_dir())


def copy_sources(root: Path, destination: Path) -> None:
    """Copy every source tree under `destination`, at the same relative paths."""
    for tree in source_trees(root):
        shutil.copytree(
            root / tree, destination / tree, ignore=shutil.ignore_patterns("__pycache__")
        )


def apply_mutant(root: Path, copy: Path, mutant: Mutant) -> str | None:
    """Plant `mutant` in the copy at `copy`. Returns why it does not apply, or None."""
    if not any(Path(mutant.file).is_relative_to(tree) for tree in source_trees(root)):
        return f"{mutant.file} is not under packages/*/src"
    try:
        text = (root / mutant.file).read_text(encoding="utf-8")
    except OSError as exc:
        return f"cannot read {mutant.file}: {exc.strerror or exc}"
    count = text.count(mutant.find)
    if count != 1:
        return f"its 'find' text occurs {count} times in {mutant.file}, not once"
    (copy / mutant.file).write_text(text.replace(mutant.find, mutant.replace), encoding="utf-8")
    return None


class MutantStatus(enum.Enum):
    CAUGHT = "caught"
    NOT_CAUGHT = "not-caught"
    DOES_NOT_APPLY = "does-not-apply"


@dataclass
class MutantResult:
    mutant: Mutant
    status: MutantStatus
    reason: str = ""  # why it does not apply
    results: list[TestResult] = field(default_factory=list)

    @property
    def catching(self) -> list[TestResult]:
        return [r for r in self.results if not r.passed]


@dataclass
class MutantsRun:
    tests: list[str]
    # The suite on the unchanged sources, once for each set of `uir run` options the bugs use.
    baselines: dict[tuple[str, ...], list[TestResult]]
    mutants: list[MutantResult]
    bad_tests: list[TestResult]

    @property
    def baseline_failures(self) -> list[TestResult]:
        return [r for results in self.baselines.values() for r in results if not r.passed]

    @property
    def caught(self) -> int:
        return sum(m.status is MutantStatus.CAUGHT for m in self.mutants)

    @property
    def ok(self) -> bool:
        return (
            not self.bad_tests
            and not self.baseline_failures
            and all(m.status is MutantStatus.CAUGHT for m in self.mutants)
        )


def option_sets(mutants: Sequence[Mutant]) -> list[tuple[str, ...]]:
    """The distinct sets of `uir run` options the bugs use, no options first."""
    return list(dict.fromkeys([(), *(m.options for m in mutants)]))


class _Copy:
    """One copy of the sources (the baseline, or one planted bug) and how to run it."""

    def __init__(self, directory: Path, root: Path, fork: bool, plugins: Sequence[str]) -> None:
        self.directory = directory
        compileall.compile_dir(directory, quiet=2)  # once here, not in every run
        sources = [str(directory / tree) for tree in source_trees(root)]
        env = reference_environment(plugins, sources)
        assert env is not None  # it has the sources
        self.env = env
        self.server = ForkServer(pythonpath=self.env["PYTHONPATH"]) if fork else None

    def compiler(self, run_args: tuple[str, ...]) -> Compiler:
        if self.server is None:
            return Compiler((sys.executable, "-m", "uir.cli.main"), run_args, self.env)
        return Compiler(("uir",), run_args, self.env, self.server)

    def close(self) -> None:
        if self.server is not None:
            self.server.close()
            self.server = None
        shutil.rmtree(self.directory, ignore_errors=True)  # a hundred copies add up


@contextmanager
def _scratch() -> Iterator[Path]:
    directory = Path(tempfile.mkdtemp(prefix="uir-mutants-"))
    try:
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def run_mutants(
    root: Path,
    tests: Sequence[str],
    mutants: Sequence[Mutant],
    run_args: tuple[str, ...],
    limits: Limits,
    jobs: int,
    fork: bool = True,
    on_baseline: Callable[[TestResult], None] | None = None,
    on_mutant: Callable[[MutantResult], None] | None = None,
    plugins: Sequence[str] = (),
) -> MutantsRun:
    """Run the suite on an unchanged copy (the baseline), then on a copy per planted bug.

    Every test runs against every bug, so the report names all the tests that catch each one.
    The baseline runs once under each set of `uir run` options the bugs use; when it does not
    pass, no bug is run: a test that fails anyway would seem to catch them all. With `fork`,
    each copy's runs fork from a preloaded server (forkserver.py)
    instead of starting `python -m uir.cli.main`; the next copy's server starts while the
    current copy runs.
    """
    parsed: list[TestFile] = []
    bad: list[TestResult] = []
    for path in tests:
        try:
            parsed.append(read_test(path))
        except TestFileError as error:
            bad.append(bad_test_result(path, error))
    run = MutantsRun(list(tests), {}, [], bad)
    if bad:
        return run
    pool = ThreadPoolExecutor(max_workers=max(1, jobs))

    def run_suite(
        copy: _Copy, options: tuple[str, ...], on_result: Callable[[TestResult], None] | None
    ) -> list[TestResult]:
        compiler = copy.compiler((*run_args, *options))
        futures = [pool.submit(run_parsed_test, t, compiler, limits) for t in parsed]
        results: list[TestResult] = []
        for future in futures:
            results.append(future.result())
            if on_result is not None:
                on_result(results[-1])
        return results

    with _scratch() as scratch:
        # Every copy is made from one snapshot, so that editing the sources during a long run
        # cannot make some bugs run on other code than the others.
        snapshot = scratch / "sources"
        copy_sources(root, snapshot)
        planting = _Planting(snapshot, scratch, mutants, fork, plugins)
        upcoming = planting.prepare(None)
        copy: _Copy | None = None
        try:
            for index in [None, *range(len(mutants))]:
                result, copy = upcoming
                upcoming = (None, None)
                following = 0 if index is None else index + 1
                if following < len(mutants):
                    upcoming = planting.prepare(following)  # its server starts meanwhile
                if result is None:  # the baseline, under every set of options
                    assert copy is not None
                    for options in option_sets(mutants):
                        run.baselines[options] = run_suite(copy, options, on_baseline)
                    copy.close()
                    if run.baseline_failures:
                        break
                    continue
                if copy is not None:
                    result.results = run_suite(copy, result.mutant.options, None)
                    result.status = (
                        MutantStatus.CAUGHT if result.catching else MutantStatus.NOT_CAUGHT
                    )
                    copy.close()
                run.mutants.append(result)
                if on_mutant is not None:
                    on_mutant(result)
        finally:
            pool.shutdown(wait=True, cancel_futures=True)  # after an interrupt, start nothing new
            for pending in (upcoming[1], copy):
                if pending is not None:
                    pending.close()
    return run


class _Planting:
    """Makes the copies: the sources, with one bug planted or none (the baseline)."""

    def __init__(
        self,
        root: Path,
        scratch: Path,
        mutants: Sequence[Mutant],
        fork: bool,
        plugins: Sequence[str],
    ) -> None:
        self.root = root
        self.scratch = scratch
        self.mutants = mutants
        self.fork = fork
        self.plugins = plugins

    def prepare(self, index: int | None) -> tuple[MutantResult | None, _Copy | None]:
        """Copy the sources and plant bug `index` (None: no bug). The copy is None when the bug
        does not apply; the result is None for the baseline."""
        if index is None:
            directory = self.scratch / "baseline"
            copy_sources(self.root, directory)
            return None, _Copy(directory, self.root, self.fork, self.plugins)
        mutant = self.mutants[index]
        directory = self.scratch / f"{index:03d}-{mutant.name}"
        copy_sources(self.root, directory)
        reason = apply_mutant(self.root, directory, mutant)
        result = MutantResult(mutant, MutantStatus.DOES_NOT_APPLY, reason or "")
        if reason:
            shutil.rmtree(directory, ignore_errors=True)
            return result, None
        return result, _Copy(directory, self.root, self.fork, self.plugins)

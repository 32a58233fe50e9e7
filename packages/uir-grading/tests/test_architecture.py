"""The import graph of the command line and the grader (issue 28): no circles, no private names
across modules, dependencies pointing one way, and the C backend reached through its public API.

Every import counts, at the top of a module or inside a function (where a circle would otherwise
hide until the function runs), read from the source with ast, so a module need not be imported.
"""

from __future__ import annotations

import ast
import importlib.util
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PACKAGES = ("uir.cli", "uir.grading")


@dataclass(frozen=True)
class Import:
    module: str  # the importing module
    line: int
    target: str  # the module imported (or the package whose name is imported from)
    names: tuple[str, ...]  # the names taken from it (`from target import ...`), else ()


def _modules(package: str) -> dict[str, Path]:
    """Every module of `package` (its subpackages too) -> its source file."""
    spec = importlib.util.find_spec(package)
    assert spec is not None and spec.submodule_search_locations, package
    root = Path(next(iter(spec.submodule_search_locations)))
    found = {}
    for path in sorted(root.rglob("*.py")):
        parts = path.relative_to(root).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        found[".".join((package, *parts))] = path
    return found


MODULES = {name: path for package in PACKAGES for name, path in _modules(package).items()}


def _imports(module: str, path: Path) -> Iterator[Import]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield Import(module, node.lineno, alias.name, ())
        elif isinstance(node, ast.ImportFrom) and node.module != "__future__":
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            names = tuple(alias.name for alias in node.names)
            yield Import(module, node.lineno, target, names)


IMPORTS = [i for name, path in MODULES.items() for i in _imports(name, path)]


def _edges() -> dict[str, set[str]]:
    """Module -> the modules of PACKAGES it imports (`from pkg import mod` imports pkg.mod)."""
    edges: dict[str, set[str]] = {name: set() for name in MODULES}
    for i in IMPORTS:
        targets = [f"{i.target}.{n}" for n in i.names if f"{i.target}.{n}" in MODULES]
        if len(targets) < len(i.names) or not i.names:
            targets.append(i.target)  # names defined in the module itself
        edges[i.module] |= {t for t in targets if t in MODULES and t != i.module}
    return edges


def _circle(edges: dict[str, set[str]]) -> list[str] | None:
    """One import circle of the graph, as the modules along it, or None when there is none."""
    state: dict[str, int] = {}  # 1 while on the current path, 2 once done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for nxt in sorted(edges[node]):
            if state.get(nxt) == 1:
                return [*path[path.index(nxt) :], nxt]
            if nxt not in state and (found := visit(nxt)) is not None:
                return found
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (found := visit(node)) is not None:
            return found
    return None


def test_the_walk_finds_the_modules_and_their_imports():
    # The graph the other tests read: both packages' command lines and a known edge of each.
    assert {"uir.cli.main", "uir.cli.grading.harness", "uir.grading.grade"} <= set(MODULES)
    edges = _edges()
    assert "uir.cli.grading.harness" in edges["uir.grading.submissions"]
    assert "uir.grading.matrix" in edges["uir.grading.crossgrade"]


def test_the_circle_finder_finds_a_circle_and_only_one():
    # A graph worked by hand: a -> b -> c -> a is a circle, d -> a is not part of it.
    assert _circle({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == ["a", "b", "c", "a"]
    assert _circle({"a": {"b"}, "b": {"c"}, "c": set(), "d": {"a", "c"}}) is None


def test_no_import_circle_in_the_command_line_or_the_grader():
    assert _circle(_edges()) is None


def test_no_private_name_is_imported_from_another_module():
    taken = [
        f"{i.module}:{i.line}: {name} from {i.target}"
        for i in IMPORTS
        for name in i.names
        if name.startswith("_") and i.target.startswith("uir")
    ]
    assert taken == []


def test_no_private_attribute_of_another_module_is_read():
    # `from pkg import module` (or `import module as m`) and then `module._name`.
    read = []
    for name, path in MODULES.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        bound: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (
                node.level or (node.module or "").startswith("uir")
            ):
                bound |= {alias.asname or alias.name for alias in node.names}
            elif isinstance(node, ast.Import):
                bound |= {a.asname or a.name for a in node.names if a.name.startswith("uir")}
        for node in ast.walk(tree):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in bound
                and node.attr.startswith("_")
                and not node.attr.startswith("__")
            ):
                read.append(f"{name}:{node.lineno}: {node.value.id}.{node.attr}")
    assert read == []


def test_the_command_line_does_not_import_the_staffs_grader():
    # uir-grading builds on uir-cli and adds its commands through the hook uir_commands; uir-cli
    # alone is a working `uir` (and `uir test`) without it.
    reached = [
        f"{i.module}:{i.line}"
        for i in IMPORTS
        if i.module.startswith("uir.cli")
        and (i.target == "uir.grading" or i.target.startswith("uir.grading."))
    ]
    assert reached == []


def test_backends_are_reached_through_their_public_api_only():
    # A backend package's own modules are its internals: the grader uses `uir.backend.c` (its
    # __init__'s names), as the render check does.
    inside = [
        f"{i.module}:{i.line}: {i.target}"
        for i in IMPORTS
        if i.target.startswith("uir.backend.") and i.target.count(".") > 2
    ]
    assert inside == []
    assert any(i.target == "uir.backend.c" for i in IMPORTS)  # the render check's

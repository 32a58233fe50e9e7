"""Fixtures shared by the CLI tests: bad programs for `uir run`."""

from __future__ import annotations

from collections.abc import Callable

import pytest


@pytest.fixture
def run_bad_statement(tmp_path, capsys) -> Callable[[str, str, int, int], None]:
    """A check that `uir run` of `program`, with the statement defining `change`'s name replaced
    by `change`, exits `code` blaming `line`, prints nothing and shows no traceback."""
    from uir.cli.main import main

    def check(program: str, change: str, code: int, line: int) -> None:
        name = change.split()[0]
        lines = [change if s.split()[0] == name else s for s in program.splitlines()]
        path = tmp_path / "bad.uir"
        path.write_text("\n".join(lines) + "\n")
        assert main(["run", str(path)]) == code
        captured = capsys.readouterr()
        assert captured.out == ""
        assert captured.err.startswith(f"{path}:{line}: error: ")
        assert "Traceback" not in captured.err

    return check

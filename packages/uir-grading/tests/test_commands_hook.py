"""The staff's commands reach `uir` through the hook uir_commands (the entry-point group
uir.commands), as passes and backends reach it through theirs."""

from __future__ import annotations

import argparse
import re

import pytest

from uir.cli import main as cli_main
from uir.cli.main import main
from uir.core.plugins import COMMANDS_GROUP, load_commands
from uir.grading.commands import StaffCommands

STAFF = ["grade", "grade-merge", "collect", "gradebook", "perf", "perf-merge"]


def test_the_installed_package_gives_its_commands_through_the_hook():
    found = load_commands()
    assert [(plugin, type(group)) for plugin, group in found] == [("grading", StaffCommands)]
    assert COMMANDS_GROUP == "uir.commands"  # the group pyproject.toml declares


def test_uir_plugins_lists_each_added_command_with_its_plugin(capsys):
    assert main(["plugins"]) == 0
    out = capsys.readouterr().out
    listed = out.split("commands added by plugins:\n", 1)[1].splitlines()
    assert listed == [f"  {name:<14} [grading]" for name in STAFF]


def test_the_added_commands_follow_the_command_lines_own(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    page = capsys.readouterr().out
    names = ["run", "test", "validate-tests", "viz", *STAFF]  # uir-cli's, then the plugin's
    where = [re.search(rf"\n    {re.escape(name)}\s", page) for name in names]
    assert None not in where
    assert [w.start() for w in where] == sorted(w.start() for w in where)


def test_a_staff_command_runs_through_its_handler(tmp_path, capsys):
    # `uir grade-merge` of a partial that does not exist: the handler ran (a usage error of the
    # staff's grader, exit 1), not argparse's invalid choice.
    assert main(["grade-merge", str(tmp_path / "out"), str(tmp_path / "none")]) == 1
    err = capsys.readouterr().err
    assert "invalid choice" not in err and str(tmp_path / "none") in err


class _TakesRun:
    """Commands that take a name uir-cli already has."""

    def register(
        self, commands: argparse._SubParsersAction, common: argparse.ArgumentParser
    ) -> None:
        commands.add_parser("run", parents=[common])


def test_a_command_name_taken_twice_is_an_error_naming_the_plugin(monkeypatch, capsys):
    monkeypatch.setattr(cli_main, "load_commands", lambda: [("twice", _TakesRun())])
    assert main(["check", "x.uir"]) == 4
    err = capsys.readouterr().err
    assert err.startswith("uir: error: plugin 'twice' failed to add its commands: ")
    assert "conflicting subparser: run" in err

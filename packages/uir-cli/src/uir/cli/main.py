"""`uir`: the command line, the only code that prints or picks exit codes (uir.md section 11)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import Any

from uir.core import UIRError
from uir.core.errors import BackendError, UsageError
from uir.core.plugins import load_commands

from . import plugins_command, program_commands
from .grading import commands as grading_commands
from .output import flush_output, output_error
from .viz import command as viz_command


class _Parser(argparse.ArgumentParser):
    """argparse with exit 1 for usage errors, and help pages that may end with text worked out
    only when the page is shown (`more_help`: the installed backends and passes, which every
    start-up would otherwise pay to find)."""

    def __init__(self, *args: Any, more_help: Callable[[], str] | None = None, **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.more_help = more_help

    def format_help(self) -> str:
        text = super().format_help()
        return text + "\n" + self.more_help() if self.more_help is not None else text

    def error(self, message: str) -> None:  # type: ignore[override]
        # argparse exits 2 by default, but 2 means a parse error of the program: usage is 1.
        raise UsageError(f"{message}{_provider(message)} (see '{self.prog} --help')")


# The commands of UIR's own packages beyond this one -> the package that adds each (through the
# hook uir_commands): a name that an installation lacks says what to install.
COMMAND_PROVIDERS = dict.fromkeys(
    ("grade", "grade-merge", "collect", "perf", "perf-merge", "gradebook"), "uir-grading"
)


def _provider(message: str) -> str:
    for name, package in COMMAND_PROVIDERS.items():
        if f"invalid choice: '{name}'" in message:
            return (
                f"; `uir {name}` comes with the package {package}, which is not installed here "
                f"(`uv pip install packages/{package}` in the UIR repository)"
            )
    return ""


TOP_EPILOG = f"""\
examples:
  uir run examples/add.uir                 prints 5
  uir run FILE --backend c                 the same program compiled as C
  uir check FILE                           parse and verify only
  uir opt FILE --skip simplify             the program after the other passes
  uir plugins                              the installed plugins, passes and backends
  uir test suites/week1 --compiler ./uirc  grade a student's compiler
  uir COMMAND --help                       a command's options, examples and exit codes

{program_commands.EXIT_CODES}
"""

# The commands of this package, in the order `uir --help` lists them; the installed packages'
# follow (the hook uir_commands, as passes and backends arrive through theirs).
COMMAND_MODULES = (
    program_commands,
    plugins_command,
    grading_commands,
    viz_command,
)


def _plugin_option(parser: argparse.ArgumentParser, dest: str) -> None:
    parser.add_argument(
        "-p",
        dest=dest,
        action="append",
        default=[],
        metavar="MODULE",
        help="load a plugin module by import name (repeatable), as pytest's -p does",
    )


def build_parser() -> argparse.ArgumentParser:
    # `-p` may come before or after the command; the two lists live apart and main joins them,
    # since a subcommand's defaults would otherwise overwrite what came before it.
    common = _Parser(add_help=False)
    _plugin_option(common, "plugin_modules")
    parser = _Parser(
        prog="uir",
        description="UIR, the reference ML compiler: run, inspect and grade .uir programs.",
        more_help=lambda: TOP_EPILOG,
    )
    _plugin_option(parser, "leading_plugin_modules")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)
    commands.required = True
    for module in COMMAND_MODULES:
        module.register(commands, common)
    for plugin, added in load_commands():
        try:
            added.register(commands, common)
        except argparse.ArgumentError as exc:  # a name taken twice
            raise BackendError(f"plugin '{plugin}' failed to add its commands: {exc}") from exc
    return parser


def _report(error: UIRError, where: str) -> int:
    # The first line is fixed (uir.md section 11: graders parse it); the line of the program it
    # blames and a caret under the place follow it, where the error has them.
    text = getattr(error, "source", None)
    excerpt = error.excerpt(text) if text is not None else ""
    print(error.render(where), file=sys.stderr)
    if excerpt:
        print(excerpt, file=sys.stderr, end="")
    return error.exit_code


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `uir` script: returns the exit code."""
    where = "uir"
    try:
        args = build_parser().parse_args(argv)
        args.plugin_modules = args.leading_plugin_modules + args.plugin_modules
        where = getattr(args, "file", None) or "uir"
        if where == "-":
            where = "<stdin>"
        code = args.handler(args)
        flush_output()
        return code
    except BrokenPipeError as exc:  # a print() whose reader went away
        return _report(output_error(exc), where)
    except UIRError as error:
        # An error in another file than the program (a roster) names that file.
        return _report(error, getattr(error, "path", None) or where)
    except KeyboardInterrupt:
        return 130
    except MemoryError:
        # The machine's limit, not a bug: `uir run` says what the program needs (program_commands);
        # any other command reaching it (a fold of a huge value, say) says at least this.
        print(
            f"{where}: error: out of memory: this machine could not allocate what the command "
            "needs",
            file=sys.stderr,
        )
        return 4
    except (Exception, RecursionError) as exc:
        print(f"{where}: internal error: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 4


def entry() -> None:
    sys.exit(main())


if __name__ == "__main__":
    entry()

"""`uir plugins`: what is installed, its passes by stage, which backends can run here, and the
commands installed packages add."""

from __future__ import annotations

import argparse

from uir.core.plugins import load_commands, load_registry

from .output import write_output


def plugins_command(args: argparse.Namespace) -> int:
    registry = load_registry(args.plugin_modules)
    lines = ["plugins:"]
    lines += [f"  {name}" for name in registry.plugins]
    lines.append("passes (in pipeline order):")
    for p in registry.passes:
        owner = registry.pass_owners[p.name]
        note = " (lowering)" if p.lowering else " (required)" if p.required else ""
        lines.append(f"  {p.stage:<9} {p.name:<12} {p.description}{note} [{owner}]")
    if not registry.passes:
        lines.append("  (none installed)")
    lines.append("backends:")
    for name, backend in sorted(registry.backends.items()):
        ok, reason = backend.available()
        form = getattr(backend, "form", "program")
        # The status comes last: a reason is a sentence of its own, full stop included.
        status = "available" if ok else f"unavailable: {reason}"
        lines.append(
            f"  {name:<8} {backend.description}; takes {form} "
            f"[{registry.backend_owners[name]}]; {status}"
        )
    added = added_commands()
    if added:  # the section is left out where no package adds commands
        lines.append("commands added by plugins:")
        lines += [f"  {name:<14} [{plugin}]" for name, plugin in added]
    write_output("\n".join(lines) + "\n")
    return 0


def added_commands() -> list[tuple[str, str]]:
    """Each subcommand the installed packages add (the hook uir_commands), with its plugin."""
    commands = argparse.ArgumentParser(add_help=False).add_subparsers()
    common = argparse.ArgumentParser(add_help=False)
    found: list[tuple[str, str]] = []
    for plugin, group in load_commands():
        before = set(commands.choices)
        group.register(commands, common)
        found += [(name, plugin) for name in commands.choices if name not in before]
    return found


def register(commands: argparse._SubParsersAction, common: argparse.ArgumentParser) -> None:
    plugins = commands.add_parser(
        "plugins", parents=[common], help="list plugins, their passes by stage, and backends"
    )
    plugins.set_defaults(handler=plugins_command)

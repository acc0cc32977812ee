"""The ``skillshelf`` group imports a command's module only when that command runs.

``--version`` and ``--help`` then start without the agent, the tools or any extra; the
command table's short helps must stay the commands' own, and no command may be left out.
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner

import skillshelf.cli
from skillshelf.cli import main
from skillshelf.cli.app import COMMANDS


def _real_commands() -> dict[str, click.Command]:
    found: dict[str, click.Command] = {}
    for info in pkgutil.iter_modules(skillshelf.cli.__path__):
        if info.name == "__main__":
            continue  # runs the command line
        module = importlib.import_module(f"skillshelf.cli.{info.name}")
        for value in vars(module).values():
            if (
                isinstance(value, click.Command)
                and value.callback is not None
                and value.callback.__module__ == module.__name__
                and value is not main
            ):
                found[value.name or ""] = value
    # A group's own subcommands (trace summary, …) are not the top group's.
    nested = {
        id(sub)
        for cmd in found.values()
        if isinstance(cmd, click.Group)
        for sub in cmd.commands.values()
    }
    return {name: cmd for name, cmd in found.items() if id(cmd) not in nested}


def test_the_command_table_lists_every_command_of_every_cli_module() -> None:
    assert set(COMMANDS) == set(_real_commands())


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_each_listed_short_help_is_the_commands_own(name: str) -> None:
    command = main.get_command(click.Context(main), name)
    assert command is not None
    assert COMMANDS[name][2] == command.get_short_help_str(limit=300)


def test_help_lists_the_commands_as_click_would() -> None:
    plain = click.Group(
        name="skillshelf",
        help=main.help,
        params=main.params,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    for name, command in _real_commands().items():
        plain.add_command(command, name)
    lazy_help = CliRunner().invoke(main, ["--help"], prog_name="skillshelf").output
    plain_help = CliRunner().invoke(plain, ["--help"], prog_name="skillshelf").output
    assert lazy_help == plain_help


@pytest.mark.parametrize("args", [["--version"], ["--help"]])
def test_version_and_help_import_no_command_module(args: list[str]) -> None:
    script = (
        "import json, sys\n"
        "from skillshelf.cli import main\n"
        f"try:\n    main({args!r})\nexcept SystemExit:\n    pass\n"
        "print(json.dumps(sorted(m for m in sys.modules if m.startswith('skillshelf.'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = json.loads(done.stdout.splitlines()[-1])
    heavy = [m for m in loaded if m.split(".")[1] in {"agent", "tools", "models", "mcpserver"}]
    commands = {f"skillshelf.cli.{module}" for module, _attr, _help in COMMANDS.values()}
    assert heavy == [] and not commands & set(loaded), loaded

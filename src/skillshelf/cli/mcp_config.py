"""``skillshelf mcp-config``: print the configuration an MCP client needs to start ``serve``.

A client starts its server in whatever folder it has open, often without the shell's ``PATH``
or virtual environment. The configuration printed here names the interpreter's own
``skillshelf`` console script by its absolute path (its ``sys.path`` starts at the script's
folder, never the working folder); without one, ``python -P -m skillshelf`` (``-P``: the
working folder is not put on ``sys.path``, so a ``click.py`` or ``skillshelf/`` in an opened
repository is never imported). Roots and other paths are made absolute.
"""

from __future__ import annotations

import json
import shlex
import sys
from pathlib import Path
from typing import Final

import click
from click.core import ParameterSource

__all__ = ["mcp_config"]

CLIENTS: Final = ("claude-desktop", "claude-code", "codex", "json")
# serve's options whose values are paths on this machine: written absolute.
_PATH_OPTIONS: Final = frozenset({"roots", "ro_paths", "trace"})


@click.command(
    "mcp-config",
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("client", type=click.Choice(CLIENTS))
@click.argument("serve_args", nargs=-1, type=click.UNPROCESSED, metavar="[SERVE OPTIONS]...")
@click.option("--name", default="skillshelf", show_default=True, help="The server's name.")
def mcp_config(client: str, serve_args: tuple[str, ...], name: str) -> None:
    """Print the configuration CLIENT needs to start 'skillshelf serve' with SERVE OPTIONS.

    CLIENT: claude-desktop (claude_desktop_config.json or a project's .mcp.json), claude-code
    (a 'claude mcp add' line), codex (~/.codex/config.toml), json (the command and args).
    The options are checked as serve checks them; paths are written absolute, and the
    command never puts the client's working folder on Python's import path. Example:

        skillshelf mcp-config claude-desktop --root ./skills --watch

    Options of this command (--name) come before CLIENT; everything after it is serve's.
    """
    from skillshelf.cli.serve import serve

    args = ["serve", *_serve_arguments(serve, list(serve_args))]
    command = _command()
    click.echo(_render(client, name, command[0], [*command[1:], *args]))


def _command() -> list[str]:
    """This installation's ``skillshelf``: the console script beside the interpreter, else
    the interpreter with ``-P -m skillshelf``; both absolute."""
    script = Path(sys.executable).parent / "skillshelf"
    if script.is_file():
        return [str(script.absolute())]
    return [str(Path(sys.executable).absolute()), "-P", "-m", "skillshelf"]


def _serve_arguments(serve: click.Command, given: list[str]) -> list[str]:
    """``given`` checked by serve's own parser, then written back with absolute paths."""
    # As a sub-context of this command's, so serve reads the group's settings (its help
    # option is built once, from the first context it sees).
    parent = click.get_current_context(silent=True)
    with serve.make_context("serve", list(given), parent=parent) as ctx:
        out: list[str] = []
        for param in serve.params:
            if not isinstance(param, click.Option) or param.name is None:
                continue
            if ctx.get_parameter_source(param.name) != ParameterSource.COMMANDLINE:
                continue
            out += _option_words(param, ctx.params[param.name])
        return out


def _option_words(param: click.Option, value: object) -> list[str]:
    flag = max(param.opts, key=len)  # the long form
    if param.is_flag:
        if param.secondary_opts and not value:
            return [max(param.secondary_opts, key=len)]
        return [flag] if value else []
    values = list(value) if param.multiple and isinstance(value, tuple | list) else [value]
    words: list[str] = []
    for item in values:
        text = str(item)
        if param.name in _PATH_OPTIONS and text and "://" not in text:
            text = str(Path(text).expanduser().absolute())
            if param.name == "roots" and not Path(text).exists():
                click.echo(f"warning: root {text} does not exist", err=True)
        words += [flag, text]
    return words


def _render(client: str, name: str, command: str, args: list[str]) -> str:
    if client == "claude-code":
        return shlex.join(["claude", "mcp", "add", name, "--", command, *args])
    if client == "codex":
        listed = ", ".join(_toml(a) for a in args)
        return f"[mcp_servers.{_toml_key(name)}]\ncommand = {_toml(command)}\nargs = [{listed}]"
    entry = {"command": command, "args": args}
    shown = {"mcpServers": {name: entry}} if client == "claude-desktop" else entry
    return json.dumps(shown, indent=2, ensure_ascii=False)


def _toml(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)  # a TOML basic string is a JSON string


def _toml_key(name: str) -> str:
    bare = name.replace("-", "").replace("_", "").isalnum() and name.isascii()
    return name if bare else _toml(name)

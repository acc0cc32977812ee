"""The ``skillshelf`` command group: every command module's commands, added explicitly.

Exit codes: 0 ok; 1 the subject failed (invalid skill, unknown skill, refused or missing file);
2 usage error or a missing extra (mapped for every command in :mod:`skillshelf.cli.errors`).
Results go to stdout, diagnostics to stderr.
"""

from __future__ import annotations

import importlib
from typing import Final

import click

from skillshelf._version import __version__
from skillshelf.cli.errors import ShelfGroup

__all__ = ["COMMANDS", "main"]

# name → (module under skillshelf.cli, attribute, the command's short help). A command's
# module is imported only when that command runs, so `--version` and `--help` start without
# the agent, the tools or any extra; the short help is here for `--help` to list, and
# tests/cli/test_lazy_commands.py checks each against the command's own.
COMMANDS: Final[dict[str, tuple[str, str, str]]] = {
    "validate": (
        "skills",
        "validate",
        "Validate skill folders, SKILL.md files, or every skill under a root.",
    ),
    "list": ("skills", "list_", "List the skills a model would see, sorted by name."),
    "show": (
        "skills",
        "show",
        "Show a skill as a model gets it on load: metadata, body and file tree.",
    ),
    "read": ("skills", "read", "Print a file of skill NAME, by PATH relative to the skill folder."),
    "prompt": (
        "skills",
        "prompt",
        "Print the skills catalog for a system prompt (stable order: by name).",
    ),
    "search": (
        "skills",
        "search",
        "Rank skills for QUERY: exact name, trigger, name, tags, description, then BM25.",
    ),
    "call": ("skills", "call", "Run one model-facing TOOL exactly as a model would call it."),
    "tools": (
        "skills",
        "tools",
        "Print the JSON Schemas of the skill tools (skill is an enum of the visible names).",
    ),
    "serve": (
        "serve",
        "serve",
        "Serve the skills over MCP: the skills extension, skill:// resources, tools, prompts.",
    ),
    "mcp-config": (
        "mcp_config",
        "mcp_config",
        "Print the configuration CLIENT needs to start 'skillshelf serve' with SERVE OPTIONS.",
    ),
    "chat": ("chat", "chat", "Chat with a model that can load and use the skills."),
    "exec": ("exec", "exec_", "Run COMMAND in NAME's workspace copy (put it after --)."),
    "eval": (
        "eval",
        "eval_",
        "Measure whether the model loads the right skill for each case in CASES.",
    ),
    "improve": (
        "improve",
        "improve",
        "Rewrite the descriptions of skills that fail the evals in CASES, keeping only what helps.",
    ),
    "lint": ("lint", "lint", "Check skills for what makes a model miss, confuse or misuse them."),
    "tokens": (
        "tokens",
        "tokens",
        "Count the tokens skills cost: catalog entry, body, on load, documents.",
    ),
    "trace": ("trace", "trace", "Read JSONL decision traces (written by 'chat --trace')."),
    "lock": (
        "trust",
        "lock",
        "Record every visible skill's content digest in a lockfile (approve a change: --update).",
    ),
    "verify": (
        "trust",
        "verify",
        "Check every skill against the lockfile; exit 1 on any drift (for CI).",
    ),
    "scan": (
        "trust",
        "scan",
        "Scan every skill's files for injection, fetch-and-exec, secrets and exfiltration.",
    ),
}


class _LazyGroup(ShelfGroup):
    """The commands of :data:`COMMANDS`, each imported the first time it is asked for."""

    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        if cmd_name not in self.commands and cmd_name in COMMANDS:
            module, attribute, _help = COMMANDS[cmd_name]
            command = getattr(importlib.import_module(f"skillshelf.cli.{module}"), attribute)
            self.add_command(command, cmd_name)
        return self.commands.get(cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        # click's own listing, from the short helps above instead of imported commands.
        limit = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [
            (name, click.Command(name, help=COMMANDS[name][2]).get_short_help_str(limit))
            for name in self.list_commands(ctx)
        ]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=_LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillshelf")
def main() -> None:
    """skillshelf — Agent Skills for LLM agents.

    Discover, validate, list, show, search and read skills (folders with a SKILL.md), render
    the catalog a model sees, serve skills over MCP, chat with a model that uses them, run
    their scripts in a sandbox, and measure whether a model triggers them.
    """

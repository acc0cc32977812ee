"""The ``skillshelf`` command group: every command module's commands, added explicitly.

Exit codes: 0 ok; 1 the subject failed (invalid skill, unknown skill, refused or missing file);
2 usage error or a missing extra (mapped for every command in :mod:`skillshelf.cli.errors`).
Results go to stdout, diagnostics to stderr.
"""

from __future__ import annotations

import click

from skillshelf._version import __version__
from skillshelf.cli import chat, exec, improve, lint, serve, skills, tokens, trace, trust
from skillshelf.cli import eval as eval_module
from skillshelf.cli.errors import ShelfGroup

__all__ = ["main"]


@click.group(cls=ShelfGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="skillshelf")
def main() -> None:
    """skillshelf — Agent Skills for LLM agents.

    Discover, validate, list, show, search and read skills (folders with a SKILL.md), render
    the catalog a model sees, serve skills over MCP, chat with a model that uses them, run
    their scripts in a sandbox, and measure whether a model triggers them.
    """


for _command in (
    skills.validate,
    skills.list_,
    skills.show,
    skills.read,
    skills.prompt,
    skills.search,
    skills.call,
    skills.tools,
    serve.serve,
    chat.chat,
    exec.exec_,
    eval_module.eval_,
    improve.improve,
    lint.lint,
    tokens.tokens,
    trace.trace,
    trust.lock,
    trust.verify,
    trust.scan,
):
    main.add_command(_command)

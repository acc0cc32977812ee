"""The options ``chat`` and ``eval`` share: one flag per :class:`~skillshelf.agent.loop.Agent`
option, with the same name and default (docs/agent.md has the table; a test checks the sets).

:func:`agent_options` adds them to a command; :func:`agent_settings` turns the parsed values
into ``Agent`` keyword arguments (and the workspace manager to close afterwards).
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import click

from skillshelf.agent.config import DEFAULT_CATALOG_BUDGET
from skillshelf.agent.results import (
    DEFAULT_INSTRUCTIONS,
    DEFAULT_MAX_STEPS,
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    RetryPolicy,
)
from skillshelf.cli._common import F, exec_options, open_executor
from skillshelf.core.session import DEFAULT_MAX_LOADED
from skillshelf.exec.workspace import ExecPolicy
from skillshelf.harness import TOOL_STYLES

__all__ = ["agent_options", "agent_settings"]

_DEFAULT_RETRIES = RetryPolicy().max_retries
_DEFAULT_EXEC_TIMEOUT_S = ExecPolicy().default_timeout_s


def agent_options(func: F) -> F:
    """Every Agent option that has a command-line form (see docs/agent.md)."""
    options: list[Callable[[F], F]] = [
        click.option(
            "--instructions",
            default=DEFAULT_INSTRUCTIONS,
            show_default=True,
            help="Your part of the system prompt; the skills catalog and tool guidance follow.",
        ),
        click.option(
            "--agent-name",
            "name",
            default="main",
            show_default=True,
            help="The agent's name: its skill state is kept under it in the session.",
        ),
        click.option(
            "--load-mode",
            type=click.Choice(["once", "turn", "session"]),
            default="turn",
            show_default=True,
            help="How long a skill the model loads stays loaded: the next request, until the "
            "next user message, or the whole session.",
        ),
        click.option(
            "--max-loaded",
            type=click.IntRange(1),
            default=DEFAULT_MAX_LOADED,
            show_default=True,
            help="Skills kept loaded at once; one more evicts the least recently used.",
        ),
        click.option(
            "--declare",
            "declared",
            multiple=True,
            metavar="SKILL[:DOC,…]",
            help="Load SKILL (with these docs) for the whole session before the first "
            "request; repeatable.",
        ),
        click.option(
            "--only",
            "visible",
            multiple=True,
            metavar="SKILL",
            help="Show the model only these skills (repeatable; default: all).",
        ),
        click.option(
            "--tool",
            "tools",
            multiple=True,
            metavar="MODULE:NAME",
            help="Offer your own tool: a Tool, a list of Tools or a typed function, imported "
            "from MODULE (in the working directory or on the Python path); repeatable.",
        ),
        click.option(
            "--max-steps",
            type=click.IntRange(1),
            default=DEFAULT_MAX_STEPS,
            show_default=True,
            help="Model requests per message before giving up on an answer.",
        ),
        click.option(
            "--max-retries",
            "retry",
            type=click.IntRange(0),
            default=_DEFAULT_RETRIES,
            show_default=True,
            help="Retries of a model request after HTTP 5xx/429 or a connection failure.",
        ),
        click.option(
            "--tool-timeout",
            "tool_timeout_s",
            type=click.FloatRange(0, min_open=True),
            default=DEFAULT_TOOL_TIMEOUT_S,
            show_default=True,
            help="Seconds a user tool's call may take before the model is told it timed out.",
        ),
        click.option(
            "--tool-retries",
            type=click.IntRange(0),
            default=DEFAULT_TOOL_RETRIES,
            show_default=True,
            help="Identical failing calls of a user tool the model may retry before it is told "
            "to stop.",
        ),
        click.option(
            "--catalog-format",
            type=click.Choice(["xml", "markdown"]),
            default="xml",
            show_default=True,
            help="How the catalog lists the skills.",
        ),
        click.option(
            "--catalog-budget",
            type=click.IntRange(0),
            default=DEFAULT_CATALOG_BUDGET,
            show_default=True,
            help="Characters the catalog may take (descriptions are trimmed to fit); 0: no limit.",
        ),
        click.option(
            "--catalog-placement",
            type=click.Choice(["system", "reminder"]),
            default="system",
            show_default=True,
            help="Put the catalog in the system prompt, or in a <system-reminder> user "
            "message before the conversation (as Claude Code does).",
        ),
        click.option(
            "--placement",
            type=click.Choice(["tool_result", "system"]),
            default="tool_result",
            show_default=True,
            help="Where loaded skills reach the model: in the tool results that loaded them "
            "(the system prompt stays cacheable), or in a system message.",
        ),
        click.option(
            "--tool-style",
            type=click.Choice(TOOL_STYLES),
            default="skillshelf",
            show_default=True,
            help="How the skill tools are offered: skillshelf's contract (skill_load, …) or "
            "claude-code (one Skill tool taking skill and args).",
        ),
        click.option(
            "--enforce-allowed-tools",
            is_flag=True,
            help="While the active skill declares allowed-tools, refuse calls outside them.",
        ),
        exec_options,
        click.option(
            "--workspace",
            "workspace_dir",
            type=click.Path(file_okay=False, path_type=Path),
            help="--exec: keep the session workspaces under DIR (default: temporary ones, "
            "removed afterwards).",
        ),
        click.option(
            "--allow-network",
            is_flag=True,
            help="--exec: commands may ask for network access.",
        ),
        click.option(
            "--allow-command",
            "allowed_commands",
            multiple=True,
            metavar="PROGRAM",
            help="--exec: only these programs may be started (repeatable; default: any).",
        ),
        click.option(
            "--exec-timeout",
            type=click.FloatRange(min=0, min_open=True),
            default=_DEFAULT_EXEC_TIMEOUT_S,
            show_default=True,
            help="--exec: seconds a command may run when the model gives no time limit.",
        ),
    ]
    for option in reversed(options):
        func = option(func)
    return func


@contextlib.contextmanager
def agent_settings(values: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Pop the :func:`agent_options` values from ``values`` and yield ``Agent`` keyword
    arguments; workspaces made for ``--exec`` are removed (unless ``--workspace``) on exit.

    Raises:
        click.UsageError: A bad ``--tool`` or ``--declare``, or an unusable ``--sandbox``.
    """
    from skillshelf.errors import UsageError
    from skillshelf.tools.imported import import_tools

    workspace_dir: Path | None = values.pop("workspace_dir")
    allow_network: bool = values.pop("allow_network")
    allowed: tuple[str, ...] = values.pop("allowed_commands")
    exec_timeout: float = values.pop("exec_timeout")
    ro_paths: tuple[str, ...] = values.pop("ro_paths")
    executor = open_executor(
        values.pop("enable_exec"),
        values.pop("sandbox"),
        image=values.pop("image"),
        runtime=values.pop("runtime"),
        ro_paths=ro_paths,
    )
    if executor is None and (workspace_dir or allow_network or allowed):
        raise click.UsageError("--workspace, --allow-network and --allow-command need --exec")
    visible = frozenset(values.pop("visible"))
    budget = values.pop("catalog_budget")
    # As uvicorn does for its app: MODULE may be a file in the working directory (an
    # installed ``skillshelf`` script does not put it on the path); eval cases' tools too.
    if os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        tools = [tool for spec in values.pop("tools") for tool in import_tools(spec)]
    except UsageError as exc:
        raise click.UsageError(f"--tool: {exc}") from None
    kwargs: dict[str, Any] = {
        "instructions": values.pop("instructions"),
        "name": values.pop("name"),
        "load_mode": values.pop("load_mode"),
        "max_loaded": values.pop("max_loaded"),
        "declared": [_declared(d) for d in values.pop("declared")],
        "visible": (lambda skill: skill.name in visible) if visible else None,
        "tools": tools,
        "max_steps": values.pop("max_steps"),
        "retry": RetryPolicy(max_retries=values.pop("retry")),
        "catalog_format": values.pop("catalog_format"),
        "catalog_budget": budget or None,
        "catalog_placement": values.pop("catalog_placement"),
        "placement": values.pop("placement"),
        "tool_style": values.pop("tool_style"),
        "enforce_allowed_tools": values.pop("enforce_allowed_tools"),
        "tool_timeout_s": values.pop("tool_timeout_s"),
        "tool_retries": values.pop("tool_retries"),
    }
    if executor is None:
        yield kwargs
        return
    from skillshelf.exec.workspace import WorkspaceManager

    manager = WorkspaceManager(workspace_dir, retention="keep" if workspace_dir else "delete")
    policy = ExecPolicy(
        allowed_commands=allowed or None,
        default_timeout_s=exec_timeout,
        max_timeout_s=max(exec_timeout, ExecPolicy().max_timeout_s),
        allow_network=allow_network,
        extra_ro_paths=ro_paths,
    )
    try:
        yield {**kwargs, "workspace": manager, "executor": executor, "exec_policy": policy}
    finally:
        manager.close_all()


def _declared(spec: str) -> str | tuple[str, list[str]]:
    name, _, docs = spec.partition(":")
    return (name, [d for d in docs.split(",") if d]) if docs else name

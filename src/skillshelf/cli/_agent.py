"""The options ``chat`` and ``eval`` share: one flag per :class:`~skillshelf.agent.loop.Agent`
option, with the same name and default (docs/agent.md has the table; a test checks the sets).

:func:`agent_options` adds them to a command; :func:`agent_settings` turns the parsed values
into ``Agent`` keyword arguments (and the workspace manager to close afterwards).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import click

from skillshelf.agent.results import DEFAULT_INSTRUCTIONS, DEFAULT_MAX_STEPS, RetryPolicy
from skillshelf.cli._common import F, exec_options, open_executor
from skillshelf.cli._settings import settings_options, settings_values
from skillshelf.exec.workspace import ExecPolicy

__all__ = ["AGENT_SETTINGS", "CATALOG_SETTINGS", "agent_options", "agent_settings"]

_DEFAULT_RETRIES = RetryPolicy().max_retries
_DEFAULT_EXEC_TIMEOUT_S = ExecPolicy().default_timeout_s


# What the model is shown of the skills: the catalog, the relevant-skills block, the guidance
# and the tools. improve takes these too, so it judges a description as the agent shows it.
CATALOG_SETTINGS: Final = (
    "catalog_format",
    "catalog_budget",
    "catalog_placement",
    "relevant_skills",
    "guidance",
    "skill_tools",
    "tool_style",
)
# The harness settings chat and eval offer as flags (cli/_settings.py declares each once).
AGENT_SETTINGS: Final = (
    "instructions",
    "agent",
    "load_mode",
    "max_loaded",
    "declared",
    "visible",
    "tools",
    "tool_timeout_s",
    "tool_retries",
    *CATALOG_SETTINGS,
    "placement",
    "enforce_allowed_tools",
)


def agent_options(func: F) -> F:
    """Every Agent option that has a command-line form (see docs/agent.md)."""
    options: list[Callable[[F], F]] = [
        settings_options(*AGENT_SETTINGS, defaults={"instructions": DEFAULT_INSTRUCTIONS}),
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
        click.UsageError: A bad ``--tool``, or an unusable ``--sandbox``.
    """
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
    kwargs: dict[str, Any] = {
        **settings_values(values, AGENT_SETTINGS),
        "max_steps": values.pop("max_steps"),
        "retry": RetryPolicy(max_retries=values.pop("retry")),
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

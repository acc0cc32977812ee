"""``skillshelf exec``: run a command in a skill's workspace copy.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
The command after ``--`` is an argument vector run without a shell; the exit status is the
command's own, :data:`EXIT_TIMEOUT` when it was killed at its time limit.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Final

import click

from skillshelf.cli._common import (
    choose_executor,
    docker_options,
    emit_json,
    fail,
    repo_from,
    ro_path_option,
    root_options,
    sandbox_option,
)

__all__ = ["exec_"]

EXIT_TIMEOUT: Final = 124  # what coreutils' timeout(1) returns


@click.command("exec")
@root_options
@click.argument("name")
@click.argument("command", nargs=-1, required=True)
@sandbox_option(
    default="auto",
    help="Executor: auto = bwrap where it works, else local (not isolated); docker = a "
    "container (see --image, --runtime).",
)
@docker_options
@click.option("--timeout", "timeout_s", type=click.FloatRange(min=0, min_open=True), default=60.0)
@click.option("--collect", multiple=True, metavar="GLOB", help="Output files to report.")
@click.option(
    "--input",
    "inputs",
    multiple=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Copy FILE into the workspace's inputs/.",
)
@click.option("--allow-network", is_flag=True, help="Give the command network access.")
@ro_path_option(
    help="Also show host PATH read-only at the same path in the sandbox (e.g. a runtime the "
    "skill needs); repeatable."
)
@click.option("--json", "as_json", is_flag=True, help="Print the result as JSON.")
@click.option(
    "--workspace",
    "workspace_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Keep the workspace under DIR (default: a temporary one, removed afterwards).",
)
def exec_(
    name: str,
    command: tuple[str, ...],
    sandbox: str,
    image: str | None,
    runtime: str | None,
    timeout_s: float,
    collect: tuple[str, ...],
    inputs: tuple[Path, ...],
    allow_network: bool,
    ro_paths: tuple[str, ...],
    as_json: bool,
    workspace_dir: Path | None,
    **kwargs: Any,
) -> None:
    """Run COMMAND in NAME's workspace copy (put it after --)."""
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager, execute

    repo = repo_from(kwargs)
    skill = repo.get(name)  # SkillNotFoundError names the closest skills; exit 1
    executor = choose_executor(sandbox, image=image, runtime=runtime)
    manager = WorkspaceManager(workspace_dir, retention="keep" if workspace_dir else "delete")
    session = f"cli-{id(manager)}"
    policy = ExecPolicy(
        allow_network=allow_network, max_timeout_s=timeout_s, extra_ro_paths=ro_paths
    )
    try:
        workspace = manager.open(session)
        for source in inputs:
            workspace.add_input(source)
        result = execute(
            workspace,
            executor,
            command,
            skill=skill,
            policy=policy,
            timeout_s=timeout_s,
            collect=collect,
            network=allow_network,
            pinned=repo.pinned_digest(skill.name),
        )
    except OSError as exc:  # an input that cannot be copied, a program that cannot start
        fail(str(exc))
    finally:
        manager.close(session)
    if as_json:
        emit_json(result.to_json())
    else:
        _print(result)
    raise SystemExit(EXIT_TIMEOUT if result.timed_out else _status(result.exit_code))


def _status(code: int) -> int:
    return 128 - code if code < 0 else code  # killed by signal N → 128+N, as a shell reports


def _print(result: Any) -> None:
    click.echo(result.stdout, nl=False)
    click.echo(result.stderr, nl=False, err=True)
    if result.stdout_truncated or result.stderr_truncated:
        click.echo("note: output was truncated (head and tail kept)", err=True)
    for file in result.files:
        click.echo(f"collected: {file.path} ({file.size} B, {file.mime}, {file.sha256})", err=True)
    for note in result.notes:
        click.echo(f"note: {note}", err=True)
    if result.timed_out:
        click.echo("error: the command timed out and was killed", err=True)

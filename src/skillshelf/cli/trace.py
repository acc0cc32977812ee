"""``skillshelf trace``: read decision traces written by ``chat --trace`` and ``eval``.

Registered on the ``skillshelf`` group in :mod:`skillshelf.cli.app`.
"""

from __future__ import annotations

from pathlib import Path

import click

from skillshelf.cli._common import emit_json
from skillshelf.cli.errors import ShelfGroup

__all__ = ["trace"]


@click.group("trace", cls=ShelfGroup)
def trace() -> None:
    """Read JSONL decision traces (written by 'chat --trace')."""


@click.command("summary")
@click.argument("file", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print the rates as JSON.")
def summary(file: Path, as_json: bool) -> None:
    """Trigger and failure rates of the runs in a trace FILE.

    Trigger rate: the share of runs that loaded a skill, loads per run and which skills.
    Failure rates: failed tool calls by error kind (missing, invalid, unknown_skill,
    unknown_tool, refused, timeout, tool_error, internal) as a share of all tool calls.
    Loads declared up front by the caller are not counted.
    """
    from skillshelf.reports.tracereport import read_trace, summarize_trace

    records, unreadable = read_trace(file)
    result = summarize_trace(records, unreadable=unreadable)
    if as_json:
        emit_json(result.to_json())
    else:
        click.echo(result.render())


trace.add_command(summary)

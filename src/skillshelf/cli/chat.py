"""``skillshelf chat``: talk to a model that has the skills, from the terminal.

With ``-m`` one message goes in and the final answer comes out on stdout (exit 0); without it,
an interactive prompt keeps the conversation's history until end of input or ``/exit``. The
answer streams as it arrives; each tool call is one status line on stderr. With ``--watch``
the skill folders are watched for the whole chat: each refresh that adds, edits or removes
skills is one status line on stderr, and the next model request sees the new catalog.

With ``--session ID --store URL`` the message history is kept in the store with the skill
state, and the next ``chat`` of that session resumes it (``--new`` starts over).
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from collections.abc import Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._agent import agent_options, agent_settings
from skillshelf.cli._common import fail, model_options, repo_from, root_options
from skillshelf.cli._settings import settings_options, settings_values
from skillshelf.errors import MissingExtraError, SkillshelfError

if TYPE_CHECKING:
    from skillshelf.agent.loop import Agent, Conversation, ToolRecord
    from skillshelf.repository import Changes, Repository, Skipped

__all__ = ["chat"]

_EXIT_WORDS = frozenset({"/exit", "/quit"})


@click.command()
@root_options
@model_options
@click.option("-m", "--message", help="Send this one message, print the answer and exit.")
@settings_options("trace")
@click.option(
    "--session",
    "session_id",
    help="Session id: with --store, its skill state and message history are kept there and "
    "the next chat of this session resumes them.",
)
@settings_options("store")
@click.option(
    "--new",
    "start_new",
    is_flag=True,
    help="Start a fresh conversation: clear the stored message history of --session "
    "(its skill state is kept). Needs --session and --store.",
)
@agent_options
@click.option("--no-stream", is_flag=True, help="Wait for whole replies instead of streaming.")
@click.option(
    "--watch",
    is_flag=True,
    help="Watch the skill folders during the chat: added, edited and removed skills reach "
    "the next model request, and a line on stderr says what changed (needs the 'watch' "
    "extra).",
)
def chat(
    model_spec: str,
    base_url: str | None,
    api_key_env: str | None,
    message: str | None,
    session_id: str | None,
    no_stream: bool,
    watch: bool,
    start_new: bool,
    **kwargs: Any,
) -> None:
    """Chat with a model that can load and use the skills.

    With --exec the model can run the skills' scripts (workspace_exec) in a per-session
    workspace, isolated by --sandbox. With --watch, a skill edited into an invalid state
    keeps its last good version (with a warning on stderr) until the error is fixed.
    """
    if watch:
        _require_watchfiles()
    persist = session_id is not None and kwargs["store"] is not None
    if start_new and not persist:
        raise click.UsageError("--new needs --session and --store (there is no stored history).")
    from skillshelf.agent.loop import Agent
    from skillshelf.models import open_model

    repo = repo_from(kwargs)
    model = open_model(model_spec, base_url=base_url, api_key_env=api_key_env, stream=not no_stream)
    own = settings_values(kwargs, ("store", "trace"))
    try:
        with agent_settings(kwargs) as settings:
            agent = Agent(model, repo, **own, **settings)
            conversation = _open_conversation(agent, session_id, persist=persist, new=start_new)
            with _watching(repo, enabled=watch):
                if message is not None:
                    if not _turn(conversation, message):
                        raise SystemExit(1)
                else:
                    _interactive(conversation)
    finally:
        if own["trace"] is not None:
            own["trace"].close()
        own["store"].close()


def _open_conversation(
    agent: Agent, session_id: str | None, *, persist: bool, new: bool
) -> Conversation:
    """The chat's conversation; a persisted one says on stderr what it resumed."""
    if not persist:
        return agent.conversation(session_id)
    assert session_id is not None
    if new:
        from skillshelf.agent.history import clear_history

        clear_history(agent.store, session_id, agent.name)
    conversation = agent.conversation(session_id, persist=True)
    if conversation.history_problem is not None:
        click.echo(
            f"warning: the stored history of session {session_id!r} cannot be read "
            f"({conversation.history_problem}); starting a fresh conversation",
            err=True,
        )
    elif conversation.restored:
        click.echo(
            f"resumed session {session_id}: {conversation.restored} earlier messages", err=True
        )
    return conversation


class _Display:
    """Streams text to stdout and tool calls, one line each, to stderr."""

    def __init__(self) -> None:
        self.mid_line = False

    def text(self, piece: str) -> None:
        click.echo(piece, nl=False)
        self.mid_line = not piece.endswith("\n")

    def tool(self, record: ToolRecord) -> None:
        if self.mid_line:
            click.echo()
            self.mid_line = False
        arguments = json.dumps(record.arguments, ensure_ascii=False, default=str)
        if len(arguments) > 80:
            arguments = arguments[:79] + "…"
        click.echo(f"· {record.tool} {arguments} → {record.status}", err=True)


def _turn(conversation: Conversation, message: str) -> bool:
    """Send one message and show the answer; False (after saying why) when it failed."""
    import anyio

    display = _Display()
    try:
        anyio.run(lambda: conversation.send(message, on_text=display.text, on_tool=display.tool))
    except SkillshelfError as exc:  # one failed turn; an interactive chat carries on
        if display.mid_line:
            click.echo()
        click.echo(f"error: {exc}", err=True)
        return False
    click.echo()
    return True


def _interactive(conversation: Conversation) -> None:
    with contextlib.suppress(ImportError):  # line editing and history for input()
        import readline  # noqa: F401
    interactive = sys.stdin.isatty()
    if interactive:
        click.echo(
            "skillshelf chat — /exit or end of input to quit; /skill-name args runs a skill.",
            err=True,
        )
    while True:
        try:
            line = input("> " if interactive else "")
        except EOFError:
            break
        if line.strip() in _EXIT_WORDS:
            break
        if line.strip():
            _turn(conversation, line)


# -- --watch ---------------------------------------------------------------------------------


def _require_watchfiles() -> None:
    try:
        import watchfiles  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError("watch", module="watchfiles", feature="--watch") from exc


@contextlib.contextmanager
def _watching(repo: Repository, *, enabled: bool) -> Iterator[None]:
    """Keep ``repo`` fresh while the block runs (a watcher thread), when ``enabled``."""
    if not enabled:
        yield
        return
    from skillshelf.repository.watch import Watcher, watched_paths

    if not watched_paths(repo):
        click.echo(
            "warning: --watch: no skill folder to watch (archive and URL roots are not watched)",
            err=True,
        )
        yield
        return
    watcher = Watcher(repo, on_change=_WatchReport(repo)).start()
    try:
        if watcher.error is not None:
            fail(f"--watch: {watcher.error}")
        yield
    finally:
        watcher.stop()


class _WatchReport:
    """Tells on stderr what each refresh changed (runs in the watcher thread).

    A problem is reported once, when it appears or its reason changes; problems present when
    the chat started are not repeated.
    """

    def __init__(self, repo: Repository) -> None:
        self.repo = repo
        self.reported = _problems(repo.skipped)

    def __call__(self, changes: Changes) -> None:
        line = _change_line(changes)
        if line is not None:
            click.echo(line, err=True)
        skipped = self.repo.skipped
        for warning in _skipped_warnings(skipped, self.reported):
            click.echo(warning, err=True)
        self.reported = _problems(skipped)


def _change_line(changes: Changes) -> str | None:
    """The status line for a refresh: ``skills changed: +added ~edited -removed``.

    Returns:
        None when no skill changed.
    """
    parts = [
        *(f"+{name}" for name in changes.added),
        *(f"~{name}" for name in changes.changed),
        *(f"-{name}" for name in changes.removed),
    ]
    return "skills changed: " + " ".join(parts) if parts else None


def _skipped_warnings(skipped: Sequence[Skipped], reported: Mapping[str, str]) -> list[str]:
    """Warning lines for the unusable SKILL.md files not yet reported with the same reason.

    Args:
        skipped: The repository's unusable SKILL.md files after a refresh.
        reported: Reasons already reported, by SKILL.md path.
    """
    lines = []
    for item in skipped:
        reason = _reason(item)
        if reported.get(item.path) == reason:
            continue
        if any(d.code == "skill.stale" for d in item.diagnostics):
            name = os.path.basename(os.path.dirname(item.path))
            lines.append(
                f"warning: skill {name!r} was edited into an invalid state; its last good "
                f"version stays until the error is fixed: {reason} ({item.path})"
            )
        else:
            lines.append(f"warning: not a usable skill: {reason} ({item.path})")
    return lines


def _problems(skipped: Sequence[Skipped]) -> dict[str, str]:
    return {item.path: _reason(item) for item in skipped}


def _reason(item: Skipped) -> str:
    errors = [d for d in item.diagnostics if d.severity == "error"]
    if not errors:
        return item.reason
    first = errors[0]
    return f"{first.message} (line {first.line})" if first.line else first.message

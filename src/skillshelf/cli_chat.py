"""``skillshelf chat``: talk to a model that has the skills, from the terminal.

With ``-m`` one message goes in and the final answer comes out on stdout (exit 0); without it,
an interactive prompt keeps the conversation's history until end of input or ``/exit``. The
answer streams as it arrives; each tool call is one status line on stderr.
"""

from __future__ import annotations

import contextlib
import json
import sys
from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli import _fail, _repo_from, main, root_options
from skillshelf.errors import SkillshelfError, UsageError

if TYPE_CHECKING:
    from skillshelf.agent import Conversation, ToolRecord

__all__ = ["chat"]

_EXIT_WORDS = frozenset({"/exit", "/quit"})


@main.command()
@root_options
@click.option(
    "--model",
    "model_spec",
    required=True,
    metavar="SPEC",
    help="openai:NAME, anthropic:NAME or scripted:FILE (a JSON list of replies).",
)
@click.option("--base-url", help="The provider's URL, e.g. http://127.0.0.1:8000/v1 for vLLM.")
@click.option(
    "--api-key-env",
    metavar="VAR",
    help="Environment variable holding the API key (default OPENAI_API_KEY / ANTHROPIC_API_KEY).",
)
@click.option("-m", "--message", help="Send this one message, print the answer and exit.")
@click.option(
    "--trace",
    "trace_path",
    type=click.Path(dir_okay=False),
    help="Append JSONL decision records here.",
)
@click.option("--session", "session_id", help="Session id (keeps skill state in --store).")
@click.option(
    "--store", "store_url", help="Session store URL (memory://, sqlite:///PATH, redis://…)."
)
@click.option("--instructions", default="You are a helpful assistant.", show_default=True)
@click.option("--max-steps", type=click.IntRange(1), default=20, show_default=True)
@click.option("--no-stream", is_flag=True, help="Wait for whole replies instead of streaming.")
def chat(
    model_spec: str,
    base_url: str | None,
    api_key_env: str | None,
    message: str | None,
    trace_path: str | None,
    session_id: str | None,
    store_url: str | None,
    instructions: str,
    max_steps: int,
    no_stream: bool,
    **kwargs: Any,
) -> None:
    """Chat with a model that can load and use the skills."""
    from skillshelf.agent import Agent
    from skillshelf.models import open_model
    from skillshelf.stores import open_store
    from skillshelf.trace import Trace

    repo = _repo_from(kwargs)
    try:
        model = open_model(
            model_spec, base_url=base_url, api_key_env=api_key_env, stream=not no_stream
        )
        store = open_store(store_url)
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    except SkillshelfError as exc:
        _fail(str(exc))
    trace = Trace(trace_path) if trace_path else None
    try:
        agent = Agent(
            model, repo, instructions=instructions, store=store, max_steps=max_steps, trace=trace
        )
        conversation = agent.conversation(session_id)
        if message is not None:
            if not _turn(conversation, message):
                raise SystemExit(1)
        else:
            _interactive(conversation)
    finally:
        if trace is not None:
            trace.close()
        store.close()


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
    except UsageError as exc:
        raise click.UsageError(str(exc)) from None
    except SkillshelfError as exc:
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

"""Slash commands in a LangChain run: the messages :class:`SkillsMiddleware` adds when the
user's new message starts with ``/skill-name args``.

As in skillshelf's own loop, each command becomes a synthetic ``skill_load`` call (an
``AIMessage``) and its result (a ``ToolMessage`` with the body, arguments substituted), so the
model's first request already has the skill. A command the user may not give (an unknown
name, a model-only skill) never reaches the model: the run ends with the reason as its answer.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from langchain_core.messages import AIMessage, AnyMessage, HumanMessage, ToolMessage

from skillshelf.core.slash import SlashCommand, SlashCommandError
from skillshelf.harness import SkillSession, ToolRecord

__all__ = [
    "REFUSED_KEY",
    "Commands",
    "read_commands",
    "refusal_message",
    "run_commands",
    "tool_message",
]

# response_metadata key of the answer that refuses a command (its value: the error's name).
REFUSED_KEY = "skillshelf_refused"


@dataclass(slots=True)
class Commands:
    """What the user's new message asks for: its commands, or why they are refused."""

    commands: list[SlashCommand] = field(default_factory=list)
    refusal: str | None = None


def read_commands(session: SkillSession, messages: Sequence[AnyMessage]) -> Commands:
    """The commands of the run's new user message (the last message, when it is the user's;
    an invocation that added none has no new message and no commands)."""
    last = messages[-1] if messages else None
    if not isinstance(last, HumanMessage):
        return Commands()
    try:
        return Commands(session.commands(last.text))
    except SlashCommandError as exc:
        return Commands(refusal=str(exc))


def run_commands(
    session: SkillSession, commands: Sequence[SlashCommand], messages: Sequence[AnyMessage]
) -> tuple[list[AnyMessage], list[ToolRecord]]:
    """Invoke each command: the synthetic call and its results, and the records."""
    taken = {str(m.tool_call_id) for m in messages if isinstance(m, ToolMessage)}
    calls: list[dict[str, Any]] = []
    results: list[AnyMessage] = []
    records = []
    for index, command in enumerate(commands):
        call_id, n = f"slash_{len(messages)}_{index}", 0
        while call_id in taken:  # a trimmed history may reuse a length
            n += 1
            call_id = f"slash_{len(messages)}_{index}_{n}"
        record = session.invoke(command, call_id)
        call = {"name": "skill_load", "args": {"skill": command.skill}, "id": call_id}
        calls.append(call)
        results.append(tool_message(call, record))
        records.append(record)
    return [AIMessage(content="", tool_calls=calls), *results], records


def refusal_message(reason: str) -> AIMessage:
    """The run's answer when the user's command is refused (the model is not called)."""
    return AIMessage(content=reason, response_metadata={REFUSED_KEY: SlashCommandError.__name__})


def tool_message(call: Mapping[str, Any], record: ToolRecord) -> ToolMessage:
    """A call's result as LangChain carries it (``status="error"`` unless it is ok)."""
    return ToolMessage(
        content=record.content,
        tool_call_id=call["id"],
        name=call["name"],
        status="error" if record.status != "ok" else "success",
    )

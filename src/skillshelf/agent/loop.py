"""The agent: a model with skills, the caller's tools and the rules that govern them.

The system prompt is the caller's instructions, the skills catalog (within a budget, in a stable
order) and short guidance on the skill tools; its bytes change only when the visible skill set
does. :class:`Agent` holds the configuration and can itself be a tool of another agent;
:class:`~skillshelf.agent.conversation.Conversation` runs the loop and keeps the history.
"""

from __future__ import annotations

import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from skillshelf.agent.config import GUIDANCE, AgentConfig
from skillshelf.agent.conversation import Conversation
from skillshelf.agent.history import HistoryLimit
from skillshelf.agent.results import (
    AgentError,
    EmptyResponseError,
    MaxStepsError,
    RepeatedToolFailureError,
    RetryPolicy,
    RunResult,
    ToolContext,
    ToolRecord,
    ToolSink,
)
from skillshelf.errors import UsageError
from skillshelf.harness import Trace
from skillshelf.models import TextSink
from skillshelf.tools import Tool

if TYPE_CHECKING:
    pass

__all__ = [
    "GUIDANCE",
    "Agent",
    "AgentError",
    "Conversation",
    "EmptyResponseError",
    "MaxStepsError",
    "RepeatedToolFailureError",
    "RetryPolicy",
    "RunResult",
    "ToolContext",
    "ToolRecord",
]


class Agent(AgentConfig):
    """An agent with skills: its configuration (the arguments of
    :class:`~skillshelf.agent.config.AgentConfig`); :meth:`conversation` holds the history."""

    def conversation(
        self,
        session_id: str | None = None,
        *,
        trace: Trace | None = None,
        persist: bool = False,
        history_limit: HistoryLimit | None = None,
    ) -> Conversation:
        """A new conversation (history) in session ``session_id`` (default: a new id).

        With ``persist`` the history is kept in the agent's store and a conversation of the
        same session resumes it (see :class:`~skillshelf.agent.conversation.Conversation`).
        """
        return Conversation(
            self,
            session_id or uuid.uuid4().hex,
            trace=trace,
            persist_history=persist,
            history_limit=history_limit,
        )

    async def run(
        self,
        message: str,
        *,
        session_id: str | None = None,
        on_text: TextSink | None = None,
        on_tool: ToolSink | None = None,
    ) -> RunResult:
        """One message in a fresh conversation; returns the final answer."""
        return await self.conversation(session_id).send(message, on_text=on_text, on_tool=on_tool)

    def run_sync(self, message: str, *, session_id: str | None = None) -> RunResult:
        """:meth:`run` for synchronous callers."""
        return anyio.run(lambda: self.run(message, session_id=session_id))

    def as_tool(self, *, name: str | None = None, description: str | None = None) -> Tool:
        """This agent as a tool of another: it gets a task, runs with its own skill state
        (same session, its own agent key, none of the caller's declared loads) and returns
        its final answer."""
        text = description or self.description or f"Delegate a task to the {self.name} agent."
        parameters = {
            "type": "object",
            "properties": {"task": {"type": "string", "description": "The task, in full."}},
            "required": ["task"],
        }
        return _AgentTool(name or self.name, text, parameters, _unused, agent=self)


def _unused(**_kwargs: Any) -> None:  # pragma: no cover - _AgentTool overrides invoke
    raise AssertionError


@dataclass(frozen=True, eq=False)
class _AgentTool(Tool):
    agent: Agent | None = field(default=None, kw_only=True)

    async def invoke(self, arguments: Mapping[str, Any], context: Any) -> Any:
        assert self.agent is not None and isinstance(context, ToolContext)
        if context.agent == self.agent.name:
            raise UsageError(f"Sub-agent {self.agent.name!r} has its caller's name")
        trace = self.agent.trace or context.trace
        conversation = Conversation(self.agent, context.session_id, trace=trace)
        result = await conversation.send(str(arguments["task"]))
        return result.output

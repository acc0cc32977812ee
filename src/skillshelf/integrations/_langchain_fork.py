"""``context: fork`` in a LangChain run: a skill that runs in a sub-agent when it is loaded.

The sub-agent is ``create_agent(model, tools=[], middleware=[SkillsMiddleware(repo,
settings=settings.forked(skill))])``: the model of the run that loaded the skill (the
middleware remembers each conversation's model from its last model call, since a tool call
has no model of its own), the skill tools only, its own skill state (agent
``<agent>:fork:<skill>``) over the same conversation key, and the run's ``recursion_limit``.
Its task is the skill's body, arguments substituted; only its final answer comes back, as the
``skill_load`` result (the harness decides when a load forks and words the result). Called
inside a tool call, it runs as a LangGraph subgraph of that call: it inherits the run's config
(callbacks, checkpointer).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

import anyio
from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import HumanMessage
from langchain_core.runnables import RunnableConfig
from langgraph.config import get_config
from langgraph.errors import GraphRecursionError

from skillshelf.errors import SkillshelfError, UsageError
from skillshelf.harness import Fork, Recent
from skillshelf.skills.skill import Skill

__all__ = ["Models", "fork_runner"]

# Conversations whose model is remembered; one evicted is relearnt at its next model call.
_REMEMBERED_MODELS: Final = 256


class Models:
    """The chat model of each conversation's last model call (the most recent few hundred)."""

    def __init__(self) -> None:
        self._models: Recent[str, BaseChatModel] = Recent(_REMEMBERED_MODELS)

    def remember(self, conversation: str, model: BaseChatModel) -> None:
        self._models.put(conversation, model)

    def get(self, conversation: str) -> BaseChatModel | None:
        return self._models.get(conversation)


def fork_runner(
    conversation: str,
    model: BaseChatModel | None,
    middleware: Callable[[Skill], AgentMiddleware[Any, Any, Any]],
    *,
    sync: bool,
) -> Fork:
    """The :data:`~skillshelf.harness.Fork` of one tool call in ``conversation``.

    Args:
        conversation: The conversation key the sub-agent's skill state is kept under.
        model: The run's chat model (None: no model call seen, so the fork fails, graded).
        middleware: The sub-agent's :class:`SkillsMiddleware` for a skill, bound to
            ``conversation`` (never taken from the sub-agent's input state).
        sync: The run is synchronous: the sub-agent runs with ``invoke`` (a worker thread),
            so a caller's sync-only middleware and model keep working; else ``ainvoke``.
    """

    async def run(skill: Skill, task: str) -> str:
        if model is None:
            raise UsageError(f"no model call of conversation {conversation!r} was seen")
        agent: Any = create_agent(model, tools=[], middleware=[middleware(skill)])
        inputs = {"messages": [HumanMessage(content=task)]}
        config = _limit()
        try:
            if sync:
                state = await anyio.to_thread.run_sync(agent.invoke, inputs, config)
            else:
                state = await agent.ainvoke(inputs, config)
        except GraphRecursionError as exc:
            raise SkillshelfError(f"it stopped without a final answer ({exc})") from exc
        messages = state.get("messages") or []
        return str(messages[-1].text) if messages else ""

    return run


def _limit() -> RunnableConfig:
    """The run's ``recursion_limit`` for the sub-agent: ``create_agent`` binds its own
    (9 999), which a subgraph would take over the limit its caller chose."""
    try:
        limit = get_config().get("recursion_limit")
    except RuntimeError:  # outside a runnable context
        return {}
    return {} if limit is None else {"recursion_limit": limit}

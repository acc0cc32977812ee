"""Claude Code's ``context: fork``: a skill that runs in a sub-agent when it is loaded.

The sub-agent gets the skill's body (arguments substituted) as its task and runs as an
:meth:`~skillshelf.agent.loop.Agent.as_tool` sub-agent does: same session, its own agent key
and skill state. Its steps stay out of the caller's conversation; only its final answer comes
back, as the ``skill_load`` result.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from skillshelf.agent.config import AgentConfig
from skillshelf.core.session import SessionState
from skillshelf.errors import clip
from skillshelf.skills.skill import Skill
from skillshelf.tools.user_tools import Tool

__all__ = ["fork_config", "fork_result", "forks", "named_agent_tool"]

FORK: Final = "fork"


def forks(skill: Skill, agent: AgentConfig, state: SessionState) -> bool:
    """Whether loading ``skill`` runs it in a sub-agent: it says ``context: fork``, this agent
    is not already its fork, and it is not loaded here already."""
    context = (skill.manifest.context or "").strip().casefold()
    return context == FORK and agent.fork_of != skill.name and skill.name not in state.loaded


def named_agent_tool(tools: Sequence[Tool], wanted: str | None) -> Tool | None:
    """The caller's sub-agent tool (``other.as_tool()``) whose agent is named ``wanted``."""
    if not wanted or not wanted.strip():
        return None
    for tool in tools:
        sub = getattr(tool, "agent", None)
        if isinstance(sub, AgentConfig) and sub.name == wanted.strip():
            return tool
    return None


def fork_config(parent: AgentConfig, skill: Skill) -> AgentConfig:
    """A copy of ``parent`` (same model, tools, workspace, tool style and rules; its own skill
    state, named ``<parent>:fork:<skill>``, and no declared loads) that runs ``skill``."""
    sub = AgentConfig(
        parent.model,
        parent.repo,
        name=f"{parent.name}:fork:{skill.name}",
        instructions=parent.instructions,
        tools=parent.tools,
        activations=parent.activations,
        store=parent.store,
        load_mode=parent.load_mode,
        max_loaded=parent.max_loaded,
        max_steps=parent.max_steps,
        catalog_format=parent.catalog_format,
        catalog_budget=parent.catalog_budget,
        catalog_placement=parent.catalog_placement,
        placement=parent.placement,
        tool_style=parent.tool_style,
        enforce_allowed_tools=parent.enforce_allowed_tools,
        retry=parent.retry,
        visible=parent.visible,
        workspace=parent.workspace,
        executor=parent.executor,
        exec_policy=parent.exec_policy,
        tool_timeout_s=parent.tool_timeout_s,
        tool_retries=parent.tool_retries,
    )
    sub.fork_of = skill.name
    return sub


def fork_result(skill: Skill, answer: str) -> str:
    """The ``skill_load`` result of a forked skill: who ran it and its final answer."""
    by = f" ({clip(skill.manifest.agent, 80)!r})" if skill.manifest.agent else ""
    return (
        f"The skill {skill.name!r} ran in a sub-agent{by}; its steps are not shown. "
        f"Its final answer:\n\n{answer}"
    )

"""Claude Code's ``context: fork``: a skill that runs in a sub-agent when it is loaded.

The sub-agent gets the skill's body (arguments substituted) as its task and runs as an
:meth:`~skillshelf.agent.loop.Agent.as_tool` sub-agent does: same session, its own agent key
and skill state. Its steps stay out of the caller's conversation; only its final answer comes
back, as the ``skill_load`` result (the harness decides when a load forks and words the
result; see :class:`~skillshelf.harness.SkillSession`).
"""

from __future__ import annotations

from collections.abc import Sequence

from skillshelf.agent.config import AgentConfig
from skillshelf.skills.skill import Skill
from skillshelf.tools import Tool

__all__ = ["fork_config", "named_agent_tool"]


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
    """A copy of ``parent`` (same model and settings: tools, workspace, tool style, rules;
    its own skill state, named ``<parent>:fork:<skill>``, and no declared loads) that runs
    ``skill``."""
    return AgentConfig(
        parent.model,
        parent.repo,
        settings=parent.settings.forked(skill.name),
        max_steps=parent.max_steps,
        retry=parent.retry,
    )

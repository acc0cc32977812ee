"""An agent's configuration: model, skills, tools, rules, and the system prompt they make.

:class:`AgentConfig` is what a :class:`~skillshelf.agent.conversation.Conversation` reads;
:class:`~skillshelf.agent.loop.Agent` adds running (conversations, sub-agent tools) on top.
The system prompt is the caller's instructions, the skills catalog (within a budget, in a stable
order) and short guidance on the skill tools; its bytes change only when the visible skill set
does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Final, Literal

from skillshelf.agent.materialize import Placement
from skillshelf.agent.results import (
    DEFAULT_MAX_STEPS,
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    RetryPolicy,
)
from skillshelf.agent.tool_style import GUIDANCE, ToolStyle, guidance
from skillshelf.agent.trace import Trace
from skillshelf.core.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.core.render import render_system_reminder
from skillshelf.core.session import DEFAULT_MAX_LOADED, LoadMode
from skillshelf.errors import UsageError
from skillshelf.models import Model
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, open_store
from skillshelf.tools.user_tools import Activation, Tool, check_names

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager

__all__ = [
    "DEFAULT_CATALOG_BUDGET",
    "DEFAULT_TOOL_RETRIES",
    "DEFAULT_TOOL_TIMEOUT_S",
    "GUIDANCE",
    "AgentConfig",
    "CatalogPlacement",
    "skills_catalog",
    "skills_prompt",
]

DEFAULT_CATALOG_BUDGET: Final = 12_000  # characters: a few hundred skills with trimmed text
CatalogPlacement = Literal["system", "reminder"]
_REMINDER_LEAD: Final = "The following skills are available in this conversation:"


def skills_catalog(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = DEFAULT_CATALOG_BUDGET,
) -> str:
    """The catalog of the skills a model may load (the model-invocable ones of ``skills``);
    empty when there are none. The one rendering every face uses (the agent loop and the
    framework integrations), so the bytes agree and stay stable for prompt caching."""
    entries = [CatalogEntry.of(s) for s in skills if s.model_invocable]
    if not entries:
        return ""
    return render_catalog(entries, format=format, budget_chars=budget_chars)


def skills_prompt(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = DEFAULT_CATALOG_BUDGET,
) -> str:
    """:func:`skills_catalog` followed by the tool guidance; empty when no skill is loadable."""
    catalog = skills_catalog(skills, format=format, budget_chars=budget_chars)
    return f"{catalog}\n\n{GUIDANCE}" if catalog else ""


class AgentConfig:
    """An agent's configuration (see :class:`~skillshelf.agent.loop.Agent`, which runs it).

    A sub-agent that runs a ``context: fork`` skill has ``fork_of`` set to that skill, so its
    own loads of it are ordinary loads, not another fork.

    Args:
        model: The model (see :mod:`skillshelf.models`).
        repo: The skills.
        name: The agent's name (its skill state is kept under it; distinct per sub-agent).
        instructions: The caller's part of the system prompt.
        description: What the agent does, when it is another agent's tool.
        tools: User tools always offered.
        activations: Tools offered only once a skill is loaded.
        declared: Skills (or ``(skill, docs)``) loaded for the whole session up front.
        store: Session store (default: in-memory, private to this agent).
        load_mode: How long a model's load lasts (``once``, ``turn``, ``session``).
        max_loaded: Skills kept loaded at once; loading one more evicts the least recently
            touched.
        max_steps: Model requests per user message before :class:`MaxStepsError`.
        catalog_format: ``xml`` or ``markdown``.
        catalog_budget: Characters the catalog may take (None: no limit).
        catalog_placement: Where the catalog goes: ``system`` (the system prompt) or
            ``reminder`` (a ``<system-reminder>`` user message before the conversation, as
            Claude Code does; the system prompt keeps the instructions and guidance).
        placement: Where loaded content goes (``tool_result`` keeps the system prompt stable).
        tool_style: How the skill tools are offered: ``skillshelf`` (the contract) or
            ``claude-code`` (one ``Skill`` tool; see :mod:`skillshelf.agent.tool_style`).
        enforce_allowed_tools: While the active (last loaded) skill declares
            ``allowed-tools``, refuse calls to user tools outside them.
        retry: Retries of failed model requests.
        trace: Where decision records go.
        visible: Filter on the skills this agent may see.
        workspace: Enables ``workspace_exec`` (see
            :class:`~skillshelf.tools.skill_tools.SkillTools`).
        executor: Runs ``workspace_exec`` commands (default: ``auto``).
        exec_policy: What ``workspace_exec`` may run.
        tool_timeout_s: Seconds a user tool's call may take, unless the tool sets its own
            ``timeout_s``.
        tool_retries: Identical failing calls of a user tool the model may retry before it is
            told to stop, unless the tool sets its own ``retries``.
    """

    fork_of: str | None = None

    def __init__(
        self,
        model: Model,
        repo: Repository,
        *,
        name: str = "main",
        instructions: str = "",
        description: str | None = None,
        tools: Sequence[Tool] = (),
        activations: Sequence[Activation] = (),
        declared: Sequence[str | tuple[str, Sequence[str]]] = (),
        store: SessionStore | None = None,
        load_mode: LoadMode = "turn",
        max_loaded: int = DEFAULT_MAX_LOADED,
        max_steps: int = DEFAULT_MAX_STEPS,
        catalog_format: CatalogFormat = "xml",
        catalog_budget: int | None = DEFAULT_CATALOG_BUDGET,
        catalog_placement: CatalogPlacement = "system",
        placement: Placement = "tool_result",
        tool_style: ToolStyle = "skillshelf",
        enforce_allowed_tools: bool = False,
        retry: RetryPolicy | None = None,
        trace: Trace | None = None,
        visible: Callable[[Skill], bool] | None = None,
        workspace: WorkspaceManager | None = None,
        executor: Executor | None = None,
        exec_policy: ExecPolicy | None = None,
        tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S,
        tool_retries: int = DEFAULT_TOOL_RETRIES,
    ) -> None:
        if max_steps < 1:
            raise UsageError("max_steps must be at least 1")
        if max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
        if not tool_timeout_s > 0:
            raise UsageError("tool_timeout_s must be positive")
        if tool_retries < 0:
            raise UsageError("tool_retries must not be negative")
        self.model = model
        self.repo = repo
        self.name = name
        self.instructions = instructions
        self.description = description
        self.tools = list(tools)
        self.activations = list(activations)
        self.declared = list(declared)
        self.store = store if store is not None else open_store(None)
        self.load_mode: LoadMode = load_mode
        self.max_loaded = max_loaded
        self.max_steps = max_steps
        self.catalog_format: CatalogFormat = catalog_format
        self.catalog_budget = catalog_budget
        self.catalog_placement: CatalogPlacement = catalog_placement
        self.placement: Placement = placement
        self.tool_style: ToolStyle = tool_style
        self.enforce_allowed_tools = enforce_allowed_tools
        self.retry = retry or RetryPolicy()
        self.trace = trace
        self.visible = visible
        self.workspace = workspace
        self.executor = executor
        self.exec_policy = exec_policy
        self.tool_timeout_s = tool_timeout_s
        self.tool_retries = tool_retries
        self.warnings = check_names(self.tools, self.activations)

    def system_prompt(self) -> str:
        """The system prompt: instructions, catalog, guidance (stable bytes).

        With ``catalog_placement="reminder"`` the catalog is left out (see
        :meth:`catalog_reminder`)."""
        catalog = self._catalog()
        if not catalog:
            return self.instructions if self.instructions.strip() else ""
        if self.catalog_placement == "reminder":
            catalog = ""
        parts = [self.instructions.strip(), catalog, guidance(self.tool_style)]
        return "\n\n".join(p for p in parts if p.strip())

    def catalog_reminder(self) -> str | None:
        """The ``<system-reminder>`` user message carrying the catalog, when
        ``catalog_placement`` is ``reminder`` and a skill is visible; else None."""
        if self.catalog_placement != "reminder":
            return None
        catalog = self._catalog()
        return render_system_reminder(f"{_REMINDER_LEAD}\n\n{catalog}") if catalog else None

    def _catalog(self) -> str:
        """The catalog of the skills the model may load; empty when there are none."""
        skills = [s for s in self.repo.skills if self._sees(s)]
        return skills_catalog(skills, format=self.catalog_format, budget_chars=self.catalog_budget)

    def _sees(self, skill: Skill) -> bool:
        return self.visible is None or self.visible(skill)

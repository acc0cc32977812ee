"""An agent's configuration: a model, skills, and the harness settings that govern them.

:class:`AgentConfig` is what a :class:`~skillshelf.agent.conversation.Conversation` reads;
:class:`~skillshelf.agent.loop.Agent` adds running (conversations, sub-agent tools) on top.
Every harness option lives in one :class:`~skillshelf.harness.SkillSettings`; the keyword
arguments here are shortcuts that build it, and the harness itself (prompt, offered tools,
each call) is the one every face shares (:class:`~skillshelf.harness.Harness`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from skillshelf.agent.results import DEFAULT_MAX_STEPS, RetryPolicy
from skillshelf.core.catalog import CatalogFormat
from skillshelf.core.session import DEFAULT_MAX_LOADED, LoadMode
from skillshelf.errors import UsageError
from skillshelf.harness import (
    DEFAULT_CATALOG_BUDGET,
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    GUIDANCE,
    CatalogPlacement,
    DeclaredLoad,
    Harness,
    Placement,
    SkillSettings,
    ToolStyle,
    Trace,
    skills_catalog,
    skills_prompt,
)
from skillshelf.models import Model
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore
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


class AgentConfig:
    """An agent's configuration (see :class:`~skillshelf.agent.loop.Agent`, which runs it).

    The harness options are the fields of :class:`~skillshelf.harness.SkillSettings`; pass
    ``settings``, or the keyword shortcuts below, or both (a shortcut given overrides the
    value in ``settings``). They are read back as attributes (``agent.load_mode``).

    Args:
        model: The model (see :mod:`skillshelf.models`).
        repo: The skills.
        settings: The harness options (default: :class:`~skillshelf.harness.SkillSettings`).
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
            ``claude-code`` (one ``Skill`` tool; see :mod:`skillshelf.harness`).
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

    def __init__(
        self,
        model: Model,
        repo: Repository,
        *,
        settings: SkillSettings | None = None,
        name: str = "main",
        instructions: str = "",
        description: str | None = None,
        tools: Sequence[Tool] = (),
        activations: Sequence[Activation] = (),
        declared: Sequence[DeclaredLoad] = (),
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
        self.model = model
        self.repo = repo
        self.description = description
        self.max_steps = max_steps
        self.retry = retry or RetryPolicy()
        settings = SkillSettings.of(
            settings,
            agent=name,
            instructions=instructions,
            tools=tuple(tools),
            activations=tuple(activations),
            declared=tuple(declared),
            store=store,
            load_mode=load_mode,
            max_loaded=max_loaded,
            catalog_format=catalog_format,
            catalog_budget=catalog_budget,
            catalog_placement=catalog_placement,
            placement=placement,
            tool_style=tool_style,
            enforce_allowed_tools=enforce_allowed_tools,
            trace=trace,
            visible=visible,
            workspace=workspace,
            executor=executor,
            exec_policy=exec_policy,
            tool_timeout_s=tool_timeout_s,
            tool_retries=tool_retries,
        )
        self.harness = Harness(repo, settings, source="agent")
        self.settings = self.harness.settings
        self.warnings = check_names(self.tools, self.activations)

    @property
    def name(self) -> str:
        return self.settings.agent

    @property
    def tools(self) -> list[Tool]:
        return list(self.settings.tools)

    @property
    def activations(self) -> list[Activation]:
        return list(self.settings.activations)

    @property
    def declared(self) -> list[DeclaredLoad]:
        return list(self.settings.declared)

    @property
    def store(self) -> SessionStore:
        store = self.settings.store
        assert store is not None  # the harness gave it one
        return store

    def __getattr__(self, name: str) -> Any:
        # The other harness options read as attributes too (agent.load_mode, agent.trace).
        settings = self.__dict__.get("settings")
        if settings is not None and name in _OPTIONS:
            return getattr(settings, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    if TYPE_CHECKING:
        instructions: str
        load_mode: LoadMode
        max_loaded: int
        catalog_format: CatalogFormat
        catalog_budget: int | None
        catalog_placement: CatalogPlacement
        placement: Placement
        tool_style: ToolStyle
        enforce_allowed_tools: bool
        trace: Trace | None
        visible: Callable[[Skill], bool] | None
        workspace: WorkspaceManager | None
        executor: Executor | None
        exec_policy: ExecPolicy | None
        tool_timeout_s: float
        tool_retries: int
        fork_of: str | None

    def system_prompt(self) -> str:
        """The system prompt: instructions, catalog, guidance (stable bytes).

        With ``catalog_placement="reminder"`` the catalog is left out (see
        :meth:`catalog_reminder`)."""
        return self.harness.instructions()

    def catalog_reminder(self) -> str | None:
        """The ``<system-reminder>`` user message carrying the catalog, when
        ``catalog_placement`` is ``reminder`` and a skill is visible; else None."""
        return self.harness.catalog_reminder()


_OPTIONS = frozenset(
    {
        "instructions",
        "load_mode",
        "max_loaded",
        "catalog_format",
        "catalog_budget",
        "catalog_placement",
        "placement",
        "tool_style",
        "enforce_allowed_tools",
        "trace",
        "visible",
        "workspace",
        "executor",
        "exec_policy",
        "tool_timeout_s",
        "tool_retries",
        "fork_of",
    }
)

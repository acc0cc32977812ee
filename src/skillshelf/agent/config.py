"""An agent's configuration: a model, skills, and the harness settings that govern them.

:class:`AgentConfig` is what a :class:`~skillshelf.agent.conversation.Conversation` reads;
:class:`~skillshelf.agent.loop.Agent` adds running (conversations, sub-agent tools) on top.
Every harness option lives in one :class:`~skillshelf.harness.SkillSettings`; the keyword
arguments here are shortcuts that build it, and the harness itself (prompt, offered tools,
each call) is the one every face shares (:class:`~skillshelf.harness.Harness`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Unpack

from skillshelf.agent.results import DEFAULT_MAX_STEPS, RetryPolicy
from skillshelf.core.catalog import CatalogFormat
from skillshelf.core.session import LoadMode
from skillshelf.errors import UsageError
from skillshelf.harness import (
    DEFAULT_CATALOG_BUDGET,
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    GUIDANCE,
    CatalogPlacement,
    DeclaredLoad,
    ForkTree,
    Harness,
    Placement,
    SettingsOptions,
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
from skillshelf.tools import Activation, Tool, check_names

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
        name: The agent's name (its skill state is kept under it; distinct per sub-agent):
            the settings' ``agent``.
        description: What the agent does, when it is another agent's tool.
        max_steps: Model requests per user message before :class:`MaxStepsError`.
        retry: Retries of failed model requests.
        options: Keyword shortcuts for the fields of ``settings``, applied over it:
            ``instructions`` (the caller's part of the system prompt), ``tools`` (always
            offered), ``activations`` (offered once a skill is loaded), ``declared`` (skills
            or ``(skill, docs)`` loaded for the whole session up front), ``store``,
            ``load_mode`` (``once``, ``turn``, ``session``), ``max_loaded``,
            ``catalog_format``, ``catalog_budget``, ``catalog_placement`` (``system`` or
            ``reminder``), ``placement`` (where loaded content goes), ``tool_style``
            (``skillshelf`` or ``claude-code``), ``enforce_allowed_tools``, ``trace``,
            ``visible``, ``workspace``, ``executor``, ``exec_policy``, ``tool_timeout_s``,
            ``tool_retries``; see :class:`~skillshelf.harness.SkillSettings`.
    """

    def __init__(
        self,
        model: Model,
        repo: Repository,
        *,
        settings: SkillSettings | None = None,
        name: str | None = None,
        description: str | None = None,
        max_steps: int = DEFAULT_MAX_STEPS,
        retry: RetryPolicy | None = None,
        **options: Unpack[SettingsOptions],
    ) -> None:
        if max_steps < 1:
            raise UsageError("max_steps must be at least 1")
        self.model = model
        self.repo = repo
        self.description = description
        self.max_steps = max_steps
        self.retry = retry or RetryPolicy()
        if name is not None:
            options["agent"] = name
        settings = SkillSettings.of(settings, **options)
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
        fork_tree: ForkTree | None

    def system_prompt(self) -> str:
        """The system prompt: instructions, catalog, guidance (stable bytes).

        With ``catalog_placement="reminder"`` the catalog is left out (see
        :meth:`catalog_reminder`)."""
        return self.harness.instructions()

    def catalog_reminder(self) -> str | None:
        """The ``<system-reminder>`` user message carrying the catalog, when
        ``catalog_placement`` is ``reminder`` and a skill is visible; else None."""
        return self.harness.catalog_reminder()


# Every harness option reads as an attribute (those with a property above read through it).
_OPTIONS = frozenset(f.name for f in dataclasses.fields(SkillSettings))

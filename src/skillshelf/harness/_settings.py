"""Every option of the harness in one frozen value: what the model sees, how long loads last,
which tools it is offered, what it may run and where records go.

The agent loop, ``serve`` and the framework integrations take a :class:`SkillSettings` (their
keyword arguments are shortcuts that build one), so each option is declared and checked here
once and reaches every face alike.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, TypedDict, get_args

from skillshelf.core.catalog import CatalogFormat
from skillshelf.core.session import DEFAULT_MAX_LOADED, LoadMode
from skillshelf.errors import UsageError
from skillshelf.harness._forks import ForkTree
from skillshelf.harness._materialize import Placement
from skillshelf.harness._records import DEFAULT_TOOL_RETRIES, DEFAULT_TOOL_TIMEOUT_S
from skillshelf.harness._tool_style import TOOL_STYLES, ToolStyle
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, check_name
from skillshelf.tools import ALL_TOOLS, Activation, Tool

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager
    from skillshelf.harness._trace import Trace

__all__ = [
    "DEFAULT_CATALOG_BUDGET",
    "DEFAULT_RELEVANT_SKILLS",
    "MAX_RELEVANT_SKILLS",
    "CatalogPlacement",
    "DeclaredLoad",
    "SettingsOptions",
    "SkillSettings",
]

DEFAULT_CATALOG_BUDGET: Final = 12_000  # characters: a few hundred skills with trimmed text
# Skills shown beside each user message when the catalog cannot show every description.
DEFAULT_RELEVANT_SKILLS: Final = 10
MAX_RELEVANT_SKILLS: Final = 20
CatalogPlacement = Literal["system", "reminder"]
DeclaredLoad = str | tuple[str, Sequence[str]]
_LOAD_MODES: Final = get_args(LoadMode)
_FORMATS: Final = get_args(CatalogFormat)
_PLACEMENTS: Final = get_args(CatalogPlacement)
_CONTENT_PLACEMENTS: Final = get_args(Placement)


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillSettings:
    """The harness's options (frozen: derive a variant with :meth:`replace`).

    Attributes:
        agent: The agent's name: its skill state is kept under it within a conversation
            (distinct per sub-agent). It follows :data:`~skillshelf.stores.NAME_RULE` (no
            ``#``, no control characters, at most 256 characters).
        instructions: The caller's part of the system prompt, before the catalog.
        store: Session store for skill state (None: an in-memory store private to the
            harness that takes these settings).
        load_mode: How long a model's load lasts: ``once`` (the model request after it),
            ``turn`` (until the next user message) or ``session``.
        max_loaded: Skills kept loaded at once; one more evicts the least recently touched.
        visible: Filter on the skills the model may see.
        catalog_format: ``xml`` or ``markdown``.
        catalog_budget: Characters the catalog may take (None: no limit).
        catalog_placement: ``system`` (in the system prompt) or ``reminder`` (a
            ``<system-reminder>`` user message before the conversation, as Claude Code does).
        relevant_skills: When the budget leaves some skill without its description, how many
            of the best matches for each user message are shown beside it, with their whole
            descriptions (0: none; at most :data:`MAX_RELEVANT_SKILLS`). The system prompt
            stays byte-stable: the block travels with the message.
        guidance: Replaces the built-in guidance on the skill tools that follows the catalog
            (None: the tool style's own; the search-first rule still follows a cut catalog).
        skill_tools: Offer only these skill tools (names from the contract: ``skill_load``,
            ``skill_search``…; None: all). A call to another is answered as unavailable.
        placement: Where loaded content goes: ``tool_result`` (the system prompt stays
            byte-stable) or ``system``.
        tool_style: How the skill tools are offered: ``skillshelf`` (the contract) or
            ``claude-code`` (one ``Skill`` tool).
        tools: User tools always offered.
        activations: User tools offered only once a skill is loaded.
        declared: Skills (or ``(skill, docs)``) loaded for the whole session up front.
        enforce_allowed_tools: While the active (last loaded) skill declares
            ``allowed-tools``, refuse calls outside them.
        tool_timeout_s: Seconds a user tool's call may take, unless the tool sets its own.
        tool_retries: Identical failing calls of a user tool allowed before it is fatal,
            unless the tool sets its own.
        workspace: Enables ``workspace_exec`` (one workspace per conversation).
        executor: Runs ``workspace_exec`` commands (None: ``auto``).
        exec_policy: What ``workspace_exec`` may run.
        trace: Where JSON decision records go.
        fork_of: Set on the settings of a sub-agent running a ``context: fork`` skill: its own
            loads of that skill are ordinary loads, and its task (the skill's body) is never
            read for slash commands.
        fork_tree: Set with ``fork_of``: the sub-agent's depth and the sub-agents started
            under the same top-level load, which bound further forks
            (:data:`~skillshelf.harness.MAX_FORK_DEPTH`, ``MAX_FORK_AGENTS``).
    """

    agent: str = "main"
    instructions: str = ""
    store: SessionStore | None = None
    load_mode: LoadMode = "turn"
    max_loaded: int = DEFAULT_MAX_LOADED
    visible: Callable[[Skill], bool] | None = None
    catalog_format: CatalogFormat = "xml"
    catalog_budget: int | None = DEFAULT_CATALOG_BUDGET
    catalog_placement: CatalogPlacement = "system"
    relevant_skills: int = DEFAULT_RELEVANT_SKILLS
    guidance: str | None = None
    skill_tools: tuple[str, ...] | None = None
    placement: Placement = "tool_result"
    tool_style: ToolStyle = "skillshelf"
    tools: Sequence[Tool] = ()
    activations: Sequence[Activation] = ()
    declared: Sequence[DeclaredLoad] = ()
    enforce_allowed_tools: bool = False
    tool_timeout_s: float = DEFAULT_TOOL_TIMEOUT_S
    tool_retries: int = DEFAULT_TOOL_RETRIES
    workspace: WorkspaceManager | None = None
    executor: Executor | None = None
    exec_policy: ExecPolicy | None = None
    trace: Trace | None = None
    fork_of: str | None = None
    fork_tree: ForkTree | None = None

    def __post_init__(self) -> None:
        # Sequences given as lists are kept as tuples: the value stays frozen.
        for name in ("tools", "activations", "declared"):
            value = getattr(self, name)
            if not isinstance(value, tuple):
                object.__setattr__(self, name, tuple(value))
        if self.skill_tools is not None:
            object.__setattr__(self, "skill_tools", check_skill_tools(self.skill_tools))
        for name, allowed in _CHOICES.items():
            _choice(name, getattr(self, name), allowed)
        check_name("agent name", self.agent)
        if isinstance(self.max_loaded, bool) or not isinstance(self.max_loaded, int):
            raise UsageError("max_loaded must be an integer")
        if self.max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
        if self.catalog_budget is not None and self.catalog_budget < 0:
            raise UsageError("catalog_budget must not be negative")
        relevant = self.relevant_skills
        if isinstance(relevant, bool) or not isinstance(relevant, int):
            raise UsageError("relevant_skills must be an integer")
        if not 0 <= relevant <= MAX_RELEVANT_SKILLS:
            raise UsageError(f"relevant_skills must be between 0 and {MAX_RELEVANT_SKILLS}")
        if not self.tool_timeout_s > 0:
            raise UsageError("tool_timeout_s must be positive")
        if self.tool_retries < 0:
            raise UsageError("tool_retries must not be negative")

    def replace(self, **changes: Any) -> SkillSettings:
        """A copy with ``changes`` (checked like the original)."""
        unknown = sorted(set(changes) - FIELDS)
        if unknown:
            raise UsageError(f"SkillSettings has no option {', '.join(unknown)}")
        return dataclasses.replace(self, **changes)

    def forked(self, skill: str, parent: str | None = None) -> SkillSettings:
        """The settings of the sub-agent that runs ``context: fork`` skill ``skill``: the same
        options, its own skill state (agent ``<parent>:fork:<skill>``), no declared loads,
        and its own loads of ``skill`` ordinary ones."""
        name = parent if parent is not None else self.agent
        tree = self.fork_tree.child() if self.fork_tree is not None else ForkTree()
        return self.replace(
            agent=f"{name}:fork:{skill}", declared=(), fork_of=skill, fork_tree=tree
        )

    @staticmethod
    def choices(name: str) -> tuple[str, ...]:
        """The values option ``name`` may take, when it is a choice (empty otherwise): what a
        command-line flag offers."""
        return _CHOICES.get(name, ())

    @classmethod
    def of(cls, settings: SkillSettings | None, **options: Any) -> SkillSettings:
        """``settings`` (default: the defaults) with ``options`` applied: what a constructor
        taking both ``settings=`` and keyword shortcuts (:class:`SettingsOptions`) does."""
        base = settings if settings is not None else cls()
        return base.replace(**options) if options else base


class SettingsOptions(TypedDict, total=False):
    """The fields of :class:`SkillSettings` as keyword shortcuts (``**options``) of the faces
    that take them; each is documented on :class:`SkillSettings`."""

    agent: str
    instructions: str
    store: SessionStore | None
    load_mode: LoadMode
    max_loaded: int
    visible: Callable[[Skill], bool] | None
    catalog_format: CatalogFormat
    catalog_budget: int | None
    catalog_placement: CatalogPlacement
    relevant_skills: int
    guidance: str | None
    skill_tools: tuple[str, ...] | None
    placement: Placement
    tool_style: ToolStyle
    tools: Sequence[Tool]
    activations: Sequence[Activation]
    declared: Sequence[DeclaredLoad]
    enforce_allowed_tools: bool
    tool_timeout_s: float
    tool_retries: int
    workspace: WorkspaceManager | None
    executor: Executor | None
    exec_policy: ExecPolicy | None
    trace: Trace | None


FIELDS: Final = frozenset(f.name for f in dataclasses.fields(SkillSettings))
_CHOICES: Final[dict[str, tuple[str, ...]]] = {
    "load_mode": _LOAD_MODES,
    "catalog_format": _FORMATS,
    "catalog_placement": _PLACEMENTS,
    "placement": _CONTENT_PLACEMENTS,
    "tool_style": tuple(TOOL_STYLES),
}


def _choice(name: str, value: object, allowed: tuple[object, ...]) -> None:
    if value not in allowed:
        shown = ", ".join(repr(a) for a in allowed)
        raise UsageError(f"{name} must be one of {shown}, not {value!r}")


def check_skill_tools(names: object) -> tuple[str, ...]:
    """``names`` as a tuple of skill-tool names of the contract.

    Raises:
        UsageError: Not a sequence of names, or a name that is no skill tool.
    """
    if isinstance(names, str) or not isinstance(names, Sequence | frozenset | set):
        raise UsageError("skill_tools must be a sequence of tool names")
    chosen = tuple(names)
    unknown = [n for n in chosen if n not in ALL_TOOLS]
    if unknown:
        raise UsageError(
            f"skill_tools names no skill tool {unknown[0]!r}; the skill tools are "
            + ", ".join(ALL_TOOLS)
        )
    return chosen


def tool_options(settings: SkillSettings) -> dict[str, Any]:
    """The options :class:`~skillshelf.tools.SkillTools` takes, from ``settings``."""
    return {
        "store": settings.store,
        "agent": settings.agent,
        "load_mode": settings.load_mode,
        "max_loaded": settings.max_loaded,
        "visible": settings.visible,
        "workspace": settings.workspace,
        "executor": settings.executor,
        "exec_policy": settings.exec_policy,
        "offered": settings.skill_tools,
    }

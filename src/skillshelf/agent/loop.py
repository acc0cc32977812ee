"""The agent: a model with skills, the caller's tools and the rules that govern them.

The system prompt is the caller's instructions, the skills catalog (within a budget, in a stable
order) and short guidance on the skill tools; its bytes change only when the visible skill set
does. :class:`Agent` holds the configuration and can itself be a tool of another agent;
:class:`~skillshelf.agent.conversation.Conversation` runs the loop and keeps the history.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final

import anyio

from skillshelf.agent.conversation import Conversation
from skillshelf.agent.history import HistoryLimit
from skillshelf.agent.materialize import Placement
from skillshelf.agent.results import (
    DEFAULT_MAX_STEPS,
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
from skillshelf.agent.trace import Trace
from skillshelf.core.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.core.session import LoadMode
from skillshelf.errors import UsageError
from skillshelf.models import Model, TextSink
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, open_store
from skillshelf.tools.user_tools import Activation, Tool, check_names

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager

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

DEFAULT_CATALOG_BUDGET: Final = 12_000  # characters: a few hundred skills with trimmed text
GUIDANCE: Final = (
    "Skills are folders of instructions for specific tasks. The catalog above lists them by "
    "name and description. When a skill's description matches the task, call skill_load with "
    "its name before doing the task, then follow its instructions; read its files with "
    "skill_read_file when they point to one. If none fits, skill_search may find one; if "
    "still none fits, answer without skills."
)


class Agent:
    """An agent with skills: configuration; :meth:`conversation` holds the history.

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
        max_steps: Model requests per user message before :class:`MaxStepsError`.
        catalog_format: ``xml`` or ``markdown``.
        catalog_budget: Characters the catalog may take.
        placement: Where loaded content goes (``tool_result`` keeps the system prompt stable).
        enforce_allowed_tools: While the active (last loaded) skill declares
            ``allowed-tools``, refuse calls to user tools outside them.
        retry: Retries of failed model requests.
        trace: Where decision records go.
        visible: Filter on the skills this agent may see.
        workspace: Enables ``workspace_exec`` (see
            :class:`~skillshelf.tools.skill_tools.SkillTools`).
        executor: Runs ``workspace_exec`` commands (default: ``auto``).
        exec_policy: What ``workspace_exec`` may run.
    """

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
        max_steps: int = DEFAULT_MAX_STEPS,
        catalog_format: CatalogFormat = "xml",
        catalog_budget: int | None = DEFAULT_CATALOG_BUDGET,
        placement: Placement = "tool_result",
        enforce_allowed_tools: bool = False,
        retry: RetryPolicy | None = None,
        trace: Trace | None = None,
        visible: Callable[[Skill], bool] | None = None,
        workspace: WorkspaceManager | None = None,
        executor: Executor | None = None,
        exec_policy: ExecPolicy | None = None,
    ) -> None:
        if max_steps < 1:
            raise UsageError("max_steps must be at least 1")
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
        self.max_steps = max_steps
        self.catalog_format: CatalogFormat = catalog_format
        self.catalog_budget = catalog_budget
        self.placement: Placement = placement
        self.enforce_allowed_tools = enforce_allowed_tools
        self.retry = retry or RetryPolicy()
        self.trace = trace
        self.visible = visible
        self.workspace = workspace
        self.executor = executor
        self.exec_policy = exec_policy
        self.warnings = check_names(self.tools, self.activations)

    def system_prompt(self) -> str:
        """The system prompt: instructions, catalog, guidance (stable bytes)."""
        skills = [s for s in self.repo.skills if s.model_invocable and self._sees(s)]
        catalog = render_catalog(
            [CatalogEntry.of(s) for s in skills],
            format=self.catalog_format,
            budget_chars=self.catalog_budget,
        )
        parts = [self.instructions.strip(), catalog, GUIDANCE] if skills else [self.instructions]
        return "\n\n".join(p for p in parts if p.strip())

    def _sees(self, skill: Skill) -> bool:
        return self.visible is None or self.visible(skill)

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

"""Skills in the OpenAI Agents SDK (``skillshelf[openai-agents]``), through its public extension
points only: :class:`agents.FunctionTool` with a custom ``on_invoke_tool``, a callable
``instructions``, an ``is_enabled`` callable, :class:`agents.ToolInputGuardrail` (for activated
tools) and :class:`agents.AgentHooks`.

::

    kit = skill_tools(repo, store=open_store("sqlite:///skills.db"), instructions="Be brief.")
    agent = Agent(name="assistant", instructions=kit.instructions, tools=kit.tools,
                  hooks=kit.hooks)
    session = SQLiteSession("conversation-1")
    result = await Runner.run(agent, "Summarise sales.csv", session=session,
                              context=kit.context(session))

Every call goes to :meth:`skillshelf.tools.SkillTools.call`, so grading, argument repair and
messages are those of skillshelf's own agent. Skill state lives in the given store under the
conversation the run context names (see :meth:`SkillKit.context`), never shared between two.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Unpack

import anyio

from skillshelf.core.tooldef import to_openai
from skillshelf.errors import MissingExtraError, UsageError
from skillshelf.harness import (
    LOAD_TOOL_NAMES,
    Harness,
    HarnessFace,
    Recent,
    SettingsOptions,
    SkillSession,
    SkillSettings,
)
from skillshelf.models import ToolCall
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.tools import Activation, SkillTools, Tool

if TYPE_CHECKING:
    from agents import AgentHooks, FunctionTool, RunConfig, RunContextWrapper
    from agents import Tool as SdkTool
    from agents.run_config import ToolErrorFormatterArgs


__all__ = ["SkillContext", "SkillKit", "conversation_of", "skill_tools"]

_SOURCE: Final = "openai-agents"
_REMEMBERED_RUNS: Final = 256  # conversations whose current run's slash loads are kept


def _require_sdk() -> None:
    try:
        import agents  # noqa: F401
    except ImportError as exc:
        raise MissingExtraError(
            "openai-agents", module="agents", feature="The OpenAI Agents SDK integration"
        ) from exc


@dataclass(frozen=True, slots=True)
class SkillContext:
    """A run context naming the conversation whose skill state a run uses.

    Attributes:
        conversation_id: The conversation (an SDK session's id, a thread id, …).
        deps: The caller's own context, for their tools (``ctx.context.deps``).
    """

    conversation_id: str
    deps: Any = None


def conversation_of(context: Any) -> str:
    """The conversation a run context names.

    Accepted: a :class:`SkillContext`, any object with a string ``conversation_id`` or
    ``session_id`` attribute (an :class:`agents.memory.Session` itself), a mapping with a
    ``conversation_id`` key, or a plain string.

    Raises:
        UsageError: The context names no conversation (sharing one would mix conversations'
            loads, so there is no default).
    """
    if isinstance(context, str) and context:
        return context
    if isinstance(context, Mapping):
        found = context.get("conversation_id")
        if isinstance(found, str) and found:
            return found
    for attribute in ("conversation_id", "session_id"):
        found = getattr(context, attribute, None)
        if isinstance(found, str) and found:
            return found
    raise UsageError(
        "The run context names no conversation for skill state: pass "
        "context=kit.context(session) (or a SkillContext, or an object with a "
        "conversation_id) to Runner.run."
    )


class SkillKit(HarnessFace):
    """Skill tools, instructions and hooks for Agents SDK agents (build with :func:`skill_tools`).

    Every call goes through the conversation's :class:`~skillshelf.harness.SkillSession`, the
    harness skillshelf's own agent uses.

    Attributes:
        tools: The skill tools as :class:`agents.FunctionTool` (``workspace_exec`` with a
            workspace), in the settings' tool style.
        hooks: :class:`agents.AgentHooks` that start a turn on each run (``turn`` and
            ``once`` loads end) and write model steps to the trace.
        harness: What the kit's conversations share (settings, prompt).
    """

    def __init__(
        self, repo: Repository, settings: SkillSettings, conversation: Callable[[Any], str]
    ) -> None:
        self.repo = repo
        self.harness = Harness(repo, settings, source=_SOURCE)
        self._conversation = conversation
        self._names: tuple[str, ...] | None = None
        self._function_tools = self._build_tools()
        self.tools: list[SdkTool] = list(self._function_tools)
        self.hooks: AgentHooks[Any] = _hooks(self)
        # What the current run's slash commands loaded, by conversation (see _hooks.on_start):
        # the run's instructions carry it.
        self._invoked: Recent[str, tuple[str, ...]] = Recent(_REMEMBERED_RUNS)

    @property
    def run_config(self) -> RunConfig:
        """For ``Runner.run(..., run_config=kit.run_config)``: a call to a tool the agent does
        not have is answered by the harness (graded, counted, the closest names offered; the
        third identical one fatal) instead of ending the run with ``ModelBehaviorError``."""
        from agents import RunConfig

        return RunConfig(
            tool_not_found_behavior="return_error_to_model", tool_error_formatter=self._tool_error
        )

    async def _tool_error(self, error: ToolErrorFormatterArgs[Any]) -> str | None:
        if error.kind != "tool_not_found":
            return None  # the SDK's own message
        session = self._of(error.run_context)
        record = await anyio.to_thread.run_sync(
            session.call_skill_tool, error.call_id, error.tool_name, None
        )
        return record.content

    # -- conversations -------------------------------------------------------------------

    @staticmethod
    def context(session: Any, deps: Any = None) -> SkillContext:
        """The run context for ``session`` (an SDK session, or a conversation id)."""
        return SkillContext(session if isinstance(session, str) else session.session_id, deps)

    def session(self, conversation_id: str) -> SkillSession:
        """The harness of one conversation."""
        return self.harness.session(conversation_id)

    def for_conversation(self, conversation_id: str) -> SkillTools:
        """The :class:`SkillTools` of one conversation (its state: ``.state().loaded``)."""
        return self.session(conversation_id).tools

    def _of(self, wrapper: RunContextWrapper[Any]) -> SkillSession:
        return self.session(self._conversation(wrapper.context))

    # -- instructions --------------------------------------------------------------------

    def system_prompt(self) -> str:
        """The instructions: the caller's, the catalog and the guidance.

        The bytes change only when the visible skill set does (a refresh or a watcher).
        """
        return self.harness.instructions()

    def instructions(self, wrapper: RunContextWrapper[Any], agent: Any) -> str:
        """For ``Agent(instructions=kit.instructions)``: :meth:`system_prompt` each run, then
        what the run's slash commands loaded, or the skills relevant to its message."""
        conversation = self._conversation(wrapper.context)  # none named: fails here
        invoked = self._invoked.get(conversation) or ()
        return "\n\n".join([self.session(conversation).instructions(), *invoked])

    async def _begin_run(self, context: Any) -> None:
        """A run starts: the turn's loads end and its user message's slash commands load
        their skills (SlashCommandError ends the run, as in skillshelf's agent)."""
        conversation = self._conversation(context.context)
        session = self.session(conversation)
        message = _last_user_text(getattr(context, "turn_input", None))
        commands = session.commands(message)
        loads = await anyio.to_thread.run_sync(session.begin_turn)
        session.record("turn", commands=[c.skill for c in commands])
        # What the host's options load for this message joins this run's instructions.
        invoked = [r.content for r in loads if r.source == "turn" and r.content]
        for index, command in enumerate(commands):
            call_id = f"slash_{uuid.uuid4().hex[:12]}_{index}"
            record = await anyio.to_thread.run_sync(session.invoke, command, call_id)
            session.trace_call(record)
            invoked.append(record.content)
        # The skills relevant to the message when the catalog could not show them all: after
        # the stable system prompt, for this run only.
        relevant = None if commands else await anyio.to_thread.run_sync(session.relevant, message)
        if relevant is not None:
            invoked.append(relevant)
        self._invoked.pop(conversation)
        if invoked:
            self._invoked.put(conversation, tuple(invoked))

    async def _fork(self, context: Any, conversation: str, skill: Skill, task: str) -> str:
        """Run a ``context: fork`` skill's task in a sub-agent: an Agents SDK agent on the
        calling agent's model with a kit of the same skills (its own skill state, the same
        conversation); its final output is the load's result."""
        from agents import Agent, Runner

        parent = getattr(context, "agent", None)
        kit = SkillKit(self.repo, self.settings.forked(skill.name), self._conversation)
        sub = Agent(
            name=f"{getattr(parent, 'name', 'agent')}:fork:{skill.name}",
            instructions=kit.instructions,
            tools=kit.tools,
            hooks=kit.hooks,
            model=getattr(parent, "model", None),
        )
        result = await Runner.run(
            sub, task, context=self.context(conversation), run_config=kit.run_config
        )
        return str(result.final_output)

    # -- tools ---------------------------------------------------------------------------

    def _build_tools(self) -> list[FunctionTool]:
        from agents import FunctionTool

        return [
            FunctionTool(
                name=entry["function"]["name"],
                description=entry["function"]["description"],
                params_json_schema=entry["function"]["parameters"],
                on_invoke_tool=functools.partial(self._invoke, entry["function"]["name"]),
                # Optional arguments (docs, limit, …) are not all required: not strict.
                strict_json_schema=False,
                is_enabled=functools.partial(self._current, entry["function"]["name"]),
            )
            for entry in to_openai(self.harness.skill_definitions())
        ]

    def _current(self, name: str, wrapper: RunContextWrapper[Any], agent: Any) -> bool:
        """Keep the ``skill`` enums on the visible names (a refresh may change them); offer
        tool ``name`` when the conversation's session offers it (a whitelist may not)."""
        names = tuple(s.name for s in self.harness.visible_skills())
        if names != self._names:
            definitions = to_openai(self.harness.skill_definitions())
            schemas = {e["function"]["name"]: e["function"] for e in definitions}
            for tool in self._function_tools:
                tool.params_json_schema = schemas[tool.name]["parameters"]
            self._names = names
        offered = self.session(self._conversation(wrapper.context)).tools.tool_names
        return ("skill_load" if name in LOAD_TOOL_NAMES else name) in offered

    async def _invoke(self, tool: str, context: Any, arguments: str) -> str:
        conversation = self._conversation(context.context)
        fork = functools.partial(self._fork, context, conversation)
        session = self.harness.session(conversation, fork=fork)
        history = _call_ids(getattr(context, "turn_input", None))
        record = await session.call(
            ToolCall(context.tool_call_id, tool, arguments), history=history
        )
        return record.content

    def activate(self, tool: FunctionTool, *, skill: str | None = None) -> FunctionTool:
        """``tool``, answered only while a skill activating it is loaded in the conversation.

        With ``skill`` that skill's load activates it; without, any loaded skill whose
        ``allowed-tools`` names the tool (``Bash(git:*)`` names ``Bash``) does — the same
        decision as :class:`~skillshelf.tools.Activation` in skillshelf's agent.

        The tool stays declared (the SDK answers a call to a tool it did not offer with
        ``ModelBehaviorError``, ending the run); a call outside its activation is refused by a
        :class:`agents.ToolInputGuardrail` with a graded, recoverable message naming the skills
        that activate it, the third identical refusal fatal. With ``enforce_allowed_tools``
        a call outside the active skill's ``allowed-tools`` is refused the same way.
        """
        activation = Activation([Tool(tool.name, tool.description, {}, _never)], skill=skill)

        def refusal(session: SkillSession, name: str, arguments: str) -> tuple[str, str] | None:
            found = session.activation_refusal(activation, name, arguments)
            return found if found is not None else _allowed_refusal(session, name, arguments)

        return self._guarded(tool, refusal)

    def restrict(self, tool: FunctionTool) -> FunctionTool:
        """``tool``, refused (graded, recoverable) while the active skill's ``allowed-tools``
        leave it out, with ``enforce_allowed_tools`` set."""
        return self._guarded(tool, _allowed_refusal)

    def _guarded(
        self,
        tool: FunctionTool,
        refusal: Callable[[SkillSession, str, str], tuple[str, str] | None],
    ) -> FunctionTool:
        from agents import ToolGuardrailFunctionOutput, ToolInputGuardrail

        async def in_bounds(data: Any) -> ToolGuardrailFunctionOutput:
            context = data.context
            session = self._of(context)
            found = await anyio.to_thread.run_sync(
                refusal, session, context.tool_name, context.tool_arguments
            )
            if found is None:
                return ToolGuardrailFunctionOutput.allow()
            status, message = found
            session.record(
                "tool",
                call_id=context.tool_call_id,
                tool=context.tool_name,
                arguments=_decoded(context.tool_arguments),
                status=status,
                error_kind="refused",
            )
            return ToolGuardrailFunctionOutput.reject_content(message)

        guardrail: ToolInputGuardrail[Any] = ToolInputGuardrail(
            in_bounds, name="skillshelf_activation"
        )
        guardrails = [guardrail, *(tool.tool_input_guardrails or ())]
        return dataclasses.replace(tool, tool_input_guardrails=guardrails)


def _allowed_refusal(session: SkillSession, name: str, arguments: str) -> tuple[str, str] | None:
    decoded = _decoded(arguments)
    message = session.allowed_tools_refusal(name, decoded if isinstance(decoded, dict) else {})
    if message is None:
        return None
    count = session.tools.record_failure(session.signature(ToolCall("", name, arguments)))
    from skillshelf.core.session import grade_failure

    return grade_failure(name, count, message)


def skill_tools(
    repo: Repository,
    *,
    settings: SkillSettings | None = None,
    conversation: Callable[[Any], str] = conversation_of,
    **options: Unpack[SettingsOptions],
) -> SkillKit:
    """Skills for an Agents SDK agent: tools, instructions and hooks (see :class:`SkillKit`).

    Args:
        repo: Where the skills come from.
        settings: Every harness option (:class:`~skillshelf.harness.SkillSettings`: store,
            instructions, agent, load mode, catalog, workspace, trace, …).
        conversation: Names the conversation from the run context (default:
            :func:`conversation_of`).
        options: Keyword shortcuts for the fields of ``settings`` (``store=``,
            ``load_mode=``, …), applied over it. ``turn`` loads end with each run through
            :attr:`SkillKit.hooks`.

    Raises:
        MissingExtraError: The ``openai-agents`` extra is not installed.
        UsageError: An option is unknown or out of range.
    """
    _require_sdk()
    return SkillKit(repo, SkillSettings.of(settings, **options), conversation)


def _hooks(kit: SkillKit) -> AgentHooks[Any]:
    from agents import AgentHooks

    class _SkillHooks(AgentHooks[Any]):
        async def on_start(self, context: Any, agent: Any) -> None:
            await kit._begin_run(context)

        async def on_llm_end(self, context: Any, agent: Any, response: Any) -> None:
            session = kit._of(context)
            await anyio.to_thread.run_sync(session.after_request)
            calls = [getattr(i, "name", "") for i in response.output if _is_call(i)]
            session.record("model", tool_calls=calls)

    return _SkillHooks()


def _last_user_text(items: Sequence[Any] | None) -> str:
    """The text of the run input's last user message ("" when there is none)."""
    for item in reversed(items or ()):
        role = item.get("role") if isinstance(item, Mapping) else getattr(item, "role", None)
        if role != "user":
            continue
        content = item.get("content") if isinstance(item, Mapping) else item.content
        if isinstance(content, str):
            return content
        parts = [p.get("text", "") for p in content or () if isinstance(p, Mapping)]
        return "".join(p for p in parts if isinstance(p, str))
    return ""


def _is_call(item: Any) -> bool:
    return getattr(item, "type", None) == "function_call"


def _call_ids(items: Sequence[Any] | None) -> set[str] | None:
    """Tool call ids the run's input still holds; None when the SDK gave no input to read."""
    if not items:
        return None
    ids = set()
    for item in items:
        if isinstance(item, dict) and item.get("type") == "function_call_output":
            ids.add(str(item.get("call_id")))
    return ids


def _decoded(arguments: str) -> Any:
    try:
        return json.loads(arguments or "{}")
    except ValueError:
        return arguments


def _never(**_kwargs: Any) -> None:  # pragma: no cover - a name for activated_tools, never run
    raise AssertionError

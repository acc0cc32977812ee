"""Skills in a pydantic-ai agent: one toolset brings the catalog, the tools and their state.

:class:`SkillsToolset` is a pydantic-ai ``AbstractToolset``: its instructions are the skills
catalog and short guidance (the bytes change only when the visible skill set does), its tools
are the skill tools of :class:`~skillshelf.tools.SkillTools` with the same schemas
and grading, and its state lives in any skillshelf store, keyed by the run's conversation::

    from pydantic_ai import Agent
    from skillshelf import Repository
    from skillshelf.integrations.pydantic_ai import SkillsToolset

    skills = SkillsToolset(Repository(["./skills"]))
    agent = Agent("openai:gpt-4.1", toolsets=[skills])

Graded failures become pydantic-ai ``ToolFailed`` results, not ``ModelRetry``: the model reads
skillshelf's text unchanged ("ask the user", "fix it", "closest names"), and the retry budget is
skillshelf's own (the third identical failure is answered as fatal), so a model that makes two
different mistakes does not end the run with ``UnexpectedModelBehavior``.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Awaitable, Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Unpack

import anyio

from skillshelf.core.allowed_tools import pattern_tool
from skillshelf.core.tooldef import to_openai
from skillshelf.errors import MissingExtraError, UsageError
from skillshelf.harness import Harness, HarnessFace, SettingsOptions, SkillSession, SkillSettings
from skillshelf.models import ToolCall
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.tools import Activation, ActivationMode, SkillTools, Tool, activated_tools

if TYPE_CHECKING:
    pass

try:
    from pydantic_ai import RunContext, ToolDefinition
    from pydantic_ai.exceptions import ToolFailed
    from pydantic_ai.messages import (
        InstructionPart,
        ModelRequest,
        ModelResponse,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.toolsets import AbstractToolset, FilteredToolset, ToolsetTool
except ImportError as exc:
    raise MissingExtraError(
        "pydantic-ai", module="pydantic_ai", feature="skillshelf.integrations.pydantic_ai"
    ) from exc

__all__ = ["ConversationKey", "SkillsToolset", "conversation_key", "history_conversation_key"]

ConversationKey = Callable[[RunContext[Any]], str]
# Arguments that are not a JSON object travel to call_tool under this key, as sent.
_AS_SENT: Final = "\x00skillshelf-arguments-as-sent"


class _ArgumentsAsSent:
    """An ``args_validator`` that lets every argument through as the model sent it.

    SkillTools repairs and grades arguments itself (closest names, "ask the user", malformed
    JSON); pydantic-ai's validation would answer first, with its own text and retry budget.
    """

    def validate_json(self, input: str | bytes | bytearray, **_options: Any) -> dict[str, Any]:
        text = input if isinstance(input, str) else bytes(input).decode("utf-8", "replace")
        try:
            value = json.loads(text or "{}")
        except ValueError:
            return {_AS_SENT: text}
        return value if isinstance(value, dict) else {_AS_SENT: text}

    def validate_python(self, input: Any, **_options: Any) -> dict[str, Any]:
        if isinstance(input, dict):
            return input
        return {_AS_SENT: input if isinstance(input, str) else json.dumps(input, default=str)}


def conversation_key(ctx: RunContext[Any]) -> str:
    """The default conversation key: what the host application controls, never what a
    client could have written.

    ``deps.conversation_id`` when the deps have one; else pydantic-ai's conversation id
    of the run, unless ``message_history`` carries it. Pydantic-ai inherits the id from
    the history when the run names none, and a history may come from a client (a web app
    that round-trips it): the skill state and workspace files of another conversation would
    be one forged history away. A run's ``conversation_id=`` argument cannot be told apart
    from an inherited one once the history carries it, so a conversation that goes on over
    several runs names itself in the deps; an application whose history is its own passes
    ``conversation_key=history_conversation_key`` instead.

    Raises:
        UsageError: No key, or only one the message history could have chosen.
    """
    deps_key = getattr(ctx.deps, "conversation_id", None)
    if deps_key is not None:
        return _checked_key(deps_key)
    key = history_conversation_key(ctx)
    if any(
        getattr(m, "conversation_id", None) == key and getattr(m, "run_id", None) != ctx.run_id
        for m in ctx.messages
    ):
        raise UsageError(
            "SkillsToolset will not take the conversation id from message_history (a client "
            "may have written it, and conversation_id= cannot be told apart from it): give "
            "deps a conversation_id, or pass conversation_key=history_conversation_key if "
            "the history is your application's own"
        )
    return key


def history_conversation_key(ctx: RunContext[Any]) -> str:
    """Pydantic-ai's conversation id of the run, including one inherited from
    ``message_history``: for applications that never take a history from a client."""
    return _checked_key(ctx.conversation_id)


def _checked_key(key: object) -> str:
    if not isinstance(key, str) or not key:
        raise UsageError(
            "SkillsToolset needs a conversation id: give deps a conversation_id, "
            "or pass conversation_key=..."
        )
    return key


class SkillsToolset(HarnessFace, AbstractToolset[Any]):
    """The skill tools and catalog as one pydantic-ai toolset.

    Args:
        repo: Where the skills come from (a ``refresh()`` or watch change reaches the next
            request's instructions and tool schemas).
        settings: Every harness option (:class:`~skillshelf.harness.SkillSettings`: store,
            agent, load mode, catalog, workspace, allowed-tools rules, trace, …).
        conversation_key: Maps a run to its conversation (default: :func:`conversation_key`:
            ``deps.conversation_id``, never an id a client-supplied history could carry).
            Two keys never share loads; a run with the same key resumes them.
        id: The toolset's id among the agent's toolsets.
        options: Keyword shortcuts for the fields of ``settings`` (``store=``,
            ``load_mode=``, …), applied over it. ``turn`` loads last until the next run,
            ``once`` loads the model request after them.

    Every call goes through the conversation's :class:`~skillshelf.harness.SkillSession`, the
    harness skillshelf's own agent uses.
    """

    def __init__(
        self,
        repo: Repository,
        *,
        settings: SkillSettings | None = None,
        conversation_key: ConversationKey = conversation_key,
        id: str = "skillshelf",
        **options: Unpack[SettingsOptions],
    ) -> None:
        chosen = SkillSettings.of(settings, **options)
        self.repo = repo
        self.harness = Harness(repo, chosen, source="pydantic-ai")  # checks the options now
        self.conversation_key = conversation_key
        self._id = id
        self._requests: _Requests | None = None  # set on a run's copy (see for_run)
        self._invoked: tuple[str, ...] = ()  # the run's slash commands' loads (see for_run)
        self._relevant: str | None = None  # the skills relevant to the run's prompt

    @property
    def id(self) -> str:
        return self._id

    def session(self, conversation: str) -> SkillSession:
        """The harness of one conversation (its state is in the store, not here)."""
        return self.harness.session(conversation)

    def tools_for(self, conversation: str) -> SkillTools:
        """The skill tools of one conversation (their state: ``.state().loaded``)."""
        return self.session(conversation).tools

    def _session(self, ctx: RunContext[Any]) -> SkillSession:
        return self.session(self.conversation_key(ctx))

    def _calling(self, ctx: RunContext[Any]) -> SkillSession:
        """The session of a tool call: ``context: fork`` skills run in a sub-agent."""
        key = self.conversation_key(ctx)
        return self.harness.session(key, fork=functools.partial(self._fork, ctx, key))

    async def _fork(self, ctx: RunContext[Any], key: str, skill: Skill, task: str) -> str:
        """Run a ``context: fork`` skill's task in a sub-agent: a pydantic-ai agent on the
        run's model with this toolset's skills (its own skill state, the same conversation);
        its final answer is the load's result. The caller's other toolsets are not given."""
        from pydantic_ai import Agent
        from pydantic_ai.models import Model

        if not isinstance(ctx.model, Model):
            raise UsageError(f"cannot run a sub-agent on the run's model {ctx.model!r}")
        toolset = SkillsToolset(
            self.repo,
            settings=self.settings.forked(skill.name),
            conversation_key=lambda _ctx: key,
            id=self._id,
        )
        result = await Agent(ctx.model, toolsets=[toolset]).run(task)
        return str(result.output)

    # -- instructions --------------------------------------------------------------------

    def instructions(self, ctx: RunContext[Any] | None = None) -> str:
        """The catalog and guidance, for ``Agent(instructions=skills.instructions)`` when the
        toolset's own instructions are not used; empty when no skill is visible. With a run's
        context, the conversation's own (its switches and turn options applied)."""
        if ctx is None:
            return self.harness.instructions()
        return self._session(ctx).instructions()

    async def get_instructions(self, ctx: RunContext[Any]) -> list[InstructionPart] | None:
        text = self.instructions(ctx)
        # Static: its bytes change only with the skill set, so a provider that caches may put a
        # cache point after it; a changed catalog rewrites the prefix from the next request on.
        parts = [InstructionPart(text, dynamic=False, name="catalog")] if text else []
        # What the user's slash commands loaded, for this run's requests (after the catalog,
        # so the cached prefix stays).
        parts += [InstructionPart(c, dynamic=True, name="invoked") for c in self._invoked]
        # The skills relevant to the run's prompt, when the catalog could not show them all.
        if self._relevant is not None:
            parts.append(InstructionPart(self._relevant, dynamic=True, name="relevant"))
        return parts or None

    # -- the run -------------------------------------------------------------------------

    async def for_run(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        # A run is one user message: ``turn`` and ``once`` loads of the last one end here.
        session = self._session(ctx)
        # Checked first: a command the user may not give ends the run before anything changes
        # (SlashCommandError, as skillshelf's own agent raises it).
        prompt = _prompt_text(ctx.prompt)
        commands = session.commands(prompt)
        loads = await anyio.to_thread.run_sync(session.begin_turn)
        session.record("run", step=ctx.run_step, run_id=ctx.run_id)
        # The run's own copy counts its model requests (two runs of one toolset never share).
        run = copy.copy(self)
        run._requests = _Requests(session, ctx.run_step)
        # What the host's options load for this message reaches this run's requests.
        invoked = [r.content for r in loads if r.source == "turn" and r.content]
        for index, command in enumerate(commands):
            record = await anyio.to_thread.run_sync(
                session.invoke, command, f"slash_{ctx.run_id}_{index}"
            )
            session.trace_call(record)
            invoked.append(record.content)
        run._invoked = tuple(invoked)
        if not commands:
            run._relevant = await anyio.to_thread.run_sync(session.relevant, prompt)
        return run

    async def for_run_step(self, ctx: RunContext[Any]) -> AbstractToolset[Any]:
        # Request ``run_step`` is about to be made, so every one before it was answered.
        await self._requests_made(ctx.run_step - 1)
        await self._answer_unknown(ctx)
        return self

    async def _answer_unknown(self, ctx: RunContext[Any]) -> None:
        """The harness answers the last step's calls to tools the agent does not have.

        Pydantic-ai's ToolManager finds an unknown name before any toolset sees the call and
        charges it to the run's retry budget (1 by default: the second ends the run with
        UnexpectedModelBehavior). Pydantic-ai has no hook for it, so the answer it put in the
        request about to be sent is replaced here, before the request goes out, by the
        harness's: graded and counted like every failure (the closest names, the third
        identical call fatal), traced; and the charge is taken back. A slipped skill tool
        name (``Skill-Load``) runs that tool.
        """
        requests = self._requests
        if requests is None or len(ctx.messages) < 2:
            return
        request, response = ctx.messages[-1], ctx.messages[-2]
        if not isinstance(request, ModelRequest) or not isinstance(response, ModelResponse):
            return
        sent = {p.tool_call_id: p for p in response.parts if isinstance(p, ToolCallPart)}
        manager = ctx.tool_manager
        offered = tuple(manager.tools or ()) if manager is not None else ()
        for part in request.parts:
            if not (
                isinstance(part, ToolReturnPart)
                and part.retry is not None
                and part.retry.cause == "unknown_tool"
                and part.tool_call_id in sent
                and part.tool_call_id not in requests.answered
            ):
                continue
            requests.answered.add(part.tool_call_id)
            arguments = sent[part.tool_call_id].args
            record = await anyio.to_thread.run_sync(
                requests.session.call_skill_tool,
                part.tool_call_id,
                part.tool_name,
                arguments if isinstance(arguments, str | dict) else None,
                offered,
            )
            part.content = record.content
            part.outcome = "success" if record.status == "ok" else "failed"
            part.retry = None
            ctx.retries.pop(part.tool_name, None)

    async def _requests_made(self, made: int) -> None:
        """Count the run's model requests up to ``made`` (each once): ``once`` loads a request
        already delivered end, as :meth:`SkillTools.after_request` does in skillshelf's agent.

        Pydantic-ai has no toolset hook right after a request; a step's tool calls (or, without
        any, the start of the next step) are the first moment that request is known made.
        """
        requests = self._requests
        if requests is None:  # used outside a run: no requests to count
            return
        async with requests.lock:
            while requests.counted < made:
                await anyio.to_thread.run_sync(requests.session.after_request)
                requests.counted += 1

    async def get_tools(self, ctx: RunContext[Any]) -> dict[str, ToolsetTool[Any]]:
        tools: dict[str, ToolsetTool[Any]] = {}
        for schema in to_openai(self._session(ctx).skill_definitions()):
            function = schema["function"]
            definition = ToolDefinition(
                name=function["name"],
                description=function["description"],
                parameters_json_schema=function["parameters"],
            )
            tools[definition.name] = ToolsetTool(
                toolset=self, tool_def=definition, max_retries=0, args_validator=_ArgumentsAsSent()
            )
        return tools

    async def call_tool(
        self, name: str, tool_args: dict[str, Any], ctx: RunContext[Any], tool: ToolsetTool[Any]
    ) -> str:
        await self._requests_made(ctx.run_step)  # this step's request was made: its calls run
        arguments = tool_args.get(_AS_SENT, tool_args)
        sent = arguments if isinstance(arguments, str) else json.dumps(arguments, default=str)
        record = await self._calling(ctx).call(
            ToolCall(ctx.tool_call_id or "", name, sent),
            history=_history_call_ids(ctx),
            trace_fields={"step": ctx.run_step},
        )
        if record.status != "ok":
            raise ToolFailed(record.content)
        return record.content

    # -- tool activation -----------------------------------------------------------------

    def activated(
        self,
        toolset: AbstractToolset[Any],
        *,
        skill: str | None = None,
        mode: ActivationMode = "include",
    ) -> FilteredToolset[Any]:
        """``toolset``'s tools, offered only while a skill that activates them is loaded.

        With ``skill`` its load activates them all; without, a loaded skill's
        ``allowed-tools`` naming a tool activates that tool (``Bash(git:*)`` names ``Bash``).
        ``mode="only"`` activations are not supported here: use :meth:`restricted` on the
        other toolsets.
        """
        if mode != "include":
            raise UsageError("SkillsToolset.activated supports mode='include' only")

        def offered(ctx: RunContext[Any], definition: ToolDefinition) -> bool:
            activation = Activation([_named(definition)], skill=skill)
            session = self._session(ctx)
            return any(
                activated_tools(activation, name, self.harness.allowed_tools(name))
                for name in session.tools.state().loaded
            )

        return toolset.filtered(_in_thread(offered))

    def restricted(self, toolset: AbstractToolset[Any]) -> FilteredToolset[Any]:
        """``toolset``'s tools, minus those the active skill's ``allowed-tools`` leave out.

        The active skill is the last loaded (or touched); while it declares no
        ``allowed-tools``, or none is loaded, every tool is offered.
        """

        def offered(ctx: RunContext[Any], definition: ToolDefinition) -> bool:
            state = self._session(ctx).tools.state()
            if not state.loaded:
                return True
            active = max(state.loaded.values(), key=lambda s: (s.touched, s.name)).name
            allowed = self.harness.allowed_tools(active)
            return not allowed or definition.name in {pattern_tool(p) for p in allowed}

        return toolset.filtered(_in_thread(offered))


@dataclass(slots=True)
class _Requests:
    """A run's model requests counted so far (``run_step`` numbers them), for ``once`` loads,
    and the calls to unknown tools it answered."""

    session: SkillSession
    counted: int
    lock: anyio.Lock = field(default_factory=anyio.Lock)
    answered: set[str] = field(default_factory=set)  # unknown-tool calls the harness answered


def _prompt_text(prompt: str | Sequence[Any] | None) -> str:
    """The text of the run's user prompt (its text parts, when it has several)."""
    if prompt is None or isinstance(prompt, str):
        return prompt or ""
    return "".join(part for part in prompt if isinstance(part, str))


def _history_call_ids(ctx: RunContext[Any]) -> Collection[str]:
    """Tool call ids whose results are still in the history the model receives."""
    return {
        part.tool_call_id
        for message in ctx.messages
        for part in getattr(message, "parts", ())
        if isinstance(part, ToolReturnPart)
    }


def _named(definition: ToolDefinition) -> Tool:
    """A stand-in skillshelf tool for the activation rules, which decide by name."""
    return Tool(
        definition.name, definition.description or "", definition.parameters_json_schema, _never
    )


def _never(**_kwargs: Any) -> None:  # pragma: no cover - stand-ins are never invoked
    raise AssertionError


def _in_thread(
    fn: Callable[[RunContext[Any], ToolDefinition], bool],
) -> Callable[[RunContext[Any], ToolDefinition], Awaitable[bool]]:
    # The store may be SQLite or Redis: its reads stay off the event loop.
    async def run(ctx: RunContext[Any], definition: ToolDefinition) -> bool:
        return await anyio.to_thread.run_sync(fn, ctx, definition)

    return run

"""Skills in LangChain v1 / LangGraph agents: one middleware for ``create_agent``.

:class:`SkillsMiddleware` is an :class:`~langchain.agents.middleware.AgentMiddleware` that

* appends the skills catalog and the skill-tool guidance to the system message of every model
  call (read from the repository each call, so a refresh or watch change reaches the next call;
  byte-identical while the visible skill set is unchanged);
* offers the skill tools as native tools (JSON-schema arguments from
  :meth:`SkillTools.schemas`, the skill name an enum of the visible names) and runs their calls
  through :meth:`SkillTools.call`, so argument repair and grading are the core's;
* keeps skill state per LangGraph thread (``config["configurable"]["thread_id"]``) in any
  skillshelf store; without a thread id, a session id kept in the graph state;
* answers tool calls whose arguments did not parse (``AIMessage.invalid_tool_calls``, which
  LangChain never runs) with skillshelf's graded result, and lets the model try again;
* shows a skill's activated tools (:class:`~skillshelf.tools.Activation`) only while
  it is loaded, by filtering the tools of each model request;
* places loaded content per load mode with :func:`~skillshelf.harness.materialize`
  (applied to the messages of each model request; the checkpointed history is not rewritten);
* invokes the slash commands a user message starts with (``/skill-name args``), as
  skillshelf's own loop does: a synthetic ``skill_load`` call and its result, before the first
  model call; a command the user may not give ends the run with the reason as the answer;
* runs a ``context: fork`` skill in a sub-agent when it is loaded (``create_agent`` with the
  run's model and a :class:`SkillsMiddleware` of its own; see ``_langchain_fork``);
* writes the agent loop's JSONL trace records (``turn``, ``model``, ``tool``).

Needs the ``langchain`` extra; importing this module without it raises
:class:`~skillshelf.errors.MissingExtraError`.
"""

from __future__ import annotations

import functools
import json
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Final, NotRequired, Unpack

import anyio

from skillshelf.errors import MissingExtraError, UsageError, clip

try:
    from langchain.agents.middleware import (
        AgentMiddleware,
        AgentState,
        ModelRequest,
        ModelResponse,
        hook_config,
    )
    from langchain_core.messages import (
        AIMessage,
        AnyMessage,
        HumanMessage,
        SystemMessage,
        ToolMessage,
    )
    from langchain_core.tools import BaseTool, StructuredTool
    from langgraph.config import get_config
    from langgraph.prebuilt.tool_node import ToolCallRequest
    from langgraph.types import Command
except ImportError as exc:
    raise MissingExtraError(
        "langchain", module=exc.name or "langchain", feature="The LangChain integration"
    ) from exc

from skillshelf.core.session import grade_failure
from skillshelf.core.tooldef import to_openai
from skillshelf.harness import (
    LOAD_TOOL_NAMES,
    Harness,
    HarnessFace,
    Placement,
    Recent,
    SettingsOptions,
    SkillSession,
    SkillSettings,
    ToolRecord,
    digest,
    materialize,
    span,
)
from skillshelf.integrations._langchain_commands import (
    read_commands,
    refusal_message,
    run_commands,
    tool_message,
)
from skillshelf.integrations._langchain_fork import Models, fork_runner
from skillshelf.models import ToolCall
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.tools import (
    ALL_TOOLS,
    ArgumentProblem,
    SkillTools,
    Tool,
    activated_tools,
    check_names,
    inactive_tool_message,
    run_tool,
    tool_set,
)

__all__ = ["SkillsMiddleware", "SkillsState"]


SESSION_KEY: Final = "skillshelf_session"
# The skill tools in every tool style (Claude Code's Skill is skill_load).
_SKILL_NAMES: Final = frozenset(ALL_TOOLS) | LOAD_TOOL_NAMES
_SOURCE: Final = "langchain"
_REMEMBERED_OFFERS: Final = 256


class SkillsState(AgentState[Any]):
    """The agent state with the skill session of a run that has no thread id."""

    skillshelf_session: NotRequired[str]


class SkillsMiddleware(HarnessFace, AgentMiddleware[SkillsState, Any, Any]):
    """Agent Skills for ``langchain.agents.create_agent``.

    Args:
        repo: Where the skills come from.
        settings: Every harness option (:class:`~skillshelf.harness.SkillSettings`). Here
            ``load_mode="turn"`` lasts until the next invocation; ``activations`` (tools
            offered only while a skill that activates them is loaded: a skill's
            ``allowed-tools`` naming them, or the activation's ``skill``) are registered with
            the agent by this middleware, ``session`` lifetime not supported; with
            ``enforce_allowed_tools`` a call outside the active skill's ``allowed-tools`` is
            refused (graded). Each thread gets its own workspace.
        options: Keyword shortcuts for the fields of ``settings`` (``store=``,
            ``placement=``, …), applied over it.

    Every call goes through the thread's :class:`~skillshelf.harness.SkillSession`, the
    harness skillshelf's own agent uses.

    Raises:
        UsageError: An activation has ``session`` lifetime or a tool clashes with a skill tool.
    """

    state_schema = SkillsState

    def __init__(
        self,
        repo: Repository,
        *,
        settings: SkillSettings | None = None,
        **options: Unpack[SettingsOptions],
    ) -> None:
        super().__init__()
        chosen = SkillSettings.of(settings, **options)
        if any(a.lifetime == "session" for a in chosen.activations):
            raise UsageError("SkillsMiddleware supports activations of 'invocation' lifetime only")
        check_names([], chosen.activations)
        self.repo = repo
        self.harness = Harness(repo, chosen, source=_SOURCE)
        self._gated: dict[str, Tool] = {
            t.name: t
            for a in self.settings.activations
            for t in a.tools
            if t.name not in _SKILL_NAMES
        }
        self.tools = [*self._skill_tools(), *map(_native, self._gated.values())]
        self._bound: str | None = None  # a sub-agent's: the parent's conversation
        self._models = Models()  # what a fork runs on: the model of the loading run
        # Each conversation's last offered tool names (the most recent few hundred).
        self._offered_names: Recent[str, tuple[str, ...]] = Recent(_REMEMBERED_OFFERS)
        # Each conversation's skills relevant to its latest user message (see before_agent).
        self._relevant: Recent[str, str] = Recent(_REMEMBERED_OFFERS)

    # -- sessions --------------------------------------------------------------------------

    def session(self, session_id: str) -> SkillSession:
        """The harness of one session (a LangGraph thread) and this agent."""
        return self.harness.session(session_id)

    def skill_tools(self, session_id: str) -> SkillTools:
        """The :class:`SkillTools` of one session (a LangGraph thread) and this agent."""
        return self.session(session_id).tools

    def _of(self, state: Mapping[str, Any]) -> SkillSession:
        return self.session(self._session(state))

    def _session(self, state: Mapping[str, Any]) -> str:
        """The conversation key: the thread id (the host's), or for a run without one the
        key :meth:`before_agent` minted for it. Never a key the run's input chose: the
        input state is the client's to write, so a ``skillshelf_session`` it carries is
        replaced before anything reads it."""
        if self._bound is not None:
            return self._bound
        thread = _thread_id()
        if thread is not None:
            return thread
        session = state.get(SESSION_KEY)
        if not isinstance(session, str):
            raise UsageError("SkillsMiddleware found no thread id and no session in the state")
        return session

    def _fork_session(self, state: Mapping[str, Any], sync: bool) -> SkillSession:
        """The session of a tool call: ``context: fork`` skills run in a sub-agent."""
        conversation = self._session(state)
        model = self._models.get(conversation)
        forked = functools.partial(self._forked, conversation)
        fork = fork_runner(conversation, model, forked, sync=sync)
        return self.harness.session(conversation, fork=fork)

    def _forked(self, conversation: str, skill: Skill) -> SkillsMiddleware:
        """The sub-agent's middleware, bound to the parent's conversation (its own skill
        state: the forked settings name another agent)."""
        middleware = SkillsMiddleware(self.repo, settings=self.settings.forked(skill.name))
        middleware._bound = conversation
        return middleware

    @hook_config(can_jump_to=["end"])
    def before_agent(self, state: SkillsState, runtime: Any) -> dict[str, Any] | None:
        """A new invocation is a new user turn: ``turn`` and ``once`` loads end, and the
        slash commands the new user message starts with are invoked (a refused one ends the
        run with the reason as the answer; the model is not called)."""
        update: dict[str, Any] = {}
        if self._bound is None and _thread_id() is None:
            # Minted for every run without a thread, whatever the input carried.
            update[SESSION_KEY] = uuid.uuid4().hex
        session = self.session(update.get(SESSION_KEY) or self._session(state))
        messages = state.get("messages") or []
        asked = read_commands(session, messages)
        if asked.refusal is None:
            session.begin_turn()
        text = messages[-1].text if messages else ""
        session.record("turn", user_digest=digest(text), commands=[c.skill for c in asked.commands])
        if asked.refusal is not None:
            session.record("error", error="SlashCommandError", message=asked.refusal)
            update.update(messages=[refusal_message(asked.refusal)], jump_to="end")
        elif asked.commands:
            added, records = run_commands(session, asked.commands, messages)
            for record in records:
                session.trace_call(record)
            update["messages"] = added
        self._relevant.pop(session.conversation)
        last = messages[-1] if messages else None
        if asked.refusal is None and not asked.commands and isinstance(last, HumanMessage):
            relevant = session.relevant(last.text)
            if relevant is not None:
                self._relevant.put(session.conversation, relevant)
        return update or None

    @hook_config(can_jump_to=["end"])
    async def abefore_agent(self, state: SkillsState, runtime: Any) -> dict[str, Any] | None:
        """:meth:`before_agent` in a worker thread (the store may block)."""
        return await anyio.to_thread.run_sync(self.before_agent, state, runtime)

    # -- model calls -----------------------------------------------------------------------

    def system_text(self) -> str:
        """The catalog and guidance appended to the system message (stable bytes)."""
        return self.harness.instructions()

    def _prepare(self, request: ModelRequest[Any]) -> tuple[ModelRequest[Any], SkillSession]:
        session = self._of(request.state)
        own = request.system_prompt or ""
        # The skills relevant to the latest user message come after the stable text.
        relevant = self._relevant.get(session.conversation)
        system = "\n\n".join(p for p in (own.strip(), session.instructions(), relevant) if p)
        prepared = request.override(
            system_message=SystemMessage(content=system) if system else None,
            messages=_materialized(request.messages, session.tools, self.settings.placement),
            tools=[*self._skill_tools(session), *self._offered(request.tools, session)],
        )
        # What an unknown-tool answer lists as available besides the skill tools.
        offered = tuple(_name(t) for t in prepared.tools if _name(t) not in _SKILL_NAMES)
        self._offered_names.put(session.conversation, offered)
        return prepared, session

    def _skill_tools(self, session: SkillSession | None = None) -> list[BaseTool]:
        """The skill tools as a conversation is offered them (the shared set without one)."""
        definitions = (
            self.harness.skill_definitions() if session is None else session.skill_definitions()
        )
        return [_SkillTool.of(schema) for schema in to_openai(definitions)]

    def _offered(self, registered: Sequence[Any], session: SkillSession) -> list[Any]:
        """The caller's tools minus activated ones not in force; ``only`` activations win."""
        state = session.tools.state()
        in_force = []
        for activation in self.settings.activations:
            for name in state.loaded:
                chosen = activated_tools(activation, name, self.harness.allowed_tools(name))
                if chosen:
                    in_force.append((activation, chosen))
        plain = [_shim(n) for t in registered if (n := _name(t)) not in self._gated]
        offered = {
            t.name for t in tool_set([t for t in plain if t.name not in _SKILL_NAMES], in_force)
        }
        return [t for t in registered if _name(t) in offered]

    def _finish_model(
        self, request: ModelRequest[Any], response: Any, session: SkillSession, started: float
    ) -> None:
        session.after_request()
        messages = getattr(response, "result", None) or []
        calls = [c["name"] for m in messages for c in getattr(m, "tool_calls", None) or ()]
        session.record(
            "model",
            model=type(request.model).__name__,
            tool_calls=calls,
            tools_offered=[_name(t) for t in request.tools],
            duration_ms=_ms(started),
        )

    def wrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], ModelResponse[Any]],
    ) -> Any:
        """Send the request with the catalog, the tools in force and materialised messages."""
        prepared, session = self._prepare(request)
        self._models.remember(session.conversation, request.model)
        started = time.perf_counter()
        with span("skillshelf.model", {"agent": self.agent}):
            response = handler(prepared)
        self._finish_model(prepared, response, session, started)
        return response

    async def awrap_model_call(
        self,
        request: ModelRequest[Any],
        handler: Callable[[ModelRequest[Any]], Awaitable[ModelResponse[Any]]],
    ) -> Any:
        """:meth:`wrap_model_call` for async runs."""
        prepared, session = await anyio.to_thread.run_sync(self._prepare, request)
        self._models.remember(session.conversation, request.model)
        started = time.perf_counter()
        with span("skillshelf.model", {"agent": self.agent}):
            response = await handler(prepared)
        await anyio.to_thread.run_sync(self._finish_model, prepared, response, session, started)
        return response

    # -- tool calls whose arguments did not parse ------------------------------------------

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: SkillsState, runtime: Any) -> dict[str, Any] | None:
        """Answer the reply's tool calls whose arguments did not parse.

        LangChain keeps them apart (``AIMessage.invalid_tool_calls``), never runs them, and
        ends the run when the reply has no other call: the answer would be empty. Each gets
        skillshelf's graded result instead ("Arguments are not valid JSON: …", the third
        identical failure fatal), and a reply with nothing else to run goes back to the model.
        """
        messages = state.get("messages") or []
        reply = next((m for m in reversed(messages) if isinstance(m, AIMessage)), None)
        if reply is None or not reply.invalid_tool_calls:
            return None
        answered = {str(m.tool_call_id) for m in messages if isinstance(m, ToolMessage)}
        # Without an id no result can be tied to the call: LangChain's own answer stands.
        pending = [c for c in reply.invalid_tool_calls if c.get("id") and c["id"] not in answered]
        if not pending:
            return None
        session = self._of(state)
        update: dict[str, Any] = {
            "messages": [self._invalid_call(session, c, answered) for c in pending]
        }
        if not reply.tool_calls:
            update["jump_to"] = "model"
        return update

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: SkillsState, runtime: Any) -> dict[str, Any] | None:
        """:meth:`after_model` in a worker thread (the store may block)."""
        return await anyio.to_thread.run_sync(self.after_model, state, runtime)

    def _invalid_call(
        self, session: SkillSession, invalid: Mapping[str, Any], history: set[str]
    ) -> ToolMessage:
        name = str(invalid.get("name") or "")
        sent = str(invalid.get("args") or "")  # the arguments as the model wrote them
        call = {"id": invalid["id"], "name": name, "args": sent}
        if name in _SKILL_NAMES:
            record = anyio.run(_call, session, ToolCall(call["id"], name, sent), history)
            return tool_message(call, record)
        # The same reading of the arguments a skillshelf tool gets; the caller's tools are
        # LangChain's, so only the problem is told, counted like any failing call.
        started = time.perf_counter()
        shim = self._gated.get(name, _shim(name))
        parsed = shim.validate(sent)
        problem = (
            parsed.message
            if isinstance(parsed, ArgumentProblem)
            else f"The call could not be read: {clip(str(invalid.get('error') or ''))}."
        )
        count = session.tools.record_failure(shim.signature(sent))
        status, content = grade_failure(clip(name) or "?", count, problem)
        kind = parsed.kind if isinstance(parsed, ArgumentProblem) else "invalid"
        return self._answer(session, call, status, content, started, kind)

    # -- tool calls ------------------------------------------------------------------------

    def wrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]],
    ) -> ToolMessage | Command[Any]:
        """Run skill tools through the session; refuse activated tools not in force and,
        with ``enforce_allowed_tools``, calls outside the active skill's ``allowed-tools``."""
        name = request.tool_call["name"]
        if name in _SKILL_NAMES:
            return anyio.run(self._skill_call, request, True)
        if request.tool is None and name not in self._gated:
            return self._unknown(request)
        refusal = self._refusal(request)
        if refusal is not None:
            return refusal
        if name in self._gated:
            return anyio.run(self._user_call, request)
        return handler(request)

    async def awrap_tool_call(
        self,
        request: ToolCallRequest,
        handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]],
    ) -> ToolMessage | Command[Any]:
        """:meth:`wrap_tool_call` for async runs."""
        name = request.tool_call["name"]
        if name in _SKILL_NAMES:
            return await self._skill_call(request, False)
        if request.tool is None and name not in self._gated:
            return await anyio.to_thread.run_sync(self._unknown, request)
        refusal = await anyio.to_thread.run_sync(self._refusal, request)
        if refusal is not None:
            return refusal
        if name in self._gated:
            return await self._user_call(request)
        return await handler(request)

    async def _skill_call(self, request: ToolCallRequest, sync: bool) -> ToolMessage:
        call = request.tool_call
        session = await anyio.to_thread.run_sync(self._fork_session, request.state, sync)
        history = {
            str(m.tool_call_id)
            for m in request.state.get("messages", ())
            if isinstance(m, ToolMessage)
        }
        sent = ToolCall(call["id"] or "", call["name"], json.dumps(call["args"]))
        return tool_message(call, await _call(session, sent, history))

    def _unknown(self, request: ToolCallRequest) -> ToolMessage:
        """A call to a tool the agent does not have, answered by the harness (ToolNode lets
        middleware answer it first): graded and counted like every failure (the closest
        names, the third identical call fatal), traced; a slipped skill tool name
        (``Skill-Load``) runs that tool."""
        call = request.tool_call
        session = self._of(request.state)
        arguments = call.get("args")
        record = session.call_skill_tool(
            call["id"] or "",
            call["name"],
            arguments if isinstance(arguments, dict) else None,
            self._offered_names.get(session.conversation) or (),
        )
        return tool_message(call, record)

    def _refusal(self, request: ToolCallRequest) -> ToolMessage | None:
        call = request.tool_call
        session = self._of(request.state)
        started = time.perf_counter()
        if call["name"] in self._gated and _name(call) not in {
            _name(t) for t in self._offered(self.tools, session)
        }:
            content = inactive_tool_message(call["name"])
            return self._answer(session, call, "recoverable", content, started, "refused")
        arguments = call.get("args") if isinstance(call.get("args"), dict) else {}
        message = session.allowed_tools_refusal(call["name"], arguments)
        if message is None:
            return None
        sent = ToolCall(call["id"] or "", call["name"], json.dumps(arguments))
        count = session.tools.record_failure(session.signature(sent))
        status, content = grade_failure(call["name"], count, message)
        return self._answer(session, call, status, content, started, "refused")

    async def _user_call(self, request: ToolCallRequest) -> ToolMessage:
        call = request.tool_call
        tool = self._gated[call["name"]]
        started = time.perf_counter()
        session = await anyio.to_thread.run_sync(self._of, request.state)
        validated = tool.validate(call["args"])
        kind: str | None
        if isinstance(validated, ArgumentProblem):
            status, content, kind = "recoverable", validated.message, validated.kind
        else:
            timeout = tool.timeout_s if tool.timeout_s is not None else self.settings.tool_timeout_s
            run = await run_tool(tool, validated.values, None, timeout_s=timeout)
            status, content, kind = run.status, run.text, run.kind
        return self._answer(session, call, status, content, started, kind)

    def _answer(
        self,
        session: SkillSession,
        call: Mapping[str, Any],
        status: str,
        content: str,
        started: float,
        kind: str | None,
    ) -> ToolMessage:
        """The graded answer to a call the middleware decided itself, traced like any call."""
        record = ToolRecord(
            str(call.get("id") or ""),
            str(call.get("name") or ""),
            call.get("args"),
            status,
            content,
            _ms(started),
            error_kind=kind if status != "ok" else None,
        )
        session.trace_call(record)
        return tool_message(call, record)


async def _call(session: SkillSession, call: ToolCall, history: set[str]) -> ToolRecord:
    with span("skillshelf.tool", {"agent": session.settings.agent, "tool": call.name}):
        return await session.call(call, history=history)


class _SkillTool(BaseTool):
    """A skill tool as LangChain sees it; :class:`SkillsMiddleware` runs its calls."""

    @classmethod
    def of(cls, schema: Mapping[str, Any]) -> _SkillTool:
        function = schema["function"]
        return cls(
            name=function["name"],
            description=function["description"],
            args_schema=function["parameters"],
        )

    def _run(self, *args: Any, **kwargs: Any) -> str:
        raise UsageError(f"{self.name} runs only inside an agent with SkillsMiddleware")


def _native(tool: Tool) -> BaseTool:
    """An activated skillshelf tool registered with the agent (the middleware runs it)."""
    return StructuredTool(
        name=tool.name,
        description=tool.description,
        args_schema=dict(tool.parameters),
        func=_unreachable,
    )


def _unreachable(**_kwargs: Any) -> str:
    raise UsageError("activated tools run only inside an agent with SkillsMiddleware")


def _shim(name: str) -> Tool:
    return Tool(name, "", {}, _unreachable)


def _thread_id() -> str | None:
    try:
        configurable = get_config().get("configurable") or {}
    except RuntimeError:  # outside a runnable context: no config at all
        return None
    thread = configurable.get("thread_id")
    return None if thread is None else str(thread)


def _name(tool: Any) -> str:
    if isinstance(tool, BaseTool):
        return tool.name
    if isinstance(tool, Mapping):
        function = tool.get("function")
        return str(function.get("name") if isinstance(function, Mapping) else tool.get("name"))
    return str(getattr(tool, "name", getattr(tool, "__name__", "")))


def _materialized(
    messages: Sequence[AnyMessage], tools: SkillTools, placement: Placement
) -> list[AnyMessage]:
    """``messages`` with loaded content placed as :func:`materialize` decides.

    The core works on OpenAI-shaped dicts: each message gets a skeleton with what it reads
    (roles, tool call ids, ``skill_load`` arguments, tool result text), and the rewritten
    results and the carried-context system message are mapped back.
    """
    skeletons = [_skeleton(m) for m in messages]
    placed = materialize(skeletons, tools, placement=placement)
    out: list[AnyMessage] = []
    source = iter(zip(messages, skeletons, strict=True))
    for item in placed:
        if item.get("role") == "system" and item.get("_index") is None:
            out.append(SystemMessage(content=str(item["content"])))
            continue
        message, skeleton = next(source)
        if item is not skeleton and isinstance(message, ToolMessage):
            message = message.model_copy(update={"content": item["content"]})
        out.append(message)
    return out


def _skeleton(message: AnyMessage) -> dict[str, Any]:
    if isinstance(message, ToolMessage):
        return {
            "role": "tool",
            "tool_call_id": message.tool_call_id,
            "content": message.text,
            "_index": 1,
        }
    calls = [
        {"id": c["id"], "function": {"name": c["name"], "arguments": json.dumps(c["args"])}}
        for c in getattr(message, "tool_calls", None) or ()
    ]
    role = "system" if isinstance(message, SystemMessage) else message.type
    return {"role": role, "tool_calls": calls, "_index": 1}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

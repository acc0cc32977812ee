"""The loop of one conversation: the model decides, the harness executes, until a final answer.

Each user message starts a turn (:meth:`SkillTools.begin_turn`); before each model request the
history is materialised (loaded content stays in the tool results that delivered it) and after
it :meth:`SkillTools.after_request` runs. Tool calls of one reply run concurrently and their
results go back in order, graded ``ok``/``recoverable``/``fatal``; a model that repeats a call
already answered as fatal stops the run.
"""

from __future__ import annotations

import functools
import json
import logging
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import anyio

from skillshelf.agent.fork import fork_config, fork_result, forks, named_agent_tool
from skillshelf.agent.history import (
    HistoryError,
    HistoryLimit,
    clear_history,
    load_history,
    save_history,
)
from skillshelf.agent.materialize import materialize
from skillshelf.agent.results import (
    EmptyResponseError,
    MaxStepsError,
    RepeatedToolFailureError,
    RunResult,
    ToolContext,
    ToolRecord,
    ToolSink,
)
from skillshelf.agent.tool_style import canonical_call, styled_definitions
from skillshelf.agent.trace import Trace, digest, span
from skillshelf.core.search import closest_names
from skillshelf.core.session import SessionState, grade_failure
from skillshelf.core.slash import SlashCommand, SlashCommandError, expand, parse_commands
from skillshelf.errors import SkillshelfError, UsageError, clip
from skillshelf.models import ModelRequest, ModelResponse, TextSink, TransientModelError, Usage
from skillshelf.skills.content import render_load
from skillshelf.skills.skill import Skill
from skillshelf.tools.skill_tools import SkillTools
from skillshelf.tools.spec import ArgumentProblem, failure_signature, normalise_tool_name
from skillshelf.tools.user_tools import (
    Activation,
    Tool,
    activated_tools,
    call_allowed,
    result_text,
    run_tool,
    tool_set,
)

if TYPE_CHECKING:
    from skillshelf.agent.config import AgentConfig

__all__ = ["Conversation"]

logger = logging.getLogger("skillshelf.agent")

MAX_EMPTY_REPLIES: Final = 2  # an empty reply is asked again this often before giving up
TRACE_MESSAGE_CHARS: Final = 500  # of a failed call's message kept in the trace
NUDGE: Final = "Your last reply was empty. Answer the user, or call one of the tools."
_ACTIVATIONS_KEY: Final = "#activations"


@dataclass(slots=True)
class _Outcome:
    """One tool call's graded result, before it becomes a :class:`ToolRecord`."""

    status: str
    content: str
    arguments: Any
    kind: str | None = None
    notes: tuple[str, ...] = ()
    repairs: tuple[str, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False


@dataclass(slots=True)
class _Run:
    """State of one user message's run."""

    message: str
    on_text: TextSink | None
    on_tool: ToolSink | None
    records: list[ToolRecord] = field(default_factory=list)
    fatal: set[str] = field(default_factory=set)
    offered: dict[str, Tool] = field(default_factory=dict)
    empty: int = 0
    step: int = 0
    usage: Usage | None = None
    started: float = field(default_factory=time.perf_counter)


class Conversation:
    """The history of one chat with an agent, in one session.

    With ``persist_history`` the messages are kept in the agent's store too (see
    :mod:`skillshelf.agent.history`): a conversation created for the same session and agent, in any
    process sharing the store, starts where the last completed turn left off.

    Args:
        agent: The agent.
        session_id: The session (skill state is kept per session and agent).
        trace: Overrides the agent's trace.
        persist_history: Load the stored history now and store it after each completed turn.
        history_limit: How much history is stored (default: :class:`HistoryLimit`).

    Attributes:
        messages: The history (OpenAI chat shape), without the system prompt.
        restored: Messages loaded from the store when the conversation was created.
        history_problem: Why a stored history could not be read (the conversation then starts
            empty, and the next completed turn replaces it); None when it could.
    """

    def __init__(
        self,
        agent: AgentConfig,
        session_id: str,
        *,
        trace: Trace | None = None,
        persist_history: bool = False,
        history_limit: HistoryLimit | None = None,
    ) -> None:
        self.agent = agent
        self.session_id = session_id
        self.trace = trace if trace is not None else agent.trace
        self.messages: list[dict[str, Any]] = []
        self.persist_history = persist_history
        self.history_limit = history_limit or HistoryLimit()
        self.restored = 0
        self.history_problem: str | None = None
        self._declared = False
        # Skills only the user may invoke are hidden from the model by SkillTools itself;
        # declare() (slash commands, declared loads) may still load them.
        self.model_tools = SkillTools(
            agent.repo,
            store=agent.store,
            session_id=session_id,
            agent=agent.name,
            load_mode=agent.load_mode,
            max_loaded=agent.max_loaded,
            visible=agent.visible,
            workspace=agent.workspace,
            executor=agent.executor,
            exec_policy=agent.exec_policy,
        )
        if persist_history:
            self._restore()

    # -- the stored history --------------------------------------------------------------

    def _restore(self) -> None:
        try:
            self.messages = load_history(self.agent.store, self.session_id, self.agent.name)
        except HistoryError as exc:
            self.history_problem = str(exc)
        self.restored = len(self.messages)

    def _save(self) -> None:
        if self.persist_history:
            save_history(
                self.agent.store,
                self.session_id,
                self.agent.name,
                self.messages,
                limit=self.history_limit,
            )

    def clear_history(self) -> None:
        """Forget the messages, here and in the store (the session's skill state stays)."""
        self.messages = []
        clear_history(self.agent.store, self.session_id, self.agent.name)

    # -- the loop ------------------------------------------------------------------------

    async def send(
        self, message: str, *, on_text: TextSink | None = None, on_tool: ToolSink | None = None
    ) -> RunResult:
        """Send one user message and run until the final answer.

        Raises:
            SlashCommandError: The message invokes an unknown skill or one the user may not.
            MaxStepsError: No final answer within ``max_steps`` requests.
            RepeatedToolFailureError: The model kept repeating a call answered as fatal.
            EmptyResponseError: The model kept replying with nothing.
            skillshelf.models.ModelError: The provider failed (after retries, when transient).
        """
        commands = self._commands(message)
        run = _Run(message, on_text, on_tool)
        self.model_tools.begin_turn()
        self._declare_once(run)
        self.messages.append({"role": "user", "content": message})
        self._record("turn", run, commands=[c.skill for c in commands])
        if commands:
            self._invoke_commands(commands, run)
        try:
            result = await self._loop(run)
        except SkillshelfError as exc:
            self._record("error", run, error=type(exc).__name__, message=str(exc))
            self._totals(run, outcome="error", error=type(exc).__name__)
            raise
        self._save()
        self._totals(run, outcome="answer")
        return result

    async def _loop(self, run: _Run) -> RunResult:
        for step in range(1, self.agent.max_steps + 1):
            run.step = step
            response = await self._request(run)
            if not response.tool_calls:
                if response.text.strip():
                    self.messages.append(response.to_message())
                    return RunResult(
                        response.text, step, run.records, response.finish_reason, run.usage
                    )
                run.empty += 1
                if run.empty > MAX_EMPTY_REPLIES:
                    raise EmptyResponseError(
                        f"The model replied with nothing {run.empty} times in a row."
                    )
                continue
            run.empty = 0
            response = self._unique_ids(response)
            self._stop_repeats(response, run)
            self.messages.append(response.to_message())
            await self._run_calls(response, run)
        raise MaxStepsError(
            f"No final answer after {self.agent.max_steps} model requests (max_steps); the "
            "model was still calling tools."
        )

    def send_sync(self, message: str) -> RunResult:
        """:meth:`send` for synchronous callers."""
        return anyio.run(lambda: self.send(message))

    async def _request(self, run: _Run) -> ModelResponse:
        offered = self._offered_tools()
        run.offered = {t.name: t for t in offered}
        defs = self._skill_defs() + [t.definition() for t in offered]
        system = {"role": "system", "content": self.agent.system_prompt()}
        reminder = self.agent.catalog_reminder()
        head = [system] if reminder is None else [system, {"role": "user", "content": reminder}]
        messages = materialize(
            [*head, *self.messages], self.model_tools, placement=self.agent.placement
        )
        if run.empty:
            messages.append({"role": "user", "content": NUDGE})
        request = ModelRequest(messages, defs)
        started = time.perf_counter()
        response, retries = await self._complete(request, run)
        self.model_tools.after_request()
        if response.usage is not None:
            run.usage = response.usage if run.usage is None else run.usage + response.usage
        self._record(
            "model",
            run,
            model=self.agent.model.name,
            finish_reason=response.finish_reason,
            tool_choice="auto",
            tool_calls=[c.name for c in response.tool_calls],
            text_chars=len(response.text),
            tools_offered=[d.name for d in defs],
            duration_ms=_ms(started),
            retries=retries,
            usage=response.usage.to_json() if response.usage is not None else None,
        )
        return response

    async def _complete(self, request: ModelRequest, run: _Run) -> tuple[ModelResponse, int]:
        policy = self.agent.retry
        sleep = policy.sleep or anyio.sleep
        attempt = 0
        shown: list[str] = []

        def show(piece: str) -> None:
            shown.append(piece)
            if run.on_text is not None:
                run.on_text(piece)

        while True:
            try:
                with span("skillshelf.model", {"agent": self.agent.name, "step": run.step}):
                    response = await self.agent.model.complete(request, on_text=show)
                return response, attempt
            except TransientModelError as exc:
                # A retry after part of a reply was shown would show that part twice.
                if attempt >= policy.max_retries or shown:
                    raise
                delay = policy.delay(attempt, exc.retry_after)
                self._record("retry", run, status=exc.status, delay_s=delay, error=str(exc))
                await sleep(delay)
                attempt += 1

    # -- tools offered -------------------------------------------------------------------

    def _skill_defs(self) -> list[Any]:
        from skillshelf.tools.spec import tool_definitions

        names = [s.name for s in self.model_tools.visible_skills() if s.model_invocable]
        definitions = tool_definitions(
            skill_names=names,
            tools=self.model_tools.tool_names,
            enum_limit=self.model_tools.enum_limit,
        )
        return styled_definitions(definitions, self.agent.tool_style)

    def _offered_tools(self) -> list[Tool]:
        state = self.model_tools.state()
        persisted = self._persisted_activations()
        in_force: list[tuple[Activation, Sequence[Tool]]] = []
        for index, activation in enumerate(self.agent.activations):
            names = list(state.loaded)
            if activation.lifetime == "session":
                names += [n for i, n in persisted if i == index and n not in state.loaded]
            for name in names:
                tools = activated_tools(activation, name, self._allowed_tools(name))
                if tools:
                    in_force.append((activation, tools))
        return tool_set(self.agent.tools, in_force)

    def _allowed_tools(self, name: str) -> tuple[str, ...]:
        skill = self.agent.repo.find(name)
        return skill.manifest.allowed_tools if skill is not None else ()

    def _persisted_activations(self) -> list[tuple[int, str]]:
        doc = self.agent.store.get(self.session_id, self.agent.name + _ACTIVATIONS_KEY) or {}
        return [(int(i), str(n)) for i, n in doc.get("session", [])]

    def _on_loaded(self, name: str) -> None:
        keep = [
            [index, name]
            for index, activation in enumerate(self.agent.activations)
            if activation.lifetime == "session"
            and activated_tools(activation, name, self._allowed_tools(name))
        ]
        if not keep:
            return

        def add(doc: dict[str, Any] | None) -> dict[str, Any]:
            current = [list(p) for p in (doc or {}).get("session", [])]
            return {"session": current + [p for p in keep if p not in current]}

        self.agent.store.update(self.session_id, self.agent.name + _ACTIVATIONS_KEY, add)

    # -- loads by the user and the caller ------------------------------------------------

    def _commands(self, message: str) -> list[SlashCommand]:
        names = [s.name for s in self.model_tools.visible_skills()]
        commands = parse_commands(message, names)
        for command in commands:
            skill = self.agent.repo.get(command.skill)
            if not skill.manifest.user_invocable:
                raise SlashCommandError(
                    f"/{command.skill} is not a user command (the skill sets "
                    "user-invocable: false); only the model may load it."
                )
        return commands

    def _declare_once(self, run: _Run) -> None:
        if self._declared or not self.agent.declared:
            return
        declaring = SkillTools(
            self.agent.repo,
            store=self.agent.store,
            session_id=self.session_id,
            agent=self.agent.name,
            load_mode="session",
            visible=self.agent.visible,
        )
        for result in declaring.declare(self.agent.declared):
            self._record("tool", run, tool="skill_load", status=result.status, source="declared")
            if result.data:
                self._on_loaded(str(result.data["skill"]))
        self._declared = True

    def _invoke_commands(self, commands: Sequence[SlashCommand], run: _Run) -> None:
        calls: list[dict[str, Any]] = []
        results: list[dict[str, Any]] = []
        taken = {str(m.get("tool_call_id")) for m in self.messages if m.get("role") == "tool"}
        for index, command in enumerate(commands):
            call_id, n = f"slash_{len(self.messages)}_{index}", 0
            while call_id in taken:  # a trimmed, restored history may reuse a length
                n += 1
                call_id = f"slash_{len(self.messages)}_{index}_{n}"
            arguments = json.dumps({"skill": command.skill})
            started = time.perf_counter()
            # A fresh invocation carries new arguments: deliver it in full, not as a stub.
            self.model_tools.unload(command.skill)
            (result,) = self.model_tools.declare([command.skill])
            content = result.content
            if result.status == "ok":
                self.model_tools.tie_call_id(command.skill, call_id)
                skill = self.agent.repo.get(command.skill)
                body = expand(skill.body(), command.arguments, skill_dir=skill.directory)
                cap = self.model_tools.max_file_chars
                content = render_load(skill, body, [], max_doc_chars=cap)
                self._on_loaded(command.skill)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "skill_load", "arguments": arguments},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": content})
            record = ToolRecord(
                call_id,
                "skill_load",
                {"skill": command.skill, "arguments": command.arguments},
                result.status,
                content,
                _ms(started),
                source="slash",
            )
            self._finish(record, run)
        self.messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        self.messages.extend(results)

    def _record_failure(self, signature: str) -> int:
        """Count one more identical failure in the session state (the one counter SkillTools
        uses too); returns the count."""
        return self.model_tools.record_failure(signature)

    # -- running tool calls --------------------------------------------------------------

    def _unique_ids(self, response: ModelResponse) -> ModelResponse:
        """Give empty or reused call ids fresh ones (some local servers repeat ``call_0``)."""
        seen = {str(m["tool_call_id"]) for m in self.messages if m.get("role") == "tool"}
        calls = []
        for call in response.tool_calls:
            call_id, n = call.id, 0
            while not call_id or call_id in seen:
                n += 1
                call_id = f"{call.id or 'call'}_{len(self.messages)}_{n}"
            seen.add(call_id)
            calls.append(call if call_id == call.id else replace(call, id=call_id))
        return replace(response, tool_calls=tuple(calls))

    def _stop_repeats(self, response: ModelResponse, run: _Run) -> None:
        # Checked before the reply enters the history, so the history stays valid to resend.
        for call in response.tool_calls:
            call = canonical_call(call, self.agent.tool_style)
            if self._signature(call, self._tool_name(call.name, run), run) in run.fatal:
                raise RepeatedToolFailureError(
                    f"The model repeated the call {call.name}({clip(call.arguments)}) after it "
                    "was answered as fatal; stopping. The tool kept failing for this request."
                )

    async def _run_calls(self, response: ModelResponse, run: _Run) -> None:
        state = self.model_tools.state()
        history = {str(m["tool_call_id"]) for m in self.messages if m.get("role") == "tool"}
        records: list[ToolRecord | None] = [None] * len(response.tool_calls)

        async def one(index: int) -> None:
            records[index] = await self._one_call(response.tool_calls[index], run, state, history)

        async with anyio.create_task_group() as group:
            for index in range(len(response.tool_calls)):
                group.start_soon(one, index)
        for record in records:
            assert record is not None
            self._finish(record, run)  # in call order, whatever order they finished in
            message: dict[str, Any] = {
                "role": "tool",
                "tool_call_id": record.call_id,
                "content": record.content,
            }
            if record.status != "ok":
                message["is_error"] = True  # Anthropic's tool_result flag; others drop it
            self.messages.append(message)

    async def _one_call(
        self, call: Any, run: _Run, state: SessionState, history: set[str]
    ) -> ToolRecord:
        started = time.perf_counter()
        call = canonical_call(call, self.agent.tool_style)  # records speak the contract
        name = self._tool_name(call.name, run)
        signature = self._signature(call, name, run)
        retry_count = state.failures.get(signature, 0)
        with span("skillshelf.tool", {"agent": self.agent.name, "tool": name}) as extra:
            if name in self.model_tools.tool_names:  # SkillTools grades and counts its own
                outcome = await self._skill_call(call, name, history, state)
            elif name in run.offered:
                outcome = await self._user_call(run.offered[name], call, state)
                if outcome.status == "recoverable":
                    limit = _retries(run.offered[name], self.agent) + 1
                    count = self._record_failure(signature)
                    outcome.status, outcome.content = grade_failure(
                        name, count, outcome.content, limit=limit
                    )
            else:
                outcome = self._unknown_tool(call, run)
                count = self._record_failure(signature)
                outcome.status, outcome.content = grade_failure(call.name, count, outcome.content)
            if name != call.name:
                outcome.repairs = (f"Read tool name {_shown(call.name)} as '{name}'.",)
                outcome.repairs += outcome.notes
            else:
                outcome.repairs = outcome.notes
            if outcome.status == "fatal":
                run.fatal.add(signature)
            extra["status"] = outcome.status
        return ToolRecord(
            call.id,
            name,
            outcome.arguments,
            outcome.status,
            outcome.content,
            _ms(started),
            retry_count,
            error_kind=outcome.kind if outcome.status != "ok" else None,
            repairs=outcome.repairs,
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
        )

    def _signature(self, call: Any, name: str, run: _Run) -> str:
        """The key failures of ``call`` (run as ``name``) are counted under: the call as the
        tool that reads it validates it, so a respelt call is the same call."""
        if name in self.model_tools.tool_names:
            return self.model_tools.signature(name, call.arguments)
        if name in run.offered:
            return run.offered[name].signature(call.arguments)
        return failure_signature(call.name, call.arguments)

    def _tool_name(self, sent: str, run: _Run) -> str:
        """The tool a slipped name means (``Skill-Load`` → ``skill_load``), by the one
        normaliser of :mod:`skillshelf.tools.spec`; the name as sent when none fits."""
        known = [*self.model_tools.tool_names, *run.offered]
        return normalise_tool_name(sent, known) or sent

    def _unknown_tool(self, call: Any, run: _Run) -> _Outcome:
        available = [*self.model_tools.tool_names, *run.offered]
        close = closest_names(call.name, available) if len(call.name) <= 256 else []
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        message = (
            f"Unknown tool {_shown(call.name)}.{hint} Available tools: {', '.join(available)}."
        )
        return _Outcome("recoverable", message, call.arguments, "unknown_tool")

    async def _skill_call(
        self, call: Any, name: str, history: set[str], state: SessionState
    ) -> _Outcome:
        from skillshelf.tools import spec as toolspec

        names = [s.name for s in self.model_tools.visible_skills() if s.model_invocable]
        parsed = toolspec.parse_arguments(name, call.arguments, skill_names=names)
        arguments = call.arguments
        if isinstance(parsed, toolspec.ParsedArgs):
            arguments = parsed.args.model_dump()
            # The MCP server's conversation handle means nothing in process, and a load
            # without args has none: unset, unshown.
            for key in ("conversation", "args"):
                if arguments.get(key, "") is None:
                    del arguments[key]
        if name == "skill_load" and isinstance(parsed, toolspec.ParsedArgs):
            skill = self.agent.repo.find(parsed.args.skill)  # type: ignore[attr-defined]
            if skill is not None and forks(skill, self.agent, state):
                return await self._fork(skill, parsed.args, arguments, call)
        if name == "workspace_exec" and isinstance(parsed, toolspec.ParsedArgs):
            # A skill's allowed-tools speak of Bash(python3:*): workspace_exec is that shell.
            command = getattr(parsed.args, "command", "")
            refusal = self._refusal("Bash", {"command": command}, state)
            if refusal:
                return _Outcome("recoverable", refusal, arguments, "refused")
        # In a worker thread: a running script must not hold up the step's other calls.
        result = await anyio.to_thread.run_sync(
            functools.partial(
                self.model_tools.call,
                name,
                call.arguments,
                call_id=call.id,
                history_call_ids=history,
            )
        )
        if result.status == "ok" and name == "skill_load" and result.data:
            self._on_loaded(str(result.data["skill"]))
        return _Outcome(
            result.status,
            result.content,
            arguments,
            result.kind,
            result.notes,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
        )

    async def _fork(self, skill: Skill, args: Any, arguments: Any, call: Any) -> _Outcome:
        """Run a ``context: fork`` skill in a sub-agent (see :mod:`skillshelf.agent.fork`)."""
        task = expand(skill.body(), args.args or "", skill_dir=skill.directory)
        named = named_agent_tool(self.agent.tools, skill.manifest.agent)
        context = ToolContext(self.session_id, self.agent.name, self.trace)
        try:
            if named is not None:
                output = await named.invoke({"task": task}, context)
            else:  # as an as_tool() sub-agent runs: same session, its own agent key
                sub = Conversation(
                    fork_config(self.agent, skill), self.session_id, trace=self.trace
                )
                output = (await sub.send(task)).output
        except (SkillshelfError, UsageError) as exc:
            message = (
                f"The skill {skill.name!r} runs in a sub-agent, which failed: "
                f"{clip(str(exc))}. Tell the user, or try another way."
            )
            count = self._record_failure(self.model_tools.signature(call.name, call.arguments))
            status, message = grade_failure("skill_load", count, message)
            return _Outcome(status, message, arguments, "tool_error")
        return _Outcome("ok", fork_result(skill, result_text(output)), arguments)

    async def _user_call(self, tool: Tool, call: Any, state: SessionState) -> _Outcome:
        parsed = tool.validate(call.arguments)
        if isinstance(parsed, ArgumentProblem):
            return _Outcome("recoverable", parsed.message, call.arguments, parsed.kind)
        arguments, notes = parsed.values, parsed.notes
        if parsed.ignored:
            notes += (f"Ignored unknown arguments: {', '.join(parsed.ignored)}.",)
        refusal = self._refusal(tool.name, arguments, state)
        if refusal:
            return _Outcome("recoverable", refusal, arguments, "refused", notes)
        context = ToolContext(self.session_id, self.agent.name, self.trace)
        timeout = tool.timeout_s if tool.timeout_s is not None else self.agent.tool_timeout_s
        run = await run_tool(tool, arguments, context, timeout_s=timeout, session=self.session_id)
        if run.status != "ok":
            return _Outcome(run.status, run.text, arguments, run.kind, notes)
        content = run.text
        if notes:
            content += "\n\n(Arguments adjusted: " + " ".join(notes) + ")"
        return _Outcome("ok", content, arguments, None, notes)

    def _refusal(self, tool: str, arguments: Mapping[str, Any], state: SessionState) -> str | None:
        if not self.agent.enforce_allowed_tools or not state.loaded:
            return None
        active = max(state.loaded.values(), key=lambda s: (s.touched, s.name)).name
        allowed = self._allowed_tools(active)
        if not allowed or call_allowed(allowed, tool, arguments):
            return None
        return (
            f"Refused: the active skill {active!r} allows only these tools: "
            f"{' '.join(allowed)}. This call to {tool} is outside them. Use an allowed tool, "
            "or tell the user what you need to do instead."
        )

    # -- records -------------------------------------------------------------------------

    def _finish(self, record: ToolRecord, run: _Run) -> None:
        run.records.append(record)
        self._record(
            "tool",
            run,
            call_id=record.call_id,
            tool=record.tool,
            arguments=record.arguments,
            duration_ms=record.duration_ms,
            retry_count=record.retry_count,
            source=record.source,
            message=None if record.status == "ok" else clip(record.content, TRACE_MESSAGE_CHARS),
            repairs=list(record.repairs),
            **record.trace_fields(),
        )
        if run.on_tool is not None:
            run.on_tool(record)

    def _totals(self, run: _Run, **fields: Any) -> None:
        """The run's last record: what it cost and how its tool calls went."""
        by_status: dict[str, int] = {}
        by_kind: dict[str, int] = {}
        for record in run.records:
            status = record.trace_status  # as each tool record says it
            by_status[status] = by_status.get(status, 0) + 1
            if record.error_kind is not None:
                by_kind[record.error_kind] = by_kind.get(record.error_kind, 0) + 1
        self._record(
            "run",
            run,
            steps=run.step,
            tool_calls=by_status,
            error_kinds=by_kind,
            loaded=[
                r.arguments.get("skill")
                for r in run.records
                if r.tool == "skill_load" and r.status == "ok" and isinstance(r.arguments, dict)
            ],
            usage=run.usage.to_json() if run.usage is not None else None,
            duration_ms=_ms(run.started),
            **fields,
        )

    def _record(self, kind: str, run: _Run, **fields: Any) -> None:
        if self.trace is None:
            return
        self.trace.record(
            kind,
            session=self.session_id,
            agent=self.agent.name,
            step=run.step,
            user_digest=digest(run.message),
            **fields,
        )


def _retries(tool: Tool, agent: AgentConfig) -> int:
    return tool.retries if tool.retries is not None else agent.tool_retries


def _shown(name: str) -> str:
    return repr(clip(name))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

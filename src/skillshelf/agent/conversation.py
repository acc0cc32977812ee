"""The loop of one conversation: the model decides, the harness executes, until a final answer.

Each user message starts a turn (:meth:`SkillTools.begin_turn`); before each model request the
history is materialised (loaded content stays in the tool results that delivered it) and after
it :meth:`SkillTools.after_request` runs. Tool calls of one reply run concurrently and their
results go back in order, graded ``ok``/``recoverable``/``fatal``; a model that repeats a call
already answered as fatal stops the run.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Final

import anyio

from skillshelf.agent.fork import fork_config, named_agent_tool
from skillshelf.agent.history import (
    HistoryError,
    HistoryLimit,
    clear_history,
    load_history,
    save_history,
)
from skillshelf.agent.results import (
    EmptyResponseError,
    MaxStepsError,
    RepeatedToolFailureError,
    RunResult,
)
from skillshelf.core.slash import SlashCommand
from skillshelf.errors import SkillshelfError, clip
from skillshelf.harness import (
    Harness,
    Offer,
    SkillSession,
    ToolContext,
    ToolRecord,
    ToolSink,
    Trace,
    TurnOptions,
    digest,
    materialize,
    span,
)
from skillshelf.models import ModelRequest, ModelResponse, TextSink, TransientModelError, Usage
from skillshelf.skills.skill import Skill
from skillshelf.tools import result_text

if TYPE_CHECKING:
    from skillshelf.agent.config import AgentConfig

__all__ = ["Conversation"]

logger = logging.getLogger("skillshelf.agent")

MAX_EMPTY_REPLIES: Final = 2  # an empty reply is asked again this often before giving up
NUDGE: Final = "Your last reply was empty. Answer the user, or call one of the tools."


@dataclass(slots=True)
class _Run:
    """State of one user message's run."""

    message: str
    on_text: TextSink | None
    on_tool: ToolSink | None
    records: list[ToolRecord] = field(default_factory=list)
    fatal: set[str] = field(default_factory=set)
    offer: Offer | None = None
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
        harness = agent.harness
        if trace is not None and trace is not agent.trace:
            harness = Harness(agent.repo, agent.settings.replace(trace=trace), source="agent")
        # One session: the prompt, the offered tools and every call (skills only the user may
        # invoke are hidden from the model by the skill tools; slash commands may load them).
        self.session: SkillSession = harness.session(session_id, fork=self._run_fork)
        self.model_tools = self.session.tools
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
        self,
        message: str,
        *,
        on_text: TextSink | None = None,
        on_tool: ToolSink | None = None,
        turn: TurnOptions | None = None,
    ) -> RunResult:
        """Send one user message and run until the final answer.

        ``turn`` sets what this message's requests offer: skills loaded for it, the skills
        the model may see, the catalog and guidance text, the skill tools (see
        :class:`~skillshelf.harness.TurnOptions`).

        Raises:
            SlashCommandError: The message invokes an unknown skill or one the user may not.
            MaxStepsError: No final answer within ``max_steps`` requests.
            RepeatedToolFailureError: The model kept repeating a call answered as fatal.
            EmptyResponseError: The model kept replying with nothing.
            skillshelf.models.ModelError: The provider failed (after retries, when transient).
        """
        commands = self.session.commands(message)
        run = _Run(message, on_text, on_tool)
        for record in self.session.begin_turn(turn):  # declared (first turn) and turn loads
            self._record("tool", run, tool=record.tool, status=record.status, source=record.source)
        # The skills relevant to this message, when the catalog could not show them all: a
        # user message just before it, kept in the history (the system prompt stays stable).
        relevant = None if commands else self.session.relevant(message)
        if relevant is not None:
            self.messages.append({"role": "user", "content": relevant})
        self.messages.append({"role": "user", "content": message})
        self._record(
            "turn",
            run,
            commands=[c.skill for c in commands],
            relevant_chars=len(relevant) if relevant is not None else 0,
        )
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

    def send_sync(self, message: str, *, turn: TurnOptions | None = None) -> RunResult:
        """:meth:`send` for synchronous callers."""
        return anyio.run(lambda: self.send(message, turn=turn))

    async def _request(self, run: _Run) -> ModelResponse:
        run.offer = offer = self.session.offer()
        defs = offer.definitions
        system = {"role": "system", "content": self.session.instructions()}
        reminder = self.session.harness.catalog_reminder()
        head = [system] if reminder is None else [system, {"role": "user", "content": reminder}]
        messages = materialize(
            [*head, *self.messages], self.model_tools, placement=self.agent.placement
        )
        if run.empty:
            messages.append({"role": "user", "content": NUDGE})
        request = ModelRequest(messages, defs)
        started = time.perf_counter()
        response, retries = await self._complete(request, run)
        self.session.after_request()
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

    # -- loads by the user ---------------------------------------------------------------

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
            record = self.session.invoke(command, call_id)
            calls.append(
                {
                    "id": call_id,
                    "type": "function",
                    "function": {"name": "skill_load", "arguments": arguments},
                }
            )
            results.append({"role": "tool", "tool_call_id": call_id, "content": record.content})
            self._finish(record, run)
        self.messages.append({"role": "assistant", "content": None, "tool_calls": calls})
        self.messages.extend(results)

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
            if self.session.signature(call, run.offer) in run.fatal:
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

    async def _one_call(self, call: Any, run: _Run, state: Any, history: set[str]) -> ToolRecord:
        record = await self.session.call(
            call, run.offer, history=history, state=state, traced=False
        )
        if record.status == "fatal":
            run.fatal.add(self.session.signature(call, run.offer))
        return record

    async def _run_fork(self, skill: Skill, task: str) -> str:
        """Run a ``context: fork`` skill in a sub-agent: the caller's agent tool its
        ``agent`` names, else a copy of this agent (same session, its own agent key)."""
        named = named_agent_tool(self.agent.tools, skill.manifest.agent)
        if named is not None:
            context = ToolContext(self.session_id, self.agent.name, self.trace)
            return result_text(await named.invoke({"task": task}, context))
        sub = Conversation(fork_config(self.agent, skill), self.session_id, trace=self.trace)
        return (await sub.send(task)).output

    # -- records -------------------------------------------------------------------------

    def _finish(self, record: ToolRecord, run: _Run) -> None:
        run.records.append(record)
        if self.trace is not None:
            self.session.trace_call(record, **self._context(run))
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
        if self.trace is not None:
            self.session.record(kind, **self._context(run), **fields)

    @staticmethod
    def _context(run: _Run) -> dict[str, Any]:
        """What every record of a run carries besides the session and agent."""
        return {"step": run.step, "user_digest": digest(run.message)}


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

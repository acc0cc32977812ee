"""The harness of one conversation: what the model is offered on each request and what happens
on each of its tool calls.

:class:`Harness` holds what the conversations of one face share (the repository, the
:class:`~skillshelf.harness.SkillSettings`, the rendered prompt); :meth:`Harness.session` gives
the :class:`SkillSession` of one conversation. A session answers every call the same way
whichever face asked: the call's name is read through the tool style and the one name
normaliser, its arguments parsed once, an activated tool checked against the loaded skills,
a call outside the active skill's ``allowed-tools`` refused, failures counted under the call's
validated signature (so a respelt call is the same call), and each call traced alike. The
session's own state lives in the store as entries beside the skill state (never under another
agent's key).
"""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Final

import anyio

from skillshelf.core.search import closest_names
from skillshelf.core.session import SessionState, grade_failure
from skillshelf.core.slash import SlashCommand, SlashCommandError, expand, parse_commands
from skillshelf.errors import SkillshelfError, UsageError, clip
from skillshelf.harness._records import ToolContext, ToolRecord
from skillshelf.harness._tool_style import canonical_call
from skillshelf.harness._trace import span
from skillshelf.harness._turns import Fork, Offer, SessionBase
from skillshelf.models import ToolCall
from skillshelf.skills.content import render_load
from skillshelf.skills.skill import Skill
from skillshelf.tools import (
    ArgumentProblem,
    ParsedArgs,
    Tool,
    ToolResult,
    failure_signature,
    normalise_tool_name,
    parse_arguments,
    run_tool,
)

__all__ = ["Fork", "Offer", "SkillSession", "fork_result"]

TRACE_MESSAGE_CHARS: Final = 500  # of a failed call's message kept in the trace
_FORK: Final = "fork"


@dataclass(slots=True)
class _Outcome:
    status: str
    content: str
    arguments: Any
    kind: str | None = None
    notes: tuple[str, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False
    data: Mapping[str, Any] | None = None

    @classmethod
    def of(cls, result: ToolResult, arguments: Any) -> _Outcome:
        return cls(
            result.status,
            result.content,
            arguments,
            result.kind,
            result.notes,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            data=result.data,
        )


class SkillSession(SessionBase):
    """The harness of one conversation (see the module docstring); built by
    :meth:`~skillshelf.harness.Harness.session`.

    Attributes:
        tools: The conversation's :class:`SkillTools` (its state: ``tools.state()``).
    """

    # -- slash commands ------------------------------------------------------------------

    def commands(self, message: str) -> list[SlashCommand]:
        """The slash commands ``message`` starts with, checked.

        Raises:
            SlashCommandError: One names a skill the user may not invoke.
        """
        if self.settings.fork_of is not None:
            # A sub-agent's message is a forked skill's task: data the model passed, never
            # the user's commands (it would run skills the model may not load).
            return []
        names = [s.name for s in self.tools.visible_skills()]
        commands = parse_commands(message, names)
        for command in commands:
            skill = self.harness.repo.get(command.skill)
            if not skill.manifest.user_invocable:
                raise SlashCommandError(
                    f"/{command.skill} is not a user command (the skill sets "
                    "user-invocable: false); only the model may load it."
                )
        return commands

    def invoke(self, command: SlashCommand, call_id: str) -> ToolRecord:
        """Load the skill a slash command names, its arguments substituted into the body (a
        fresh invocation: delivered in full, not as a stub)."""
        started = time.perf_counter()
        self.tools.unload(command.skill)
        (result,) = self.tools.declare([command.skill])
        content = result.content
        if result.status == "ok":
            self.tools.tie_call_id(command.skill, call_id)
            skill = self.harness.repo.get(command.skill)
            body = expand(skill.body(), command.arguments, skill_dir=skill.directory)
            content = render_load(skill, body, [], max_doc_chars=self.tools.max_file_chars)
            self._on_loaded(command.skill)
        arguments = {"skill": command.skill, "arguments": command.arguments}
        return ToolRecord(
            call_id, "skill_load", arguments, result.status, content, _ms(started), source="slash"
        )

    # -- a tool call ---------------------------------------------------------------------

    def tool_name(self, sent: str, offer: Offer | None = None) -> str:
        """The tool a slipped name means (``Skill-Load`` → ``skill_load``); as sent when none
        fits."""
        known = [*self.tools.tool_names, *(offer.tools if offer else ())]
        return normalise_tool_name(sent, known) or sent

    def signature(self, call: ToolCall, offer: Offer | None = None) -> str:
        """The key failures of ``call`` are counted under: the call as the tool that reads it
        validates it, so a respelt call is the same call."""
        call = canonical_call(call, self.settings.tool_style)
        name = self.tool_name(call.name, offer)
        if name in self.tools.tool_names:
            return self.tools.signature(name, call.arguments)
        if offer is not None and name in offer.tools:
            return offer.tools[name].signature(call.arguments)
        return failure_signature(call.name, call.arguments)

    async def call(
        self,
        call: ToolCall,
        offer: Offer | None = None,
        *,
        history: Collection[str] | None = None,
        state: SessionState | None = None,
        trace_fields: Mapping[str, Any] | None = None,
        traced: bool = True,
    ) -> ToolRecord:
        """Run one tool call as the model sent it; never raises for anything the model sent.

        Args:
            call: The call (its name as the model spelt it, its arguments as sent).
            offer: What the request offered (user tools run from here); None: skill tools only.
            history: Tool call ids whose results the model still has (None: unknown).
            state: The session state read before the step's calls (one read per step).
            trace_fields: Extra fields of the call's trace record (the loop's step).
            traced: Write the call's trace record now (False: the caller writes it with
                :meth:`trace_call`, e.g. to keep a step's records in call order).
        """
        started = time.perf_counter()
        call = canonical_call(call, self.settings.tool_style)  # records speak the contract
        name = self.tool_name(call.name, offer)
        signature = self.signature(call, offer)
        if state is None:
            state = await anyio.to_thread.run_sync(self.tools.state)
        with span("skillshelf.tool", {"agent": self.settings.agent, "tool": name}) as extra:
            outcome = await self._dispatch(call, name, offer, history, state, signature)
            extra["status"] = outcome.status
        retries = state.failures.get(signature, 0)
        record = self._record(call.id, call.name, name, outcome, started, retries)
        if traced:
            self.trace_call(record, **(trace_fields or {}))
        return record

    def call_skill_tool(
        self,
        call_id: str,
        sent: str,
        arguments: Mapping[str, Any] | str | None,
        available: Collection[str] = (),
    ) -> ToolRecord:
        """:meth:`call` for a face that offers only the skill tools, in the contract's names,
        and runs no sub-agents (``serve``): in the caller's thread (no event-loop hop on the
        per-call path), with the arguments as the protocol delivered them (MCP's JSON
        object). Traced like :meth:`call`.

        A name that is no skill tool is answered as unknown: graded and counted like every
        failure (the closest names offered, the third identical call fatal). Frameworks that
        find an unknown name before the harness does (pydantic-ai, LangChain, the OpenAI
        Agents SDK) answer it here, with their other offered tools as ``available``; a slipped
        skill tool name (``Skill-Load``) runs that tool, as in skillshelf's agent."""
        started = time.perf_counter()
        name = self.tool_name(sent)
        known = name in self.tools.tool_names
        retry_count = 0
        if self.trace is not None:  # the count before this call is read for the record only
            signature = self.tools.signature(name, arguments)
            retry_count = self.tools.state().failures.get(signature, 0)
        with span("skillshelf.tool", {"agent": self.settings.agent, "tool": name}) as extra:
            if known:
                parsed = self._parsed(name, arguments) if self.trace is not None else None
                outcome = self._run_skill_tool(call_id, name, arguments, None, parsed)
            else:
                outcome = self._graded_unknown(sent, arguments, available)
            extra["status"] = outcome.status
        record = self._record(call_id, sent, name, outcome, started, retry_count)
        self.trace_call(record)
        return record

    def _graded_unknown(
        self, sent: str, arguments: Mapping[str, Any] | str | None, available: Collection[str]
    ) -> _Outcome:
        outcome = self._unknown_tool(sent, arguments, None, available)
        count = self.tools.record_failure(self.tools.signature(sent, arguments))
        outcome.status, outcome.content = grade_failure(sent, count, outcome.content)
        return outcome

    def _record(
        self, call_id: str, sent: str, name: str, outcome: _Outcome, started: float, retries: int
    ) -> ToolRecord:
        repairs = outcome.notes
        if name != sent:
            repairs = (f"Read tool name {_shown(sent)} as '{name}'.", *repairs)
        return ToolRecord(
            call_id,
            name,
            outcome.arguments,
            outcome.status,
            outcome.content,
            _ms(started),
            retries,
            error_kind=outcome.kind if outcome.status != "ok" else None,
            repairs=repairs,
            exit_code=outcome.exit_code,
            timed_out=outcome.timed_out,
            data=outcome.data,
        )

    def trace_call(self, record: ToolRecord, **fields: Any) -> None:
        """The trace record of one tool call (every face writes the same fields)."""
        self.harness.record(
            "tool",
            self.conversation,
            call_id=record.call_id,
            tool=record.tool,
            arguments=record.arguments,
            duration_ms=record.duration_ms,
            retry_count=record.retry_count,
            # In the agent loop the source says who made the call (model, slash, declared);
            # in another face, which face it was.
            source=record.source if self.harness.source == "agent" else self.harness.source,
            message=None if record.status == "ok" else clip(record.content, TRACE_MESSAGE_CHARS),
            repairs=list(record.repairs),
            **record.trace_fields(),
            **fields,
        )

    def record(self, kind: str, **fields: Any) -> None:
        """A trace record of this conversation (a turn, a model request, a run's totals)."""
        self.harness.record(kind, self.conversation, **fields)

    async def _dispatch(
        self,
        call: ToolCall,
        name: str,
        offer: Offer | None,
        history: Collection[str] | None,
        state: SessionState,
        signature: str,
    ) -> _Outcome:
        if name in self.tools.tool_names:  # SkillTools grades and counts its own
            return await self._skill_call(call, name, history, state)
        if offer is not None and name in offer.tools:
            tool = offer.tools[name]
            outcome = await self._user_call(tool, call)
            limit = (tool.retries if tool.retries is not None else self.settings.tool_retries) + 1
        else:
            outcome = self._unknown_tool(call.name, call.arguments, offer)
            limit = None
        if outcome.status == "recoverable":
            count = await anyio.to_thread.run_sync(self.tools.record_failure, signature)
            if limit is None:
                outcome.status, outcome.content = grade_failure(call.name, count, outcome.content)
            else:
                outcome.status, outcome.content = grade_failure(
                    name, count, outcome.content, limit=limit
                )
        return outcome

    def _unknown_tool(
        self, sent: str, arguments: Any, offer: Offer | None, others: Collection[str] = ()
    ) -> _Outcome:
        names = [*self.tools.tool_names, *(offer.tools if offer else ()), *others]
        available = list(dict.fromkeys(n for n in names if isinstance(n, str)))
        close = closest_names(sent, available) if len(sent) <= 256 else []
        hint = f" Did you mean: {', '.join(close)}?" if close else ""
        message = f"Unknown tool {_shown(sent)}.{hint} Available tools: {', '.join(available)}."
        return _Outcome("recoverable", message, arguments, "unknown_tool")

    async def _skill_call(
        self, call: ToolCall, name: str, history: Collection[str] | None, state: SessionState
    ) -> _Outcome:
        parsed = self._parsed(name, call.arguments)  # the record shows the arguments as read
        if name == "skill_load" and self._fork is not None and isinstance(parsed, ParsedArgs):
            skill = self.harness.repo.find(parsed.args.skill)  # type: ignore[attr-defined]
            if skill is not None and self._forks(skill, state):
                return await self._run_fork(skill, parsed.args, _shown_args(parsed), call)
        # In a worker thread: a running script must not hold up the step's other calls.
        return await anyio.to_thread.run_sync(
            self._run_skill_tool, call.id, name, call.arguments, history, parsed
        )

    def _run_skill_tool(
        self,
        call_id: str,
        name: str,
        sent: Mapping[str, Any] | str | None,
        history: Collection[str] | None,
        parsed: ParsedArgs | ArgumentProblem | None,
    ) -> _Outcome:
        """A skill tool's call (SkillTools grades and counts its own failures); ``parsed``:
        its arguments as read, which the record shows (None: shown as sent)."""
        if parsed is None and name == "workspace_exec" and self.settings.enforce_allowed_tools:
            parsed = self._parsed(name, sent)
        arguments: Any = _shown_args(parsed) if isinstance(parsed, ParsedArgs) else sent
        if name == "workspace_exec" and isinstance(parsed, ParsedArgs):
            # A skill's allowed-tools speak of Bash(python3:*): workspace_exec is that shell.
            command = getattr(parsed.args, "command", "")
            refusal = self.allowed_tools_refusal("Bash", {"command": command})
            if refusal:
                return _Outcome("recoverable", refusal, arguments, "refused")
        result = self.tools.call(name, sent, call_id=call_id, history_call_ids=history)
        if result.status == "ok" and name == "skill_load" and result.data:
            self._on_loaded(str(result.data["skill"]))
        return _Outcome.of(result, arguments)

    def _parsed(
        self, name: str, sent: Mapping[str, Any] | str | None
    ) -> ParsedArgs | ArgumentProblem:
        names = [s.name for s in self.tools.visible_skills() if s.model_invocable]
        return parse_arguments(name, sent, skill_names=names)

    def _forks(self, skill: Skill, state: SessionState) -> bool:
        """Whether loading ``skill`` runs it in a sub-agent: it says ``context: fork``, this
        face can fork, this is not already its fork, it is not loaded here already, and a
        sub-agent may start another (the fork tree's depth and count, taken here)."""
        context = (skill.manifest.context or "").strip().casefold()
        tree = self.settings.fork_tree
        return (
            self._fork is not None
            and context == _FORK
            and self.settings.fork_of != skill.name
            and skill.name not in state.loaded
            and (tree is None or tree.take())
        )

    async def _run_fork(self, skill: Skill, args: Any, arguments: Any, call: ToolCall) -> _Outcome:
        assert self._fork is not None
        task = expand(skill.body(), args.args or "", skill_dir=skill.directory)
        try:
            answer = await self._fork(skill, task)
        except (SkillshelfError, UsageError) as exc:
            message = (
                f"The skill {skill.name!r} runs in a sub-agent, which failed: "
                f"{clip(str(exc))}. Tell the user, or try another way."
            )
            count = self.tools.record_failure(self.tools.signature(call.name, call.arguments))
            status, message = grade_failure("skill_load", count, message)
            return _Outcome(status, message, arguments, "tool_error")
        return _Outcome("ok", fork_result(skill, answer), arguments)

    async def _user_call(self, tool: Tool, call: ToolCall) -> _Outcome:
        parsed = tool.validate(call.arguments)
        if isinstance(parsed, ArgumentProblem):
            return _Outcome("recoverable", parsed.message, call.arguments, parsed.kind)
        arguments, notes = parsed.values, parsed.notes
        if parsed.ignored:
            notes += (f"Ignored unknown arguments: {', '.join(parsed.ignored)}.",)
        refusal = None
        if self.settings.enforce_allowed_tools:  # reads the store: off the event loop
            refusal = await anyio.to_thread.run_sync(
                self.allowed_tools_refusal, tool.name, arguments
            )
        if refusal:
            return _Outcome("recoverable", refusal, arguments, "refused", notes)
        context = ToolContext(self.conversation, self.settings.agent, self.trace)
        timeout = tool.timeout_s if tool.timeout_s is not None else self.settings.tool_timeout_s
        run = await run_tool(tool, arguments, context, timeout_s=timeout, session=self.conversation)
        if run.status != "ok":
            return _Outcome(run.status, run.text, arguments, run.kind, notes)
        content = run.text
        if notes:
            content += "\n\n(Arguments adjusted: " + " ".join(notes) + ")"
        return _Outcome("ok", content, arguments, None, notes)


def fork_result(skill: Skill, answer: str) -> str:
    """The ``skill_load`` result of a forked skill: who ran it and its final answer."""
    by = f" ({clip(skill.manifest.agent, 80)!r})" if skill.manifest.agent else ""
    return (
        f"The skill {skill.name!r} ran in a sub-agent{by}; its steps are not shown. "
        f"Its final answer:\n\n{answer}"
    )


def _shown_args(parsed: ParsedArgs) -> dict[str, Any]:
    """A parsed call's arguments as records show them: the MCP server's conversation handle
    means nothing in process, and a load without args has none (unset, unshown)."""
    arguments: dict[str, Any] = parsed.args.model_dump()
    for key in ("conversation", "args"):
        if arguments.get(key, "") is None:
            del arguments[key]
    return arguments


def _shown(name: str) -> str:
    return repr(clip(name))


def _ms(started: float) -> float:
    return round((time.perf_counter() - started) * 1000, 3)

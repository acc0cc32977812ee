"""Running eval cases through the real agent loop, and what each run did.

Every run is a fresh :class:`~skillshelf.agent.loop.Agent` (own in-memory session store, so runs
never see each other's loads) with the full catalog and the caller's agent options (the
defaults unless given), plus the user tools the case offers, sending the case's query as the
only user message. What the run did is read from its decision trace (the
same records ``--out`` saves): each model step, each tool call with its step, validated
arguments and graded status, the tokens each reply reported, the final answer, and how the
first request showed the expected skill (:mod:`~skillshelf.evals.visibility`, read from the
request exactly as the model received it).

Only calls the *model* made count (a query that starts with ``/skill`` loads that skill as a
slash command, which is the user's choice, not the model's). A run whose model or loop failed
is kept, with the error, and reported as errored; an authentication failure stops the whole
eval, since every other run would fail the same way.
"""

from __future__ import annotations

import io
import json
import logging
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import anyio

from skillshelf.agent.results import DEFAULT_INSTRUCTIONS, DEFAULT_MAX_STEPS
from skillshelf.errors import SkillshelfError
from skillshelf.evals.visibility import Visibility, visibility_of
from skillshelf.harness import Trace
from skillshelf.models import Model, ModelAuthError, ModelRequest, ModelResponse, TextSink, Usage

if TYPE_CHECKING:
    from skillshelf.agent.results import RetryPolicy
    from skillshelf.evals.cases import EvalCase
    from skillshelf.repository import Repository
    from skillshelf.tools import Tool

__all__ = [
    "ANSWER_CHARS",
    "DEFAULT_ABORT_AFTER",
    "DEFAULT_CONCURRENCY",
    "EvalAbortedError",
    "RunOutcome",
    "ToolUse",
    "case_tools",
    "outcome_from_records",
    "run_cases",
]

logger = logging.getLogger("skillshelf.evals")

DEFAULT_CONCURRENCY: Final = 4
# A dead server or a wrong model name fails every run the same way, each after its retries;
# this many failures before any success stop the eval instead of grinding through all cases.
DEFAULT_ABORT_AFTER: Final = 5
# Of a run's final answer, kept in its trace and report (rubrics check this much).
ANSWER_CHARS: Final = 20_000


@dataclass(frozen=True, slots=True)
class ToolUse:
    """One tool call the model made.

    Attributes:
        step: The model request (from 1) whose reply made the call.
        tool: The tool's name.
        arguments: The validated arguments (defaults filled in), or the parsed raw ones when
            they were invalid (``{}`` when they were not even a JSON object).
        status: ``ok``, ``recoverable`` or ``fatal``; for a command ``workspace_exec`` ran
            that did not exit 0, ``nonzero_exit`` or ``timed_out`` (as the trace says).
    """

    step: int
    tool: str
    arguments: Mapping[str, Any]
    status: str

    def to_json(self) -> dict[str, Any]:
        return {
            "step": self.step,
            "tool": self.tool,
            "arguments": dict(self.arguments),
            "status": self.status,
        }


@dataclass(frozen=True, slots=True)
class RunOutcome:
    """What one run of one case did.

    Attributes:
        case_id: The case.
        run: The run number, from 1.
        calls: The model's tool calls, in order.
        steps: Model requests that got a reply.
        usage: Tokens summed over the replies that reported them; None when none did.
        error: ``"ErrorType: message"`` when the run failed, else None.
        answer: The final answer (its first :data:`ANSWER_CHARS` characters); None when the
            run ended without one.
        visibility: How the first request showed the expected skill; None for a case that
            expects none, or a run that sent no request.
    """

    case_id: str
    run: int
    calls: tuple[ToolUse, ...] = ()
    steps: int = 0
    usage: Usage | None = None
    error: str | None = None
    answer: str | None = None
    visibility: Visibility | None = None

    @property
    def loads(self) -> tuple[tuple[str, int], ...]:
        """``(skill, step)`` of each successful ``skill_load``, first load of a skill only."""
        seen: dict[str, int] = {}
        for call in self.calls:
            name = call.arguments.get("skill")
            if call.tool == "skill_load" and call.status == "ok" and isinstance(name, str):
                seen.setdefault(name, call.step)
        return tuple(seen.items())

    @property
    def attempted(self) -> tuple[str, ...]:
        """Skills the model tried to load and could not (unknown names, bad arguments)."""
        names = [
            str(call.arguments.get("skill", "?"))
            for call in self.calls
            if call.tool == "skill_load" and call.status != "ok"
        ]
        return tuple(dict.fromkeys(names))

    @property
    def predicted(self) -> str | None:
        """The first skill the model loaded, None when it loaded none."""
        loads = self.loads
        return loads[0][0] if loads else None

    @property
    def loaded(self) -> frozenset[str]:
        """Every skill the model loaded."""
        return frozenset(name for name, _ in self.loads)

    def docs(self, skill: str) -> tuple[frozenset[str], bool]:
        """Documents of ``skill`` the model asked for: paths (normalised) and whether it asked
        for all of them (``include_all_docs``). Counts ``skill_load``/``skill_select_docs``
        ``docs`` and ``skill_read_file`` paths, whatever the call's status."""
        import posixpath

        paths: set[str] = set()
        everything = False
        for call in self.calls:
            if call.arguments.get("skill") != skill:
                continue
            if call.tool in ("skill_load", "skill_select_docs"):
                docs = call.arguments.get("docs") or []
                paths.update(str(d) for d in docs if isinstance(d, str))
                everything = everything or call.arguments.get("include_all_docs") is True
            elif call.tool == "skill_read_file" and isinstance(call.arguments.get("path"), str):
                paths.add(str(call.arguments["path"]))
        normalised = {posixpath.normpath(p.replace("\\", "/")) for p in paths}
        return frozenset(normalised), everything

    def to_json(self) -> dict[str, Any]:
        return {
            "case_id": self.case_id,
            "run": self.run,
            "predicted": self.predicted,
            "loads": [{"skill": s, "step": step} for s, step in self.loads],
            "attempted_loads": list(self.attempted),
            "calls": [c.to_json() for c in self.calls],
            "steps": self.steps,
            "usage": self.usage.to_json() if self.usage is not None else None,
            "error": self.error,
            "answer": self.answer,
            "visible": self.visibility.to_json() if self.visibility is not None else None,
        }


def outcome_from_records(
    case_id: str, run: int, records: Sequence[Mapping[str, Any]], error: str | None = None
) -> RunOutcome:
    """Build a :class:`RunOutcome` from a run's trace records (pure)."""
    calls: list[ToolUse] = []
    steps = 0
    usage: Usage | None = None
    answer: str | None = None
    visibility: Visibility | None = None
    for record in records:
        kind = record.get("type")
        if kind == "model":
            steps += 1
            reported = record.get("usage")
            if isinstance(reported, Mapping):
                tokens = Usage.from_json(reported)
                usage = tokens if usage is None else usage + tokens
        elif kind == "tool" and record.get("source") == "model":
            arguments = _arguments(record.get("arguments"))
            step = int(record.get("step") or 0)
            calls.append(ToolUse(step, str(record["tool"]), arguments, str(record["status"])))
        elif kind == "eval_answer" and isinstance(record.get("text"), str):
            answer = record["text"]
        elif kind == "eval_view" and isinstance(record.get("visible"), Mapping):
            visibility = Visibility.from_json(record["visible"])
    return RunOutcome(case_id, run, tuple(calls), steps, usage, error, answer, visibility)


def _arguments(value: Any) -> Mapping[str, Any]:
    if isinstance(value, str):  # invalid arguments are traced as the raw text the model sent
        try:
            value = json.loads(value or "{}")
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


class EvalAbortedError(SkillshelfError):
    """The first runs all failed (see ``abort_after``); the eval stopped.

    Attributes:
        outcomes: The failed runs, in the order they finished.
    """

    def __init__(self, outcomes: Sequence[RunOutcome]) -> None:
        self.outcomes = tuple(outcomes)
        first = outcomes[0].error if outcomes else "?"
        super().__init__(
            f"stopped: the first {len(self.outcomes)} runs all failed, none succeeded; "
            f"the first: {first}"
        )


class _RecordingTrace(Trace):
    """A trace that also keeps its records in memory."""

    def __init__(self, target: Path | io.StringIO) -> None:
        super().__init__(target)
        self.records: list[dict[str, Any]] = []

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        record = super().record(kind, **fields)
        self.records.append(record)
        return record


async def run_cases(
    cases: Sequence[EvalCase],
    repo: Repository,
    model: Model,
    *,
    runs: int = 1,
    concurrency: int = DEFAULT_CONCURRENCY,
    max_steps: int | None = None,
    trace_dir: Path | None = None,
    on_run: Callable[[RunOutcome], None] | None = None,
    abort_after: int | None = DEFAULT_ABORT_AFTER,
    retry: RetryPolicy | None = None,
    agent_options: Mapping[str, Any] | None = None,
) -> list[RunOutcome]:
    """Run every case ``runs`` times, at most ``concurrency`` runs at once.

    Args:
        cases: The cases.
        repo: The skills (the full catalog is offered).
        model: The model; shared by all runs, so it must not keep per-conversation state.
        runs: Runs per case.
        concurrency: Runs in flight at once.
        max_steps: Model requests per run (default: the agent's).
        trace_dir: Write each run's JSONL trace to ``<case-id>-run<k>.jsonl`` here.
        on_run: Called after each run (for a progress bar).
        abort_after: Stop when this many runs have failed before any succeeded (None: never).
        retry: Retries of failed model requests within a run (default: the agent's).
        agent_options: More :class:`~skillshelf.agent.loop.Agent` keyword arguments for every
            run (``skillshelf eval``'s agent flags); ``store`` and ``trace`` are the run's own.
            A workspace manager here is shared: each run has its own session in it.

    Returns:
        The outcomes, by case then run number, whatever order they finished in.

    Raises:
        ModelAuthError: The provider rejected the credentials.
        EvalAbortedError: The first ``abort_after`` runs all failed.
    """
    from skillshelf.errors import UsageError

    if runs < 1 or concurrency < 1:
        raise UsageError("runs and concurrency must be at least 1")
    limiter = anyio.CapacityLimiter(concurrency)
    outcomes: dict[tuple[int, int], RunOutcome] = {}
    auth: list[ModelAuthError] = []
    failed_first: list[RunOutcome] = []  # failures while no run has succeeded yet
    succeeded = False

    async def one(index: int, case: EvalCase, run: int) -> None:
        nonlocal succeeded
        async with limiter:
            if group.cancel_scope.cancel_called:
                return
            try:
                outcome = await _run_one(
                    case, run, repo, model, trace_dir, _options(max_steps, retry, agent_options)
                )
            except ModelAuthError as exc:
                auth.append(exc)
                group.cancel_scope.cancel()
                return
            # Still holding the limiter: no further run starts before an abort is decided.
            outcomes[(index, run)] = outcome
            if on_run is not None:
                on_run(outcome)
            succeeded = succeeded or outcome.error is None
            if not succeeded and abort_after is not None:
                failed_first.append(outcome)
                if len(failed_first) >= abort_after:
                    group.cancel_scope.cancel()

    async with anyio.create_task_group() as group:
        for index, case in enumerate(cases):
            for run in range(1, runs + 1):
                group.start_soon(one, index, case, run)
    if auth:
        raise auth[0]
    if abort_after is not None and not succeeded and len(failed_first) >= abort_after:
        raise EvalAbortedError(failed_first)
    return [outcomes[key] for key in sorted(outcomes)]


def _options(
    max_steps: int | None, retry: RetryPolicy | None, extra: Mapping[str, Any] | None
) -> dict[str, Any]:
    options: dict[str, Any] = {"instructions": DEFAULT_INSTRUCTIONS, **(extra or {})}
    if max_steps is not None or "max_steps" not in options:
        options["max_steps"] = max_steps or DEFAULT_MAX_STEPS
    if retry is not None:
        options["retry"] = retry
    return options


def case_tools(case: EvalCase) -> list[Tool]:
    """The user tools ``case`` offers, imported or stubbed.

    Raises:
        UsageError: A tool spec that cannot be imported.
    """
    from skillshelf.evals.cases import StubTool
    from skillshelf.tools import import_tools, stub_tool

    tools: list[Tool] = []
    for spec in case.tools:
        if isinstance(spec, StubTool):
            tools.append(stub_tool(spec.name, spec.description, spec.parameters, spec.result))
        else:
            tools.extend(import_tools(spec))
    return tools


class _FirstRequest:
    """The run's model, keeping the first request it is sent (what the model saw first)."""

    def __init__(self, model: Model) -> None:
        self.model = model
        self.first: ModelRequest | None = None

    @property
    def name(self) -> str:
        return self.model.name

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        if self.first is None:
            self.first = request
        return await self.model.complete(request, on_text=on_text)


def _record_view(
    trace: _RecordingTrace, case: EvalCase, repo: Repository, first: ModelRequest | None
) -> None:
    skill = repo.find(case.expected_skill) if case.expected_skill else None
    if first is None or skill is None:
        return
    seen = visibility_of(first, skill.name, skill.description)
    trace.record("eval_view", skill=skill.name, visible=seen.to_json())


async def _run_one(
    case: EvalCase,
    run: int,
    repo: Repository,
    model: Model,
    trace_dir: Path | None,
    options: Mapping[str, Any],
) -> RunOutcome:
    from skillshelf.agent.loop import Agent

    target = trace_dir / f"{case.id}-run{run}.jsonl" if trace_dir is not None else io.StringIO()
    trace = _RecordingTrace(target)
    error: str | None = None
    watched = _FirstRequest(model)
    try:
        trace.record("eval", case=case.id, run=run, expected_skill=case.expected_skill)
        tools = [*options.get("tools", ()), *case_tools(case)]
        agent = Agent(watched, repo, **{**options, "tools": tools, "trace": trace})
        result = await agent.run(case.query, session_id=f"eval-{case.id}-run{run}")
        trace.record("eval_answer", chars=len(result.output), text=result.output[:ANSWER_CHARS])
    except ModelAuthError:
        raise
    except SkillshelfError as exc:  # the agent gave up (max steps, a failing provider)
        error = f"{type(exc).__name__}: {exc}"
    except Exception as exc:  # broad on purpose: one run's failure is its result, not the eval's
        logger.exception("eval run %s of case %r failed", run, case.id)
        error = f"{type(exc).__name__}: {exc}"
    finally:
        _record_view(trace, case, repo, watched.first)
        trace.close()
    return outcome_from_records(case.id, run, trace.records, error)

"""Cases through the real agent loop with a scripted model: what each run loaded, when, with
which arguments; errors, isolation between runs, concurrency, traces."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import anyio.lowlevel
import pytest

from skillshelf.evals.cases import EvalCase
from skillshelf.evals.report import build_report
from skillshelf.evals.runner import EvalAbortedError, RunOutcome, run_cases
from skillshelf.models import (
    ModelAuthError,
    ModelRequest,
    ModelResponse,
    TextSink,
    TransientModelError,
    Usage,
)
from skillshelf.repository import Repository
from skillshelf.testing import make_skill, reply, scripted_by_query


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(root, "alpha", "Alpha things. Use for alpha.", files={"references/a.md": "A"})
    make_skill(root, "beta", "Beta things. Use for beta.")
    return Repository([root], cache_dir=False)


def load(skill: str, **extra: Any) -> tuple[str, dict[str, Any]]:
    return ("skill_load", {"skill": skill, **extra})


SCRIPTS = {
    "do alpha": [
        reply(tools=[load("alpha", docs=["references/a.md"])], usage=(100, 7)),
        reply("done", usage=(150, 3)),
    ],
    "do beta": [
        reply(tools=[load("gamma")]),  # unknown: an attempted load
        reply(tools=[load("beta")]),
        reply("done"),
    ],
    "nothing": [reply("no skill needed")],
}


def run(
    cases: list[EvalCase], repo: Repository, model: Any = None, **kwargs: Any
) -> list[RunOutcome]:
    chosen = model or scripted_by_query(SCRIPTS)
    return anyio.run(lambda: run_cases(cases, repo, chosen, **kwargs))


def test_each_run_records_loads_steps_arguments_and_tokens(repo: Repository) -> None:
    cases = [EvalCase("a", "do alpha", "alpha"), EvalCase("b", "do beta", "beta")]
    first, second = run(cases, repo)
    assert (first.case_id, first.loads, first.steps, first.error) == ("a", (("alpha", 1),), 2, None)
    assert first.calls[0].arguments == {
        "skill": "alpha",
        "docs": ["references/a.md"],
        "include_all_docs": False,
    }
    assert first.usage == Usage(250, 10)
    assert first.docs("alpha") == (frozenset({"references/a.md"}), False)
    assert second.attempted == ("gamma",)
    assert second.loads == (("beta", 2),)
    assert [(c.step, c.tool, c.status) for c in second.calls] == [
        (1, "skill_load", "recoverable"),
        (2, "skill_load", "ok"),
    ]
    assert second.usage is None  # the script reported none


def test_runs_of_one_case_do_not_share_skill_state(repo: Repository) -> None:
    # Were the runs one session, the second load of alpha would be an "already loaded" stub.
    bodies: list[str] = []

    def answer(request: ModelRequest) -> ModelResponse:
        tool_results = [m for m in request.messages if m.get("role") == "tool"]
        if tool_results:
            bodies.append(str(tool_results[-1]["content"]))
            return reply("done")
        return reply(tools=[load("alpha")])

    from skillshelf.testing import ScriptedModel

    outcomes = run([EvalCase("a", "do alpha", "alpha")], repo, ScriptedModel(answer), runs=3)
    assert [o.run for o in outcomes] == [1, 2, 3]
    assert all(o.predicted == "alpha" for o in outcomes)
    assert len(bodies) == 3
    assert all(body.startswith('<skill_content name="alpha">') for body in bodies)


def test_a_failing_run_is_recorded_and_the_others_complete(repo: Repository) -> None:
    cases = [
        EvalCase("ok", "do alpha", "alpha"),
        EvalCase("loops", "loop forever", "alpha"),
        EvalCase("none", "nothing", None),
    ]
    scripts = {**SCRIPTS, "loop forever": [reply(tools=[("skill_list", {})])]}
    outcomes = run(cases, repo, scripted_by_query(scripts), max_steps=3)
    by_case = {o.case_id: o for o in outcomes}
    assert by_case["ok"].error is None and by_case["none"].error is None
    assert by_case["loops"].error is not None
    assert by_case["loops"].error.startswith("MaxStepsError: No final answer after 3")
    assert by_case["loops"].steps == 3
    report = build_report(cases, outcomes, model="m", runs_per_case=1)
    assert report.summary.errored_runs == 1
    assert report.summary.macro_recall == 1.0


class _AuthFailing:
    name = "auth-failing"

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        raise ModelAuthError("The model server rejected the API key (HTTP 401).")


def test_an_auth_error_stops_the_eval(repo: Repository) -> None:
    cases = [EvalCase(f"c{i}", "do alpha", "alpha") for i in range(6)]
    with pytest.raises(ModelAuthError, match="rejected the API key"):
        run(cases, repo, _AuthFailing(), concurrency=2)


class _Unreachable:
    """A server that is down: every request fails the same way; counts the requests."""

    name = "unreachable"

    def __init__(self, *, first: ModelResponse | None = None) -> None:
        self.requests = 0
        self.first = first

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        self.requests += 1
        if self.first is not None and self.requests == 1:
            return self.first
        raise TransientModelError("Cannot reach the model server: Connection refused.")


def test_the_first_five_runs_failing_stops_the_eval(repo: Repository) -> None:
    from skillshelf.agent.loop import RetryPolicy

    cases = [EvalCase(f"c{i}", "do alpha", "alpha") for i in range(40)]
    model = _Unreachable()
    with pytest.raises(EvalAbortedError, match="the first 5 runs all failed") as caught:
        anyio.run(lambda: run_cases(cases, repo, model, concurrency=1, retry=RetryPolicy(0)))
    assert len(caught.value.outcomes) == 5
    assert model.requests == 5  # the other 35 cases never reached the model
    assert "Connection refused" in str(caught.value)


def test_failures_after_a_success_do_not_stop_the_eval(repo: Repository) -> None:
    from skillshelf.agent.loop import RetryPolicy

    cases = [EvalCase(f"c{i}", "nothing", None) for i in range(8)]
    model = _Unreachable(first=ModelResponse("no skill needed", (), "stop"))
    outcomes = anyio.run(lambda: run_cases(cases, repo, model, concurrency=1, retry=RetryPolicy(0)))
    assert [o.error is None for o in outcomes] == [True] + [False] * 7


class _Counting:
    """Answers at once, after yielding to the event loop; remembers the peak concurrency."""

    name = "counting"

    def __init__(self) -> None:
        self.in_flight = 0
        self.peak = 0

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        for _ in range(5):
            await anyio.lowlevel.checkpoint()
        self.in_flight -= 1
        return reply("no skill")


@pytest.mark.parametrize("concurrency", [1, 3])
def test_no_more_runs_than_the_concurrency_at_once(repo: Repository, concurrency: int) -> None:
    model = _Counting()
    cases = [EvalCase(f"c{i}", f"question {i}", None) for i in range(4)]
    outcomes = run(cases, repo, model, runs=2, concurrency=concurrency)
    assert len(outcomes) == 8
    assert model.peak == concurrency


def test_traces_are_written_per_case_and_run(repo: Repository, tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    traces.mkdir()
    seen: list[tuple[str, int]] = []
    cases = [EvalCase("a", "do alpha", "alpha")]
    run(cases, repo, runs=2, trace_dir=traces, on_run=lambda o: seen.append((o.case_id, o.run)))
    assert sorted(p.name for p in traces.iterdir()) == ["a-run1.jsonl", "a-run2.jsonl"]
    assert sorted(seen) == [("a", 1), ("a", 2)]
    records = [json.loads(line) for line in (traces / "a-run1.jsonl").read_text().splitlines()]
    assert records[0]["type"] == "eval"
    assert (records[0]["case"], records[0]["run"]) == ("a", 1)
    models = [r for r in records if r["type"] == "model"]
    assert [m["usage"] for m in models] == [
        {"input_tokens": 100, "output_tokens": 7},
        {"input_tokens": 150, "output_tokens": 3},
    ]
    tools = [r for r in records if r["type"] == "tool"]
    assert [(t["tool"], t["step"], t["status"]) for t in tools] == [("skill_load", 1, "ok")]


def test_slash_command_loads_are_not_the_models(repo: Repository) -> None:
    outcomes = run([EvalCase("s", "/alpha go", "alpha")], repo, scripted_by_query({}))
    assert outcomes[0].predicted is None


def test_run_usage_keeps_the_cache_split_from_the_trace() -> None:
    from skillshelf.evals.runner import outcome_from_records

    records = [
        {"type": "model", "usage": {"input_tokens": 900, "output_tokens": 12}},
        {
            "type": "model",
            "usage": {"input_tokens": 1500, "output_tokens": 8, "cache_read_tokens": 896},
        },
    ]
    outcome = outcome_from_records("c", 1, records)
    assert outcome.usage == Usage(2400, 20, cache_read_tokens=896)

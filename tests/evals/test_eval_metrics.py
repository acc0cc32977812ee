"""Eval metrics against values computed by hand on a small case set.

Three skills (alpha, beta, gamma), six cases, two runs each, with scripted outcomes:

| case | expects | run 1 | run 2 |
|---|---|---|---|
| c1 | alpha | loads alpha | loads beta, then alpha |
| c2 | alpha + doc references/a.md | loads alpha with the doc | loads alpha, no doc |
| c3 | beta | loads beta | loads nothing |
| c4 | gamma + skill_read_file path x.md | loads gamma, reads x.md | errored |
| c5 | (none) | nothing | loads beta |
| c6 | (none) | fails to load "delta" | nothing |
"""

from __future__ import annotations

import pytest

from skillshelf.evals.cases import EvalCase
from skillshelf.evals.report import (
    NONE_LABEL,
    EvalReport,
    build_report,
    case_status,
    params_match,
    threshold_failures,
)
from skillshelf.evals.runner import RunOutcome, ToolUse
from skillshelf.models import Usage

CASES = [
    EvalCase("c1", "q1", "alpha"),
    EvalCase("c2", "q2", "alpha", expected_docs=("references/a.md",)),
    EvalCase("c3", "q3", "beta"),
    EvalCase("c4", "q4", "gamma", expected_params={"skill_read_file": {"path": "x.md"}}),
    EvalCase("c5", "q5", None),
    EvalCase("c6", "q6", None),
]


def load(skill: str, step: int, *, status: str = "ok", docs: tuple[str, ...] = ()) -> ToolUse:
    arguments = {"skill": skill, "docs": list(docs), "include_all_docs": False}
    return ToolUse(step, "skill_load", arguments, status)


def run(
    case: str,
    number: int,
    *calls: ToolUse,
    steps: int,
    usage: Usage | None = None,
    error: str | None = None,
) -> RunOutcome:
    return RunOutcome(case, number, calls, steps, usage, error)


OUTCOMES = [
    run("c1", 1, load("alpha", 1), steps=2, usage=Usage(100, 10)),
    run("c1", 2, load("beta", 1), load("alpha", 2), steps=3, usage=Usage(200, 20)),
    run("c2", 1, load("alpha", 1, docs=("references/a.md",)), steps=2),
    run("c2", 2, load("alpha", 1), steps=2),
    run("c3", 1, load("beta", 1), steps=2),
    run("c3", 2, steps=1),
    run(
        "c4",
        1,
        load("gamma", 1),
        ToolUse(2, "skill_read_file", {"skill": "gamma", "path": "x.md"}, "ok"),
        steps=3,
    ),
    run("c4", 2, steps=0, error="ModelError: boom"),
    run("c5", 1, steps=1),
    run("c5", 2, load("beta", 1), steps=2),
    run("c6", 1, ToolUse(1, "skill_load", {"skill": "delta"}, "recoverable"), steps=2),
    run("c6", 2, steps=1),
]


@pytest.fixture(scope="module")
def report() -> EvalReport:
    return build_report(CASES, OUTCOMES, model="test", runs_per_case=2)


def scores(report: EvalReport) -> dict[str, tuple[float | None, ...]]:
    return {
        s.skill: (s.precision, s.recall, s.f1, s.any_load_recall, s.tp, s.fp, s.fn, s.runs)
        for s in report.skills
    }


def test_per_skill_precision_recall_f1_match_hand_computed_values(report: EvalReport) -> None:
    got = scores(report)
    # alpha: 4 runs expect it; 3 predict it (c1r1, c2r1, c2r2); c1r2 predicted beta first.
    assert got["alpha"] == pytest.approx((1.0, 0.75, 6 / 7, 1.0, 3, 0, 1, 4))
    # beta: c3r1 hit, c3r2 miss; predicted by c1r2 and c5r2 where not expected.
    assert got["beta"] == pytest.approx((1 / 3, 0.5, 0.4, 0.5, 1, 2, 1, 2))
    # gamma: its errored run is left out.
    assert got["gamma"] == pytest.approx((1.0, 1.0, 1.0, 1.0, 1, 0, 0, 1))
    assert set(got) == {"alpha", "beta", "gamma"}  # a failed load of "delta" predicts nothing


def test_macro_averages_are_means_over_skills(report: EvalReport) -> None:
    summary = report.summary
    assert summary.macro_recall == pytest.approx((0.75 + 0.5 + 1.0) / 3)
    assert summary.macro_precision == pytest.approx((1.0 + 1 / 3 + 1.0) / 3)
    assert summary.macro_f1 == pytest.approx((6 / 7 + 0.4 + 1.0) / 3)


def test_false_trigger_rate_counts_null_runs_that_loaded_anything(report: EvalReport) -> None:
    assert (report.summary.false_trigger.hits, report.summary.false_trigger.total) == (1, 4)
    assert report.summary.false_trigger_rate == 0.25


def test_confusion_matrix_cells(report: EvalReport) -> None:
    matrix = report.confusion
    assert matrix.rows == ("alpha", "beta", "gamma", NONE_LABEL)
    assert matrix.columns == ("alpha", "beta", "gamma", NONE_LABEL)
    expected = {
        ("alpha", "alpha"): 3,
        ("alpha", "beta"): 1,
        ("beta", "beta"): 1,
        ("beta", NONE_LABEL): 1,
        ("gamma", "gamma"): 1,
        (NONE_LABEL, "beta"): 1,
        (NONE_LABEL, NONE_LABEL): 3,
    }
    for row in matrix.rows:
        for column in matrix.columns:
            assert matrix.cell(row, column) == expected.get((row, column), 0), (row, column)


def test_parameter_accuracy_over_runs_with_expectations(report: EvalReport) -> None:
    # c2r1 asked for the doc, c2r2 did not, c4r1 read x.md; c4r2 errored.
    accuracy = report.summary.param_accuracy
    assert (accuracy.hits, accuracy.total) == (2, 3)


def test_average_steps_and_tokens_per_scored_run(report: EvalReport) -> None:
    summary = report.summary
    assert (summary.runs, summary.scored_runs, summary.errored_runs) == (12, 11, 1)
    assert summary.avg_steps == pytest.approx(21 / 11)
    assert (summary.avg_input_tokens, summary.avg_output_tokens) == (150.0, 15.0)
    assert summary.usage_runs == 2


def test_tokens_are_none_when_no_run_reported_usage() -> None:
    outcomes = [run("c1", 1, load("alpha", 1), steps=2)]
    summary = build_report(CASES[:1], outcomes, model="m", runs_per_case=1).summary
    assert summary.avg_input_tokens is None
    assert summary.usage_runs == 0


def test_case_statuses_and_flaky_list(report: EvalReport) -> None:
    statuses = {c.case.id: (c.status, c.passed, c.scored, c.params_ok) for c in report.cases}
    assert statuses == {
        "c1": ("flaky", 1, 2, None),
        "c2": ("flaky", 1, 2, 1),
        "c3": ("flaky", 1, 2, None),
        "c4": ("pass", 1, 1, 1),
        "c5": ("flaky", 1, 2, None),
        "c6": ("pass", 2, 2, None),
    }
    assert [c.case.id for c in report.flaky] == ["c1", "c2", "c3", "c5"]
    assert [(o.case_id, o.run) for o in report.errored] == [("c4", 2)]


def test_case_status_rules() -> None:
    assert case_status(0, 0) == "error"
    assert case_status(3, 3) == "pass"
    assert case_status(3, 0) == "fail"
    assert case_status(3, 1) == "flaky"


def test_run_records_load_steps_and_attempted_loads() -> None:
    outcome = OUTCOMES[1]
    assert outcome.loads == (("beta", 1), ("alpha", 2))
    assert outcome.predicted == "beta"
    assert OUTCOMES[10].attempted == ("delta",)
    assert OUTCOMES[10].predicted is None


def test_include_all_docs_covers_expected_docs() -> None:
    case = CASES[1]
    everything = ToolUse(
        1, "skill_load", {"skill": "alpha", "docs": [], "include_all_docs": True}, "ok"
    )
    assert params_match(case, run("c2", 1, everything, steps=2)) is True


def test_docs_asked_for_in_another_skill_do_not_count() -> None:
    case = CASES[1]
    other = ToolUse(1, "skill_read_file", {"skill": "beta", "path": "references/a.md"}, "ok")
    assert params_match(case, run("c2", 1, load("alpha", 1), other, steps=2)) is False


def test_expected_params_match_as_a_subset_of_any_call() -> None:
    case = EvalCase("p", "q", "alpha", expected_params={"skill_search": {"query": "pdf"}})
    calls = (
        ToolUse(1, "skill_search", {"query": "csv", "limit": 10}, "ok"),
        ToolUse(2, "skill_search", {"query": "pdf", "limit": 5}, "ok"),
    )
    assert params_match(case, run("p", 1, *calls, steps=3)) is True
    assert params_match(case, run("p", 1, calls[0], steps=2)) is False
    assert params_match(CASES[0], run("c1", 1, steps=1)) is None


def test_threshold_failures_say_which_and_by_how_much(report: EvalReport) -> None:
    failures = threshold_failures(report.summary, min_recall=0.8, max_false_trigger=0.2)
    assert failures == [
        "macro recall 0.750 is below min_recall 0.8 (short by 0.050)",
        "false-trigger rate 0.250 is above max_false_trigger 0.2 (over by 0.050)",
    ]
    assert threshold_failures(report.summary, min_recall=0.75, max_false_trigger=0.25) == []

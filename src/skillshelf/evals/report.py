"""Eval metrics: pure functions from cases and run outcomes to a report.

Definitions (over *scored* runs — runs that ended without an error; errored runs are counted
and listed, and enter no metric):

* A run **predicts** the first skill the model loaded successfully (``skill_load`` with status
  ``ok``), or ``(none)`` when it loaded none. Failed loads (an unknown name, bad arguments)
  are recorded as attempted loads and predict nothing.
* Per skill *s*: **TP** = runs of cases expecting *s* that predicted *s*; **FP** = runs that
  predicted *s* of cases expecting another skill or none; **FN** = runs of cases expecting *s*
  that predicted anything else. **precision** = TP / (TP + FP), **recall** = TP / (TP + FN),
  **F1** = 2·TP / (2·TP + FP + FN) (the harmonic mean of the two); each is None (shown "–")
  when its denominator is 0. **any-load recall** = runs of cases expecting *s* in which *s*
  was loaded at any step / runs of cases expecting *s*.
* **macro recall** (what ``--min-recall`` checks): the mean recall over skills with scored
  runs of cases expecting them. **macro precision** averages the defined precisions; **macro
  F1** the defined F1s.
* **false-trigger rate** (``--max-false-trigger``): runs of null cases (``expected_skill:
  null``) that loaded any skill / runs of null cases.
* **confusion matrix**: rows are expected skills and ``(none)``, columns the predicted skills
  and ``(none)``; a cell counts runs.
* **parameter accuracy**: over runs of cases with ``expected_docs`` or ``expected_params``, the
  share where every expected doc was asked for in that skill (``skill_load``/
  ``skill_select_docs`` ``docs``, ``include_all_docs``, ``skill_read_file`` paths — asking is
  enough) and, for each tool in ``expected_params``, at least one call of it has every expected
  argument with an equal value (mappings match as subsets).
* **answer accuracy**: over runs of cases with ``expected_answer``, the share whose final
  answer passes every check of the rubric (:mod:`~skillshelf.evals.rubric`).
* **visible**: over runs of cases expecting a skill, the share whose first request showed
  that skill with its description (whole or trimmed), in the catalog or in the block of
  skills relevant to the message (:mod:`~skillshelf.evals.visibility`). A run where the
  skill was not visible and ``skill_search`` was not offered (or no load tool was) is
  **hidden**: no model could choose the skill for what it does; the report says so.
* A run **passes** when its prediction is the expected skill (a null case: nothing loaded),
  its parameters match (when the case has expectations) and its answer passes the rubric
  (when the case has one). A simple-shape case without
  ``expected_skill`` scores only its parameters: it enters no trigger metric (per-skill
  scores, false-trigger rate, confusion matrix). A case is ``pass`` when all its
  scored runs pass, ``fail`` when none does, ``flaky`` in between, ``error`` when no run
  scored.
* **average steps** (model requests) and **tokens** per scored run; tokens average over the
  runs whose provider reported usage, and are None ("not reported") when none did.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from skillshelf.evals.cases import EvalCase
from skillshelf.evals.runner import RunOutcome
from skillshelf.evals.visibility import Visibility

__all__ = [
    "NONE_LABEL",
    "CaseResult",
    "CaseStatus",
    "Confusion",
    "EvalReport",
    "Rate",
    "SkillScore",
    "Summary",
    "answer_matches",
    "build_report",
    "case_status",
    "params_match",
    "run_passes",
    "threshold_failures",
]

NONE_LABEL: Final = "(none)"
REPORT_VERSION: Final = 1
CaseStatus = Literal["pass", "fail", "flaky", "error"]


@dataclass(frozen=True, slots=True)
class Rate:
    """A ratio kept with its counts, so reports can show ``0.75 (3/4)``."""

    hits: int
    total: int

    @property
    def value(self) -> float | None:
        """hits / total, None when total is 0."""
        return self.hits / self.total if self.total else None

    def to_json(self) -> dict[str, Any]:
        return {"value": self.value, "hits": self.hits, "total": self.total}


@dataclass(frozen=True, slots=True)
class SkillScore:
    """Trigger metrics of one skill (see the module docstring)."""

    skill: str
    runs: int
    tp: int
    fp: int
    fn: int
    any_load: int

    @property
    def precision(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fp)

    @property
    def recall(self) -> float | None:
        return _ratio(self.tp, self.tp + self.fn)

    @property
    def f1(self) -> float | None:
        return _ratio(2 * self.tp, 2 * self.tp + self.fp + self.fn)

    @property
    def any_load_recall(self) -> float | None:
        return _ratio(self.any_load, self.runs)

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "runs": self.runs,
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": self.precision,
            "recall": self.recall,
            "f1": self.f1,
            "any_load_recall": self.any_load_recall,
        }


@dataclass(frozen=True, slots=True)
class Confusion:
    """Runs by expected (rows) and predicted (columns) skill; ``(none)`` is no skill."""

    rows: tuple[str, ...]
    columns: tuple[str, ...]
    counts: Mapping[tuple[str, str], int]

    def cell(self, expected: str, predicted: str) -> int:
        return self.counts.get((expected, predicted), 0)

    def to_json(self) -> dict[str, Any]:
        return {
            "rows": list(self.rows),
            "columns": list(self.columns),
            "counts": {r: {c: self.cell(r, c) for c in self.columns} for r in self.rows},
        }


@dataclass(frozen=True, slots=True)
class CaseResult:
    """One case over its runs."""

    case: EvalCase
    runs: int
    scored: int
    passed: int
    predicted: tuple[str | None, ...]
    params_ok: int | None = None
    answers_ok: int | None = None
    visibility: Visibility | None = None
    answer_problems: tuple[str, ...] = ()

    @property
    def status(self) -> CaseStatus:
        return case_status(self.scored, self.passed)

    @property
    def pass_rate(self) -> float | None:
        return _ratio(self.passed, self.scored)

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.case.id,
            "query": self.case.query,
            "expected_skill": self.case.expected_skill,
            "scores_trigger": self.case.scores_trigger,
            "expected_docs": list(self.case.expected_docs),
            "expected_params": {k: dict(v) for k, v in self.case.expected_params.items()},
            "note": self.case.note,
            "runs": self.runs,
            "scored_runs": self.scored,
            "passed": self.passed,
            "pass_rate": self.pass_rate,
            "status": self.status,
            "predicted": list(self.predicted),
            "params_matched": self.params_ok,
            "expected_answer": (
                self.case.expected_answer.to_json() if self.case.expected_answer else None
            ),
            "answers_matched": self.answers_ok,
            "answer_problems": list(self.answer_problems),
            "visible": self.visibility.to_json() if self.visibility is not None else None,
        }


@dataclass(frozen=True, slots=True)
class Summary:
    """Whole-eval figures (see the module docstring)."""

    runs: int
    scored_runs: int
    errored_runs: int
    macro_recall: float | None
    macro_precision: float | None
    macro_f1: float | None
    false_trigger: Rate
    param_accuracy: Rate
    answer_accuracy: Rate
    visible: Rate
    hidden: int
    avg_steps: float | None
    avg_input_tokens: float | None
    avg_output_tokens: float | None
    usage_runs: int

    @property
    def false_trigger_rate(self) -> float | None:
        return self.false_trigger.value

    def to_json(self) -> dict[str, Any]:
        return {
            "runs": self.runs,
            "scored_runs": self.scored_runs,
            "errored_runs": self.errored_runs,
            "macro_recall": self.macro_recall,
            "macro_precision": self.macro_precision,
            "macro_f1": self.macro_f1,
            "false_trigger_rate": self.false_trigger_rate,
            "false_trigger": self.false_trigger.to_json(),
            "param_accuracy": self.param_accuracy.to_json(),
            "answer_accuracy": self.answer_accuracy.to_json(),
            "visible": self.visible.to_json(),
            "hidden_runs": self.hidden,
            "avg_steps": self.avg_steps,
            "avg_input_tokens": self.avg_input_tokens,
            "avg_output_tokens": self.avg_output_tokens,
            "usage_reported_runs": self.usage_runs,
        }


@dataclass(frozen=True, slots=True)
class EvalReport:
    """The full report; :meth:`to_json` is what ``report.json`` holds."""

    model: str
    runs_per_case: int
    summary: Summary
    skills: tuple[SkillScore, ...]
    confusion: Confusion
    cases: tuple[CaseResult, ...]
    outcomes: tuple[RunOutcome, ...]
    meta: Mapping[str, Any] = field(default_factory=dict)
    notes: tuple[str, ...] = ()

    @property
    def flaky(self) -> tuple[CaseResult, ...]:
        return tuple(c for c in self.cases if c.status == "flaky")

    @property
    def errored(self) -> tuple[RunOutcome, ...]:
        return tuple(o for o in self.outcomes if o.error is not None)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": REPORT_VERSION,
            "model": self.model,
            "runs_per_case": self.runs_per_case,
            **dict(self.meta),
            "summary": self.summary.to_json(),
            "skills": [s.to_json() for s in self.skills],
            "confusion": self.confusion.to_json(),
            "cases": [c.to_json() for c in self.cases],
            "flaky_cases": [c.case.id for c in self.flaky],
            "notes": list(self.notes),
            "runs": [o.to_json() for o in self.outcomes],
        }


# -- per run ---------------------------------------------------------------------------------


def params_match(case: EvalCase, outcome: RunOutcome) -> bool | None:
    """Whether the run asked for the expected docs and arguments; None without expectations."""
    if not case.has_param_expectations:
        return None
    if case.expected_docs and case.expected_skill is not None:
        asked, everything = outcome.docs(case.expected_skill)
        if not everything and not set(case.expected_docs) <= asked:
            return False
    for tool, expected in case.expected_params.items():
        calls = [c for c in outcome.calls if c.tool == tool]
        if not any(_subset(expected, c.arguments) for c in calls):
            return False
    return True


def _subset(expected: Mapping[str, Any], actual: Mapping[str, Any]) -> bool:
    for key, value in expected.items():
        if key not in actual:
            return False
        got = actual[key]
        if isinstance(value, Mapping) and isinstance(got, Mapping):
            if not _subset(value, got):
                return False
        elif got != value:
            return False
    return True


def answer_matches(case: EvalCase, outcome: RunOutcome) -> bool | None:
    """Whether the run's final answer passes the case's rubric; None without one."""
    return None if case.expected_answer is None else not _answer_problems(case, outcome)


def _answer_problems(case: EvalCase, outcome: RunOutcome) -> tuple[str, ...]:
    if case.expected_answer is None:
        return ()
    if outcome.answer is None:
        return ("no final answer",)
    return case.expected_answer.check(outcome.answer)


def _trigger_ok(case: EvalCase, outcome: RunOutcome) -> bool:
    if not case.scores_trigger:
        return True
    if case.expected_skill is None:
        return not outcome.loaded
    return outcome.predicted == case.expected_skill


def run_passes(case: EvalCase, outcome: RunOutcome) -> bool:
    """The run predicted the expected skill (or none), matched the parameters and passed the
    answer rubric (each when the case has one)."""
    return (
        _trigger_ok(case, outcome)
        and params_match(case, outcome) is not False
        and answer_matches(case, outcome) is not False
    )


def case_status(scored: int, passed: int) -> CaseStatus:
    """``error`` without scored runs, else ``pass``/``fail``/``flaky`` by passed runs."""
    if scored == 0:
        return "error"
    if passed == scored:
        return "pass"
    return "fail" if passed == 0 else "flaky"


# -- the report ------------------------------------------------------------------------------


def build_report(
    cases: Sequence[EvalCase],
    outcomes: Iterable[RunOutcome],
    *,
    model: str,
    runs_per_case: int,
    meta: Mapping[str, Any] | None = None,
) -> EvalReport:
    """Compute every metric from the cases and the outcomes of their runs."""
    outcomes = tuple(outcomes)
    by_case: dict[str, list[RunOutcome]] = {c.id: [] for c in cases}
    for outcome in outcomes:
        by_case[outcome.case_id].append(outcome)
    pairs = [(c, o) for c in cases for o in by_case[c.id] if o.error is None]
    triggers = [(c, o) for c, o in pairs if c.scores_trigger]
    skills = _skill_scores(triggers)
    summary = _summary(pairs, skills, len(outcomes))
    return EvalReport(
        model=model,
        runs_per_case=runs_per_case,
        summary=summary,
        skills=skills,
        confusion=_confusion([c for c in cases if c.scores_trigger], triggers),
        cases=tuple(_case_result(c, by_case[c.id]) for c in cases),
        outcomes=outcomes,
        meta=dict(meta or {}),
        notes=_notes(pairs),
    )


def _case_result(case: EvalCase, outcomes: Sequence[RunOutcome]) -> CaseResult:
    scored = [o for o in outcomes if o.error is None]
    failed = (p for o in scored if (p := _answer_problems(case, o)))
    return CaseResult(
        case=case,
        runs=len(outcomes),
        scored=len(scored),
        passed=sum(run_passes(case, o) for o in scored),
        predicted=tuple(o.predicted for o in scored),
        params_ok=(
            sum(params_match(case, o) is True for o in scored)
            if case.has_param_expectations
            else None
        ),
        answers_ok=(
            sum(answer_matches(case, o) is True for o in scored)
            if case.expected_answer is not None
            else None
        ),
        # The first request is the same in every run (the same settings and skills): one says it.
        visibility=next((o.visibility for o in outcomes if o.visibility is not None), None),
        answer_problems=next(failed, ()),
    )


def _skill_scores(pairs: Sequence[tuple[EvalCase, RunOutcome]]) -> tuple[SkillScore, ...]:
    names = sorted(
        {c.expected_skill for c, _ in pairs if c.expected_skill is not None}
        | {o.predicted for _, o in pairs if o.predicted is not None}
    )
    scores = []
    for name in names:
        expecting = [o for c, o in pairs if c.expected_skill == name]
        others = [o for c, o in pairs if c.expected_skill != name]
        tp = sum(o.predicted == name for o in expecting)
        scores.append(
            SkillScore(
                skill=name,
                runs=len(expecting),
                tp=tp,
                fp=sum(o.predicted == name for o in others),
                fn=len(expecting) - tp,
                any_load=sum(name in o.loaded for o in expecting),
            )
        )
    return tuple(scores)


def _summary(
    pairs: Sequence[tuple[EvalCase, RunOutcome]], skills: Sequence[SkillScore], runs: int
) -> Summary:
    null_runs = [o for c, o in pairs if c.expected_skill is None and c.scores_trigger]
    param_runs = [params_match(c, o) for c, o in pairs if c.has_param_expectations]
    answer_runs = [answer_matches(c, o) for c, o in pairs if c.expected_answer is not None]
    seen = [o.visibility for c, o in pairs if c.expected_skill and o.visibility is not None]
    reported = [o.usage for _, o in pairs if o.usage is not None]
    return Summary(
        runs=runs,
        scored_runs=len(pairs),
        errored_runs=runs - len(pairs),
        macro_recall=_mean(s.recall for s in skills if s.runs),
        macro_precision=_mean(s.precision for s in skills if s.runs),
        macro_f1=_mean(s.f1 for s in skills if s.runs),
        false_trigger=Rate(sum(bool(o.loaded) for o in null_runs), len(null_runs)),
        param_accuracy=Rate(sum(p is True for p in param_runs), len(param_runs)),
        answer_accuracy=Rate(sum(a is True for a in answer_runs), len(answer_runs)),
        visible=Rate(sum(v.visible for v in seen), len(seen)),
        hidden=sum(v.hidden for v in seen),
        avg_steps=_mean(o.steps for _, o in pairs),
        avg_input_tokens=_mean(u.input_tokens for u in reported),
        avg_output_tokens=_mean(u.output_tokens for u in reported),
        usage_runs=len(reported),
    )


def _confusion(
    cases: Sequence[EvalCase], pairs: Sequence[tuple[EvalCase, RunOutcome]]
) -> Confusion:
    expected = sorted({c.expected_skill for c in cases if c.expected_skill is not None})
    predicted = sorted({o.predicted for _, o in pairs if o.predicted is not None})
    counts = Counter((c.expected_skill or NONE_LABEL, o.predicted or NONE_LABEL) for c, o in pairs)
    columns = sorted(set(expected) | set(predicted))
    return Confusion(
        rows=(*expected, NONE_LABEL), columns=(*columns, NONE_LABEL), counts=dict(counts)
    )


def _notes(pairs: Sequence[tuple[EvalCase, RunOutcome]]) -> tuple[str, ...]:
    """What the report must say about the settings: cases whose expected skill the model
    could not choose for what it does."""
    seen = [(c, o.visibility) for c, o in pairs if c.expected_skill and o.visibility is not None]
    unloadable = sorted({c.id for c, v in seen if v.load_tool is None})
    unfindable = sorted({c.id for c, v in seen if v.load_tool and v.hidden})
    notes = []
    if unloadable:
        notes.append(
            f"{len(unloadable)} case(s) ran without a tool to load a skill (neither "
            f"skill_load nor Skill was offered): {_ids(unloadable)}"
        )
    if unfindable:
        notes.append(
            f"{len(unfindable)} case(s): the first request did not show the expected skill "
            "with its description and did not offer skill_search, so the model could only "
            f"guess from names; these settings hide it: {_ids(unfindable)}"
        )
    return tuple(notes)


def _ids(ids: Sequence[str], shown: int = 10) -> str:
    more = f" and {len(ids) - shown} more" if len(ids) > shown else ""
    return ", ".join(ids[:shown]) + more


# -- thresholds ------------------------------------------------------------------------------


def threshold_failures(
    summary: Summary, *, min_recall: float | None, max_false_trigger: float | None
) -> list[str]:
    """One line per failed threshold, saying by how much (empty when all pass)."""
    failures = []
    if min_recall is not None:
        recall = summary.macro_recall
        if recall is None:
            failures.append(f"min_recall {min_recall:g}: no scored run of a case expecting a skill")
        elif recall < min_recall:
            failures.append(
                f"macro recall {recall:.3f} is below min_recall {min_recall:g} "
                f"(short by {min_recall - recall:.3f})"
            )
    if max_false_trigger is not None:
        rate = summary.false_trigger_rate
        if rate is None:
            failures.append(
                f"max_false_trigger {max_false_trigger:g}: no scored run of a null case"
            )
        elif rate > max_false_trigger:
            failures.append(
                f"false-trigger rate {rate:.3f} is above max_false_trigger "
                f"{max_false_trigger:g} (over by {rate - max_false_trigger:.3f})"
            )
    return failures


def _ratio(hits: int, total: int) -> float | None:
    return hits / total if total else None


def _mean(values: Iterable[float | int | None]) -> float | None:
    present = [float(v) for v in values if v is not None]
    return sum(present) / len(present) if present else None

"""Trigger evals: does the model load the right skill for a request, and only then?

* :mod:`~skillshelf.evals.cases` — the cases file (JSON, YAML, JSONL) parsed into
  :class:`EvalCase` values and checked against the skills.
* :mod:`~skillshelf.evals.runner` — each case through the real agent loop, K times, N at once;
  what each run loaded, in which step, with which arguments, its steps, tokens and errors.
* :mod:`~skillshelf.evals.report` — the metrics (pure; their definitions are in its docstring).
* :mod:`~skillshelf.evals.compare` — the change since an earlier report.
* :mod:`~skillshelf.evals.improve` — the description optimiser (proposals from
  :mod:`~skillshelf.evals.proposer`, judged on a held-out split).
* :mod:`~skillshelf.evals.render` and :mod:`~skillshelf.evals.output` — text, Markdown, rich,
  and the ``--out`` folder.

``skillshelf eval`` (:mod:`skillshelf.cli.eval`) and ``skillshelf improve``
(:mod:`skillshelf.cli.improve`) string them together.
"""

from __future__ import annotations

from skillshelf.evals.cases import CasesError, EvalCase, check_cases, load_cases, parse_cases
from skillshelf.evals.compare import BaselineError, Previous, ReportDiff, diff_reports
from skillshelf.evals.improve import improve_descriptions
from skillshelf.evals.improve_result import ImproveError, ImproveResult
from skillshelf.evals.proposer import ProposerError
from skillshelf.evals.report import EvalReport, build_report, threshold_failures
from skillshelf.evals.runner import EvalAbortedError, RunOutcome, ToolUse, run_cases
from skillshelf.evals.split import split_cases

__all__ = [
    "BaselineError",
    "CasesError",
    "EvalAbortedError",
    "EvalCase",
    "EvalReport",
    "ImproveError",
    "ImproveResult",
    "Previous",
    "ProposerError",
    "ReportDiff",
    "RunOutcome",
    "ToolUse",
    "build_report",
    "check_cases",
    "diff_reports",
    "improve_descriptions",
    "load_cases",
    "parse_cases",
    "run_cases",
    "split_cases",
    "threshold_failures",
]

"""``skillshelf eval``: trigger evals through the real agent loop.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
Exit codes: 0 done (thresholds met); 1 a threshold failed, every run failed (the eval stops
once its first five runs fail before any succeeds), or the provider rejected the credentials
(as ``skillshelf chat``); 2 a usage error — bad options, a bad cases
file, an unusable ``--out`` folder or baseline.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._agent import agent_options, agent_settings
from skillshelf.cli._common import (
    emit_json,
    fail,
    is_tty,
    model_options,
    progress_bar,
    repo_from,
    root_options,
    usage_fail,
)

if TYPE_CHECKING:
    from collections.abc import Callable

    from skillshelf.evals.cases import EvalCase
    from skillshelf.evals.compare import Previous
    from skillshelf.evals.report import EvalReport
    from skillshelf.evals.runner import RunOutcome
    from skillshelf.models import Model
    from skillshelf.repository import Repository
    from skillshelf.skills.skill import Skill

__all__ = ["eval_"]


@click.command("eval")
@root_options
@click.argument("cases_path", metavar="CASES", type=click.Path(dir_okay=False, path_type=Path))
@model_options
@click.option(
    "--runs",
    type=click.IntRange(1),
    default=1,
    show_default=True,
    help="Runs per case (models are probabilistic: cases that pass only sometimes are flaky).",
)
@click.option(
    "--concurrency",
    type=click.IntRange(1),
    default=4,
    show_default=True,
    help="Runs in flight at once.",
)
@click.option(
    "--out",
    "out_dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Write traces/<case-id>-run<k>.jsonl, report.json and report.md here (a new or "
    "empty folder, or one holding an earlier eval's output: only that eval's own files are "
    "replaced).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the full report as JSON.")
@click.option(
    "--baseline",
    "baseline_path",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PREVIOUS.json",
    help="An earlier report.json: show what got better or worse.",
)
@click.option(
    "--min-recall",
    type=click.FloatRange(0, 1),
    metavar="X",
    help="Exit 1 when the macro recall (mean over skills with cases) is below X (0-1).",
)
@click.option(
    "--max-false-trigger",
    type=click.FloatRange(0, 1),
    metavar="Y",
    help="Exit 1 when the share of null-case runs that loaded a skill is above Y (0-1).",
)
@agent_options
def eval_(
    cases_path: Path,
    model_spec: str,
    base_url: str | None,
    api_key_env: str | None,
    runs: int,
    concurrency: int,
    out_dir: Path | None,
    as_json: bool,
    baseline_path: Path | None,
    min_recall: float | None,
    max_false_trigger: float | None,
    **kwargs: Any,
) -> None:
    """Measure whether the model loads the right skill for each case in CASES.

    CASES is a JSON list (or {"cases": [...]}), a YAML file or JSONL of {"query",
    "expected_skill" (a name, or null: load none), "expected_docs", "expected_params"
    ({tool: {argument: value}}, any tool), "expected_answer" (contains, regex, json_schema),
    "tools" (the case's own user tools), "note", "id"}, or of the simple shape {"user",
    "tool", "expected_params": {argument: value}} (a skill case without "tool": {"user",
    "expected_params": {"skill": NAME, …}}). Each case runs through the agent loop
    (configured by the agent options, as in chat) with the full catalog; the report gives
    per-skill precision, recall and F1, the false-trigger rate, a confusion matrix, parameter
    and answer accuracy, whether the first request showed the expected skill with its
    description, steps and tokens.

    Exit codes: 0 done; 1 a --min-recall/--max-false-trigger threshold failed, every run
    failed (the eval stops once its first 5 runs fail before any succeeds: a server that is
    down), or the provider rejected the API key; 2 a usage error (bad options or cases file,
    unknown expected skill, unusable --out folder or baseline).
    """
    from skillshelf.evals.cases import CasesError, check_cases, load_cases
    from skillshelf.evals.compare import BaselineError, Previous

    repo = repo_from(kwargs)
    with agent_settings(kwargs) as settings:
        try:
            cases = load_cases(cases_path)
            offered = [tool.name for tool in settings["tools"]]
            check_cases(
                cases,
                _loadable(repo, settings["visible"]),
                tools=offered,
                exec_enabled="workspace" in settings,
            )
            previous = Previous.load(baseline_path) if baseline_path is not None else None
        except (CasesError, BaselineError) as exc:
            usage_fail(str(exc))
        _check_threshold_inputs(cases, min_recall, max_false_trigger)
        model = _model(model_spec, base_url, api_key_env)
        traces = _prepare(out_dir)
        outcomes = _run(cases, repo, model, runs, concurrency, settings, traces, as_json)
    meta = {
        "cases_file": str(cases_path),
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "max_steps": settings["max_steps"],
    }
    report = _finish(cases, outcomes, model.name, runs, meta, previous, out_dir, as_json)
    _exit_status(report, min_recall, max_false_trigger)


def _loadable(repo: Repository, visible: Callable[[Skill], bool] | None) -> dict[str, Path | None]:
    """The skills the model sees (``--only``), each with its folder when it may load it."""
    return {
        s.name: (Path(s.directory) if s.model_invocable else None)
        for s in repo.skills
        if visible is None or visible(s)
    }


def _check_threshold_inputs(
    cases: list[EvalCase], min_recall: float | None, max_false_trigger: float | None
) -> None:
    if max_false_trigger is not None and not any(
        c.expected_skill is None and c.scores_trigger for c in cases
    ):
        usage_fail(
            "--max-false-trigger needs at least one case with expected_skill: null "
            "(a query that must load no skill)"
        )
    if min_recall is not None and not any(c.expected_skill and c.scores_trigger for c in cases):
        usage_fail("--min-recall needs at least one case that expects a skill")


def _model(spec: str, base_url: str | None, api_key_env: str | None) -> Model:
    from skillshelf.models import open_model

    return open_model(spec, base_url=base_url, api_key_env=api_key_env)


def _prepare(out_dir: Path | None) -> Path | None:
    from skillshelf.evals.output import OutputDirError, prepare_out_dir

    if out_dir is None:
        return None
    try:
        return prepare_out_dir(out_dir)
    except OutputDirError as exc:
        usage_fail(str(exc))


def _run(
    cases: list[EvalCase],
    repo: Repository,
    model: Model,
    runs: int,
    concurrency: int,
    settings: dict[str, Any],
    traces: Path | None,
    as_json: bool,
) -> list[RunOutcome]:
    import anyio

    from skillshelf.evals.runner import run_cases

    # A rejected API key or an aborted eval (ModelAuthError, EvalAbortedError) exits 1 with
    # its message, like every library error (skillshelf.cli.errors).
    with progress_bar(len(cases) * runs, "eval runs", enabled=not as_json) as advance:
        return anyio.run(
            lambda: run_cases(
                cases,
                repo,
                model,
                runs=runs,
                concurrency=concurrency,
                trace_dir=traces,
                on_run=advance,
                agent_options=settings,
            )
        )


def _finish(
    cases: list[EvalCase],
    outcomes: list[RunOutcome],
    model_name: str,
    runs: int,
    meta: dict[str, Any],
    previous: Previous | None,
    out_dir: Path | None,
    as_json: bool,
) -> EvalReport:
    from skillshelf.evals.compare import diff_reports
    from skillshelf.evals.output import write_report
    from skillshelf.evals.render import render_markdown, report_sections
    from skillshelf.evals.report import build_report

    report = build_report(cases, outcomes, model=model_name, runs_per_case=runs, meta=meta)
    diff = diff_reports(previous, report) if previous is not None else None
    document = report.to_json()
    if diff is not None:
        document["baseline_diff"] = diff.to_json()
    sections = report_sections(report, diff)
    if out_dir is not None:
        write_report(out_dir, document, render_markdown(sections))
    if as_json:
        emit_json(document)
        for note in report.notes:  # the text forms show them in their Notes section
            click.echo(f"note: {note}", err=True)
    elif is_tty():
        from rich.console import Console

        from skillshelf.evals.render import print_rich

        print_rich(sections, Console())
    else:
        from skillshelf.evals.render import render_text

        click.echo(render_text(sections), nl=False)
    return report


def _exit_status(
    report: EvalReport, min_recall: float | None, max_false_trigger: float | None
) -> None:
    from skillshelf.evals.report import threshold_failures

    errored = report.errored
    if errored and len(errored) == len(report.outcomes):
        fail(f"every run failed; the first: {errored[0].error}")
    if errored:
        click.echo(
            f"note: {len(errored)} of {len(report.outcomes)} runs failed and are left out of "
            "the metrics (listed under 'Errored runs')",
            err=True,
        )
    failures = threshold_failures(
        report.summary, min_recall=min_recall, max_false_trigger=max_false_trigger
    )
    for failure in failures:
        click.echo(f"threshold failed: {failure}", err=True)
    if failures:
        raise SystemExit(1)

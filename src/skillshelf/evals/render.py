"""Rendering a report: one set of sections, drawn as plain text, Markdown or rich tables.

:func:`report_sections` turns an :class:`~skillshelf.evals.report.EvalReport` (and a
comparison with a baseline) into titled tables of strings; the renderers only lay them out, so
every form shows the same numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from skillshelf.evals.report import NONE_LABEL, EvalReport, Rate

if TYPE_CHECKING:
    from rich.console import Console

    from skillshelf.evals.compare import ReportDiff

__all__ = [
    "Section",
    "print_rich",
    "render_markdown",
    "render_text",
    "report_sections",
]

DASH = "–"  # an undefined ratio (its denominator is 0)


@dataclass(frozen=True, slots=True)
class Section:
    """A titled table (``headers`` may be empty for a list of lines)."""

    title: str
    headers: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]
    notes: tuple[str, ...] = field(default=())


def fmt(value: float | None, digits: int = 2) -> str:
    """A ratio or average for display; ``–`` when undefined."""
    return DASH if value is None else f"{value:.{digits}f}"


def fmt_rate(rate: Rate) -> str:
    """``0.75 (3/4)``, or ``– (0/0)``."""
    return f"{fmt(rate.value)} ({rate.hits}/{rate.total})"


def report_sections(report: EvalReport, diff: ReportDiff | None = None) -> list[Section]:
    """The report as titled tables, in reading order."""
    parts = [
        _summary(report),
        _skills(report),
        _confusion(report),
        _cases(report),
    ]
    if any(c.answer_problems for c in report.cases):
        parts.append(_answers(report))
    if report.errored:
        rows = tuple((o.case_id, str(o.run), o.error or "") for o in report.errored)
        parts.append(Section("Errored runs", ("case", "run", "error"), rows))
    if report.notes:
        parts.append(Section("Notes", (), (), report.notes))
    if diff is not None:
        parts.append(_diff(diff))
    return parts


def _summary(report: EvalReport) -> Section:
    s = report.summary
    cases = len(report.cases)
    if s.usage_runs:
        tokens = f"{s.avg_input_tokens:.0f} in / {s.avg_output_tokens:.0f} out"
        if s.usage_runs < s.scored_runs:
            tokens += f" (reported by {s.usage_runs} of {s.scored_runs} runs)"
    else:
        tokens = "not reported by the model"
    rows = (
        ("model", report.model),
        ("runs", f"{cases} cases × {report.runs_per_case} = {s.runs} ({s.errored_runs} errored)"),
        ("macro recall", fmt(s.macro_recall)),
        ("macro precision", fmt(s.macro_precision)),
        ("macro F1", fmt(s.macro_f1)),
        ("false-trigger rate", fmt_rate(s.false_trigger)),
        ("parameter accuracy", fmt_rate(s.param_accuracy)),
        ("answer accuracy", fmt_rate(s.answer_accuracy)),
        ("expected skill visible", _visible(s.visible, s.hidden)),
        ("avg steps per run", fmt(s.avg_steps)),
        ("avg tokens per run", tokens),
    )
    return Section("Summary", ("metric", "value"), rows)


def _visible(rate: Rate, hidden: int) -> str:
    """``0.90 (9/10), 1 hidden``: runs whose first request showed the expected skill with
    its description, and those that could not have found it."""
    return fmt_rate(rate) + (f", {hidden} hidden" if hidden else "")


def _skills(report: EvalReport) -> Section:
    rows = tuple(
        (
            s.skill,
            str(s.runs),
            fmt(s.precision),
            fmt(s.recall),
            fmt(s.f1),
            fmt(s.any_load_recall),
            str(s.tp),
            str(s.fp),
            str(s.fn),
        )
        for s in report.skills
    )
    headers = ("skill", "runs", "precision", "recall", "F1", "any-load recall", "TP", "FP", "FN")
    return Section("Per skill (a run predicts the first skill it loaded)", headers, rows)


def _confusion(report: EvalReport) -> Section:
    matrix = report.confusion
    rows = tuple(
        (row, *(str(matrix.cell(row, column)) for column in matrix.columns)) for row in matrix.rows
    )
    return Section(
        "Confusion (rows: expected, columns: first skill loaded; runs)",
        ("expected \\ loaded", *matrix.columns),
        rows,
    )


def _cases(report: EvalReport) -> Section:
    rows = tuple(
        (
            c.case.id,
            (c.case.expected_skill or NONE_LABEL) if c.case.scores_trigger else "(not scored)",
            _predictions(c.predicted),
            DASH if c.visibility is None else c.visibility.label(),
            DASH if c.params_ok is None else f"{c.params_ok}/{c.scored}",
            DASH if c.answers_ok is None else f"{c.answers_ok}/{c.scored}",
            f"{c.passed}/{c.scored}",
            c.status,
        )
        for c in report.cases
    )
    notes: tuple[str, ...] = ()
    if report.flaky:
        notes = ("flaky cases: " + ", ".join(c.case.id for c in report.flaky),)
    headers = (
        "case",
        "expected",
        "loaded first (runs)",
        "visible",
        "params",
        "answer",
        "passed",
        "status",
    )
    return Section("Cases", headers, rows, notes)


def _answers(report: EvalReport) -> Section:
    """Why answers failed their rubric: the first failing run of each case."""
    rows = tuple(
        (c.case.id, "; ".join(c.answer_problems)) for c in report.cases if c.answer_problems
    )
    return Section("Answers that failed their rubric", ("case", "what failed"), rows)


def _predictions(predicted: Sequence[str | None]) -> str:
    """``alpha ×2, (none)``: each prediction with its count, most frequent first."""
    counts = Counter(p or NONE_LABEL for p in predicted)
    parts = [name if n == 1 else f"{name} ×{n}" for name, n in counts.most_common()]
    return ", ".join(parts) or DASH


def _diff(diff: ReportDiff) -> Section:
    rows: list[tuple[str, ...]] = [
        ("macro recall", *_change(diff.macro_recall)),
        ("false-trigger rate", *_change(diff.false_trigger_rate)),
    ]
    for skill in diff.skills:
        for index, metric in enumerate(("precision", "recall", "F1")):
            pair = (skill.before[index], skill.after[index])
            if pair[0] != pair[1]:
                rows.append((f"{skill.skill} {metric}", *_change(pair)))
    notes = [f"baseline model: {diff.baseline_model}"]
    notes += [f"better: {f.case_id} ({f.before} → {f.after})" for f in diff.better]
    notes += [f"worse: {f.case_id} ({f.before} → {f.after})" for f in diff.worse]
    if not diff.better and not diff.worse:
        notes.append("no case flipped between passing and not passing")
    headers = ("metric", "before", "after", "change")
    return Section("Compared with the baseline", headers, tuple(rows), tuple(notes))


def _change(pair: tuple[float | None, float | None]) -> tuple[str, str, str]:
    old, new = pair
    if old is None or new is None:
        delta = DASH
    elif new == old:
        delta = "="
    else:
        delta = f"{new - old:+.2f}"
    return fmt(old), fmt(new), delta


# -- layouts ---------------------------------------------------------------------------------


def render_text(sections: Sequence[Section]) -> str:
    """Plain text: a title line per section, then tab-separated rows (headers first)."""
    lines: list[str] = []
    for section in sections:
        lines.append(f"# {section.title}")
        if section.headers:
            lines.append("\t".join(section.headers))
        lines.extend("\t".join(row) for row in section.rows)
        lines.extend(section.notes)
        lines.append("")
    return "\n".join(lines)


def render_markdown(sections: Sequence[Section], *, title: str = "Trigger eval") -> str:
    """A Markdown document: one heading and one table per section."""
    lines = [f"# {title}", ""]
    for section in sections:
        lines += [f"## {section.title}", ""]
        if section.headers:
            lines.append("| " + " | ".join(_cell(h) for h in section.headers) + " |")
            lines.append("|" + "---|" * len(section.headers))
            lines.extend("| " + " | ".join(_cell(c) for c in row) + " |" for row in section.rows)
            lines.append("")
        lines.extend(f"- {note}" for note in section.notes)
        if section.notes:
            lines.append("")
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def print_rich(sections: Sequence[Section], console: Console) -> None:
    """Draw each section as a rich table (for a terminal)."""
    from rich.table import Table
    from rich.text import Text

    for section in sections:
        table = Table(title=section.title, title_justify="left")
        for index, header in enumerate(section.headers):
            # A name cut to "csv-ins…" says nothing: keep the first column whole, fold others.
            table.add_column(header, overflow="fold", no_wrap=index == 0)
        for row in section.rows:
            table.add_row(*(Text(cell) for cell in row))  # Text: a "[" is not markup
        console.print(table)
        for note in section.notes:
            console.print(note, markup=False, highlight=False)

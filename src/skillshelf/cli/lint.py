"""``skillshelf lint``: catalog and skill quality findings.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
Exit 0 without error findings, 1 with some (with ``--strict``, warnings count too), 2 for a
usage error.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._common import EXIT_FAILED, emit_json, is_tty, repo_from, root_options
from skillshelf.lint import DEFAULT_SIMILARITY, RULES, rule_filter

if TYPE_CHECKING:
    from skillshelf.lint import LintFinding, LintReport

__all__ = ["lint"]

_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _codes(values: Sequence[str]) -> list[str]:
    return [code.strip() for value in values for code in value.split(",") if code.strip()]


@click.command("lint")
@root_options
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option("--json", "as_json", is_flag=True, help="Print {findings: [...], summary, notes}.")
@click.option(
    "--select",
    multiple=True,
    metavar="CODES",
    help="Run only these rules: codes (link.broken) or groups (description), "
    "comma-separated or repeated. Default: every rule.",
)
@click.option(
    "--ignore",
    multiple=True,
    metavar="CODES",
    help="Leave out these rules: codes or groups, comma-separated or repeated.",
)
@click.option(
    "--similarity",
    type=click.FloatRange(0, 1, min_open=True),
    default=DEFAULT_SIMILARITY,
    show_default=True,
    help="Share of content words two descriptions must have in common (Jaccard, over 0 "
    "and at most 1) to be reported as near-duplicates.",
)
@click.option("--strict", is_flag=True, help="Exit 1 on warnings as well as on errors.")
@click.option(
    "--list-rules", is_flag=True, help="Print every rule (code, severity, summary) and exit."
)
def lint(
    names: tuple[str, ...],
    as_json: bool,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    similarity: float,
    strict: bool,
    list_rules: bool,
    **kwargs: Any,
) -> None:
    """Check skills for what makes a model miss, confuse or misuse them.

    Lints every visible skill, or only the NAMEs given (their descriptions are still compared
    with every other skill's). Findings are grouped by skill, each with a code, a severity
    and a fix hint. Exit 1 when an error is found (with --strict, a warning too).
    """
    if list_rules:
        _print_rules(as_json)
        return
    chosen, dropped = _codes(select) or None, _codes(ignore)
    rule_filter(chosen, dropped)  # an unknown rule code is a usage error (exit 2)
    from skillshelf.lint import lint_repository

    repo = repo_from(kwargs)
    report = lint_repository(
        repo, names=names or None, select=chosen, ignore=dropped, similarity=similarity
    )
    if as_json:
        emit_json(report.to_dict())
    else:
        directories = {s.name: s.directory for s in repo.skills}
        _print_report(report, directories)
    if report.failed(strict=strict):
        raise SystemExit(EXIT_FAILED)


def _print_rules(as_json: bool) -> None:
    if as_json:
        emit_json(
            [{"code": r.code, "severity": r.severity, "summary": r.summary} for r in RULES.values()]
        )
        return
    for rule in RULES.values():
        click.echo(f"{rule.code}\t{rule.severity}\t{rule.summary}")


def _location(finding: LintFinding, directories: Mapping[str, str]) -> str:
    """``skill:line`` for SKILL.md, ``skill/references/x.md:line`` for other files."""
    where = finding.skill
    directory = directories.get(finding.skill)
    path = finding.path or ""
    if directory and path.startswith(directory + os.sep):
        relative = path[len(directory) + 1 :].replace(os.sep, "/")
        if relative.lower() != "skill.md":
            where = f"{where}/{relative}"
    return f"{where}:{finding.line}" if finding.line else where


def _print_report(report: LintReport, directories: Mapping[str, str]) -> None:
    if is_tty():
        _print_rich(report, directories)
    else:
        for f in report.findings:
            location = _location(f, directories)
            click.echo(f"{f.severity}\t{f.code}\t{location}\t{f.message} — {f.hint}")
    for note in report.notes:
        click.echo(f"note: {note}", err=True)
    click.echo(_summary_line(report), err=True)


def _print_rich(report: LintReport, directories: Mapping[str, str]) -> None:
    from rich.console import Console
    from rich.text import Text

    console = Console()
    current: str | None = None
    for f in report.findings:
        if f.skill != current:
            if current is not None:
                console.print()
            current = f.skill
            directory = directories.get(f.skill, f.path or "")
            console.print(Text.assemble((f.skill, "bold"), "  ", (directory, "dim")))
        console.print(
            Text.assemble(
                "  ",
                (f"{f.severity:7}", _STYLES[f.severity]),
                " ",
                (f.code, "bold"),
                " ",
                _location(f, directories),
                " ",
                f.message,
                (f" — {f.hint}", "dim"),
            )
        )


def _summary_line(report: LintReport) -> str:
    counts = report.summary()
    if not report.findings:
        return f"no findings in {counts['skills']} skill{'s' if counts['skills'] != 1 else ''}"
    parts = [
        f"{counts[s]} {s}{'s' if counts[s] != 1 and s != 'info' else ''}"
        for s in ("error", "warning", "info")
    ]
    return f"{', '.join(parts)} in {counts['skills_with_findings']} of {counts['skills']} skills"

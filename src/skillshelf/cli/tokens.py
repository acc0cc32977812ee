"""``skillshelf tokens``: token report and prompt-cache report.

Registered on the ``skillshelf`` group by importing this module (see ``cli._COMMAND_MODULES``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from skillshelf.cli._common import (
    emit_json,
    fail,
    is_tty,
    progress_bar,
    repo_from,
    root_options,
    table,
)
from skillshelf.errors import UsageError

if TYPE_CHECKING:
    from skillshelf.reports.cachereport import CacheReport
    from skillshelf.reports.requestcost import RequestCost
    from skillshelf.reports.tokenreport import SkillTokens, TokenReport

__all__ = ["tokens"]


@click.command()
@root_options
@click.argument("names", nargs=-1, metavar="[NAME]...")
@click.option(
    "--encoding",
    type=click.Choice(["o200k_base", "cl100k_base"]),
    default="o200k_base",
    show_default=True,
    help="Tokenizer: o200k_base (GPT-4o and later) or cl100k_base (GPT-4, GPT-3.5). Counted "
    "offline; without the tokens extra, an estimate (labelled as such).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["xml", "markdown"]),
    default="xml",
    show_default=True,
    help="Catalog format counted (as 'skillshelf prompt --format' renders it).",
)
@click.option(
    "--budget-chars",
    type=click.IntRange(0),
    default=None,
    help="Catalog budget in characters  [default: the agent's, 12,000].",
)
@click.option(
    "--context-window",
    type=click.IntRange(1),
    default=128_000,
    show_default=True,
    metavar="TOKENS",
    help="The model's context window: a warning when the fixed part of every request "
    "(system prompt and tool schemas) takes more than 5% of it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print every number as JSON.")
@click.option(
    "--cache",
    is_flag=True,
    help="Also run a scripted tool loop (load, read a doc, select it, answer) through the "
    "agent and report how much of each request is an unchanged prefix of the previous one, "
    "with loaded content in tool results and in the system message.",
)
@click.option(
    "--skill",
    "cache_skill",
    metavar="NAME",
    default=None,
    help="The skill the --cache loop loads (default: the first with documents).",
)
def tokens(
    names: tuple[str, ...],
    encoding: str,
    fmt: str,
    budget_chars: int | None,
    context_window: int,
    as_json: bool,
    cache: bool,
    cache_skill: str | None,
    **kwargs: Any,
) -> None:
    """Count the tokens skills cost: catalog entry, body, on load, documents.

    Compares progressive disclosure (only the catalog up front, within the agent's budget)
    with injecting every body and document, shows what the budget did to the catalog, and
    counts the fixed part of every request — system prompt (instructions, catalog, guidance)
    and tool schemas — per model family (OpenAI, Anthropic), against the context window.
    NAMEs limit the rows shown; the totals always cover every skill. Exact counts are kept
    in the cache folder ($SKILLSHELF_CACHE_DIR), so unchanged text is not encoded again
    (--no-cache: neither read nor written).
    """
    from skillshelf.agent.config import DEFAULT_CATALOG_BUDGET
    from skillshelf.harness import SkillSettings
    from skillshelf.reports.requestcost import request_cost
    from skillshelf.reports.tokenreport import report_for_repository
    from skillshelf.reports.tokens import get_counter
    from skillshelf.skills.index_cache import default_cache_dir

    if cache_skill is not None and not cache:
        raise click.UsageError("--skill chooses the skill of the --cache loop; add --cache")
    # --no-cache also turns off the count cache, kept beside the index cache.
    cache_dir = None if kwargs["no_cache"] else default_cache_dir()
    repo = repo_from(kwargs)
    budget = DEFAULT_CATALOG_BUDGET if budget_chars is None else budget_chars
    counter = get_counter(encoding)  # type: ignore[arg-type]  # click.Choice checked it
    try:
        for name in names:
            repo.get(name)
        with progress_bar(len(repo.skills), "reading skills", enabled=not as_json) as advance:
            report = report_for_repository(
                repo,
                format=fmt,  # type: ignore[arg-type]  # click.Choice checked it
                budget_chars=budget,
                counter=counter,
                on_skill=advance,
                cache_dir=cache_dir,
            )
        settings = SkillSettings(catalog_format=fmt, catalog_budget=budget or None)  # type: ignore[arg-type]
        fixed = request_cost(repo, counter, settings=settings, context_window=context_window)
        cached = _cache(repo, cache_skill) if cache else None
    # The --cache loop refuses a skill without documents (UsageError): the subject failed, so
    # exit 1 as for an unknown skill, not 2.
    except (UsageError, OSError) as exc:
        fail(str(exc))
    if not counter.exact:
        click.echo(f"note: token counts are estimates ({counter.note or 'forced'})", err=True)
    for line in fixed.warnings():
        click.echo(f"warning: {line}", err=True)
    if as_json:
        data = report.to_dict()
        data["request"] = fixed.to_dict()
        if names:
            data["skills"] = [s for s in data["skills"] if s["name"] in names]
        if cached is not None:
            data["cache"] = cached.to_dict()
        emit_json(data)
        return
    _print_report(report, [s for s in report.skills if not names or s.name in names], fixed)
    if cached is not None:
        _print_cache(cached)


def _cache(repo: Any, skill: str | None) -> CacheReport:
    from skillshelf.reports.cachereport import cache_report

    return cache_report(repo, skill=skill)


def _n(value: int) -> str:
    return f"{value:,}" if is_tty() else str(value)


def _print_report(report: TokenReport, rows: list[SkillTokens], fixed: RequestCost) -> None:
    if rows:
        if is_tty():
            unit = "" if report.exact else " — ESTIMATE, not exact"
            click.echo(f"Tokens ({report.encoding}{unit}); files: documents and binary")
        table(
            ["skill", "catalog", "fate", "body", "on load", "docs", "files", "binary"],
            [
                [
                    s.name,
                    _n(s.catalog_entry),
                    s.catalog_fate,
                    _n(s.body),
                    _n(s.on_load),
                    _n(s.docs),
                    str(s.doc_files),
                    str(s.binary_files),
                ]
                for s in rows
            ],
        )
    else:
        click.echo("no skills found", err=True)
    _summary(_summary_lines(report) + _fixed_lines(fixed))


def _summary_lines(report: TokenReport) -> list[tuple[str, str]]:
    b = report.budget
    counted = report.encoding + ("" if report.exact else " — ESTIMATE, not exact")
    budget = "none" if b.budget_chars is None else f"{b.budget_chars:,} chars"
    ratio = "n/a (empty catalog)" if report.ratio is None else f"{report.ratio:,.1f}x"
    return [
        ("encoding", f"{counted} (counted with {report.backend})"),
        ("catalog budget", f"{budget}, {report.format}"),
        (
            "budget effect",
            f"{b.full} full, {b.trimmed} trimmed, {b.name_only} names only, {b.omitted} left out",
        ),
        ("catalog tokens", f"{b.tokens:,} within the budget, {b.tokens_unbudgeted:,} without"),
        (
            "progressive (up front)",
            f"{report.progressive:,} tokens: the catalog (all that is fixed: below)",
        ),
        ("everything injected", f"{report.everything:,} tokens: all bodies and documents"),
        ("ratio everything/progressive", ratio),
        ("all skills loaded once", f"{report.on_load:,} tokens (bodies with load framing)"),
    ]


def _fixed_lines(fixed: RequestCost) -> list[tuple[str, str]]:
    return [
        (
            f"fixed per request ({f.family})",
            f"{f.tokens:,} tokens, {fixed.share(f):.1%} of {fixed.context_window:,}: system "
            f"prompt {f.system_chars:,} chars + {len(fixed.tools)} tool schemas "
            f"{f.schema_chars:,} chars",
        )
        for f in fixed.families
    ]


def _summary(lines: list[tuple[str, str]]) -> None:
    if is_tty():
        width = max(len(k) for k, _ in lines)
        click.echo("")
        for key, value in lines:
            click.echo(f"{key:<{width}}  {value}")
    else:
        for key, value in lines:
            click.echo(f"{key}\t{value}")


def _print_cache(report: CacheReport) -> None:
    if is_tty():
        click.echo(
            f"\nPrompt cache: {report.skill} — {' → '.join(report.script)} (doc {report.doc})"
        )
    table(
        ["placement", "request", "bytes", "unchanged prefix", "share"],
        [
            [p.placement, str(s.step), _n(s.request_bytes), _n(s.prefix_bytes), f"{s.share:.1%}"]
            for p in report.placements
            for s in p.steps
        ],
    )
    _summary([(f"cache share {p.placement}", f"{p.overall:.1%}") for p in report.placements])

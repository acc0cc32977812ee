"""An eval report says, per case, whether the first request showed the expected skill with its
description (in the catalog or the relevant-skills block; whole, trimmed, by name, not at all),
and says so when the settings hide it from the model."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.core.catalog import CatalogEntry, fit_catalog, render_catalog
from skillshelf.core.render import render_system_reminder
from skillshelf.core.tooldef import ToolDef
from skillshelf.evals.cases import parse_cases
from skillshelf.evals.render import render_text, report_sections
from skillshelf.evals.report import build_report
from skillshelf.evals.runner import RunOutcome, run_cases
from skillshelf.evals.visibility import Visibility, visibility_of
from skillshelf.models import ModelRequest
from skillshelf.models.baseline import SearchBaselineModel
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

DESCRIPTION = "Merges and splits pdf files. Use to combine pdf documents into one file."
ENTRIES = [
    CatalogEntry(f"task-{i:02d}", f"Handles chores of kind {i}. " * 4, "/x") for i in range(30)
]
TARGET = CatalogEntry("zz-binder", DESCRIPTION, "/x/zz-binder/SKILL.md")


def _tools(*names: str) -> list[ToolDef]:
    return [ToolDef(name, name, {"type": "object", "properties": {}}) for name in names]


def _request(system: str, *reminders: str, tools: tuple[str, ...] = ("skill_load",)) -> Any:
    messages: list[dict[str, Any]] = [{"role": "system", "content": system}]
    messages += [{"role": "user", "content": render_system_reminder(r)} for r in reminders]
    messages.append({"role": "user", "content": "combine two pdf documents"})
    return ModelRequest(messages, _tools(*tools))


def test_each_way_a_request_can_show_the_skill_is_told_apart() -> None:
    whole = render_catalog([*ENTRIES, TARGET])
    fit = fit_catalog([*ENTRIES, TARGET], budget_chars=3_500)
    assert fit.fates[-1] == "trimmed"
    names = fit_catalog([*ENTRIES, TARGET], format="markdown", budget_chars=700)
    assert names.fates[-1] == "name_only"
    block = render_catalog([TARGET], format="markdown")

    def seen(request: Any) -> str:
        return visibility_of(request, "zz-binder", DESCRIPTION).label()

    assert seen(_request(whole)) == "full (catalog)"
    assert seen(_request(fit.text)) == "trimmed (catalog)"
    assert seen(_request(names.text)) == "name only"
    assert seen(_request(names.text, block)) == "full (relevant)"
    assert seen(_request("Guidance only.", whole)) == "full (catalog)"  # the reminder placement
    assert seen(_request(render_catalog(ENTRIES))) == "absent"


def test_a_skill_neither_described_nor_searchable_is_hidden() -> None:
    names = render_catalog([*ENTRIES, TARGET], format="markdown", budget_chars=700)
    hidden = visibility_of(_request(names), "zz-binder", DESCRIPTION)
    assert hidden.hidden and not hidden.visible
    searchable = visibility_of(
        _request(names, tools=("skill_load", "skill_search")), "zz-binder", DESCRIPTION
    )
    assert not searchable.hidden
    claude_code = visibility_of(
        _request(render_catalog([TARGET]), tools=("Skill",)), "zz-binder", DESCRIPTION
    )
    assert claude_code.load_tool == "Skill" and claude_code.visible
    no_load = visibility_of(_request(render_catalog([TARGET]), tools=()), "zz-binder", DESCRIPTION)
    assert no_load.hidden


@pytest.fixture
def big(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    for entry in ENTRIES:
        make_skill(root, entry.name, entry.description)
    make_skill(root, TARGET.name, DESCRIPTION)
    return root


CASES = [
    {"id": "binder", "query": "combine two pdf documents", "expected_skill": "zz-binder"},
    {"id": "chore", "query": "handle chores of kind 3", "expected_skill": "task-03"},
    {"id": "none", "query": "tell me a joke", "expected_skill": None},
]


def _eval(root: Path, **options: Any) -> Any:
    cases = parse_cases(json.dumps(CASES), "json")
    repo = Repository([root], cache_dir=False)
    outcomes = anyio.run(
        lambda: run_cases(cases, repo, SearchBaselineModel(), agent_options=options)
    )
    return build_report(cases, outcomes, model="baseline", runs_per_case=1)


def test_the_report_shows_where_the_expected_skill_was_visible(big: Path) -> None:
    whole = _eval(big)
    assert [c.visibility.label() if c.visibility else None for c in whole.cases] == [
        "full (catalog)",
        "full (catalog)",
        None,
    ]
    cut = _eval(big, catalog_format="markdown", catalog_budget=700)
    binder = cut.cases[0]
    assert binder.visibility is not None and binder.visibility.label() == "full (relevant)"
    assert binder.predicted == ("zz-binder",)
    alone = _eval(big, catalog_format="markdown", catalog_budget=700, relevant_skills=0)
    binder = alone.cases[0]
    assert binder.visibility is not None and binder.visibility.shown == "name_only"
    assert binder.visibility.skill_search and binder.predicted == ("zz-binder",)  # searched
    assert alone.summary.visible.hits < alone.summary.visible.total
    text = render_text(report_sections(alone))
    assert "binder\tzz-binder\tzz-binder\tname only\t–\t–\t1/1\tpass" in text
    assert alone.to_json()["runs"][0]["visible"] == {
        "shown": "name_only",
        "where": "catalog",
        "skill_search": True,
        "load_tool": "skill_load",
    }


def test_runs_the_settings_hide_the_skill_from_are_noted() -> None:
    cases = parse_cases(json.dumps(CASES[:2]), "json")
    hidden = Visibility("name_only", "catalog", False, "skill_load")
    unloadable = Visibility("full", "catalog", True, None)
    outcomes = [
        RunOutcome("binder", 1, answer="no", visibility=hidden),
        RunOutcome("chore", 1, answer="no", visibility=unloadable),
    ]
    report = build_report(cases, outcomes, model="m", runs_per_case=1)
    assert report.summary.hidden == 2
    assert report.notes == (
        "1 case(s) ran without a tool to load a skill (neither skill_load nor Skill was "
        "offered): chore",
        "1 case(s): the first request did not show the expected skill with its description "
        "and did not offer skill_search, so the model could only guess from names; these "
        "settings hide it: binder",
    )
    text = render_text(report_sections(report))
    assert "expected skill visible\t0.50 (1/2), 2 hidden" in text
    assert "# Notes" in text and report.to_json()["notes"] == list(report.notes)


def test_eval_takes_the_catalog_options_and_reports_visibility(big: Path, tmp_path: Path) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES), encoding="utf-8")
    args = ["eval", str(cases), "--root", str(big), "--no-cache", "--model", "baseline:search"]
    settings = ["--catalog-format", "markdown", "--catalog-budget", "700"]
    result = CliRunner().invoke(main, [*args, *settings, "--tool-style", "claude-code", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert [c["predicted"] for c in report["cases"]] == [["zz-binder"], ["task-03"], [None]]
    assert report["cases"][0]["visible"] == {
        "shown": "full",
        "where": "relevant",
        "skill_search": True,
        "load_tool": "Skill",
    }
    assert report["summary"]["visible"]["hits"] == 2


def test_settings_that_hide_the_skill_are_said_on_stderr_and_in_the_report(
    big: Path, tmp_path: Path
) -> None:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps(CASES[:1]), encoding="utf-8")
    args = ["eval", str(cases), "--root", str(big), "--no-cache", "--model", "baseline:search"]
    cut = ["--catalog-format", "markdown", "--catalog-budget", "700", "--relevant-skills", "0"]
    result = CliRunner().invoke(main, [*args, *cut, "--skill-tool", "skill_load", "--json"])
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["cases"][0]["visible"]["shown"] == "name_only"
    assert report["summary"]["hidden_runs"] == 1
    assert report["notes"][0].endswith("these settings hide it: binder")
    assert f"note: {report['notes'][0]}" in result.stderr
    assert report["runs"][0]["answer"].startswith("baseline:search cannot decide: ")
    assert "offers no skill_search" in report["runs"][0]["answer"]

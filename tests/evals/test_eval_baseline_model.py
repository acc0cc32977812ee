"""``baseline:search``: the offline lexical baseline, through the same agent loop as a model;
and the bundled example eval, whose printed numbers must be the report's own."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from click.testing import CliRunner

from skillshelf.agent.loop import Agent
from skillshelf.cli import main
from skillshelf.core.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.core.tooldef import ToolDef
from skillshelf.errors import ConfigError
from skillshelf.evals.cases import load_cases
from skillshelf.evals.render import fmt
from skillshelf.models import ModelRequest, open_model
from skillshelf.models.baseline import DEFAULT_MIN_SCORE, SearchBaselineModel
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def test_spec_options() -> None:
    assert open_model("baseline:search").name == f"baseline:search?min_score={DEFAULT_MIN_SCORE:g}"
    assert isinstance(model := open_model("baseline:search?min_score=0.5"), SearchBaselineModel)
    assert model.min_score == 0.5
    with pytest.raises(ConfigError, match="the only one is baseline:search"):
        open_model("baseline:embeddings")
    with pytest.raises(ConfigError, match="Unknown baseline:search option 'k'"):
        open_model("baseline:search?k=1")
    with pytest.raises(ConfigError, match="of 0 or more"):
        open_model("baseline:search?min_score=-1")


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path, "pdf-merge", "Merges and splits pdf files. Use to combine pdf documents.")
    make_skill(tmp_path, "charts", "Draws bar and line charts from numbers.")
    return Repository([tmp_path], cache_dir=False)


def test_it_loads_the_best_hit_through_the_agent_loop(repo: Repository) -> None:
    result = Agent(SearchBaselineModel(), repo).run_sync("combine two pdf documents")
    assert [(c.tool, c.arguments["skill"], c.status) for c in result.tool_calls] == [
        ("skill_load", "pdf-merge", "ok")
    ]
    assert result.steps == 2
    assert result.usage is None  # it reports no tokens rather than inventing them


def _calls(result: Any) -> list[tuple[str, str | None]]:
    return [(c.tool, c.arguments.get("skill")) for c in result.tool_calls]


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param({"catalog_format": "xml"}, id="xml"),
        pytest.param({"catalog_format": "markdown"}, id="markdown"),
        pytest.param({"catalog_placement": "reminder"}, id="reminder-xml"),
        pytest.param(
            {"catalog_placement": "reminder", "catalog_format": "markdown"}, id="reminder-markdown"
        ),
        pytest.param({"tool_style": "claude-code"}, id="claude-code"),
    ],
)
def test_it_reads_the_catalog_wherever_and_however_the_agent_shows_it(
    repo: Repository, settings: dict[str, Any]
) -> None:
    result = Agent(SearchBaselineModel(), repo, **settings).run_sync("combine two pdf documents")
    assert _calls(result) == [("skill_load", "pdf-merge")]  # Skill is traced as skill_load
    assert result.tool_calls[0].status == "ok"


def test_in_claude_code_style_it_calls_the_skill_tool(repo: Repository) -> None:
    seen: list[ModelRequest] = []

    class Recording(SearchBaselineModel):
        async def complete(self, request: ModelRequest, **kwargs: Any) -> Any:
            seen.append(request)
            return await super().complete(request, **kwargs)

    Agent(Recording(), repo, tool_style="claude-code").run_sync("combine two pdf documents")
    call = seen[1].messages[-2]["tool_calls"][0]["function"]
    assert (call["name"], json.loads(call["arguments"])) == ("Skill", {"skill": "pdf-merge"})


@pytest.fixture
def big(tmp_path: Path) -> Repository:
    """Forty skills whose catalog a small budget cuts; the right one sorts last, and its name
    shares no word with the requests."""
    for i in range(40):
        make_skill(tmp_path, f"task-{i:02d}", f"Handles chores of kind {i} for the team.")
    make_skill(tmp_path, "zz-binder", "Merges and splits pdf files. Use to combine pdf documents.")
    return Repository([tmp_path], cache_dir=False)


@pytest.mark.parametrize("format", ["xml", "markdown"])
def test_a_names_only_catalog_with_the_relevant_block_still_finds_the_skill(
    big: Repository, format: CatalogFormat
) -> None:
    agent = Agent(SearchBaselineModel(), big, catalog_format=format, catalog_budget=700)
    fit = agent.harness.prompt.fit(big.skills)
    assert dict(zip(big.names(), fit.fates, strict=True))["zz-binder"] in ("name_only", "omitted")
    result = agent.run_sync("combine two pdf documents")
    assert _calls(result) == [("skill_load", "zz-binder")]


@pytest.mark.parametrize("format", ["xml", "markdown"])
def test_a_cut_catalog_without_the_relevant_block_makes_it_search_first(
    big: Repository, format: CatalogFormat
) -> None:
    agent = Agent(
        SearchBaselineModel(), big, catalog_format=format, catalog_budget=700, relevant_skills=0
    )
    result = agent.run_sync("combine two pdf documents")
    assert [c.tool for c in result.tool_calls] == ["skill_search", "skill_load"]
    assert result.tool_calls[1].arguments["skill"] == "zz-binder"
    unrelated = agent.run_sync("tell me a joke about the weather")
    assert [c.tool for c in unrelated.tool_calls] == ["skill_search"]  # searched, loaded none


def test_a_word_every_suggested_skill_shares_is_no_reason_to_load_one(tmp_path: Path) -> None:
    for i in range(60):
        make_skill(
            tmp_path, f"hobby-{i:02d}", f"Plans outings of kind {i}. Use when asked about outings."
        )
    repo = Repository([tmp_path], cache_dir=False)
    for relevant in (5, 0):  # the relevant block, or skill_search's answer
        agent = Agent(SearchBaselineModel(), repo, catalog_budget=900, relevant_skills=relevant)
        joke = agent.run_sync("tell me a joke about cats")
        assert [c.tool for c in joke.tool_calls if c.tool == "skill_load"] == []
        outing = agent.run_sync("plan outings of kind 7")
        assert [c.arguments["skill"] for c in outing.tool_calls if c.tool == "skill_load"] == [
            "hobby-07"
        ]


def _load_tool() -> ToolDef:
    return ToolDef("skill_load", "Load a skill.", {"type": "object", "properties": {}})


def test_when_only_names_show_and_no_search_is_offered_it_says_so(
    caplog: pytest.LogCaptureFixture,
) -> None:
    names_only = render_catalog(
        [CatalogEntry(f"s-{i}", "Does a thing well. " * 5, "/x") for i in range(5)],
        format="markdown",
        budget_chars=60,
    )
    request = ModelRequest(
        [{"role": "system", "content": names_only}, {"role": "user", "content": "do it"}],
        [_load_tool()],
    )
    model = SearchBaselineModel()
    with caplog.at_level("WARNING", logger="skillshelf.models.baseline"):
        for _ in range(2):
            response = anyio.run(model.complete, request)
    assert response.tool_calls == ()
    assert response.text.startswith("baseline:search cannot decide:")
    assert "by name only" in response.text and "offers no skill_search" in response.text
    assert len(caplog.records) == 1  # once per reason, not once per run


def test_without_a_load_tool_it_says_so() -> None:
    catalog = render_catalog([CatalogEntry("pdf", "Merges pdf files.", "/x")])
    request = ModelRequest(
        [{"role": "system", "content": catalog}, {"role": "user", "content": "merge pdf files"}]
    )
    response = anyio.run(SearchBaselineModel().complete, request)
    assert "offers no tool to load a skill" in response.text


def test_below_the_threshold_it_answers_without_a_skill(repo: Repository) -> None:
    strict = SearchBaselineModel(min_score=1e12)
    result = Agent(strict, repo).run_sync("combine two pdf documents")
    assert result.tool_calls == []
    assert "below 1e+12" in result.output
    unrelated = Agent(SearchBaselineModel(), repo).run_sync("tell me a joke")
    assert unrelated.tool_calls == [] and unrelated.steps == 1


def test_the_example_eval_prints_the_numbers_of_its_report(tmp_path: Path) -> None:
    cases_file = EXAMPLES / "evals" / "cases.yaml"
    args = [
        "eval",
        str(cases_file),
        "--root",
        str(EXAMPLES / "skills"),
        "--no-cache",
        "--model",
        "baseline:search",
        "--out",
        str(tmp_path / "out"),
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    text = result.stdout

    # Recompute the per-skill figures from the recorded runs, independently of the report.
    cases = {c.id: c for c in load_cases(cases_file)}
    runs = report["runs"]
    for skill in report["skills"]:
        name = skill["skill"]
        expecting = [r for r in runs if cases[r["case_id"]].expected_skill == name]
        tp = sum(r["predicted"] == name for r in expecting)
        fp = sum(
            r["predicted"] == name and cases[r["case_id"]].expected_skill != name for r in runs
        )
        assert (skill["tp"], skill["fp"], skill["fn"]) == (tp, fp, len(expecting) - tp)
        row = "\t".join(
            [
                name,
                str(len(expecting)),
                fmt(skill["precision"]),
                fmt(skill["recall"]),
                fmt(skill["f1"]),
                fmt(skill["any_load_recall"]),
                str(tp),
                str(fp),
                str(len(expecting) - tp),
            ]
        )
        assert row in text.splitlines()
    null_runs = [r for r in runs if cases[r["case_id"]].expected_skill is None]
    triggered = sum(bool(r["loads"]) for r in null_runs)
    summary = report["summary"]
    assert summary["false_trigger"] == {
        "value": triggered / len(null_runs),
        "hits": triggered,
        "total": len(null_runs),
    }
    lines = text.splitlines()
    assert f"macro recall\t{fmt(summary['macro_recall'])}" in lines
    assert (
        f"false-trigger rate\t{fmt(triggered / len(null_runs))} ({triggered}/{len(null_runs)})"
        in (lines)
    )
    assert "avg tokens per run\tnot reported by the model" in lines
    for case in report["cases"]:
        assert f"{case['id']}\t" in text and case["status"] in ("pass", "fail")
    assert (tmp_path / "out" / "report.md").read_text().startswith("# Trigger eval")


def _macro_recall(cases_file: Path, root: Path, out: Path) -> float:
    args = ["eval", str(cases_file), "--root", str(root), "--no-cache"]
    result = CliRunner().invoke(main, [*args, "--model", "baseline:search", "--out", str(out)])
    assert result.exit_code == 0, result.stderr
    summary = json.loads((out / "report.json").read_text())["summary"]
    return float(summary["macro_recall"])


def test_the_chinese_example_eval_reaches_the_english_recall(tmp_path: Path) -> None:
    english = _macro_recall(EXAMPLES / "evals" / "cases.yaml", EXAMPLES / "skills", tmp_path / "en")
    chinese = _macro_recall(
        EXAMPLES / "evals" / "cases-zh.yaml", EXAMPLES / "skills-zh", tmp_path / "zh"
    )
    assert chinese >= english == 1.0

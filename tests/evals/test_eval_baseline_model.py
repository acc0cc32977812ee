"""``baseline:search``: the offline lexical baseline, through the same agent loop as a model;
and the bundled example eval, whose printed numbers must be the report's own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.agent.loop import Agent
from skillshelf.cli import main
from skillshelf.core.catalog import CatalogEntry, render_catalog
from skillshelf.errors import ConfigError
from skillshelf.evals.cases import load_cases
from skillshelf.evals.render import fmt
from skillshelf.models import open_model
from skillshelf.models.baseline import DEFAULT_MIN_SCORE, SearchBaselineModel, catalog_from_prompt
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
ENTRIES = [
    CatalogEntry("pdf-merge", "Merges <pdf> files & splits them.", "/x/SKILL.md"),
    CatalogEntry("charts", "Draws charts.", "/y/SKILL.md"),
]


@pytest.mark.parametrize("format", ["xml", "markdown"])
def test_catalog_is_read_back_from_the_system_prompt(format: str) -> None:
    prompt = render_catalog(ENTRIES, format=format)  # type: ignore[arg-type]
    messages = [{"role": "system", "content": f"Be helpful.\n\n{prompt}"}]
    assert sorted(catalog_from_prompt(messages)) == [
        ("charts", "Draws charts."),
        ("pdf-merge", "Merges <pdf> files & splits them."),
    ]


def test_a_names_only_catalog_gives_names_with_empty_descriptions() -> None:
    prompt = render_catalog(ENTRIES, format="xml", budget_chars=120)
    assert sorted(catalog_from_prompt([{"role": "system", "content": prompt}])) == [
        ("charts", ""),
        ("pdf-merge", ""),
    ]


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

"""The seed-style cases file, accepted as written: tool cases ``{user, tool, expected_params}``
and skill cases without a ``tool`` key, whose flat ``expected_params`` are the load's own."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest

from skillshelf.evals.cases import CasesError, check_cases, load_cases, parse_cases
from skillshelf.evals.report import build_report
from skillshelf.evals.runner import run_cases
from skillshelf.models.baseline import SearchBaselineModel
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

# As a seed-style file is written: a list of {user, tool?, expected_params}.
SEED_FILE = [
    {"user": "Combine these two pdf documents into one", "expected_params": {"skill": "pdf-merge"}},
    {
        "user": "Draw a bar chart from these numbers",
        "expected_params": {"skill": "charts", "docs": ["references/palette.md"]},
    },
    {"user": "Read me the pdf merge guide", "tool": "skill_read_file",
     "expected_params": {"skill": "pdf-merge", "path": "references/guide.md"}},
    {"user": "Open the charts skill", "tool": "Skill", "expected_params": {"skill": "charts"}},
]  # fmt: skip


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "pdf-merge",
        "Merges and splits pdf files. Use to combine pdf documents.",
        files={"references/guide.md": "Guide."},
    )
    make_skill(
        root,
        "charts",
        "Draws bar and line charts from numbers.",
        files={"references/palette.md": "Colours."},
    )
    return Repository([root], cache_dir=False)


def test_a_seed_style_file_loads_as_written(tmp_path: Path, repo: Repository) -> None:
    path = tmp_path / "seed.json"
    path.write_text(json.dumps(SEED_FILE), encoding="utf-8")
    cases = load_cases(path)
    check_cases(cases, {s.name: Path(s.directory) for s in repo})
    merge, chart, read, skill_tool = cases
    assert (merge.expected_skill, merge.scores_trigger, dict(merge.expected_params)) == (
        "pdf-merge",
        True,
        {},
    )
    assert chart.expected_skill == "charts"
    assert chart.expected_docs == ("references/palette.md",)
    assert not read.scores_trigger and set(read.expected_params) == {"skill_read_file"}
    # Claude Code's Skill tool is traced as skill_load: the case means that.
    assert dict(skill_tool.expected_params) == {"skill_load": {"skill": "charts"}}


def test_seed_skill_cases_are_scored_as_trigger_cases(repo: Repository) -> None:
    cases = parse_cases(json.dumps(SEED_FILE[:2]), "json")
    outcomes = anyio.run(lambda: run_cases(cases, repo, SearchBaselineModel()))
    report = build_report(cases, outcomes, model="baseline", runs_per_case=1)
    assert [c.predicted for c in report.cases] == [("pdf-merge",), ("charts",)]
    assert [s.skill for s in report.skills] == ["charts", "pdf-merge"]
    # The baseline reads no documents: the chart case's expected doc is not asked for.
    assert [c.status for c in report.cases] == ["pass", "fail"]


def test_other_load_arguments_are_matched_against_skill_load() -> None:
    (case,) = parse_cases(
        json.dumps([{"user": "x", "expected_params": {"skill": "a", "include_all_docs": True}}]),
        "json",
    )
    assert case.expected_skill == "a"
    assert dict(case.expected_params) == {"skill_load": {"include_all_docs": True}}


def test_seed_cases_that_cannot_mean_anything_say_why() -> None:
    bad = [
        {"user": "x", "expected_params": {"path": "."}},
        {"user": "y", "expected_params": {"skill": "a"}, "expected_skill": "b"},
        {"user": "z", "expected_params": {"skill": "a"}, "expected_skill": None},
    ]
    with pytest.raises(CasesError) as caught:
        parse_cases(json.dumps(bad), "json")
    assert [str(p) for p in caught.value.problems] == [
        "case 1, field 'expected_params': flat expected_params need the tool they are for: "
        "add tool, or give skill (the skill to load) for a skill case",
        "case 2, field 'expected_params': expected_params.skill 'a' and expected_skill 'b' "
        "disagree: keep one",
        "case 3, field 'expected_params': expected_params.skill 'a' and expected_skill None "
        "disagree: keep one",
    ]

"""``skillshelf improve`` from the command line: a scripted proposer file, ``baseline:search``
as the evaluated model, exit codes and messages for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from improve_scenario import BAD, CASES, GOOD, make_catalog, pad_catalog, write_cases

from skillshelf.cli import main


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["improve", *(str(a) for a in args)])


def script(tmp_path: Path, *replies: str) -> Path:
    path = tmp_path / "proposer.json"
    path.write_text(json.dumps(list(replies)), encoding="utf-8")
    return path


def common(tmp_path: Path) -> list[str | Path]:
    root = make_catalog(tmp_path)
    return [write_cases(tmp_path / "cases.json"), "--root", root, "--model", "baseline:search"]


def test_json_report_has_both_splits_and_the_diff_and_nothing_is_written(tmp_path: Path) -> None:
    args = common(tmp_path)
    proposer = script(tmp_path, f"<description>{GOOD}</description>")
    result = invoke(*args, "--proposer", f"scripted:{proposer}", "--json")

    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    row = next(r for r in document["skills"] if r["skill"] == "docfill")
    for split in ("train", "held-out"):
        assert row[f"{split}.before"]["recall"] == 0.0
        assert row[f"{split}.after"]["recall"] == 1.0
        assert document["summary"][split]["after"]["macro_recall"] == 1.0
    assert f"+description: {GOOD}" in document["diff"]
    assert BAD in (tmp_path / "skills" / "docfill" / "SKILL.md").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "settings",
    [
        pytest.param([], id="defaults"),
        pytest.param(["--catalog-budget", "3000"], id="names-only-xml"),
        pytest.param(["--catalog-budget", "3000", "--relevant-skills", "0"], id="search-first"),
        pytest.param(["--catalog-format", "markdown", "--catalog-budget", "3000"], id="markdown"),
        pytest.param(["--catalog-placement", "reminder"], id="reminder"),
        pytest.param(["--tool-style", "claude-code"], id="claude-code"),
    ],
)
def test_a_rewrite_kept_on_three_skills_is_kept_among_134_with_the_agents_settings(
    tmp_path: Path, settings: list[str]
) -> None:
    verdicts = []
    for padding in (0, 131):
        folder = tmp_path / str(padding)
        args = common(folder)
        pad_catalog(folder / "skills", padding)
        proposer = script(folder, f"<description>{GOOD}</description>")
        result = invoke(*args, "--proposer", f"scripted:{proposer}", *settings, "--json")
        assert result.exit_code == 0, result.output
        verdicts.append([(p["skill"], p["kept"]) for p in json.loads(result.stdout)["proposals"]])
    assert verdicts[0] == verdicts[1] == [("docfill", True)]


def test_write_applies_the_kept_change(tmp_path: Path) -> None:
    args = common(tmp_path)
    proposer = script(tmp_path, f"<description>{GOOD}</description>")
    result = invoke(*args, "--proposer", f"scripted:{proposer}", "--write")

    assert result.exit_code == 0, result.output
    assert "# Per skill (before → after)" in result.stdout
    assert "wrote " in result.stderr
    text = (tmp_path / "skills" / "docfill" / "SKILL.md").read_text(encoding="utf-8")
    assert f"description: {GOOD}\n" in text
    assert "name: docfill  # the folder's name\n" in text


def test_a_failing_proposer_exits_1_naming_the_model_and_skill(tmp_path: Path) -> None:
    args = common(tmp_path)
    result = invoke(*args, "--proposer", f"scripted:{script(tmp_path)}")
    assert result.exit_code == 1
    assert "the proposer model scripted:proposer.json failed on skill 'docfill'" in result.stderr


def test_baseline_cannot_propose(tmp_path: Path) -> None:
    result = invoke(*common(tmp_path))
    assert result.exit_code == 2
    assert "pass --proposer" in result.stderr


def test_an_unknown_skill_exits_2_with_the_closest_name(tmp_path: Path) -> None:
    proposer = script(tmp_path, GOOD)
    result = invoke(*common(tmp_path), "--proposer", f"scripted:{proposer}", "--skill", "docfil")
    assert result.exit_code == 2
    assert "docfill" in result.stderr


def test_a_case_for_an_unknown_skill_exits_2(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    cases = write_cases(tmp_path / "cases.json", [*CASES, {"query": "q", "expected_skill": "nope"}])
    proposer = script(tmp_path, GOOD)
    result = invoke(
        cases, "--root", root, "--model", "baseline:search", "--proposer", f"scripted:{proposer}"
    )
    assert result.exit_code == 2
    assert 'Unknown skill "nope"' in result.stderr


def test_no_cases_exits_2(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    cases = write_cases(tmp_path / "cases.json", [])
    proposer = script(tmp_path, GOOD)
    result = invoke(
        cases, "--root", root, "--model", "baseline:search", "--proposer", f"scripted:{proposer}"
    )
    assert result.exit_code == 2
    assert "no cases" in result.stderr


def test_an_empty_split_exits_2(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    cases = write_cases(tmp_path / "cases.json", CASES[:1])
    proposer = script(tmp_path, GOOD)
    result = invoke(
        cases,
        "--root",
        root,
        "--model",
        "baseline:search",
        "--proposer",
        f"scripted:{proposer}",
        "--holdout",
        "0.01",
    )
    assert result.exit_code == 2
    assert "split is empty" in result.output

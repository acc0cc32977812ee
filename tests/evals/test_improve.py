"""The description optimiser end to end: ``baseline:search`` is the evaluated model (real
search over the real catalog through the real agent loop) and a scripted model proposes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from improve_scenario import BAD, CASES, GOOD, GREEDY, make_catalog, pad_catalog, proposer

from skillshelf.errors import UsageError
from skillshelf.evals.cases import EvalCase, parse_cases
from skillshelf.evals.improve import improve_descriptions
from skillshelf.evals.improve_render import render_text
from skillshelf.evals.improve_result import ImproveError, ImproveResult
from skillshelf.evals.split import split_cases
from skillshelf.models import ModelRequest
from skillshelf.models.baseline import SearchBaselineModel
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel


def cases() -> list[EvalCase]:
    return parse_cases(json.dumps(CASES), "json")


def run(root: Path, *descriptions: str, **options: object) -> tuple[ImproveResult, ScriptedModel]:
    repo = Repository([root], cache_dir=False)
    model = proposer(*descriptions)
    result = anyio.run(
        lambda: improve_descriptions(
            cases(),
            repo,
            SearchBaselineModel(),
            proposer=model,
            **options,  # type: ignore[arg-type]
        )
    )
    return result, model


def score(result: ImproveResult, when: str, split: str, skill: str) -> tuple[float | None, ...]:
    report = (result.before if when == "before" else result.after)[split]  # type: ignore[index]
    found = next(s for s in report.skills if s.skill == skill)
    return found.precision, found.recall, found.f1


# -- the split -------------------------------------------------------------------------------


def test_split_is_deterministic_and_puts_every_skill_on_both_sides() -> None:
    split = split_cases(cases(), holdout=0.5, seed="")
    assert split == split_cases(cases(), holdout=0.5, seed="")
    for skill in ("docfill", "csv-insights", "commit-message", None):
        sides = {split[c.id] for c in cases() if c.expected_skill == skill}
        assert sides == {"train", "held-out"}


def test_split_follows_the_seed_and_the_share() -> None:
    seeds = {tuple(sorted(split_cases(cases(), seed=str(n)).items())) for n in range(10)}
    assert len(seeds) > 1
    small = split_cases(cases(), holdout=0.25)
    held = sum(1 for side in small.values() if side == "held-out")
    assert held == 4  # one of each group: 4 docfill, 3 csv, 2 git, 2 none → 1, 1, 1, 1


@pytest.mark.parametrize("holdout", [0.0, 1.0, -0.5])
def test_split_refuses_a_share_outside_zero_to_one(holdout: float) -> None:
    with pytest.raises(UsageError, match="between 0 and 1"):
        split_cases(cases(), holdout=holdout)


# -- end to end ------------------------------------------------------------------------------


def test_planted_bad_description_gains_recall_on_both_splits(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    files = {p: p.read_bytes() for p in root.rglob("SKILL.md")}
    result, _ = run(root, GOOD)

    for split in ("train", "held-out"):
        assert score(result, "before", split, "docfill")[1] == 0.0
        assert score(result, "after", split, "docfill")[1] == 1.0
        for other in ("csv-insights", "commit-message"):
            assert score(result, "after", split, other) == score(result, "before", split, other)
    assert [c.skill for c in result.changes] == ["docfill"]
    assert result.changes[0].old_description == BAD
    assert result.changes[0].new_description == GOOD
    assert {p: p.read_bytes() for p in root.rglob("SKILL.md")} == files  # nothing written yet


def test_a_proposal_that_lowers_another_skill_is_rejected_and_the_next_is_kept(
    tmp_path: Path,
) -> None:
    result, model = run(make_catalog(tmp_path), GREEDY, GOOD, attempts=2)

    first, second = result.proposals
    assert (first.kept, second.kept) == (False, True)
    assert first.lowered == ("csv-insights",)
    assert "csv-insights" in first.reason
    # The second request shows the proposer what was rejected and why.
    assert "rejected_proposals" in str(model.requests[1].messages[-1]["content"])
    assert result.changes[0].new_description == GOOD


def test_the_proposer_never_sees_a_held_out_request(tmp_path: Path) -> None:
    result, model = run(make_catalog(tmp_path), GOOD)
    prompt = "\n".join(str(m["content"]) for r in model.requests for m in r.messages)
    for case in cases():
        if result.split[case.id] == "held-out":
            assert case.query not in prompt
    trained = [
        c for c in cases() if result.split[c.id] == "train" and c.expected_skill == "docfill"
    ]
    assert all(c.query in prompt for c in trained)


def test_write_changes_only_the_description_value(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    skill_md = root / "docfill" / "SKILL.md"
    before = skill_md.read_text(encoding="utf-8")
    others = {p: p.read_bytes() for p in root.rglob("SKILL.md") if p != skill_md}
    result, _ = run(root, GOOD)

    assert result.write() == [skill_md]
    assert skill_md.read_text(encoding="utf-8") == before.replace(BAD, GOOD)
    assert {p: p.read_bytes() for p in others} == others
    assert Repository([root], cache_dir=False).get("docfill").description == GOOD


def test_write_refuses_a_file_changed_since_it_was_read(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    result, _ = run(root, GOOD)
    skill_md = root / "docfill" / "SKILL.md"
    skill_md.write_text(skill_md.read_text(encoding="utf-8") + "\nedited\n", encoding="utf-8")
    with pytest.raises(ImproveError, match="changed since it was read"):
        result.write()
    assert "edited" in skill_md.read_text(encoding="utf-8")


def test_report_shows_both_splits_and_the_diff(tmp_path: Path) -> None:
    result, _ = run(make_catalog(tmp_path), GOOD)
    text = render_text(result, relative_to=tmp_path)
    assert "metric\ttrain\theld-out" in text
    assert "docfill\t0.00 → 1.00\t0.00 → 1.00\t0.00 → 1.00\t0.00 → 1.00\tyes" in text
    assert "--- a/skills/docfill/SKILL.md" in text
    assert f"+description: {GOOD}" in text
    document = result.to_json(relative_to=tmp_path)
    row = next(r for r in document["skills"] if r["skill"] == "docfill")
    assert row["held-out.before"]["recall"] == 0.0 and row["held-out.after"]["recall"] == 1.0
    assert row["train.before"]["recall"] == 0.0 and row["train.after"]["recall"] == 1.0
    assert document["changes"][0]["after"] == GOOD
    assert set(document["split"]) == {"train", "held-out"}


def test_an_invalid_proposal_is_rejected_with_the_validation_error(tmp_path: Path) -> None:
    result, _ = run(make_catalog(tmp_path), "x" * 1100)
    (proposal,) = result.proposals
    assert not proposal.kept
    assert proposal.reason.startswith("invalid:")
    assert result.changes == ()


def test_only_the_named_skills_are_changed(tmp_path: Path) -> None:
    result, model = run(make_catalog(tmp_path), GOOD, skills=["csv-insights"])
    assert result.proposals == () and model.requests == []


# -- bad input -------------------------------------------------------------------------------


def test_no_cases_is_a_usage_error(tmp_path: Path) -> None:
    repo = Repository([make_catalog(tmp_path)], cache_dir=False)
    with pytest.raises(UsageError, match="no cases"):
        anyio.run(lambda: improve_descriptions([], repo, SearchBaselineModel()))


def test_an_empty_split_is_a_usage_error(tmp_path: Path) -> None:
    repo = Repository([make_catalog(tmp_path)], cache_dir=False)
    one = cases()[:1]
    with pytest.raises(UsageError, match="split is empty"):
        anyio.run(lambda: improve_descriptions(one, repo, SearchBaselineModel(), holdout=0.01))


def test_an_unknown_skill_is_a_usage_error_naming_the_closest(tmp_path: Path) -> None:
    repo = Repository([make_catalog(tmp_path)], cache_dir=False)
    with pytest.raises(UsageError, match="docfill"):
        anyio.run(
            lambda: improve_descriptions(cases(), repo, SearchBaselineModel(), skills=["docfil"])
        )


def test_a_skill_md_that_is_not_utf8_is_left_alone_without_a_crash(tmp_path: Path) -> None:
    root = make_catalog(tmp_path)
    skill_md = root / "docfill" / "SKILL.md"
    raw = skill_md.read_bytes().replace(b"Helps with documents.", b"Helps with docum\xe9nts.")
    skill_md.write_bytes(raw)
    result, _ = run(root, GOOD)

    (proposal,) = result.proposals
    assert not proposal.kept
    assert proposal.reason.startswith("not applied: cannot edit this SKILL.md safely")
    assert result.changes == ()
    assert skill_md.read_bytes() == raw


def test_the_agent_options_apply_before_and_after_each_proposal(tmp_path: Path) -> None:
    skills = make_catalog(tmp_path)
    pad_catalog(skills, 131)
    offered: list[list[str]] = []

    class Watching(SearchBaselineModel):
        async def complete(self, request: ModelRequest, **kwargs: Any) -> Any:
            offered.append([tool.name for tool in request.tools])
            return await super().complete(request, **kwargs)

    options = {"tool_style": "claude-code", "catalog_budget": 3000, "catalog_format": "markdown"}
    result = anyio.run(
        lambda: improve_descriptions(
            parse_cases(json.dumps(CASES), "json"),
            Repository([skills], cache_dir=False),
            Watching(),
            proposer=proposer(GOOD),
            agent_options=options,
        )
    )
    assert [(p.skill, p.kept) for p in result.proposals] == [("docfill", True)]
    assert len(offered) >= 2 * len(CASES)  # every case, before and after the proposal
    assert all("Skill" in tools and "skill_load" not in tools for tools in offered)

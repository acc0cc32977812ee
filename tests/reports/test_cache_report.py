"""Prompt-cache report: prefix shares of each request of a scripted loop through the agent."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from skillshelf.errors import SkillNotFoundError, UsageError
from skillshelf.models import ModelRequest
from skillshelf.reports.cachereport import (
    cache_report,
    common_prefix,
    pick_skill,
    prefix_shares,
    record_requests,
    serialize_request,
)
from skillshelf.repository import Repository
from skillshelf.testing import make_skill


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    skills = tmp_path / "skills"
    make_skill(skills, "alpha", "Alpha, no documents. Use when alpha.")
    make_skill(
        skills,
        "beta",
        "Beta has a guide. Use when beta.",
        body="# Beta\n\nRead references/guide.md before you start.\n",
        files={"LICENSE.txt": "Licence text.\n", "references/guide.md": "# Guide\n\nStep 1.\n"},
    )
    return Repository([skills], cache_dir=False)


@pytest.mark.parametrize(
    ("first", "second", "expected"),
    [
        pytest.param(b"abcdef", b"abcxyz", 3, id="differ"),
        pytest.param(b"abc", b"abcdef", 3, id="prefix"),
        pytest.param(b"", b"abc", 0, id="empty"),
        pytest.param(b"same", b"same", 4, id="equal"),
        pytest.param(b"x" * 9000 + b"a", b"x" * 9000 + b"b", 9000, id="past-a-block"),
        pytest.param(b"x" * 4096, b"x" * 4096 + b"y", 4096, id="block-boundary"),
    ],
)
def test_common_prefix_counts_leading_equal_bytes(
    first: bytes, second: bytes, expected: int
) -> None:
    assert common_prefix(first, second) == expected


def test_prefix_shares_compare_each_request_with_the_previous_one() -> None:
    steps = prefix_shares([b"ab", b"abcd", b"abXdef"])

    assert [(s.step, s.request_bytes, s.prefix_bytes) for s in steps] == [(2, 4, 2), (3, 6, 2)]
    assert [s.share for s in steps] == [0.5, 2 / 6]
    assert prefix_shares([b"only one"]) == ()


def test_requests_serialise_tools_first_as_canonical_json() -> None:
    request = ModelRequest([{"role": "user", "content": "hé"}], [])

    assert (
        serialize_request(request)
        == '{"tools":[],"messages":[{"content":"hé","role":"user"}]}'.encode()
    )


def test_the_scripted_loop_runs_through_the_agent(repo: Repository) -> None:
    requests = [
        json.loads(r) for r in record_requests(repo, "beta", "references/guide.md", "tool_result")
    ]

    assert len(requests) == 4
    offered = {t["function"]["name"] for t in requests[0]["tools"]}
    assert {"skill_load", "skill_read_file", "skill_select_docs"} <= offered
    tool_results = [m["content"] for m in requests[-1]["messages"] if m["role"] == "tool"]
    assert tool_results[0].startswith('<skill_content name="beta">')
    assert tool_results[1] == "# Guide\n\nStep 1.\n"
    assert tool_results[2] == "Docs selected for 'beta': references/guide.md"


def test_tool_result_placement_only_appends_so_each_request_extends_the_last(
    repo: Repository,
) -> None:
    requests = record_requests(repo, "beta", "references/guide.md", "tool_result")

    steps = prefix_shares(requests)

    # Hand computation: a request only appends messages, so everything but the previous
    # request's closing "]}" is an unchanged prefix.
    assert [s.prefix_bytes for s in steps] == [len(r) - 2 for r in requests[:-1]]
    assert [s.request_bytes for s in steps] == [len(r) for r in requests[1:]]


def test_system_placement_breaks_the_prefix_after_the_system_prompt(repo: Repository) -> None:
    requests = record_requests(repo, "beta", "references/guide.md", "system")
    second = json.loads(requests[1])

    steps = prefix_shares(requests)

    # Hand computation: the loaded skill's system message comes right after the system
    # prompt; the user message it displaced began with the same '{"content":"'.
    dump = json.dumps
    head = '{"tools":' + dump(second["tools"], sort_keys=True, separators=(",", ":"))
    head += ',"messages":[' + dump(second["messages"][0], sort_keys=True, separators=(",", ":"))
    head += ',{"content":"'
    assert second["messages"][1]["content"].startswith("Loaded skill context:")
    assert steps[0].prefix_bytes == len(head.encode())


def test_system_placement_keeps_less_of_each_request_cached(repo: Repository) -> None:
    report = cache_report(repo, skill="beta")
    by_placement = {p.placement: p for p in report.placements}

    assert (report.skill, report.doc) == ("beta", "references/guide.md")
    assert by_placement["system"].overall < by_placement["tool_result"].overall
    tool_result = by_placement["tool_result"]
    total = sum(s.request_bytes for s in tool_result.steps)
    assert tool_result.overall == sum(s.prefix_bytes for s in tool_result.steps) / total
    assert len(tool_result.request_bytes) == 4


def test_to_dict_has_every_step(repo: Repository) -> None:
    data: dict[str, Any] = json.loads(json.dumps(cache_report(repo).to_dict()))

    assert data["skill"] == "beta"
    assert [p["placement"] for p in data["placements"]] == ["tool_result", "system"]
    assert [s["step"] for s in data["placements"][0]["steps"]] == [2, 3, 4]


def test_pick_skill_takes_the_first_with_documents_and_prefers_markdown(
    repo: Repository,
) -> None:
    skill, doc = pick_skill(repo, None)

    assert (skill.name, doc) == ("beta", "references/guide.md")


def test_a_skill_without_documents_cannot_drive_the_loop(repo: Repository) -> None:
    with pytest.raises(UsageError, match="'alpha' has no documents"):
        cache_report(repo, skill="alpha")


def test_an_unknown_skill_is_reported_with_close_names(repo: Repository) -> None:
    with pytest.raises(SkillNotFoundError, match="bet"):
        cache_report(repo, skill="bet")


def test_a_repository_without_documents_cannot_drive_the_loop(tmp_path: Path) -> None:
    make_skill(tmp_path, "solo")

    with pytest.raises(UsageError, match="No skill has documents"):
        cache_report(Repository([tmp_path], cache_dir=False))


def test_an_unknown_placement_is_a_usage_error(repo: Repository) -> None:
    with pytest.raises(UsageError, match="Unknown placement 'user'"):
        cache_report(repo, placements=["user"])  # type: ignore[list-item]

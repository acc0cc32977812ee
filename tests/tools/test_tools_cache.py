"""What the tools keep per repository scan is renewed by every refresh and every watcher pickup.

The names, enums, listings and schemas derived from all visible skills are computed once per
scan (``Repository.version``) and ``visible`` predicate; these tests check that a refresh
(directly or through the watcher) makes a new skill loadable and offered, and that a skill
removed, hidden or reserved for the user is refused and gone from every list.
"""

from __future__ import annotations

import os
import queue
import shutil
import time
from pathlib import Path
from typing import Any

import pytest

from skillshelf.repository import Changes, Repository
from skillshelf.skills.skill import Skill
from skillshelf.testing import age_tree, make_skill
from skillshelf.tools import SkillTools

EVENT_WAIT_S = 5.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    for name in ("alpha", "beta", "gamma"):
        make_skill(skills, name, f"{name.title()} handles {name} reports. Use for {name}.")
    return skills


def _enum(tools: SkillTools) -> list[str]:
    [load] = [s for s in tools.schemas("openai") if s["function"]["name"] == "skill_load"]
    return list(load["function"]["parameters"]["properties"]["skill"]["enum"])


def _listed(tools: SkillTools) -> list[str]:
    data: Any = tools.call("skill_list").data
    return [row["name"] for row in data["skills"]]


def test_every_refresh_gives_a_new_version(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    first = repo.version
    repo.refresh()
    assert repo.version != first


def test_memo_is_computed_once_per_scan(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    calls: list[int] = []

    def names(skills: Any) -> tuple[str, ...]:
        calls.append(len(skills))
        return tuple(s.name for s in skills)

    assert repo.memo("names", names) == ("alpha", "beta", "gamma")
    assert repo.memo("names", names) == ("alpha", "beta", "gamma")
    make_skill(root, "delta")
    repo.refresh()
    assert repo.memo("names", names) == ("alpha", "beta", "delta", "gamma")
    assert calls == [3, 4]


def test_a_skill_added_by_refresh_is_offered_and_loads(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    tools = SkillTools(repo)
    assert _enum(tools) == ["alpha", "beta", "gamma"]
    assert tools.call("skill_load", {"skill": "delta"}).status == "recoverable"
    make_skill(root, "delta", "Delta handles delta reports. Use for delta.")
    assert repo.refresh().added == ("delta",)
    assert _enum(tools) == ["alpha", "beta", "delta", "gamma"]
    assert "delta" in _listed(tools)
    loaded = tools.call("skill_load", {"skill": "delta"})
    assert loaded.status == "ok", loaded.content
    assert "Delta" in tools.call("skill_search", {"query": "delta reports"}).content


def test_a_skill_removed_by_refresh_is_refused_and_unlisted(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    tools = SkillTools(repo)
    assert tools.call("skill_load", {"skill": "beta"}).status == "ok"
    shutil.rmtree(root / "beta")
    assert repo.refresh().removed == ("beta",)
    assert "beta" not in _enum(tools)
    assert "beta" not in _listed(tools)
    for tool, args in (
        ("skill_load", {"skill": "beta"}),
        ("skill_read_file", {"skill": "beta", "path": "SKILL.md"}),
        ("skill_list_docs", {"skill": "beta"}),
        ("skill_unload", {"skill": "beta"}),
    ):
        result = tools.call(tool, args)
        assert result.status == "recoverable", (tool, result.content)
        assert "beta" in result.content
    assert "Beta" not in tools.call("skill_search", {"query": "beta reports"}).content


def test_a_skill_reserved_for_the_user_by_an_edit_leaves_the_enum(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    tools = SkillTools(repo)
    assert "gamma" in _enum(tools)
    make_skill(root, "gamma", "Now the user's.", frontmatter={"disable-model-invocation": True})
    assert repo.refresh().changed == ("gamma",)
    assert _enum(tools) == ["alpha", "beta"]
    refused = tools.call("skill_load", {"skill": "gamma"})
    assert refused.status == "recoverable"
    assert 'Unknown skill "gamma"' in refused.content
    assert tools.call("skill_list").data == {
        "skills": [*_rows(repo, "alpha", "beta"), *_rows(repo, "gamma")],
        "commands": ["/alpha", "/beta", "/gamma"],
        "total": 3,
        "start": 0,
        "truncated": False,
        "next_cursor": None,
    }


def _rows(repo: Repository, *names: str) -> list[dict[str, Any]]:
    return [
        {
            "name": n,
            "version": None,
            "tags": [],
            "description": repo.get(n).description,
            "model_invocable": repo.get(n).model_invocable,
        }
        for n in names
    ]


def test_visibility_is_kept_per_predicate(root: Path) -> None:
    repo = Repository([root], cache_dir=False)

    def no_beta(skill: Skill) -> bool:
        return skill.name != "beta"

    hidden = SkillTools(repo, visible=no_beta)
    everyone = SkillTools(repo)
    assert _enum(hidden) == ["alpha", "gamma"]
    assert _enum(everyone) == ["alpha", "beta", "gamma"]
    assert hidden.call("skill_load", {"skill": "beta"}).status == "recoverable"
    assert everyone.call("skill_load", {"skill": "beta"}).status == "ok"
    # A second SkillTools with the same predicate reuses the first's names: same answers.
    assert _enum(SkillTools(repo, visible=no_beta)) == ["alpha", "gamma"]


def test_search_fills_its_limit_past_many_hidden_matches(tmp_path: Path) -> None:
    for i in range(40):
        make_skill(tmp_path, f"report-{i:02d}", f"Report {i} formats csv reports.")
    repo = Repository([tmp_path], cache_dir=False)
    shown = {"report-37", "report-38", "report-39"}
    tools = SkillTools(repo, visible=lambda s: s.name in shown)
    data: Any = tools.call("skill_search", {"query": "csv reports", "limit": 3}).data
    assert sorted(r["name"] for r in data["results"]) == sorted(shown)


def test_a_skill_the_watcher_adds_is_offered_and_loads(root: Path) -> None:
    pytest.importorskip("watchfiles")
    from skillshelf.repository.watch import Watcher

    repo = Repository([root], cache_dir=False)
    tools = SkillTools(repo)
    assert "delta" not in _enum(tools)
    seen: queue.Queue[Changes] = queue.Queue()
    with Watcher(repo, on_change=seen.put):
        make_skill(root, "delta", "Delta handles delta reports. Use for delta.")
        deadline = time.monotonic() + EVENT_WAIT_S
        while "delta" not in repo and time.monotonic() < deadline:
            seen.get(timeout=max(0.01, deadline - time.monotonic()))
    assert "delta" in _enum(tools)
    assert tools.call("skill_load", {"skill": "delta"}).status == "ok"


# -- skill folders' walks (skills.walk_cache): kept while unchanged, renewed by a refresh ----


_age = age_tree  # an hour back: walks of the tree are then kept between calls


@pytest.fixture
def aged(tmp_path: Path) -> Path:
    skills = tmp_path / "aged"
    make_skill(
        skills,
        "alpha",
        "Alpha handles alpha reports. Use for alpha.",
        body="# Alpha\n\nRead [the guide](references/guide.md).\n",
        files={"references/guide.md": "guide"},
    )
    _age(skills)
    return skills


def _resources(tools: SkillTools, session: str) -> str:
    fresh = SkillTools(tools.repo, store=tools.store, session_id=session)
    result = fresh.call("skill_load", {"skill": "alpha"})
    assert result.status == "ok", result.content
    return result.content.split("<skill_resources>")[1]


def test_a_document_edited_shows_its_new_size_in_the_next_load(aged: Path) -> None:
    tools = SkillTools(Repository([aged], cache_dir=False))
    assert "guide.md (5 B)" in _resources(tools, "one")
    assert "guide.md (5 B)" in _resources(tools, "two")
    (aged / "alpha" / "references" / "guide.md").write_text("x" * 1500)
    assert "guide.md (1.5 KB)" in _resources(tools, "three")


def test_a_file_added_is_in_the_next_load_and_doc_list(aged: Path) -> None:
    tools = SkillTools(Repository([aged], cache_dir=False))
    assert "extra.md" not in _resources(tools, "one")
    assert tools.call("skill_list_docs", {"skill": "alpha"}).data == {
        "skill": "alpha",
        "docs": ["references/guide.md"],
    }
    (aged / "alpha" / "references" / "extra.md").write_text("more")
    assert "extra.md (4 B)" in _resources(tools, "two")
    docs: Any = tools.call("skill_list_docs", {"skill": "alpha"}).data
    assert docs["docs"] == ["references/extra.md", "references/guide.md"]


def test_a_linked_file_removed_is_reported_missing_by_the_next_load(aged: Path) -> None:
    tools = SkillTools(Repository([aged], cache_dir=False))
    assert "not in the skill" not in _resources(tools, "one")
    (aged / "alpha" / "references" / "guide.md").unlink()
    fresh = SkillTools(tools.repo, store=tools.store, session_id="two")
    content = fresh.call("skill_load", {"skill": "alpha"}).content
    assert "links to files that are not in the skill: references/guide.md" in content


def test_an_edited_skill_md_is_read_afresh_while_the_tree_is_kept(aged: Path) -> None:
    repo = Repository([aged], cache_dir=False)
    tools = SkillTools(repo)
    assert "Read [the guide]" in tools.call("skill_load", {"skill": "alpha"}).content
    make_skill(aged, "alpha", "Alpha handles alpha reports.", body="# Alpha v2\n\nNew steps.\n")
    # No refresh: the body comes from disk at every load, and the tree shows its new size.
    again = SkillTools(repo, session_id="other").call("skill_load", {"skill": "alpha"})
    assert "New steps." in again.content
    size = (aged / "alpha" / "SKILL.md").stat().st_size
    assert f"SKILL.md ({size} B)" in again.content


@pytest.mark.usefixtures("settled_stamps")
def test_a_refresh_walks_the_skill_folders_again(
    aged: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.skills import walk_cache
    from skillshelf.skills.walk import SkillWalk, walk_skill

    walked: list[str] = []

    def counting(directory: str, *, stats: dict[str, os.stat_result] | None = None) -> SkillWalk:
        walked.append(directory)
        return walk_skill(directory, stats=stats)

    monkeypatch.setattr(walk_cache, "walk_skill", counting)
    repo = Repository([aged], cache_dir=False)
    tools = SkillTools(repo)
    _resources(tools, "one")
    _resources(tools, "two")
    assert len(walked) == 1
    repo.refresh()
    _resources(tools, "three")
    assert len(walked) == 2


def test_a_file_the_watcher_sees_added_is_in_the_next_load(aged: Path) -> None:
    pytest.importorskip("watchfiles")
    from skillshelf.repository.watch import Watcher

    repo = Repository([aged], cache_dir=False)
    tools = SkillTools(repo)
    assert "extra.md" not in _resources(tools, "one")
    version = repo.version
    seen: queue.Queue[Changes] = queue.Queue()
    with Watcher(repo, on_change=seen.put):
        (aged / "alpha" / "references" / "extra.md").write_text("more")
        seen.get(timeout=EVENT_WAIT_S)  # the watcher's refresh
    assert repo.version != version
    assert "extra.md (4 B)" in _resources(tools, "two")


def test_skill_list_is_kept_per_scan_and_renewed_by_a_refresh(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    tools = SkillTools(repo)
    first: Any = tools.call("skill_list").data
    second: Any = tools.call("skill_list").data
    assert second["skills"] is first["skills"]  # no copy of every row per call
    make_skill(root, "delta", "Delta handles delta reports. Use for delta.")
    repo.refresh()
    assert "delta" in _listed(tools)
    assert first["skills"] == _rows(repo, "alpha", "beta", "gamma")

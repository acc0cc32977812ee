"""Gathering what a skill_load shows from disk into a snapshot the core renders."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.core.render import DocSnapshot, render_skill_load
from skillshelf.repository import Repository
from skillshelf.skills.content import MAX_DOC_CHARS_TOTAL, gather_load, render_load
from skillshelf.skills.skill import Skill
from skillshelf.testing import make_skill

HALF = MAX_DOC_CHARS_TOTAL // 2


@pytest.fixture
def skill(tmp_path: Path) -> Skill:
    root = tmp_path / "skills"
    make_skill(
        root,
        "reports",
        "Writes reports. Use when reporting.",
        body="See [a](references/a.md), [gone](gone.md) and [gone again](gone.md#top).\n",
        files={
            "references/a.md": "a" * HALF,
            "references/b.md": "b" * HALF,
            "references/c.md": "c",
        },
    )
    return Repository([root], cache_dir=False).get("reports")


def test_gathering_reads_the_tree_body_and_directory(skill: Skill) -> None:
    snapshot = gather_load(skill, "Body.", [])
    assert (snapshot.name, snapshot.body) == ("reports", "Body.")
    assert snapshot.directory == skill.directory
    assert [e.path for e in snapshot.tree.entries] == [
        "SKILL.md",
        "references",
        "references/a.md",
        "references/b.md",
        "references/c.md",
    ]
    assert snapshot.docs == ()


def test_gathering_lists_missing_link_targets_once_in_body_order(skill: Skill) -> None:
    assert gather_load(skill, skill.body(), []).missing_links == ("gone.md",)


def test_docs_past_the_load_budget_are_left_out_unread(skill: Skill) -> None:
    docs = ["references/a.md", "references/b.md", "references/c.md"]
    snapshot = gather_load(skill, "", docs, max_doc_chars=HALF)
    assert [d.path for d in snapshot.docs] == docs
    assert [d.content is not None for d in snapshot.docs] == [True, True, False]
    assert snapshot.docs[2] == DocSnapshot("references/c.md")


def test_a_doc_is_cut_at_the_per_doc_cap_and_says_so(skill: Skill) -> None:
    (doc,) = gather_load(skill, "", ["references/a.md"], max_doc_chars=10).docs
    assert doc.content is not None
    assert (doc.content.text, doc.content.truncated) == ("a" * 10, True)


def test_an_unreadable_doc_carries_the_reason(skill: Skill) -> None:
    (doc,) = gather_load(skill, "", ["references/nope.md"]).docs
    assert doc.content is None
    assert doc.problem is not None and "references/nope.md" in doc.problem


def test_render_load_is_gathering_then_the_core_renderer(skill: Skill) -> None:
    docs = ["references/c.md"]
    expected = render_skill_load(gather_load(skill, skill.body(), docs))
    assert render_load(skill, skill.body(), docs) == expected


def test_missing_links_are_the_same_with_and_without_the_walk(tmp_path: Path) -> None:
    from skillshelf.skills.content import missing_links
    from skillshelf.skills.walk import walk_skill

    root = tmp_path / "skills"
    make_skill(root, "linked", files={"docs/a.md": "a", "real/b.md": "b"})
    folder = root / "linked"
    (folder / "via").symlink_to("real")  # a linked folder: the walk does not enter it
    (folder / "out").symlink_to(tmp_path)  # leads outside
    (folder / "gone.md").symlink_to("nowhere.md")  # leads nowhere
    body = (
        "[a](docs/a.md) [a again](./docs/a.md#top) [dir](docs/) [b](via/b.md) [link](via) "
        "[out](out/x.md) [gone](gone.md) [up](../linked/docs/a.md) [none](docs/none.md) "
        "[win](docs\\\\a.md)"
    )
    skill = Repository([root], cache_dir=False).get("linked")

    expected = missing_links(skill, body)
    assert expected == ["out/x.md", "gone.md", "../linked/docs/a.md", "docs/none.md"]
    assert missing_links(skill, body, walk=walk_skill(skill.directory)) == expected


@pytest.mark.usefixtures("settled_stamps")
def test_a_load_from_the_walk_cache_is_the_load_from_a_fresh_walk(skill: Skill) -> None:
    from skillshelf.skills.paths import file_tree
    from skillshelf.skills.walk_cache import WalkCache
    from skillshelf.testing import age_tree

    age_tree(skill.path)  # old enough to be kept
    walks = WalkCache()
    body, docs = skill.body(), ["references/c.md"]
    fresh = gather_load(skill, body, docs)
    assert walks.get(skill.directory).kept
    assert gather_load(skill, body, docs, walks=walks) == fresh
    assert gather_load(skill, body, docs, walks=walks) == fresh  # the kept view, again
    tree = file_tree(skill.path, max_entries=1)
    with_tree = gather_load(skill, body, docs, walks=walks, tree=tree)
    assert with_tree == gather_load(skill, body, docs, tree=tree)
    assert with_tree.tree is tree

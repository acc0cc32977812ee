"""SkillTools on every session store (memory, SQLite, a real Redis): state survives a new
tools instance, stays apart per session and agent, and obeys modes, LRU and retry counts."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from skillshelf.repository import Repository
from skillshelf.stores import SessionStore
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools

StoreFactory = Callable[[], SessionStore]

NAMES = ("alpha", "beta", "gamma")
STUB = "already loaded and unchanged"


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Repository:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    for name in NAMES:
        make_skill(
            tmp_path / "skills",
            name,
            f"{name.title()} does the {name} thing. Use when {name} is needed.",
            files={"references/a.md": "# A\n", "references/b.md": "# B\n"},
        )
    return Repository([tmp_path / "skills"], cache_dir=False)


def _load(tools: SkillTools, name: str, *, call_id: str | None = None, **args: object) -> str:
    result = tools.call("skill_load", {"skill": name, **args}, call_id=call_id)
    assert result.status == "ok", result.content
    return result.content


def _names(tools: SkillTools) -> set[str]:
    return set(tools.state().loaded)


def test_each_store_persists_loads_for_a_new_tools_instance(
    repo: Repository, make_store: StoreFactory
) -> None:
    first = SkillTools(repo, store=make_store(), session_id="s1", load_mode="session")
    _load(first, "alpha", call_id="c1", docs=["references/a.md"])
    second = SkillTools(repo, store=make_store(), session_id="s1", load_mode="session")
    loaded = second.state().loaded["alpha"]
    assert (loaded.mode, loaded.docs, loaded.call_id) == ("session", ["references/a.md"], "c1")
    assert STUB in _load(second, "alpha")


def test_each_store_keeps_agents_and_sessions_apart(
    repo: Repository, make_store: StoreFactory
) -> None:
    store = make_store()
    _load(SkillTools(repo, store=store, session_id="s1", agent="sub"), "alpha")
    other = make_store()
    assert _names(SkillTools(repo, store=other, session_id="s1", agent="main")) == set()
    assert _names(SkillTools(repo, store=other, session_id="s2", agent="sub")) == set()
    assert _names(SkillTools(repo, store=other, session_id="s1", agent="sub")) == {"alpha"}


def test_each_store_applies_modes_lru_and_unload(
    repo: Repository, make_store: StoreFactory
) -> None:
    tools = SkillTools(repo, store=make_store(), session_id="s1", max_loaded=2)
    _load(tools, "alpha")
    _load(tools, "beta")
    tools.call("skill_select_docs", {"skill": "alpha", "docs": ["references/b.md"]})
    _load(tools, "gamma")
    fresh = SkillTools(repo, store=make_store(), session_id="s1", max_loaded=2)
    assert _names(fresh) == {"alpha", "gamma"}
    fresh.call("skill_unload", {"skill": "gamma"})
    assert _names(tools) == {"alpha"}
    tools.begin_turn()
    assert _names(fresh) == set()


def test_each_store_counts_failures_across_instances(
    repo: Repository, make_store: StoreFactory
) -> None:
    args = {"skill": "alpha", "path": "nope.md"}
    for _ in range(2):
        SkillTools(repo, store=make_store(), session_id="s1").call("skill_read_file", args)
    third = SkillTools(repo, store=make_store(), session_id="s1").call("skill_read_file", args)
    assert third.status == "fatal"

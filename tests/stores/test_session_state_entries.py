"""Session state as entries, on every store: a call reads and writes the index and the entries
it concerns, never the whole state; concurrent calls keep index and entries in step; and a
session written by skillshelf 0.1 (one document) carries on where it was."""

from __future__ import annotations

import threading
from collections.abc import Callable, Collection, Mapping
from pathlib import Path

import pytest

from skillshelf.core.session import FAILURES_ENTRY, INDEX_ENTRY, SessionState, skill_entry
from skillshelf.repository import Repository
from skillshelf.stores import Doc, Entries, EntriesUpdater, SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.testing import make_skill
from skillshelf.tools import FATAL_STORE_MESSAGE, SkillTools

StoreFactory = Callable[[], SessionStore]

NAMES = tuple(f"skill-{i:02d}" for i in range(12))
STUB = "already loaded and unchanged"


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    for name in NAMES:
        make_skill(tmp_path / "skills", name, f"Does {name}. Use when {name} is asked for.")
    return Repository([tmp_path / "skills"], cache_dir=False)


class _Recording(MemoryStore):
    """A memory store that records which entries each call read and wrote."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[set[str] | None] = []
        self.written: list[set[str]] = []

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        self.read.append(None if names is None else set(names))
        return super().get_entries(session, agent, names)

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        self.read.append(set(names))
        changes = super().update_entries(session, agent, names, fn)
        self.written.append(set(changes))
        return changes


def _ok(tools: SkillTools, tool: str, **args: object) -> str:
    result = tools.call(tool, args)
    assert result.status == "ok", result.content
    return result.content


def test_a_load_reads_and_writes_the_index_and_its_own_entry_only(repo: Repository) -> None:
    store = _Recording()
    tools = SkillTools(repo, store=store, session_id="s", max_loaded=20)
    for name in NAMES[:10]:
        _ok(tools, "skill_load", skill=name)
    store.read.clear()
    store.written.clear()
    _ok(tools, "skill_load", skill=NAMES[10])
    mine = {INDEX_ENTRY, skill_entry(NAMES[10])}
    assert all(names is not None and names <= mine for names in store.read)
    assert store.written == [mine]
    # The stub for a skill already loaded, doc selection and unload: the same.
    for tool, args in (
        ("skill_load", {"skill": NAMES[3]}),
        ("skill_select_docs", {"skill": NAMES[3], "mode": "clear"}),
        ("skill_unload", {"skill": NAMES[3]}),
    ):
        store.read.clear()
        store.written.clear()
        _ok(tools, tool, **args)
        mine = {INDEX_ENTRY, skill_entry(NAMES[3])}
        assert all(names is not None and names <= mine for names in store.read), tool
        assert all(written <= mine for written in store.written), tool


def test_evicted_and_ended_skills_leave_no_entry_behind(repo: Repository) -> None:
    store = MemoryStore()
    tools = SkillTools(repo, store=store, session_id="s", max_loaded=3)
    for name in NAMES:
        _ok(tools, "skill_load", skill=name)
    entries = store.get_entries("s", "main")
    assert set(entries) == {INDEX_ENTRY, *(skill_entry(n) for n in NAMES[-3:])}
    tools.begin_turn()  # "turn" loads end with the user's next message
    assert set(store.get_entries("s", "main")) == {INDEX_ENTRY}
    assert tools.state().loaded == {} and tools.state().turn == 1


def test_concurrent_loads_in_one_session_keep_index_and_entries_in_step(
    repo: Repository, make_store: StoreFactory
) -> None:
    errors: list[BaseException] = []

    def work(names: tuple[str, ...]) -> None:
        tools = SkillTools(repo, store=make_store(), session_id="s", max_loaded=3)
        try:
            for name in names:
                _ok(tools, "skill_load", skill=name)
        except BaseException as exc:  # recorded for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(NAMES[i::4],)) for i in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    entries = make_store().get_entries("s", "main")
    state = SessionState.from_entries(entries)
    assert len(state.loaded) == 3
    assert {n for n in entries if n != INDEX_ENTRY} == {skill_entry(n) for n in state.loaded}
    assert state.clock == len(NAMES)  # no load was lost


def _legacy(repo: Repository, signature: str) -> dict[str, object]:
    """A session document as skillshelf 0.1 wrote it: alpha loaded, one failure counted."""
    skill = repo.get(NAMES[0])
    loaded = {
        "mode": "session",
        "docs": [],
        "touched": 4,
        "turn": 2,
        "request": 1,
        "digest": f"{skill.mtime_ns}:{skill.size}",
        "call_id": None,
    }
    return {
        "v": 1,
        "loaded": {NAMES[0]: loaded},
        "clock": 4,
        "turn": 2,
        "requests": 1,
        "failures": {signature: 2},
    }


def test_a_session_from_skillshelf_0_1_carries_on_and_its_document_is_retired(
    repo: Repository, make_store: StoreFactory
) -> None:
    store = make_store()
    store.update("s", "main", lambda _d: _legacy(repo, "sig"))
    tools = SkillTools(repo, store=store, session_id="s", load_mode="session")
    assert STUB in _ok(tools, "skill_load", skill=NAMES[0])
    assert store.get("s", "main") is None
    state = tools.state()
    assert set(state.loaded) == {NAMES[0]} and state.turn == 2 and state.requests == 1
    assert state.clock == 5  # the stub was a touch, after the migrated clock
    assert tools.record_failure("sig") == 3
    assert store.get_entries("s", "main", [FAILURES_ENTRY])[FAILURES_ENTRY] == {"sig": 3}


def test_a_0_1_document_is_migrated_by_a_call_that_only_writes(
    repo: Repository, make_store: StoreFactory
) -> None:
    store = make_store()
    store.update("s", "main", lambda _d: _legacy(repo, "sig"))
    tools = SkillTools(repo, store=store, session_id="s")
    tools.after_request()
    assert store.get("s", "main") is None
    state = tools.state()
    assert set(state.loaded) == {NAMES[0]} and state.requests == 2
    assert state.failures == {"sig": 2}


def test_a_corrupt_0_1_document_is_a_fatal_store_failure_not_a_crash(
    repo: Repository, make_store: StoreFactory
) -> None:
    store = make_store()
    store.update("s", "main", lambda _d: {"v": 1, "loaded": [1, 2]})
    tools = SkillTools(repo, store=store, session_id="s")
    result = tools.call("skill_load", {"skill": NAMES[0]})
    assert result.status == "fatal"
    assert result.content == FATAL_STORE_MESSAGE.format(kind=tools._record.store_kind())
    store.update("s", "main", lambda _d: None)
    assert tools.call("skill_load", {"skill": NAMES[0]}).status == "ok"


class _LoadAfterWholeRead(MemoryStore):
    """A memory store that runs ``between`` once, right after the first read of a whole record:
    another worker's call landing between ``unload_all``'s read and its write."""

    def __init__(self) -> None:
        super().__init__()
        self.between: Callable[[], object] | None = None

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        entries = super().get_entries(session, agent, names)
        if names is None and self.between is not None:
            between, self.between = self.between, None
            between()
        return entries


def test_unload_all_racing_a_load_leaves_no_orphaned_entry(repo: Repository) -> None:
    store = _LoadAfterWholeRead()
    tools = SkillTools(repo, store=store, session_id="s")
    other = SkillTools(repo, store=store, session_id="s")
    _ok(tools, "skill_load", skill=NAMES[0])
    store.between = lambda: _ok(other, "skill_load", skill=NAMES[1])
    tools.unload_all()
    entries = store.get_entries("s", "main")
    state = SessionState.from_entries(entries)
    # Either order of the two calls is fine; an entry no index slot holds is not.
    assert set(entries) - {INDEX_ENTRY, FAILURES_ENTRY} == {
        skill_entry(name) for name in state.loaded
    }

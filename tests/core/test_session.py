"""Session state: load modes, the LRU cap, the "already loaded" stub, isolation, and stores.

The pure transitions of :class:`SessionState` are tested on values; the rest goes through
:class:`SkillTools` on real skill folders, against the memory, SQLite and Redis stores (a real
``redis-server`` on 127.0.0.1, started here; missing it fails under CI and skips elsewhere).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Collection, Mapping
from pathlib import Path
from typing import get_args

import pytest

from skillshelf.core.session import LoadedSkill, LoadMode, SessionState
from skillshelf.errors import UsageError
from skillshelf.repository import Repository
from skillshelf.stores import Doc, EntriesUpdater, SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.sqlite import SQLiteStore
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools, ToolResult

NAMES = ["alpha", "beta", "gamma", "delta"]
STUB = "is already loaded and unchanged"
# Bounded waits: worker threads and processes finish in well under a second; the margin is
# for a slow, busy CI machine (spawning an interpreter that imports pytest included).
_JOIN_TIMEOUT_S = 60.0
_REDIS_START_TIMEOUT_S = 15.0
_POLL_S = 0.02
_REDIS_STOP_TIMEOUT_S = 10.0


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)


def _make_root(root: Path) -> Path:
    for name in NAMES:
        make_skill(
            root,
            name,
            f"{name.title()} does the {name} thing. Use when {name} is needed.",
            files={"references/a.md": "# A\n", "references/b.md": "# B\n"},
        )
    return root


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return _make_root(tmp_path / "skills")


@pytest.fixture
def repo(root: Path) -> Repository:
    return Repository([root], cache_dir=False)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def _tools(
    repo: Repository, store: SessionStore, *, load_mode: LoadMode = "turn", max_loaded: int = 20
) -> SkillTools:
    return SkillTools(
        repo, store=store, session_id="s1", load_mode=load_mode, max_loaded=max_loaded
    )


def _load(tools: SkillTools, name: str, *, call_id: str | None = None, **args: object) -> str:
    result = tools.call("skill_load", {"skill": name, **args}, call_id=call_id)
    assert result.status == "ok", result.content
    return result.content


def _names(tools: SkillTools) -> set[str]:
    return set(tools.state().loaded)


# -- pure transitions -----------------------------------------------------------------------


def _loaded_state(*names: str, mode: LoadMode = "turn", max_loaded: int = 20) -> SessionState:
    state = SessionState()
    for name in names:
        state, _ = state.load(
            name, mode=mode, docs=[], digest="1:1", call_id=None, max_loaded=max_loaded
        )
    return state


def test_empty_document_is_the_empty_state() -> None:
    assert SessionState.from_doc(None) == SessionState()
    assert SessionState.from_doc({}) == SessionState()


def test_state_round_trips_through_its_store_entries() -> None:
    state, _ = _loaded_state("a").load(
        "b", mode="session", docs="*", digest="9:9", call_id="c7", max_loaded=5
    )
    state = state.record_failure("sig")[0].begin_turn().after_request()
    assert SessionState.from_entries(state.to_entries()) == state


def test_an_unknown_stored_mode_reads_as_turn() -> None:
    assert LoadedSkill.from_doc("a", {"mode": "forever"}).mode == "turn"


def test_each_load_and_doc_selection_advances_the_touch_clock() -> None:
    state = _loaded_state("a", "b")
    assert [state.loaded["a"].touched, state.loaded["b"].touched] == [1, 2]
    state = state.select_docs("a", ["x.md"])
    assert state.loaded["a"].touched == 3
    assert state.loaded["a"].docs == ["x.md"]


@pytest.mark.parametrize(
    ("mode", "after_request", "begin_turn"),
    [("once", False, False), ("turn", True, False), ("session", True, True)],
)
def test_load_modes_decide_what_survives(
    mode: LoadMode, after_request: bool, begin_turn: bool
) -> None:
    state = _loaded_state("a", mode=mode)
    assert ("a" in state.after_request().loaded) is after_request
    assert ("a" in state.begin_turn().loaded) is begin_turn


def test_a_once_load_lasts_exactly_one_request() -> None:
    state = SessionState().after_request()  # request 1 was sent; the model asked for a load
    state, _ = state.load("a", mode="once", docs=[], digest="", call_id=None)
    assert "a" in state.loaded  # request 2 is built with it
    assert "a" not in state.after_request().loaded


def test_loading_past_the_cap_evicts_the_least_recently_touched() -> None:
    state = _loaded_state("a", "b", max_loaded=2)
    state, evicted = state.load("c", mode="turn", docs=[], digest="", call_id=None, max_loaded=2)
    assert evicted == ["a"]
    assert set(state.loaded) == {"b", "c"}


def test_selecting_docs_is_a_touch_that_changes_the_eviction() -> None:
    state = _loaded_state("a", "b", max_loaded=2).select_docs("a", [])
    state, evicted = state.load("c", mode="turn", docs=[], digest="", call_id=None, max_loaded=2)
    assert evicted == ["b"]


def test_reloading_a_loaded_skill_evicts_nothing() -> None:
    state = _loaded_state("a", "b", max_loaded=2)
    state, evicted = state.load("a", mode="turn", docs=[], digest="", call_id=None, max_loaded=2)
    assert evicted == []
    assert state.loaded["a"].touched > state.loaded["b"].touched


def test_a_cap_below_one_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        SessionState().load("a", mode="turn", docs=[], digest="", call_id=None, max_loaded=0)


def test_failures_are_counted_per_signature() -> None:
    state, first = SessionState().record_failure("x")
    state, second = state.record_failure("x")
    state, other = state.record_failure("y")
    assert (first, second, other) == (1, 2, 1)


def test_unloading_an_absent_skill_is_harmless() -> None:
    assert SessionState().unload("nope") == SessionState()


# -- load modes through the tools -----------------------------------------------------------


def test_once_load_is_gone_after_the_next_request(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store, load_mode="once")
    _load(tools, "alpha")
    assert tools.state().loaded["alpha"].mode == "once"
    tools.after_request()
    assert _names(tools) == set()


def test_turn_load_survives_requests_until_the_next_user_message(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)  # turn is the default
    _load(tools, "alpha")
    tools.after_request()
    tools.after_request()
    assert _names(tools) == {"alpha"}
    tools.begin_turn()
    assert _names(tools) == set()


def test_session_load_survives_turns_and_requests_until_unloaded(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store, load_mode="session")
    _load(tools, "alpha")
    for _ in range(3):
        tools.after_request()
        tools.begin_turn()
    assert _names(tools) == {"alpha"}
    tools.call("skill_unload", {"skill": "alpha"})
    assert _names(tools) == set()


def test_begin_turn_keeps_session_loads_and_drops_the_others(
    repo: Repository, store: MemoryStore
) -> None:
    for mode, name in zip(get_args(LoadMode), ["alpha", "beta", "gamma"], strict=True):
        _load(_tools(repo, store, load_mode=mode), name)
    tools = _tools(repo, store)
    assert _names(tools) == {"alpha", "beta", "gamma"}
    tools.begin_turn()
    assert _names(tools) == {"gamma"}


def test_unload_all_forgets_every_load(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store, load_mode="session")
    _load(tools, "alpha")
    _load(tools, "beta")
    tools.unload_all()
    assert tools.state() == SessionState()


# -- the LRU cap through the tools ----------------------------------------------------------


def test_loading_past_max_loaded_evicts_and_names_the_evicted(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store, max_loaded=2)
    _load(tools, "alpha")
    _load(tools, "beta")
    result = tools.call("skill_load", {"skill": "gamma"})
    assert result.content.endswith("(Unloaded to stay within the limit: alpha.)")
    assert result.data is not None
    assert result.data["evicted"] == ["alpha"]
    assert _names(tools) == {"beta", "gamma"}


def test_select_docs_counts_as_a_touch_for_eviction(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store, max_loaded=2)
    _load(tools, "alpha")
    _load(tools, "beta")
    tools.call("skill_select_docs", {"skill": "alpha", "docs": ["references/a.md"]})
    result = tools.call("skill_load", {"skill": "gamma"})
    assert result.data is not None
    assert result.data["evicted"] == ["beta"]
    assert _names(tools) == {"alpha", "gamma"}


def test_the_already_loaded_stub_counts_as_a_touch(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store, max_loaded=2)
    _load(tools, "alpha")
    _load(tools, "beta")
    assert STUB in _load(tools, "alpha")
    _load(tools, "gamma")
    assert _names(tools) == {"alpha", "gamma"}


def test_max_loaded_below_one_is_a_usage_error(repo: Repository) -> None:
    with pytest.raises(UsageError):
        SkillTools(repo, max_loaded=0)


# -- the "already loaded" stub --------------------------------------------------------------


def test_second_load_of_unchanged_skill_returns_stub(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store)
    first = _load(tools, "alpha", call_id="c1")
    second = tools.call("skill_load", {"skill": "alpha"}, call_id="c2")
    assert first.startswith('<skill_content name="alpha">')
    assert STUB in second.content
    assert "<skill_content" not in second.content
    assert second.data == {"skill": "alpha", "already_loaded": True}
    assert tools.state().loaded["alpha"].call_id == "c1"  # the result that holds the content


def test_load_of_a_changed_skill_md_returns_the_full_content_again(
    repo: Repository, store: MemoryStore, root: Path
) -> None:
    tools = _tools(repo, store)
    _load(tools, "alpha", call_id="c1")
    skill_md = root / "alpha" / "SKILL.md"
    skill_md.write_text(skill_md.read_text() + "\nA new step.\n")
    repo.refresh()
    again = _load(tools, "alpha", call_id="c2")
    assert again.startswith('<skill_content name="alpha">')
    assert "A new step." in again
    assert tools.state().loaded["alpha"].call_id == "c2"


def test_load_whose_earlier_result_left_the_history_returns_the_full_content(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    _load(tools, "alpha", call_id="c1")
    kept = tools.call("skill_load", {"skill": "alpha"}, call_id="c2", history_call_ids={"c1"})
    assert STUB in kept.content
    gone = tools.call("skill_load", {"skill": "alpha"}, call_id="c3", history_call_ids={"c2"})
    assert gone.content.startswith('<skill_content name="alpha">')
    assert tools.state().loaded["alpha"].call_id == "c3"


def test_load_with_other_docs_returns_the_full_content(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    _load(tools, "alpha")
    with_docs = _load(tools, "alpha", docs=["references/a.md"])
    assert '<skill_doc path="references/a.md">' in with_docs
    assert STUB in _load(tools, "alpha", docs=["references/a.md"])
    assert STUB in _load(tools, "alpha")  # no docs asked for: the selection stays
    assert tools.state().loaded["alpha"].docs == ["references/a.md"]


def test_a_load_after_unload_returns_the_full_content(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store)
    _load(tools, "alpha")
    tools.call("skill_unload", {"skill": "alpha"})
    assert _load(tools, "alpha").startswith("<skill_content")


class _UnloadsBeforeNextUpdate(MemoryStore):
    """Unloads ``alpha`` right before the next update, as a concurrent call could."""

    armed = False

    def __init__(self, repo: Repository) -> None:
        super().__init__()
        self._repo = repo

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        if self.armed:
            self.armed = False
            SkillTools(self._repo, store=self, session_id=session, agent=agent).unload("alpha")
        return super().update_entries(session, agent, names, fn)


def test_a_skill_unloaded_between_the_check_and_the_touch_is_loaded_in_full(
    repo: Repository,
) -> None:
    store = _UnloadsBeforeNextUpdate(repo)
    tools = _tools(repo, store)
    _load(tools, "alpha")
    store.armed = True
    result = tools.call("skill_load", {"skill": "alpha"})
    assert result.status == "ok", result.content
    assert result.content.startswith('<skill_content name="alpha">')
    assert _names(tools) == {"alpha"}


# -- isolation ------------------------------------------------------------------------------


def test_a_sub_agents_loads_never_appear_in_the_parents_state(
    repo: Repository, store: MemoryStore
) -> None:
    main = SkillTools(repo, store=store, session_id="s1", agent="main")
    sub = SkillTools(repo, store=store, session_id="s1", agent="sub")
    _load(sub, "alpha")
    _load(main, "beta")
    assert _names(main) == {"beta"}
    assert _names(sub) == {"alpha"}
    # the sub-agent's own load of beta is full content, not the parent's stub
    assert _load(sub, "beta").startswith("<skill_content")
    sub.begin_turn()
    assert _names(main) == {"beta"}


def test_two_sessions_never_see_each_others_state(repo: Repository, store: MemoryStore) -> None:
    one = SkillTools(repo, store=store, session_id="one")
    two = SkillTools(repo, store=store, session_id="two")
    _load(one, "alpha")
    assert _names(two) == set()
    assert _load(two, "alpha").startswith("<skill_content")
    one.call("skill_unload", {"skill": "alpha"})
    assert _names(two) == {"alpha"}


# -- concurrency ----------------------------------------------------------------------------


def _well_formed(state: SessionState, names: set[str]) -> None:
    for name, loaded in state.loaded.items():
        assert name in names
        assert loaded.name == name
        assert loaded.mode in get_args(LoadMode)
        assert loaded.digest
        assert 0 < loaded.touched <= state.clock
        assert loaded.docs == "*" or all(isinstance(d, str) for d in loaded.docs)


def test_two_threads_loading_and_unloading_on_one_sqlite_session(
    repo: Repository, tmp_path: Path
) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    tools = SkillTools(repo, store=store, session_id="s1", load_mode="session")
    barrier = threading.Barrier(2, timeout=_JOIN_TIMEOUT_S)
    results: list[ToolResult] = []
    errors: list[BaseException] = []

    def work(names: list[str]) -> None:
        try:
            barrier.wait()
            for i in range(50):
                name = names[i % len(names)]
                tool = "skill_load" if i % 4 < 2 else "skill_unload"
                results.append(tools.call(tool, {"skill": name}))
        except BaseException as exc:  # reported below, in the test's thread
            errors.append(exc)

    threads = [
        threading.Thread(target=work, args=(["alpha", "beta"],)),
        threading.Thread(target=work, args=(["beta", "alpha"],)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=_JOIN_TIMEOUT_S)
    try:
        assert not any(t.is_alive() for t in threads)
        assert errors == []
        assert len(results) == 100
        assert [r.content for r in results if r.status != "ok"] == []
        state = SkillTools(repo, store=SQLiteStore(tmp_path / "sessions.db"), session_id="s1")
        _well_formed(state.state(), set(NAMES))
    finally:
        store.close()


def _load_in_process(db: str, root: str, name: str) -> None:
    """A worker process: its own repository and store handle on the shared SQLite file."""
    repo = Repository([root], cache_dir=False)
    store = SQLiteStore(db)
    try:
        tools = SkillTools(repo, store=store, session_id="s1", load_mode="session")
        for _ in range(10):
            for tool in ("skill_load", "skill_unload", "skill_load"):
                result = tools.call(tool, {"skill": name})
                if result.status != "ok":
                    raise RuntimeError(result.content)
    finally:
        store.close()


def test_two_processes_loading_different_skills_on_one_sqlite_session(
    repo: Repository, root: Path, tmp_path: Path
) -> None:
    db = str(tmp_path / "sessions.db")
    SQLiteStore(db).close()  # create the schema before the race
    context = multiprocessing.get_context("spawn")
    procs = [
        context.Process(target=_load_in_process, args=(db, str(root), name))
        for name in ("alpha", "beta")
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(timeout=_JOIN_TIMEOUT_S)
    for proc in procs:
        if proc.is_alive():
            proc.kill()
            proc.join(timeout=_JOIN_TIMEOUT_S)
    assert [p.exitcode for p in procs] == [0, 0]
    store = SQLiteStore(db)
    try:
        state = SkillTools(repo, store=store, session_id="s1").state()
        assert set(state.loaded) == {"alpha", "beta"}
        _well_formed(state, set(NAMES))
    finally:
        store.close()

"""Deeply nested JSON in any stored document is a corrupt document, never a RecursionError.

Planted straight into each store's backend (no API writes one), deep JSON under every kind of
entry — the skill state's index, a skill's entry, the failure counts, the activations, the
history, a skillshelf 0.1 document — makes the reading call the documented fatal "session
store failed" result (or a :class:`StoreError` where no tool call is running).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from skillshelf.agent.history import load_history
from skillshelf.harness import Harness, SkillSettings
from skillshelf.repository import Repository
from skillshelf.stores import MAX_DOC_DEPTH, SessionStore, StoreError
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore
from skillshelf.testing import make_skill
from skillshelf.tools import FATAL_STORE_MESSAGE, Activation, SkillTools, Tool

# Past the interpreter's recursion limit (json.loads itself fails), and past the store's bound
# but loadable by json (every later recursive reader would be at risk).
DEPTHS = [100_000, MAX_DOC_DEPTH + 1]
KINDS = {MemoryStore: "memory", SQLiteStore: "SQLite", RedisStore: "Redis"}


def _deep(depth: int) -> str:
    """A JSON object whose ``x`` nests ``depth`` levels in all (the object is one)."""
    return '{"x":' + "[" * (depth - 1) + "]" * (depth - 1) + "}"


def _plant(store: SessionStore, session: str, agent: str, name: str | None, raw: str) -> None:
    """Write ``raw`` as entry ``name`` (None: the whole document) behind the store's API."""
    if isinstance(store, MemoryStore):  # only its own dicts hold it: no API writes one
        key = (session, agent)
        if name is None:
            store._docs[key] = (raw, float("inf"))
        else:
            record = store._records.get(key, ({}, 0.0))[0]
            store._records[key] = ({**record, name: raw}, float("inf"))
        store._by_session.setdefault(session, set()).add(key)
    elif isinstance(store, SQLiteStore):
        with sqlite3.connect(store.path) as conn:
            if name is None:
                conn.execute(
                    "INSERT OR REPLACE INTO docs (session, agent, doc, updated_at) "
                    "VALUES (?, ?, ?, 0)",
                    (session, agent, raw),
                )
            else:
                conn.execute(
                    "INSERT OR REPLACE INTO entries (session, agent, name, doc) "
                    "VALUES (?, ?, ?, ?)",
                    (session, agent, name, raw),
                )
    else:
        assert isinstance(store, RedisStore)
        client = store._client
        if name is None:
            client.set(store._doc_key(session, agent), raw)
        else:
            client.hset(store._entries_key(session, agent), name, raw)


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(root, "alpha", "Alpha things. Use for alpha.")
    return Repository([root], cache_dir=False)


def _fatal(tools: SkillTools, tool: str, arguments: dict[str, str]) -> None:
    result = tools.call(tool, arguments)
    assert result.status == "fatal"
    assert result.content == FATAL_STORE_MESSAGE.format(kind=KINDS[type(tools.store)])


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize(
    ("entry", "tool", "arguments"),
    [
        ("index", "skill_load", {"skill": "alpha"}),
        ("skill:alpha", "skill_load", {"skill": "alpha"}),
        ("failures", "skill_load", {"skill": "no-such-skill"}),
    ],
)
def test_deep_json_in_a_skill_state_entry_is_the_fatal_store_result(
    repo: Repository,
    store: SessionStore,
    depth: int,
    entry: str,
    tool: str,
    arguments: dict[str, str],
) -> None:
    tools = SkillTools(repo, store=store, session_id="s")
    assert tools.call("skill_load", {"skill": "alpha"}).status == "ok"
    tools.call("skill_load", {"skill": "no-such-skill"})  # a failure count is stored
    _plant(store, "s", "main", entry, _deep(depth))
    _fatal(tools, tool, arguments)


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_json_in_a_skillshelf_0_1_state_document_is_the_fatal_store_result(
    repo: Repository, store: SessionStore, depth: int
) -> None:
    _plant(store, "s", "main", None, _deep(depth))
    _fatal(SkillTools(repo, store=store, session_id="s"), "skill_load", {"skill": "alpha"})


@pytest.mark.parametrize("depth", DEPTHS)
@pytest.mark.parametrize("legacy", [False, True], ids=["entry", "0.1-document"])
def test_deep_json_in_a_stored_history_is_a_store_error(
    store: SessionStore, depth: int, legacy: bool
) -> None:
    if legacy:
        _plant(store, "s", "main#history", None, _deep(depth))
    else:
        _plant(store, "s", "main", "history", _deep(depth))
    with pytest.raises(StoreError, match=f"deeper than {MAX_DOC_DEPTH} levels"):
        load_history(store, "s", "main")


@pytest.mark.parametrize("depth", DEPTHS)
def test_deep_json_in_the_activations_entry_is_a_store_error(
    repo: Repository, store: SessionStore, depth: int
) -> None:
    def extra() -> str:
        """An activated tool."""
        return "ok"

    activation = Activation([Tool.from_function(extra)], skill="alpha", lifetime="session")
    harness = Harness(repo, settings=SkillSettings(store=store, activations=[activation]))
    _plant(store, "s", "main", "activations", _deep(depth))
    with pytest.raises(StoreError, match="deeper than"):
        harness.session("s").offered_tools()


def test_a_document_nested_past_the_bound_is_refused_and_nothing_is_written(
    store: SessionStore,
) -> None:
    deep: dict[str, object] = {}
    inner = deep
    for _ in range(MAX_DOC_DEPTH):  # MAX_DOC_DEPTH + 1 levels in all
        inner["x"] = {}
        inner = inner["x"]  # type: ignore[assignment]
    with pytest.raises(TypeError, match=f"at most {MAX_DOC_DEPTH} levels"):
        store.update("s", "main", lambda _d: deep)
    with pytest.raises(TypeError, match=f"at most {MAX_DOC_DEPTH} levels"):
        store.update_entries("s", "main", ["e"], lambda _e: {"e": deep})
    assert store.get("s", "main") is None
    assert store.get_entries("s", "main") == {}


def test_a_document_at_the_bound_is_stored_and_read_back(store: SessionStore) -> None:
    raw = _deep(MAX_DOC_DEPTH)
    _plant(store, "s", "main", "e", raw)
    doc = store.get_entries("s", "main")["e"]
    store.update_entries("s", "main", ["e"], lambda _e: {"e": doc})
    assert store.get_entries("s", "main") == {"e": doc}

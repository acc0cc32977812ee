"""The behaviour every session store shares, run against memory, SQLite and a real Redis."""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any, cast

import pytest

from skillshelf.errors import UsageError
from skillshelf.stores import MAX_NAME_CHARS, Doc, SessionStore

StoreFactory = Callable[[], SessionStore]

_THREADS = 8
_INCREMENTS = 50
_JOIN_TIMEOUT_S = 60.0  # generous: only a deadlock or a lost wakeup would come near it


def _increment(doc: Doc | None) -> Doc:
    return {"n": (doc or {}).get("n", 0) + 1}


def _put(value: Doc | None) -> Any:
    return lambda _doc: value


def test_store_satisfies_the_protocol(store: SessionStore) -> None:
    assert isinstance(store, SessionStore)


def test_get_of_a_missing_document_is_none(store: SessionStore) -> None:
    assert store.get("s1", "main") is None


def test_fn_receives_none_for_a_missing_document(store: SessionStore) -> None:
    seen: list[Doc | None] = []

    def record(doc: Doc | None) -> Doc:
        seen.append(doc)
        return {"a": 1}

    store.update("s1", "main", record)
    assert seen == [None]


def test_update_creates_modifies_and_deletes(store: SessionStore) -> None:
    assert store.update("s1", "main", _put({"loaded": ["pdf"]})) == {"loaded": ["pdf"]}
    assert store.get("s1", "main") == {"loaded": ["pdf"]}
    store.update("s1", "main", lambda doc: {"loaded": [*(doc or {})["loaded"], "docx"]})
    assert store.get("s1", "main") == {"loaded": ["pdf", "docx"]}
    assert store.update("s1", "main", _put(None)) is None
    assert store.get("s1", "main") is None


def test_deleting_a_missing_document_is_harmless(store: SessionStore) -> None:
    assert store.update("s1", "main", _put(None)) is None
    assert store.get("s1", "main") is None
    assert store.sessions() == []


def test_documents_are_isolated_per_session_and_per_agent(store: SessionStore) -> None:
    store.update("s1", "main", _put({"who": "s1/main"}))
    store.update("s1", "helper", _put({"who": "s1/helper"}))
    store.update("s2", "main", _put({"who": "s2/main"}))
    assert store.get("s1", "main") == {"who": "s1/main"}
    assert store.get("s1", "helper") == {"who": "s1/helper"}
    assert store.get("s2", "main") == {"who": "s2/main"}
    assert store.get("s2", "helper") is None


def test_ids_containing_separators_never_collide(store: SessionStore) -> None:
    store.update("a:b", "c", _put({"key": 1}))
    store.update("a", "b:c", _put({"key": 2}))
    store.update("a:b:c", "main", _put({"key": 3}))
    assert store.get("a:b", "c") == {"key": 1}
    assert store.get("a", "b:c") == {"key": 2}
    store.delete_session("a")
    assert store.get("a:b", "c") == {"key": 1}
    assert store.sessions() == ["a:b", "a:b:c"]


def test_delete_session_removes_every_agent_of_that_session_only(store: SessionStore) -> None:
    for session in ("s1", "s2"):
        for agent in ("main", "helper", "reviewer"):
            store.update(session, agent, _put({"at": f"{session}/{agent}"}))
    store.delete_session("s1")
    for agent in ("main", "helper", "reviewer"):
        assert store.get("s1", agent) is None
        assert store.get("s2", agent) == {"at": f"s2/{agent}"}
    assert store.sessions() == ["s2"]


def test_delete_of_an_unknown_session_is_a_no_op(store: SessionStore) -> None:
    store.update("s1", "main", _put({"a": 1}))
    store.delete_session("nobody")
    assert store.get("s1", "main") == {"a": 1}


def test_sessions_lists_the_sessions_holding_documents_sorted(store: SessionStore) -> None:
    assert store.sessions() == []
    for session in ("zeta", "alpha", "mid"):
        store.update(session, "main", _put({"a": 1}))
    store.update("alpha", "helper", _put({"a": 1}))
    assert store.sessions() == ["alpha", "mid", "zeta"]
    store.update("mid", "main", _put(None))
    store.update("alpha", "main", _put(None))
    assert store.sessions() == ["alpha", "zeta"]


def test_returned_documents_cannot_mutate_stored_state(store: SessionStore) -> None:
    written: Doc = {"loaded": ["pdf"], "docs": {"pdf": ["*"]}}
    returned = store.update("s1", "main", _put(written))
    assert returned is not None
    returned["loaded"].append("returned")
    written["docs"]["pdf"].append("written")
    got = store.get("s1", "main")
    assert got is not None
    got["loaded"].clear()
    assert store.get("s1", "main") == {"loaded": ["pdf"], "docs": {"pdf": ["*"]}}


def test_an_fn_mutating_its_argument_then_failing_changes_nothing(store: SessionStore) -> None:
    store.update("s1", "main", _put({"loaded": ["pdf"]}))

    def mutate_then_fail(doc: Doc | None) -> Doc:
        assert doc is not None
        doc["loaded"].append("docx")
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        store.update("s1", "main", mutate_then_fail)
    assert store.get("s1", "main") == {"loaded": ["pdf"]}
    assert store.update("s1", "main", _increment) == {"n": 1}


@pytest.mark.parametrize(
    "bad",
    [
        {"skill": object()},
        {"tags": {"a", "b"}},
        {"score": float("nan")},
        {("tuple", "key"): 1},
        ["not", "a", "dict"],
        "text",
    ],
    ids=["object", "set", "nan", "tuple-key", "list", "str"],
)
def test_a_non_json_document_is_a_type_error_and_changes_nothing(
    store: SessionStore, bad: object
) -> None:
    store.update("s1", "main", _put({"n": 1}))
    with pytest.raises(TypeError, match="session document"):
        store.update("s1", "main", lambda _doc: cast(Doc, bad))
    assert store.get("s1", "main") == {"n": 1}
    assert store.sessions() == ["s1"]


def test_unicode_and_nesting_round_trip(store: SessionStore) -> None:
    doc: Doc = {"名前": "pdf-ü", "emoji": "🧰", "nested": {"list": [1, 2.5, None, True]}}
    store.update("séance", "агент", _put(doc))
    assert store.get("séance", "агент") == doc


def test_many_threads_incrementing_one_key_lose_nothing(make_store: StoreFactory) -> None:
    # Threads alternate between two handles: each handle is shared by several threads, and
    # the two handles are independent clients of the same state.
    handles = [make_store(), make_store()]
    start = threading.Barrier(_THREADS, timeout=_JOIN_TIMEOUT_S)

    def work(index: int) -> None:
        start.wait()
        for _ in range(_INCREMENTS):
            handles[index % 2].update("s1", "main", _increment)

    with ThreadPoolExecutor(_THREADS) as pool:
        for future in [pool.submit(work, index) for index in range(_THREADS)]:
            future.result(timeout=_JOIN_TIMEOUT_S)
    assert handles[0].get("s1", "main") == {"n": _THREADS * _INCREMENTS}


@pytest.mark.parametrize(
    ("session", "agent"), [("", "main"), ("s1", ""), ("\ud800", "main"), ("s1", "\udfff")]
)
def test_empty_or_unencodable_ids_are_usage_errors(
    store: SessionStore, session: str, agent: str
) -> None:
    with pytest.raises(UsageError):
        store.get(session, agent)
    with pytest.raises(UsageError):
        store.update(session, agent, _increment)
    assert store.sessions() == []


def test_an_empty_session_id_cannot_be_deleted(store: SessionStore) -> None:
    with pytest.raises(UsageError, match="session id"):
        store.delete_session("")


def test_non_string_ids_are_usage_errors(store: SessionStore) -> None:
    with pytest.raises(UsageError, match="agent id"):
        store.get("s1", cast(str, None))
    with pytest.raises(UsageError, match="session id"):
        store.update(cast(str, 42), "main", _increment)


def test_session_ids_of_the_longest_allowed_length_work(store: SessionStore) -> None:
    session, agent = "s" * MAX_NAME_CHARS, "a" * 10_000
    store.update(session, agent, _increment)
    store.update(session, agent, _increment)
    assert store.get(session, agent) == {"n": 2}
    assert store.get(session, "a" * 9_999) is None
    with pytest.raises(UsageError, match=f"1-{MAX_NAME_CHARS} characters"):
        store.get(session + "s", agent)
    assert store.sessions() == [session]
    store.delete_session(session)
    assert store.get(session, agent) is None


def test_calling_the_store_from_inside_fn_is_a_usage_error(store: SessionStore) -> None:
    with pytest.raises(UsageError, match="must not call the store"):
        store.update("s1", "main", lambda _doc: store.get("s1", "other"))
    assert store.update("s1", "main", _increment) == {"n": 1}


def test_a_closed_store_refuses_use_and_closing_twice_is_harmless(store: SessionStore) -> None:
    store.update("s1", "main", _increment)
    store.close()
    store.close()
    with pytest.raises(UsageError, match="closed"):
        store.get("s1", "main")
    with pytest.raises(UsageError, match="closed"):
        store.update("s1", "main", _increment)


def test_a_document_holding_a_lone_surrogate_round_trips(store: SessionStore) -> None:
    # json.loads makes one of "\\udc80" (a model's split emoji): a document json can serialise.
    doc = {"messages": [{"content": "x\udc80y"}], "\ud83d": "é"}
    store.update("s1", "main", _put(doc))
    assert store.get("s1", "main") == doc

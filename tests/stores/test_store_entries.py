"""Records of entries: each entry read and written alone, atomically, in every store.

Run against a real redis-server and real SQLite files (``make_store`` opens separate clients
onto one store, as two workers would).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

from skillshelf.errors import UsageError
from skillshelf.stores import Doc, Entries, SessionStore

StoreFactory = Callable[[], SessionStore]

THREADS = 4
INCREMENTS = 25


def _put(**docs: Doc | None) -> Callable[[Entries], dict[str, Doc | None]]:
    return lambda _entries: dict(docs)


def test_only_the_named_entries_that_exist_are_read(store: SessionStore) -> None:
    store.update_entries("s", "main", [], _put(a={"n": 1}, b={"n": 2}, c={"n": 3}))
    assert store.get_entries("s", "main", ["a", "c", "missing"]) == {"a": {"n": 1}, "c": {"n": 3}}
    assert store.get_entries("s", "main") == {"a": {"n": 1}, "b": {"n": 2}, "c": {"n": 3}}
    assert store.get_entries("s", "main", []) == {}
    assert store.get_entries("s", "other") == {}
    assert store.get_entries("nobody", "main", ["a"]) == {}


def test_fn_sees_only_what_it_named_and_may_write_and_delete_others(store: SessionStore) -> None:
    store.update_entries("s", "main", [], _put(a={"n": 1}, b={"n": 2}))
    seen: list[Entries] = []

    def change(entries: Entries) -> dict[str, Doc | None]:
        seen.append(entries)
        return {"a": {"n": entries["a"]["n"] + 10}, "b": None, "c": {"new": True}}

    assert store.update_entries("s", "main", ["a", "zz"], change)["b"] is None
    assert seen[-1] == {"a": {"n": 1}}
    assert store.get_entries("s", "main") == {"a": {"n": 11}, "c": {"new": True}}


def test_what_is_read_is_a_copy(store: SessionStore) -> None:
    store.update_entries("s", "main", [], _put(a={"list": [1]}))
    store.get_entries("s", "main")["a"]["list"].append(2)

    def mutate(entries: Entries) -> dict[str, Doc | None]:
        entries["a"]["list"].append(3)
        return {}

    store.update_entries("s", "main", ["a"], mutate)
    assert store.get_entries("s", "main") == {"a": {"list": [1]}}


def test_entries_and_the_whole_document_of_a_pair_are_separate(store: SessionStore) -> None:
    store.update("s", "main", lambda _d: {"whole": 1})
    store.update_entries("s", "main", [], _put(a={"n": 1}))
    store.update("s", "main", lambda _d: None)
    assert store.get_entries("s", "main") == {"a": {"n": 1}}
    assert store.sessions() == ["s"]
    store.update("s", "main", lambda _d: {"whole": 2})
    store.update_entries("s", "main", [], _put(a=None))
    assert store.get("s", "main") == {"whole": 2}
    assert store.sessions() == ["s"]


def test_a_record_left_without_entries_is_gone_with_its_session(store: SessionStore) -> None:
    store.update_entries("s", "main", [], _put(a={"n": 1}))
    store.update_entries("s", "helper", [], _put(b={"n": 1}))
    store.update_entries("s", "main", ["a"], _put(a=None))
    assert store.sessions() == ["s"]
    store.update_entries("s", "helper", [], _put(b=None))
    assert store.sessions() == []


def test_delete_session_removes_entries_and_documents_of_every_agent(
    store: SessionStore,
) -> None:
    store.update("s", "main", lambda _d: {"whole": 1})
    store.update_entries("s", "main", [], _put(a={"n": 1}))
    store.update_entries("s", "helper", [], _put(b={"n": 1}))
    store.update_entries("t", "main", [], _put(a={"n": 2}))
    store.delete_session("s")
    assert store.get("s", "main") is None
    assert store.get_entries("s", "main") == {} and store.get_entries("s", "helper") == {}
    assert store.get_entries("t", "main") == {"a": {"n": 2}}
    assert store.sessions() == ["t"]


@pytest.mark.parametrize(
    "result",
    [
        ["a"],
        {"a": "text"},
        {"a": {"x": object()}},
        {"": {"n": 1}},
        {1: {"n": 1}},
        {"b\udc80": {"n": 1}},
    ],
    ids=["a-list", "a-string-doc", "not-json", "empty-name", "int-name", "surrogate-name"],
)
def test_a_bad_change_is_a_type_error_and_changes_nothing(store: SessionStore, result: Any) -> None:
    store.update_entries("s", "main", [], _put(a={"n": 1}))
    with pytest.raises(TypeError):
        store.update_entries("s", "main", ["a"], lambda _e: result)
    assert store.get_entries("s", "main") == {"a": {"n": 1}}


@pytest.mark.parametrize("names", ["index", ["ok", ""], ["ok", 3]], ids=["a-str", "empty", "int"])
def test_bad_entry_names_are_usage_errors(store: SessionStore, names: Any) -> None:
    with pytest.raises(UsageError):
        store.get_entries("s", "main", names)
    with pytest.raises(UsageError):
        store.update_entries("s", "main", names, _put())


def test_concurrent_updates_of_a_common_entry_lose_nothing(make_store: StoreFactory) -> None:
    handles = [make_store() for _ in range(THREADS)]
    errors: list[BaseException] = []

    def bump(entries: Entries) -> dict[str, Doc | None]:
        count = entries.get("count", {"n": 0})["n"] + 1
        # An entry written without being read rides along with the compared one.
        return {"count": {"n": count}, f"last-{count}": {"n": count}}

    def work(handle: SessionStore) -> None:
        try:
            for _ in range(INCREMENTS):
                handle.update_entries("s", "main", ["count"], bump)
        except BaseException as exc:  # recorded for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(h,)) for h in handles]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    entries = handles[0].get_entries("s", "main")
    assert entries["count"] == {"n": THREADS * INCREMENTS}
    assert len(entries) == 1 + THREADS * INCREMENTS  # every run that counted left its mark


def test_an_entry_holding_a_lone_surrogate_round_trips(store: SessionStore) -> None:
    # json.loads makes one of "\\udc80" (a model's split emoji): a document json can serialise.
    doc = {"call_id": "x\udc80y", "\ud83d": ["é\udfff"]}
    store.update_entries("s", "main", [], _put(a=doc))
    assert store.get_entries("s", "main") == {"a": doc}

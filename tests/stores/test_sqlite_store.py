"""What only the SQLite store promises: several processes on one file, and surviving a kill."""

from __future__ import annotations

import multiprocessing
import signal
import sqlite3
import threading
from collections.abc import Callable
from multiprocessing.synchronize import Barrier, Event
from pathlib import Path

import pytest

from skillshelf.stores import Doc, StoreError
from skillshelf.stores.sqlite import SQLiteStore

# Spawning a Python child and importing skillshelf takes well under a second; the margin is
# for slow CI machines. Only a hang would reach it.
_PROCESS_TIMEOUT_S = 60.0
_INCREMENTS_PER_PROCESS = 100
_SPAWN = multiprocessing.get_context("spawn")


def _increment(doc: Doc | None) -> Doc:
    return {"n": (doc or {}).get("n", 0) + 1}


def _increment_many(path: str, start: Barrier, times: int) -> None:
    store = SQLiteStore(path)
    start.wait(_PROCESS_TIMEOUT_S)
    for _ in range(times):
        store.update("s1", "main", _increment)
    store.close()


def _hang_inside_update(path: str, inside: Event, never: Event) -> None:
    def fn(doc: Doc | None) -> Doc:
        inside.set()
        never.wait(_PROCESS_TIMEOUT_S)  # the parent kills this process long before
        return {"n": -1}

    SQLiteStore(path).update("s1", "main", fn)


def _increment_forever(path: str, progressed: Event) -> None:
    store = SQLiteStore(path)
    for count in range(1, 1_000_000):
        store.update("s1", "main", _increment)
        if count == 20:
            progressed.set()


def _run_until_then_kill(
    target: Callable[..., object], args: tuple[object, ...], ready: Event
) -> None:
    proc = _SPAWN.Process(target=target, args=args)
    proc.start()
    try:
        assert ready.wait(_PROCESS_TIMEOUT_S), "the child never reached the point to kill it at"
        proc.kill()
        proc.join(_PROCESS_TIMEOUT_S)
        assert proc.exitcode == -signal.SIGKILL
    finally:
        if proc.is_alive():
            proc.kill()
            proc.join(_PROCESS_TIMEOUT_S)


def _integrity(path: Path) -> str:
    conn = sqlite3.connect(path)
    try:
        result: str = conn.execute("PRAGMA integrity_check").fetchone()[0]
        return result
    finally:
        conn.close()


def test_two_processes_incrementing_one_key_lose_nothing(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SQLiteStore(path).close()
    start = _SPAWN.Barrier(2)  # both children start incrementing together
    procs = [
        _SPAWN.Process(target=_increment_many, args=(str(path), start, _INCREMENTS_PER_PROCESS))
        for _ in range(2)
    ]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(_PROCESS_TIMEOUT_S)
        assert proc.exitcode == 0
    store = SQLiteStore(path)
    assert store.get("s1", "main") == {"n": 2 * _INCREMENTS_PER_PROCESS}
    store.close()


def test_a_process_killed_inside_update_leaves_the_previous_value(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    store.update("s1", "main", _increment)
    inside, never = _SPAWN.Event(), _SPAWN.Event()
    _run_until_then_kill(_hang_inside_update, (str(path), inside, never), inside)
    # The child died holding the write lock, mid-transaction.
    assert store.get("s1", "main") == {"n": 1}
    store.close()

    reopened = SQLiteStore(path)
    assert reopened.get("s1", "main") == {"n": 1}
    assert _integrity(path) == "ok"
    assert reopened.update("s1", "main", _increment) == {"n": 2}  # the lock died with it
    reopened.close()


def test_a_process_killed_at_a_random_point_leaves_a_consistent_store(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SQLiteStore(path).close()
    progressed = _SPAWN.Event()
    _run_until_then_kill(_increment_forever, (str(path), progressed), progressed)
    assert _integrity(path) == "ok"
    store = SQLiteStore(path)
    doc = store.get("s1", "main")
    assert doc is not None
    assert doc["n"] >= 20
    assert store.update("s1", "main", _increment) == {"n": doc["n"] + 1}
    store.close()


def test_stores_opened_while_others_write_all_work(tmp_path: Path) -> None:
    # Workers starting while others are busy, or all at once on a new file: each open
    # must wait its turn, never fail with "database is locked".
    path = tmp_path / "new" / "sessions.db"
    workers, writes = 8, 20
    start = threading.Barrier(workers)
    errors: list[BaseException] = []
    stores: list[SQLiteStore] = []

    def open_and_write() -> None:
        start.wait()
        try:
            for _ in range(writes // 4):
                store = SQLiteStore(path)  # a new connection each time, as a new thread gets
                stores.append(store)
                for _ in range(4):
                    store.update("s", "main", _increment)
        except BaseException as exc:  # recorded for the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=open_and_write) for _ in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert errors == []
        assert stores[0].get("s", "main") == {"n": workers * writes}
    finally:
        for store in stores:
            store.close()


def test_creates_parent_directories_wal_mode_and_schema_version(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / "sessions.db"
    SQLiteStore(path).close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        columns = [row[1] for row in conn.execute("PRAGMA table_info(docs)")]
        assert columns == ["session", "agent", "doc", "updated_at", "expires_at"]
    finally:
        conn.close()


def test_documents_are_stored_as_compact_json(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    store.update("s1", "main", lambda _doc: {"loaded": ["pdf"], "n": 1})
    store.close()
    conn = sqlite3.connect(path)
    try:
        assert conn.execute("SELECT doc FROM docs").fetchone()[0] == '{"loaded":["pdf"],"n":1}'
    finally:
        conn.close()


def test_a_database_from_a_newer_version_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    conn = sqlite3.connect(path)
    conn.execute("PRAGMA user_version = 99")
    conn.close()
    with pytest.raises(StoreError, match="schema 99"):
        SQLiteStore(path)


def test_a_file_that_is_not_a_database_is_a_store_error(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"this is not a database, just text long enough to have a header" * 10)
    with pytest.raises(StoreError, match="Cannot use"):
        SQLiteStore(path)


def test_a_store_is_usable_from_threads_other_than_its_creator(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")
    store.update("s1", "main", _increment)
    results: list[Doc | None] = []
    worker = threading.Thread(target=lambda: results.append(store.update("s1", "main", _increment)))
    worker.start()
    worker.join(_PROCESS_TIMEOUT_S)
    assert results == [{"n": 2}]
    store.close()  # closes the worker thread's connection too


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="counts open files via /proc")
def test_connections_of_finished_threads_are_closed(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "sessions.db")

    def open_files() -> int:
        fds = Path("/proc/self/fd").iterdir()
        return sum(1 for fd in fds if str(fd.resolve()).startswith(str(tmp_path)))

    for _ in range(100):
        worker = threading.Thread(target=lambda: store.update("s1", "main", _increment))
        worker.start()
        worker.join(_PROCESS_TIMEOUT_S)
    assert store.get("s1", "main") == {"n": 100}
    assert open_files() < 20  # 100 leaked connections would hold 100+
    store.close()

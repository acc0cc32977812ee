"""Session state has a lifetime: documents expire after their TTL, in every store, bounded.

Memory and SQLite run on a fake clock; Redis expires keys itself, so its tests use a real
redis-server, short TTLs and bounded waits.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import redis

from skillshelf.errors import UsageError
from skillshelf.stores import Doc, SessionStore, open_store
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore

TTL_S = 10.0
# A Redis key past its TTL is gone on the next access; this bounds the wait for a busy machine.
EXPIRY_WAIT_S = 10.0


def _one(doc: Doc | None) -> Doc:
    return {"n": (doc or {}).get("n", 0) + 1}


class Clock:
    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture(params=["memory", "sqlite"])
def clocked(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[SessionStore, Clock]]:
    clock = Clock()
    store: SessionStore
    if request.param == "memory":
        store = MemoryStore(ttl_s=TTL_S, clock=clock)
    else:
        store = SQLiteStore(tmp_path / "s.db", ttl_s=TTL_S, clock=clock)
    yield store, clock
    store.close()


def test_a_document_expires_ttl_after_its_last_use(clocked: tuple[SessionStore, Clock]) -> None:
    store, clock = clocked
    store.update("s", "main", _one)
    clock.now += TTL_S - 1
    assert store.get("s", "main") == {"n": 1}  # a read is a use: the TTL starts again
    clock.now += TTL_S - 1
    assert store.update("s", "main", _one) == {"n": 2}
    clock.now += TTL_S
    assert store.get("s", "main") is None
    assert store.sessions() == []
    assert store.update("s", "main", _one) == {"n": 1}  # a fresh start, not the old state


def test_expired_documents_are_removed_not_only_hidden(tmp_path: Path) -> None:
    clock = Clock()
    memory = MemoryStore(ttl_s=TTL_S, clock=clock)
    for i in range(100):
        memory.update(f"s{i}", "main", _one)
    clock.now += TTL_S
    memory.update("fresh", "main", _one)
    assert len(memory._docs) == 1  # the expired ones went with that write
    memory.close()


def test_sqlite_purges_expired_rows_in_bounded_batches(tmp_path: Path) -> None:
    clock = Clock()
    store = SQLiteStore(tmp_path / "s.db", ttl_s=TTL_S, clock=clock)
    for i in range(450):
        store.update(f"s{i}", "main", _one)
    clock.now += TTL_S

    def rows() -> int:
        with sqlite3.connect(tmp_path / "s.db") as conn:
            return int(conn.execute("SELECT count(*) FROM docs").fetchone()[0])

    store.update("w1", "main", _one)
    assert rows() == 450 - 200 + 1  # one batch per write, not the whole backlog
    store.update("w2", "main", _one)
    store.update("w3", "main", _one)
    assert rows() == 3
    store.close()


def test_a_version_1_sqlite_file_is_migrated_and_keeps_its_documents(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.execute(
            "CREATE TABLE docs (session TEXT NOT NULL, agent TEXT NOT NULL, doc TEXT NOT NULL, "
            "updated_at REAL NOT NULL, PRIMARY KEY (session, agent)) WITHOUT ROWID"
        )
        conn.execute("INSERT INTO docs VALUES ('old', 'main', '{\"n\": 7}', 0)")
        conn.execute("PRAGMA user_version = 1")
    conn.close()
    store = SQLiteStore(path, ttl_s=TTL_S)
    assert store.get("old", "main") == {"n": 7}  # no expiry was recorded: never expires
    assert store.update("old", "main", _one) == {"n": 8}
    store.close()
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 3
        (expires,) = conn.execute("SELECT expires_at FROM docs").fetchone()
    conn.close()
    assert expires is not None  # the next write gave it one


@pytest.mark.parametrize("ttl", [0, -1.0])
def test_a_nonsensical_ttl_is_a_usage_error(tmp_path: Path, ttl: float) -> None:
    with pytest.raises(UsageError):
        MemoryStore(ttl_s=ttl)
    with pytest.raises(UsageError):
        SQLiteStore(tmp_path / "x.db", ttl_s=ttl)


def test_open_store_passes_the_ttl_on(tmp_path: Path) -> None:
    store = open_store(f"sqlite:{tmp_path / 'o.db'}", ttl_s=5)
    assert isinstance(store, SQLiteStore) and store._ttl_s == 5
    store.close()


def _wait_until(condition: Callable[[], bool]) -> bool:
    deadline = time.monotonic() + EXPIRY_WAIT_S
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.02)
    return condition()


def test_redis_expires_documents_natively_and_reads_refresh_the_ttl(
    redis_url: str, redis_prefix: str
) -> None:
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    store = RedisStore(redis_url, prefix=redis_prefix, ttl_s=60)
    doc_key = f"{redis_prefix}doc:1:s:main"
    store.update("s", "main", _one)
    assert 0 < int(raw.pttl(doc_key)) <= 60_000  # type: ignore[arg-type]
    raw.pexpire(doc_key, 5_000)
    assert store.get("s", "main") == {"n": 1}
    assert int(raw.pttl(doc_key)) > 5_000  # type: ignore[arg-type]
    store.close()

    short = RedisStore(redis_url, prefix=redis_prefix, ttl_s=0.2)
    short.update("t", "main", _one)
    keys = (f"{redis_prefix}doc:1:t:main", f"{redis_prefix}agents:t")
    # Watched from outside: a get through the store would be a use, starting the TTL again.
    assert _wait_until(lambda: raw.exists(*keys) == 0)
    assert short.get("t", "main") is None
    assert "t" not in short.sessions()
    short.close()
    raw.close()


def _put(**docs: Doc | None) -> Callable[[dict[str, Doc]], dict[str, Doc | None]]:
    return lambda _entries: dict(docs)


def test_a_record_expires_whole_ttl_after_its_last_use(
    clocked: tuple[SessionStore, Clock],
) -> None:
    store, clock = clocked
    store.update_entries("s", "main", [], _put(a={"n": 1}, b={"n": 2}))
    clock.now += TTL_S - 1
    assert store.get_entries("s", "main", ["a"]) == {"a": {"n": 1}}  # a use of the record
    clock.now += TTL_S - 1
    assert store.get_entries("s", "main", ["b"]) == {"b": {"n": 2}}  # b was kept alive too
    clock.now += TTL_S
    assert store.get_entries("s", "main") == {}
    assert store.sessions() == []
    # Written again after expiring, the record holds only what was written since.
    store.update_entries("s", "main", [], _put(c={"n": 3}))
    clock.now += TTL_S - 1
    assert store.get_entries("s", "main") == {"c": {"n": 3}}


def test_redis_expires_a_record_natively_and_reads_refresh_its_ttl(
    redis_url: str, redis_prefix: str
) -> None:
    raw = redis.Redis.from_url(redis_url, decode_responses=True)
    store = RedisStore(redis_url, prefix=redis_prefix, ttl_s=60)
    key = f"{redis_prefix}ent:1:s:main"
    store.update_entries("s", "main", [], _put(a={"n": 1}))
    assert 0 < int(raw.pttl(key)) <= 60_000  # type: ignore[arg-type]
    raw.pexpire(key, 5_000)
    assert store.get_entries("s", "main", ["a"]) == {"a": {"n": 1}}
    assert int(raw.pttl(key)) > 5_000  # type: ignore[arg-type]
    store.close()

    short = RedisStore(redis_url, prefix=redis_prefix, ttl_s=0.2)
    short.update_entries("t", "main", [], _put(a={"n": 1}))
    keys = (f"{redis_prefix}ent:1:t:main", f"{redis_prefix}records:t")
    # Watched from outside: a read through the store would be a use, starting the TTL again.
    assert _wait_until(lambda: raw.exists(*keys) == 0)
    assert short.get_entries("t", "main") == {}
    assert "t" not in short.sessions()
    short.close()
    raw.close()

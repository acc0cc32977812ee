"""Fixtures for the session store tests: every store behind one factory, and a real redis-server."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from redis_servers import RestartableRedis, free_port, redis_server_binary, running_redis
from skillshelf.stores import SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore

StoreFactory = Callable[[], SessionStore]


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the whole test session (no persistence)."""
    server = redis_server_binary()
    port = free_port()
    with running_redis(server, tmp_path_factory.mktemp("redis"), port):
        yield f"redis://127.0.0.1:{port}/0"


@pytest.fixture
def restartable_redis(tmp_path: Path) -> Iterator[RestartableRedis]:
    """A redis-server of this test's own, which the test may restart."""
    server = RestartableRedis(redis_server_binary(), tmp_path)
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses, so tests share one server without seeing each other."""
    return f"test:{uuid.uuid4().hex}:"


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens handles onto one fresh store of each kind (memory: the same object every time).

    Separate handles are separate clients (SQLite connections, Redis connection pools) of the
    same stored state, as two workers would be. All are closed after the test.
    """
    factory = _factory(request, tmp_path)
    opened: list[SessionStore] = []

    def open_tracked() -> SessionStore:
        store = factory()
        opened.append(store)
        return store

    yield open_tracked
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> SessionStore:
    """One fresh store of each kind."""
    return make_store()


def _factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    if request.param == "memory":
        shared = MemoryStore()
        return lambda: shared
    if request.param == "sqlite":
        return lambda: SQLiteStore(tmp_path / "state" / "sessions.db")
    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    return lambda: RedisStore(url, prefix=prefix)

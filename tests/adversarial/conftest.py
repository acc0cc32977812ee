"""Fixtures for the parsing, names and session-id adversarial tests, and the fuzz profile.

The ``adversarial-fuzz`` Hypothesis profile is fixed (derandomized, no deadline, 2,000
examples) so CI runs the same examples every time; fuzz tests decorate with
``settings.get_profile(FUZZ_PROFILE)`` rather than loading it globally.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, settings

from skillshelf.stores import SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore

# The Redis helpers live beside the store tests, as tests/agent imports them too.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stores"))
from redis_servers import free_port, redis_server_binary, running_redis

FUZZ_PROFILE = "adversarial-fuzz"
settings.register_profile(
    FUZZ_PROFILE,
    derandomize=True,
    deadline=None,
    max_examples=2_000,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


@pytest.fixture(scope="session")
def adversarial_redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for these tests (no persistence)."""
    port = free_port()
    with running_redis(redis_server_binary(), tmp_path_factory.mktemp("redis"), port):
        yield f"redis://127.0.0.1:{port}/0"


@pytest.fixture(params=["memory", "sqlite", "redis"])
def any_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[SessionStore]:
    """One fresh store of each kind; Redis under a key prefix no other test uses."""
    opened: Callable[[], SessionStore]
    if request.param == "memory":
        opened = MemoryStore
    elif request.param == "sqlite":
        opened = lambda: SQLiteStore(tmp_path / "sessions.db")  # noqa: E731
    else:
        url: str = request.getfixturevalue("adversarial_redis_url")
        prefix = f"test:{uuid.uuid4().hex}:"
        opened = lambda: RedisStore(url, prefix=prefix)  # noqa: E731
    store = opened()
    try:
        yield store
    finally:
        store.close()

"""What only the Redis store does: compare-and-set retries, TTLs and key layout (real server)."""

from __future__ import annotations

import re
import sys
from collections.abc import Iterator
from typing import Any, cast

import pytest
import redis

from skillshelf.errors import MissingExtraError, UsageError, install_hint
from skillshelf.stores import Doc, StoreConflictError
from skillshelf.stores.redis import RedisStore

_TTL_S = 100


def _increment(doc: Doc | None) -> Doc:
    return {"n": (doc or {}).get("n", 0) + 1}


def _ttl(raw: redis.Redis, key: str) -> int:
    return cast(int, raw.ttl(key))


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def pair(redis_url: str, redis_prefix: str) -> Iterator[tuple[RedisStore, RedisStore]]:
    """Two independent clients of the same state, as two workers would hold."""
    first, second = (
        RedisStore(redis_url, prefix=redis_prefix),
        RedisStore(redis_url, prefix=redis_prefix),
    )
    yield first, second
    first.close()
    second.close()


def test_a_conflicting_writer_forces_a_retry_and_both_increments_land(
    pair: tuple[RedisStore, RedisStore],
) -> None:
    first, second = pair
    seen: list[Doc | None] = []

    def increment_while_another_writer_wins(doc: Doc | None) -> Doc:
        seen.append(doc)
        if len(seen) == 1:
            # Lands between first's GET and its compare-and-set, which must fail and retry.
            second.update("s1", "main", _increment)
        return _increment(doc)

    assert first.update("s1", "main", increment_while_another_writer_wins) == {"n": 2}
    assert seen == [None, {"n": 1}]
    assert second.get("s1", "main") == {"n": 2}


def test_endless_conflicts_end_in_store_conflict_error(redis_url: str, redis_prefix: str) -> None:
    impatient = RedisStore(redis_url, prefix=redis_prefix, max_attempts=3)
    rival = RedisStore(redis_url, prefix=redis_prefix)
    attempts = 0

    def always_overtaken(doc: Doc | None) -> Doc:
        nonlocal attempts
        attempts += 1
        rival.update("s1", "main", _increment)
        return {"n": -1}

    with pytest.raises(StoreConflictError, match="3 conflicting attempts"):
        impatient.update("s1", "main", always_overtaken)
    assert attempts == 3
    assert rival.get("s1", "main") == {"n": 3}  # only the rival's writes landed
    impatient.close()
    rival.close()


def test_an_update_overtaken_by_delete_session_retries_on_the_empty_session(
    pair: tuple[RedisStore, RedisStore],
) -> None:
    first, second = pair
    first.update("s1", "main", _increment)
    first.update("s1", "helper", _increment)
    seen: list[Doc | None] = []

    def increment_while_the_session_is_deleted(doc: Doc | None) -> Doc:
        seen.append(doc)
        if len(seen) == 1:
            second.delete_session("s1")
        return _increment(doc)

    assert first.update("s1", "main", increment_while_the_session_is_deleted) == {"n": 1}
    assert seen == [{"n": 1}, None]
    assert second.get("s1", "helper") is None
    assert second.sessions() == ["s1"]


def test_keys_live_under_the_prefix_and_prefixes_do_not_see_each_other(
    redis_url: str, redis_prefix: str, raw: redis.Redis
) -> None:
    mine = RedisStore(redis_url, prefix=redis_prefix)
    theirs = RedisStore(redis_url, prefix=f"{redis_prefix}other:")
    mine.update("s1", "main", _increment)
    assert theirs.get("s1", "main") is None
    assert theirs.sessions() == []
    keys = set(raw.scan_iter(match=f"{redis_prefix}*"))
    assert keys == {
        f"{redis_prefix}doc:2:s1:main",
        f"{redis_prefix}agents:s1",
        f"{redis_prefix}sessions",
    }
    assert raw.get(f"{redis_prefix}doc:2:s1:main") == '{"n":1}'
    assert raw.ttl(f"{redis_prefix}doc:2:s1:main") == -1  # no TTL unless asked for
    mine.close()
    theirs.close()


def test_ttl_is_set_and_refreshed_on_update(
    redis_url: str, redis_prefix: str, raw: redis.Redis
) -> None:
    store = RedisStore(redis_url, prefix=redis_prefix, ttl_s=_TTL_S)
    doc_key, agents_key = f"{redis_prefix}doc:2:s1:main", f"{redis_prefix}agents:s1"
    store.update("s1", "main", _increment)
    assert 0 < _ttl(raw, doc_key) <= _TTL_S
    assert 0 < _ttl(raw, agents_key) <= _TTL_S
    raw.expire(doc_key, 5)
    raw.expire(agents_key, 5)
    store.update("s1", "main", _increment)
    assert _ttl(raw, doc_key) > 5
    assert _ttl(raw, agents_key) > 5
    store.close()


def test_sessions_whose_documents_expired_are_no_longer_listed(
    redis_url: str, redis_prefix: str, raw: redis.Redis
) -> None:
    store = RedisStore(redis_url, prefix=redis_prefix, ttl_s=_TTL_S)
    store.update("old", "main", _increment)
    store.update("new", "main", _increment)
    # Stand in for the passage of time: expire "old" now, as Redis would after its TTL.
    raw.delete(f"{redis_prefix}doc:3:old:main", f"{redis_prefix}agents:old")
    raw.zadd(f"{redis_prefix}sessions", {"old": 1.0}, xx=True)
    assert store.sessions() == ["new"]
    assert raw.zscore(f"{redis_prefix}sessions", "old") is None  # pruned from the index
    store.close()


@pytest.mark.parametrize("option", [{"ttl_s": 0}, {"ttl_s": -5}, {"max_attempts": 0}])
def test_nonsensical_options_are_usage_errors(redis_url: str, option: dict[str, Any]) -> None:
    with pytest.raises(UsageError):
        RedisStore(redis_url, **option)


def test_without_the_redis_package_the_store_says_which_extra_to_install(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "redis", None)
    with pytest.raises(MissingExtraError, match=re.escape(install_hint("redis"))) as raised:
        RedisStore("redis://127.0.0.1:1/0")
    assert raised.value.extra == "redis"

"""The Redis store's Lua compare-and-set: round trips, retries, the script cache, many writers."""

from __future__ import annotations

import multiprocessing
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from multiprocessing.synchronize import Barrier
from typing import Any

import pytest
import redis
from redis.connection import AbstractConnection

from redis_servers import RestartableRedis
from skillshelf.stores import Doc
from skillshelf.stores.redis import RedisStore

# Spawning a Python child and importing skillshelf takes well under a second; the margin is
# for slow CI machines. Only a hang would reach it.
_PROCESS_TIMEOUT_S = 60.0
_JOIN_TIMEOUT_S = 60.0
_INCREMENTS_PER_PROCESS = 100
_THREADS = 8
_INCREMENTS_PER_THREAD = 50
_TTL_S = 100
_SPAWN = multiprocessing.get_context("spawn")


def _increment(doc: Doc | None) -> Doc:
    return {"n": (doc or {}).get("n", 0) + 1}


@dataclass
class _Wire:
    """What the clients sent: one entry per round trip, listing the commands it carried."""

    round_trips: list[list[str]] = field(default_factory=list)

    def commands(self) -> list[str]:
        return [name for trip in self.round_trips for name in trip]


def _command_names(packed: bytes) -> list[str]:
    # Each command is a RESP array of bulk strings: *N\r\n then N times $len\r\n<bytes>\r\n.
    names, pos = [], 0
    while pos < len(packed):
        end = packed.index(b"\r\n", pos)
        count, pos = int(packed[pos + 1 : end]), end + 2
        for index in range(count):
            end = packed.index(b"\r\n", pos)
            length, pos = int(packed[pos + 1 : end]), end + 2
            if index == 0:
                names.append(packed[pos : pos + length].decode().upper())
            pos += length + 2
    return names


@pytest.fixture
def wire(monkeypatch: pytest.MonkeyPatch) -> _Wire:
    """Records every packet any redis-py connection sends from now on."""
    seen = _Wire()
    send = AbstractConnection.send_packed_command

    def recording(self: AbstractConnection, command: Any, check_health: bool = True) -> None:
        chunks = [command] if isinstance(command, (str, bytes)) else command
        packed = b"".join(c.encode() if isinstance(c, str) else bytes(c) for c in chunks)
        seen.round_trips.append(_command_names(packed))
        send(self, command, check_health)  # type: ignore[no-untyped-call]  # unannotated upstream

    monkeypatch.setattr(AbstractConnection, "send_packed_command", recording)
    return seen


@pytest.fixture
def raw(redis_url: str) -> Iterator[redis.Redis]:
    client = redis.Redis.from_url(redis_url, decode_responses=True)
    yield client
    client.close()


@pytest.fixture
def store(redis_url: str, redis_prefix: str) -> Iterator[RedisStore]:
    opened = RedisStore(redis_url, prefix=redis_prefix)
    yield opened
    opened.close()


def test_an_update_is_two_round_trips_a_get_and_one_script_call(
    store: RedisStore, wire: _Wire
) -> None:
    store.update("s1", "main", _increment)  # connects and loads the script
    wire.round_trips.clear()
    assert store.update("s1", "main", _increment) == {"n": 2}
    assert wire.round_trips == [["GET"], ["EVALSHA"]]


def test_a_delete_through_update_is_two_round_trips_too(store: RedisStore, wire: _Wire) -> None:
    store.update("s1", "main", _increment)
    wire.round_trips.clear()
    assert store.update("s1", "main", lambda _doc: None) is None
    assert wire.round_trips == [["GET"], ["EVALSHA"]]
    assert store.sessions() == []


def test_a_retry_runs_fn_on_the_document_the_failed_write_returned_without_a_get(
    redis_url: str, redis_prefix: str, store: RedisStore, wire: _Wire
) -> None:
    rival = RedisStore(redis_url, prefix=redis_prefix)
    store.update("s1", "main", _increment)
    rival.update("s1", "main", _increment)
    seen: list[Doc | None] = []

    def overtaken_once(doc: Doc | None) -> Doc:
        seen.append(doc)
        if len(seen) == 1:
            rival.update("s1", "main", _increment)
        return _increment(doc)

    wire.round_trips.clear()
    assert store.update("s1", "main", overtaken_once) == {"n": 4}
    assert seen == [{"n": 2}, {"n": 3}]
    # Own GET, the rival's GET and write, own failed write, own retried write.
    assert wire.commands() == ["GET", "GET", "EVALSHA", "EVALSHA", "EVALSHA"]
    rival.close()


def test_no_update_uses_watch_or_a_transaction(store: RedisStore, wire: _Wire) -> None:
    store.update("s1", "main", _increment)
    store.update("s1", "helper", _increment)
    store.update("s1", "main", lambda _doc: None)
    assert not {"WATCH", "MULTI", "EXEC", "UNWATCH"} & set(wire.commands())


def test_an_update_after_script_flush_reloads_the_script(
    store: RedisStore, raw: redis.Redis
) -> None:
    store.update("s1", "main", _increment)
    raw.script_flush()
    assert store.update("s1", "main", _increment) == {"n": 2}
    assert store.get("s1", "main") == {"n": 2}


def test_a_script_flush_between_read_and_write_loses_nothing(
    store: RedisStore, raw: redis.Redis, wire: _Wire
) -> None:
    store.update("s1", "main", _increment)

    def flush_then_increment(doc: Doc | None) -> Doc:
        raw.script_flush()
        return _increment(doc)

    wire.round_trips.clear()
    assert store.update("s1", "main", flush_then_increment) == {"n": 2}
    assert ["EVALSHA"] in wire.round_trips
    assert ["SCRIPT"] in wire.round_trips  # SCRIPT LOAD after the server answered NOSCRIPT
    assert store.get("s1", "main") == {"n": 2}


def test_updates_carry_on_after_the_server_restarts(
    restartable_redis: RestartableRedis, redis_prefix: str
) -> None:
    store = RedisStore(restartable_redis.url, prefix=redis_prefix)
    store.update("s1", "main", _increment)
    store.update("s1", "main", _increment)
    restartable_redis.restart()  # no persistence: the data and the script cache are gone
    assert store.update("s1", "main", _increment) == {"n": 1}
    assert store.update("s2", "main", _increment) == {"n": 1}
    assert store.sessions() == ["s1", "s2"]
    store.close()


def test_deleting_the_last_document_keeps_a_session_another_agent_joined_meanwhile(
    redis_url: str, redis_prefix: str, store: RedisStore
) -> None:
    rival = RedisStore(redis_url, prefix=redis_prefix)
    store.update("s1", "main", _increment)

    def delete_while_another_agent_joins(_doc: Doc | None) -> None:
        rival.update("s1", "helper", _increment)

    assert store.update("s1", "main", delete_while_another_agent_joins) is None
    assert store.sessions() == ["s1"]
    assert store.get("s1", "helper") == {"n": 1}
    store.update("s1", "helper", lambda _doc: None)
    assert store.sessions() == []
    rival.close()


def test_a_document_that_expired_between_read_and_write_is_retried_as_absent(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    store.update("s1", "main", _increment)
    seen: list[Doc | None] = []

    def expire_then_increment(doc: Doc | None) -> Doc:
        seen.append(doc)
        if len(seen) == 1:
            raw.delete(f"{redis_prefix}doc:2:s1:main")  # as Redis does when the TTL runs out
        return _increment(doc)

    assert store.update("s1", "main", expire_then_increment) == {"n": 1}
    assert seen == [{"n": 1}, None]


def test_an_update_with_a_ttl_prunes_expired_sessions_from_the_index(
    redis_url: str, redis_prefix: str, raw: redis.Redis
) -> None:
    store = RedisStore(redis_url, prefix=redis_prefix, ttl_s=_TTL_S)
    store.update("old", "main", _increment)
    raw.delete(f"{redis_prefix}doc:3:old:main", f"{redis_prefix}agents:old")
    raw.zadd(f"{redis_prefix}sessions", {"old": 1.0}, xx=True)
    store.update("new", "main", _increment)
    assert raw.zrange(f"{redis_prefix}sessions", 0, -1) == ["new"]
    score = raw.zscore(f"{redis_prefix}sessions", "new")
    assert score is not None and score != float("inf")
    store.close()


def test_without_a_ttl_documents_do_not_expire_and_sessions_score_infinite(
    store: RedisStore, raw: redis.Redis, redis_prefix: str
) -> None:
    raw.set(f"{redis_prefix}doc:2:s1:main", '{"n":1}', ex=_TTL_S)  # e.g. left by a TTL store
    store.update("s1", "main", _increment)
    assert raw.ttl(f"{redis_prefix}doc:2:s1:main") == -1
    assert raw.zscore(f"{redis_prefix}sessions", "s1") == float("inf")


def test_eight_threads_with_their_own_handles_lose_no_increment(
    redis_url: str, redis_prefix: str
) -> None:
    handles = [RedisStore(redis_url, prefix=redis_prefix) for _ in range(_THREADS)]
    start = threading.Barrier(_THREADS, timeout=_JOIN_TIMEOUT_S)

    def work(handle: RedisStore, agent: str) -> None:
        start.wait()
        for _ in range(_INCREMENTS_PER_THREAD):
            handle.update("s1", agent, _increment)

    with ThreadPoolExecutor(_THREADS) as pool:
        futures = [
            pool.submit(work, handle, ("main", "helper")[index % 2])
            for index, handle in enumerate(handles)
        ]
        for future in futures:
            future.result(timeout=_JOIN_TIMEOUT_S)
    expected = {"n": _THREADS // 2 * _INCREMENTS_PER_THREAD}
    assert handles[0].get("s1", "main") == expected
    assert handles[0].get("s1", "helper") == expected
    assert handles[0].sessions() == ["s1"]
    for handle in handles:
        handle.close()


def _increment_many(url: str, prefix: str, start: Barrier, times: int) -> None:
    store = RedisStore(url, prefix=prefix)
    start.wait(_PROCESS_TIMEOUT_S)
    for _ in range(times):
        store.update("s1", "main", _increment)
    store.close()


def test_two_processes_incrementing_one_key_lose_nothing(
    redis_url: str, redis_prefix: str, store: RedisStore
) -> None:
    start = _SPAWN.Barrier(2)  # both children start incrementing together
    args = (redis_url, redis_prefix, start, _INCREMENTS_PER_PROCESS)
    procs = [_SPAWN.Process(target=_increment_many, args=args) for _ in range(2)]
    for proc in procs:
        proc.start()
    for proc in procs:
        proc.join(_PROCESS_TIMEOUT_S)
        assert proc.exitcode == 0
    assert store.get("s1", "main") == {"n": 2 * _INCREMENTS_PER_PROCESS}

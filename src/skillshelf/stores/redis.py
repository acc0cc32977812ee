"""The session store for many workers: Redis, so that any worker can serve any session.

Layout under a key prefix (default ``skillshelf:``):

* ``doc:<len(session)>:<session>:<agent>`` — a string holding one document's JSON (the length
  makes the key unambiguous whatever characters the ids contain);
* ``agents:<session>`` — the set of agents holding a document in that session;
* ``ent:<len(session)>:<session>:<agent>`` — a hash holding one record of entries, an entry's
  JSON per field;
* ``records:<session>`` — the set of agents holding a record of entries in that session;
* ``sessions`` — a sorted set of session ids, scored by when their last document or record
  expires (``+inf`` without a TTL).

An update takes two round trips and holds no connection between them: a ``GET`` of the
document, ``fn`` in Python, then a Lua compare-and-set that writes the new document (and the
index entries beside it) only if the stored JSON is still exactly what was read. When another
writer got there first, the script answers with the document as it is now, and the update backs
off and runs ``fn`` again on that (one round trip per retry), so ``fn`` may run more than once.
Comparing the document's own bytes needs no version counter, and a document changed and
changed back meanwhile is no conflict: ``fn`` saw exactly what is stored, so the write is as if
it ran after the last change.

An update of entries works the same way on the fields it read: an ``HMGET`` of them, ``fn``,
then a script that writes its changes (``HSET``/``HDEL``) only if those fields still hold
what was read, and otherwise answers with what they hold now.

The scripts are sent by SHA (``EVALSHA``) and loaded again whenever the server answers
``NOSCRIPT`` (after a restart, a failover or ``SCRIPT FLUSH``). ``delete_session``, rare and
touching every agent's key, still uses ``WATCH``/``MULTI``/``EXEC`` on the agents set; an update
that adds an agent meanwhile changes that set, so the delete retries and removes it too.

Needs the ``redis`` extra; written for a standalone Redis (one update touches keys in several
Redis Cluster slots).
"""

from __future__ import annotations

import random
import time
from collections.abc import Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, cast

from skillshelf.errors import MissingExtraError, UsageError
from skillshelf.stores.base import (
    Doc,
    Entries,
    EntriesUpdater,
    StoreConflictError,
    StoreError,
    Updater,
    _check_ids,
    _check_names,
    _decode,
    _decode_entries,
    _encode,
    _encode_changes,
    _ReentryGuard,
    check_name,
)

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline
    from redis.commands.core import Script

__all__ = ["RedisStore"]

# Enough that a writer losing every race to a handful of busy peers still gets through;
# past it something is hammering one key and a clear error beats spinning.
_MAX_ATTEMPTS = 100
# Jittered exponential backoff between attempts spreads colliding writers apart.
_BACKOFF_BASE_S = 0.001
_BACKOFF_CAP_S = 0.05

# KEYS: the document, the session's agents set, the sessions index, the session's records set.
# ARGV: session, agent, the JSON read before fn ran, the JSON to write, TTL milliseconds, index
# score, and the exclusive upper score of expired index entries. A document's JSON is never
# empty, so '' stands for "absent" (expected), "delete" (new) and "no TTL" (ttl).
# Returns 1 when written; otherwise the document as it is now ('' when absent), so the retry
# needs no GET of its own.
_COMPARE_AND_SET = """
local doc, agents, sessions = KEYS[1], KEYS[2], KEYS[3]
local session, agent, expected, new, ttl, score, stale = unpack(ARGV)
local current = redis.call('GET', doc) or ''
if current ~= expected then
  return current
end
if new == '' then
  redis.call('DEL', doc)
  redis.call('SREM', agents, agent)
  if redis.call('SCARD', agents) == 0 and redis.call('EXISTS', KEYS[4]) == 0 then
    redis.call('ZREM', sessions, session)
  end
  return 1
end
if ttl == '' then
  redis.call('SET', doc, new)
else
  redis.call('SET', doc, new, 'PX', ttl)
end
redis.call('SADD', agents, agent)
redis.call('ZADD', sessions, 'GT', score, session)
if ttl ~= '' then
  redis.call('PEXPIRE', agents, ttl)
  redis.call('ZREMRANGEBYSCORE', sessions, '-inf', stale)
end
return 1
"""

# KEYS: the record's hash, the session's records set, the sessions index, the session's
# agents set. ARGV: session, agent, TTL milliseconds, index score, the exclusive upper score of
# expired index entries, the number N of fields read, the N field names, the N values read
# ('' for absent), then pairs of a field to change and its new value ('' deletes it).
# Returns 1 when written; otherwise the N fields' values now ('' when absent).
_COMPARE_AND_SET_ENTRIES = """
local hash, records, sessions = KEYS[1], KEYS[2], KEYS[3]
local session, agent, ttl, score, stale = ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local n = tonumber(ARGV[6])
if n > 0 then
  local fields = {}
  for i = 1, n do fields[i] = ARGV[6 + i] end
  local now = redis.call('HMGET', hash, unpack(fields))
  local same = true
  for i = 1, n do
    now[i] = now[i] or ''
    if now[i] ~= ARGV[6 + n + i] then same = false end
  end
  if not same then
    return now
  end
end
for i = 7 + 2 * n, #ARGV, 2 do
  if ARGV[i + 1] == '' then
    redis.call('HDEL', hash, ARGV[i])
  else
    redis.call('HSET', hash, ARGV[i], ARGV[i + 1])
  end
end
if redis.call('EXISTS', hash) == 0 then
  redis.call('SREM', records, agent)
  if redis.call('SCARD', records) == 0 and redis.call('EXISTS', KEYS[4]) == 0 then
    redis.call('ZREM', sessions, session)
  end
  return 1
end
redis.call('SADD', records, agent)
redis.call('ZADD', sessions, 'GT', score, session)
if ttl ~= '' then
  redis.call('PEXPIRE', hash, ttl)
  redis.call('PEXPIRE', records, ttl)
  redis.call('ZREMRANGEBYSCORE', sessions, '-inf', stale)
end
return 1
"""

# A read of entries that starts the record's TTL again. KEYS: the hash, the records set, the
# sessions index. ARGV: session, TTL milliseconds, index score, then the fields to read (none:
# all). Returns HMGET's values for the named fields, else HGETALL's flat field/value list.
_TOUCH_ENTRIES = """
local values
if #ARGV > 3 then
  values = redis.call('HMGET', KEYS[1], unpack(ARGV, 4))
else
  values = redis.call('HGETALL', KEYS[1])
end
if redis.call('PEXPIRE', KEYS[1], ARGV[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('ZADD', KEYS[3], 'XX', 'GT', ARGV[3], ARGV[1])
end
return values
"""

# A read that starts the TTL again. KEYS: the document, the agents set, the sessions index.
# ARGV: session, TTL milliseconds, index score. Returns the document's JSON (nil when absent).
_TOUCH = """
local doc = redis.call('GET', KEYS[1])
if doc then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  redis.call('PEXPIRE', KEYS[2], ARGV[2])
  redis.call('ZADD', KEYS[3], 'XX', 'GT', ARGV[3], ARGV[1])
end
return doc
"""


class RedisStore:
    """Session documents in Redis, shared by any number of processes and machines.

    Args:
        url: A ``redis://host:port/db`` or ``rediss://…`` URL (any form redis-py accepts).
        prefix: Prepended to every key, so several deployments can share a database.
        ttl_s: When set, a session's documents expire this many seconds after their last
            read or update (Redis expires them itself: ``PX``/``PEXPIRE``).
        max_attempts: Compare-and-set attempts per update (and ``WATCH`` attempts per
            :meth:`delete_session`) before :class:`StoreConflictError`.

    Raises:
        StoreError: The ``redis`` package is not installed.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "skillshelf:",
        ttl_s: float | None = None,
        max_attempts: int = _MAX_ATTEMPTS,
    ) -> None:
        try:
            import redis
        except ImportError as exc:
            raise MissingExtraError(
                "redis", module="redis", feature="The Redis session store"
            ) from exc
        if ttl_s is not None and ttl_s <= 0:
            raise UsageError(f"ttl_s must be a positive number of seconds or None, not {ttl_s}.")
        if max_attempts < 1:
            raise UsageError(f"max_attempts must be at least 1, not {max_attempts}.")
        self._client: Redis = redis.Redis.from_url(url, decode_responses=True)
        self._watch_error = redis.WatchError
        self._redis_error = redis.RedisError
        # Only hashes the script: nothing reaches the server until the first update.
        self._compare_and_set: Script = self._client.register_script(_COMPARE_AND_SET)
        self._touch: Script = self._client.register_script(_TOUCH)
        self._compare_and_set_entries: Script = self._client.register_script(
            _COMPARE_AND_SET_ENTRIES
        )
        self._touch_entries: Script = self._client.register_script(_TOUCH_ENTRIES)
        self._prefix = prefix
        self._sessions_key = f"{prefix}sessions"
        self._ttl_s = ttl_s
        self._ttl_ms = None if ttl_s is None else max(1, round(ttl_s * 1000))
        self._max_attempts = max_attempts
        self._guard = _ReentryGuard()
        self._closed = False

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        _check_ids(session, agent)
        self._check_usable()
        key = self._doc_key(session, agent)
        with self._talking():
            if self._ttl_ms is None:
                raw = cast("str | None", self._client.get(key))
            else:  # reading is using: the TTL starts again
                keys = [key, self._agents_key(session), self._sessions_key]
                until = repr(time.time() + (self._ttl_s or 0))
                raw = cast(
                    "str | None", self._touch(keys=keys, args=[session, self._ttl_ms, until])
                )
        return _decode(raw)

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`.

        ``fn`` runs again each time a concurrent writer changed the document first.
        """
        _check_ids(session, agent)
        self._check_usable()
        keys = [
            self._doc_key(session, agent),
            self._agents_key(session),
            self._sessions_key,
            self._records_key(session),
        ]
        with self._guard.hold(), self._talking():
            read = cast("str | None", self._client.get(keys[0]))
            for attempt in range(self._max_attempts):
                self._backoff(attempt)
                new = fn(_decode(read))
                written, read = self._write_if_unchanged(keys, session, agent, read, new)
                if written:
                    return new
        raise StoreConflictError(
            f"Gave up updating session {session[:80]!r}, agent {agent[:80]!r} after "
            f"{self._max_attempts} conflicting attempts."
        )

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        """Return the named entries that exist; see :class:`SessionStore`."""
        _check_ids(session, agent)
        wanted = _check_names(names)
        self._check_usable()
        key = self._entries_key(session, agent)
        with self._talking():
            if wanted == []:
                return {}
            if self._ttl_ms is None:
                if wanted is None:
                    return _decode_entries(cast("dict[str, str]", self._client.hgetall(key)))
                values = cast("list[str | None]", self._client.hmget(key, wanted))
                return _decode_entries(_present(wanted, values))
            keys = [key, self._records_key(session), self._sessions_key]
            until = repr(time.time() + (self._ttl_s or 0))
            args = [session, self._ttl_ms, until, *(wanted or ())]
            reply = cast("list[str | None]", self._touch_entries(keys=keys, args=args))
        if wanted is None:
            flat = cast("list[str]", reply)
            return _decode_entries(dict(zip(flat[::2], flat[1::2], strict=True)))
        return _decode_entries(_present(wanted, reply))

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        """Atomically read the named entries and apply ``fn``'s changes; see
        :class:`SessionStore`. ``fn`` runs again each time a concurrent writer changed one of
        them first."""
        _check_ids(session, agent)
        wanted = _check_names(names) or []
        self._check_usable()
        keys = [
            self._entries_key(session, agent),
            self._records_key(session),
            self._sessions_key,
            self._agents_key(session),
        ]
        with self._guard.hold(), self._talking():
            read: list[str | None] = (
                cast("list[str | None]", self._client.hmget(keys[0], wanted)) if wanted else []
            )
            for attempt in range(self._max_attempts):
                self._backoff(attempt)
                changes = fn(_decode_entries(_present(wanted, read)))
                encoded = _encode_changes(changes)
                if not encoded:
                    return changes
                written, now = self._write_entries_if_unchanged(
                    keys, session, agent, wanted, read, encoded
                )
                if written:
                    return changes
                read = now
        raise StoreConflictError(
            f"Gave up updating the entries of session {session[:80]!r}, agent "
            f"{agent[:80]!r} after {self._max_attempts} conflicting attempts."
        )

    def _write_entries_if_unchanged(
        self,
        keys: list[str],
        session: str,
        agent: str,
        names: list[str],
        read: list[str | None],
        changes: dict[str, str | None],
    ) -> tuple[bool, list[str | None]]:
        """(True, read) when ``changes`` were written, else (False, the fields' values now)."""
        ttl, score, stale = self._expiry_args()
        args: list[str | int] = [session, agent, ttl, score, stale, len(names), *names]
        args += [value or "" for value in read]
        for name, doc in changes.items():
            args += [name, doc or ""]
        result = cast("int | list[str]", self._compare_and_set_entries(keys=keys, args=args))
        if isinstance(result, int):
            return True, read
        return False, [value or None for value in result]

    def _expiry_args(self) -> tuple[str, str, str]:
        """The TTL in milliseconds, the index score and the expired-score bound ('' for no
        TTL; a score of +inf)."""
        if self._ttl_s is None:
            return "", "+inf", ""
        now = time.time()
        return str(self._ttl_ms), repr(now + self._ttl_s), f"({now!r}"

    def delete_session(self, session: str) -> None:
        """Delete the documents and entries of every agent of ``session``."""
        check_name("session id", session)
        self._check_usable()
        agents_key, records_key = self._agents_key(session), self._records_key(session)
        for attempt in range(self._max_attempts):
            self._backoff(attempt)
            with self._talking(), self._client.pipeline() as pipe:
                try:
                    _watch(pipe, agents_key, records_key)
                    agents = cast("set[str]", pipe.smembers(agents_key))
                    records = cast("set[str]", pipe.smembers(records_key))
                    pipe.multi()
                    doc_keys = [self._doc_key(session, agent) for agent in agents]
                    doc_keys += [self._entries_key(session, agent) for agent in records]
                    pipe.delete(agents_key, records_key, *doc_keys)
                    pipe.zrem(self._sessions_key, session)
                    pipe.execute()
                    return
                except self._watch_error:
                    continue
        raise StoreConflictError(
            f"Gave up deleting session {session[:80]!r} after {self._max_attempts} attempts."
        )

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document or entry, sorted."""
        self._check_usable()
        with self._talking(), self._client.pipeline() as pipe:
            self._queue_prune(pipe)
            pipe.zrange(self._sessions_key, 0, -1)
            members = cast("list[str]", pipe.execute()[-1])
        return sorted(members)

    def close(self) -> None:
        """Close the connection pool; the store cannot be used afterwards."""
        self._guard.check()
        self._closed = True
        self._client.close()

    def _write_if_unchanged(
        self, keys: list[str], session: str, agent: str, read: str | None, new: Doc | None
    ) -> tuple[bool, str | None]:
        """Return (True, read) when ``new`` was written, else (False, the stored JSON now)."""
        encoded = "" if new is None else _encode(new)
        ttl, score, stale = self._expiry_args()
        args = [session, agent, read or "", encoded, ttl, score, stale]
        # Script.__call__ sends EVALSHA and, on NOSCRIPT, loads the script and sends it again.
        result: int | str = self._compare_and_set(keys=keys, args=args)
        if isinstance(result, int):
            return True, read
        return False, result or None

    def _queue_prune(self, pipe: Pipeline) -> None:
        # Sessions whose documents all expired leave their id behind in the index; drop them.
        pipe.zremrangebyscore(self._sessions_key, "-inf", f"({time.time()!r}")

    def _doc_key(self, session: str, agent: str) -> str:
        return f"{self._prefix}doc:{len(session)}:{session}:{agent}"

    def _agents_key(self, session: str) -> str:
        return f"{self._prefix}agents:{session}"

    def _entries_key(self, session: str, agent: str) -> str:
        return f"{self._prefix}ent:{len(session)}:{session}:{agent}"

    def _records_key(self, session: str) -> str:
        return f"{self._prefix}records:{session}"

    def _backoff(self, attempt: int) -> None:
        if attempt:
            time.sleep(random.uniform(0, min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2**attempt)))

    @contextmanager
    def _talking(self) -> Iterator[None]:
        """Turn the driver's failures (server down, timeout, error reply) into StoreError."""
        try:
            yield
        except self._redis_error as exc:
            raise StoreError(f"The Redis session store failed: {exc}") from exc

    def _check_usable(self) -> None:
        self._guard.check()
        if self._closed:
            raise UsageError("This session store is closed.")


def _watch(pipe: Pipeline, *keys: str) -> None:
    pipe.watch(*keys)  # type: ignore[no-untyped-call]  # redis-py leaves Pipeline.watch unannotated


def _present(names: list[str], values: list[str | None]) -> dict[str, str]:
    """HMGET's answer as the fields that hold something."""
    return {name: value for name, value in zip(names, values, strict=True) if value}

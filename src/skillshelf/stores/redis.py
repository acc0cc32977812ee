"""The session store for many workers: Redis, so that any worker can serve any session.

Layout under a key prefix (default ``skillshelf:``):

* ``doc:<len(session)>:<session>:<agent>`` — a string holding one document's JSON (the length
  makes the key unambiguous whatever characters the ids contain);
* ``agents:<session>`` — the set of agents holding a document in that session;
* ``sessions`` — a sorted set of session ids, scored by when their last document expires
  (``+inf`` without a TTL).

Updates use optimistic locking (``WATCH``/``MULTI``/``EXEC``) and retry on conflict, so ``fn``
may run more than once. Needs the ``redis`` extra; written for a standalone Redis (the
multi-key transactions do not span Redis Cluster slots).
"""

from __future__ import annotations

import random
import time
from typing import TYPE_CHECKING, Any, cast

from skillshelf.errors import UsageError
from skillshelf.stores import (
    Doc,
    StoreConflictError,
    StoreError,
    Updater,
    _check_id,
    _check_ids,
    _decode,
    _encode,
    _ReentryGuard,
)

if TYPE_CHECKING:
    from redis import Redis
    from redis.client import Pipeline

__all__ = ["RedisStore"]

# Enough that a writer losing every race to a handful of busy peers still gets through;
# past it something is hammering one key and a clear error beats spinning.
_MAX_ATTEMPTS = 100
# Jittered exponential backoff between attempts spreads colliding writers apart.
_BACKOFF_BASE_S = 0.001
_BACKOFF_CAP_S = 0.05


class RedisStore:
    """Session documents in Redis, shared by any number of processes and machines.

    Args:
        url: A ``redis://host:port/db`` or ``rediss://…`` URL (any form redis-py accepts).
        prefix: Prepended to every key, so several deployments can share a database.
        ttl_s: When set, a session's documents expire this many seconds after its last update.
        max_attempts: Optimistic-locking attempts per call before :class:`StoreConflictError`.

    Raises:
        StoreError: The ``redis`` package is not installed.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "skillshelf:",
        ttl_s: int | None = None,
        max_attempts: int = _MAX_ATTEMPTS,
    ) -> None:
        try:
            import redis
        except ImportError as exc:
            raise StoreError(
                "The Redis session store needs the 'redis' package: "
                "pip install 'skillshelf[redis]'."
            ) from exc
        if ttl_s is not None and ttl_s <= 0:
            raise UsageError(f"ttl_s must be a positive number of seconds or None, not {ttl_s}.")
        if max_attempts < 1:
            raise UsageError(f"max_attempts must be at least 1, not {max_attempts}.")
        self._client: Redis = redis.Redis.from_url(url, decode_responses=True)
        self._watch_error = redis.WatchError
        self._prefix = prefix
        self._sessions_key = f"{prefix}sessions"
        self._ttl_s = ttl_s
        self._max_attempts = max_attempts
        self._guard = _ReentryGuard()
        self._closed = False

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        _check_ids(session, agent)
        self._check_usable()
        return _decode(cast("str | None", self._client.get(self._doc_key(session, agent))))

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`.

        ``fn`` runs again each time a concurrent writer changed the document first.
        """
        _check_ids(session, agent)
        self._check_usable()
        with self._guard.hold():
            for attempt in range(self._max_attempts):
                self._backoff(attempt)
                with self._client.pipeline() as pipe:
                    try:
                        return self._try_update(pipe, session, agent, fn)
                    except self._watch_error:
                        continue
        raise StoreConflictError(
            f"Gave up updating session {session[:80]!r}, agent {agent[:80]!r} after "
            f"{self._max_attempts} conflicting attempts."
        )

    def delete_session(self, session: str) -> None:
        """Delete the documents of every agent of ``session``."""
        _check_id("session", session)
        self._check_usable()
        agents_key = self._agents_key(session)
        for attempt in range(self._max_attempts):
            self._backoff(attempt)
            with self._client.pipeline() as pipe:
                try:
                    _watch(pipe, agents_key)
                    agents = cast("set[str]", pipe.smembers(agents_key))
                    pipe.multi()
                    doc_keys = [self._doc_key(session, agent) for agent in agents]
                    pipe.delete(agents_key, *doc_keys)
                    pipe.zrem(self._sessions_key, session)
                    pipe.execute()
                    return
                except self._watch_error:
                    continue
        raise StoreConflictError(
            f"Gave up deleting session {session[:80]!r} after {self._max_attempts} attempts."
        )

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document, sorted."""
        self._check_usable()
        with self._client.pipeline() as pipe:
            self._queue_prune(pipe)
            pipe.zrange(self._sessions_key, 0, -1)
            members = cast("list[str]", pipe.execute()[-1])
        return sorted(members)

    def close(self) -> None:
        """Close the connection pool; the store cannot be used afterwards."""
        self._guard.check()
        self._closed = True
        self._client.close()

    def _try_update(self, pipe: Pipeline, session: str, agent: str, fn: Updater) -> Doc | None:
        key = self._doc_key(session, agent)
        agents_key = self._agents_key(session)
        _watch(pipe, key)
        new = fn(_decode(cast("str | None", pipe.get(key))))
        if new is None:
            # Watching the agents set too: if another agent joins the session meanwhile, EXEC
            # fails and the retry sees it, so a live session is never dropped from the index.
            _watch(pipe, agents_key)
            others = cast("set[str]", pipe.smembers(agents_key)) - {agent}
            pipe.multi()
            pipe.delete(key)
            pipe.srem(agents_key, agent)
            if not others:
                pipe.zrem(self._sessions_key, session)
        else:
            encoded = _encode(new)
            score: Any = "+inf" if self._ttl_s is None else time.time() + self._ttl_s
            pipe.multi()
            pipe.set(key, encoded, ex=self._ttl_s)
            pipe.sadd(agents_key, agent)
            pipe.zadd(self._sessions_key, {session: score}, gt=True)
            if self._ttl_s is not None:
                pipe.expire(agents_key, self._ttl_s)
                self._queue_prune(pipe)
        pipe.execute()
        return new

    def _queue_prune(self, pipe: Pipeline) -> None:
        # Sessions whose documents all expired leave their id behind in the index; drop them.
        pipe.zremrangebyscore(self._sessions_key, "-inf", f"({time.time()!r}")

    def _doc_key(self, session: str, agent: str) -> str:
        return f"{self._prefix}doc:{len(session)}:{session}:{agent}"

    def _agents_key(self, session: str) -> str:
        return f"{self._prefix}agents:{session}"

    def _backoff(self, attempt: int) -> None:
        if attempt:
            time.sleep(random.uniform(0, min(_BACKOFF_CAP_S, _BACKOFF_BASE_S * 2**attempt)))

    def _check_usable(self) -> None:
        self._guard.check()
        if self._closed:
            raise UsageError("This session store is closed.")


def _watch(pipe: Pipeline, key: str) -> None:
    pipe.watch(key)  # type: ignore[no-untyped-call]  # redis-py leaves Pipeline.watch unannotated

"""An in-memory session store for one process: tests, demos and short-lived tools."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from skillshelf.errors import UsageError
from skillshelf.stores.base import (
    Doc,
    Updater,
    _check_id,
    _check_ids,
    _check_ttl,
    _decode,
    _encode,
    _ReentryGuard,
)

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps documents in a dict, serialised to JSON so no caller can alias stored state.

    Thread-safe: one lock serialises every call. State is lost when the process ends.

    Args:
        ttl_s: When set, a document expires this many seconds after its last read or update.
        clock: Seconds now (tests pass a fake one).
    """

    def __init__(
        self, *, ttl_s: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        _check_ttl(ttl_s)
        # Ordered by last use: with one TTL for all, the expired ones are always at the front.
        self._docs: OrderedDict[tuple[str, str], tuple[str, float]] = OrderedDict()
        self._ttl_s = ttl_s
        self._clock = clock
        self._lock = threading.Lock()
        self._guard = _ReentryGuard()
        self._closed = False

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        _check_ids(session, agent)
        self._guard.check()
        with self._lock:
            self._check_open()
            raw = self._touch((session, agent))
        return _decode(raw)

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`."""
        _check_ids(session, agent)
        key = (session, agent)
        with self._guard.hold(), self._lock:
            self._check_open()
            new = fn(_decode(self._touch(key)))
            if new is None:
                self._docs.pop(key, None)
            else:
                self._docs[key] = (_encode(new), self._expiry())
                self._docs.move_to_end(key)
        return new

    def delete_session(self, session: str) -> None:
        """Delete the documents of every agent of ``session``."""
        _check_id("session", session)
        self._guard.check()
        with self._lock:
            self._check_open()
            for key in [key for key in self._docs if key[0] == session]:
                del self._docs[key]

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document, sorted."""
        self._guard.check()
        with self._lock:
            self._check_open()
            self._purge()
            return sorted({session for session, _ in self._docs})

    def close(self) -> None:
        """Drop every document; the store cannot be used afterwards."""
        self._guard.check()
        with self._lock:
            self._closed = True
            self._docs.clear()

    def _touch(self, key: tuple[str, str]) -> str | None:
        """The stored JSON of ``key`` (None if absent or expired), its TTL started again."""
        self._purge()
        held = self._docs.get(key)
        if held is None:
            return None
        self._docs[key] = (held[0], self._expiry())
        self._docs.move_to_end(key)
        return held[0]

    def _expiry(self) -> float:
        return float("inf") if self._ttl_s is None else self._clock() + self._ttl_s

    def _purge(self) -> None:
        now = self._clock()
        while self._docs:
            key, (_raw, expiry) = next(iter(self._docs.items()))
            if expiry > now:
                return
            del self._docs[key]

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("This session store is closed.")

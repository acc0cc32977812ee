"""An in-memory session store for one process: tests, demos and short-lived tools."""

from __future__ import annotations

import threading

from skillshelf.errors import UsageError
from skillshelf.stores.base import (
    Doc,
    Updater,
    _check_id,
    _check_ids,
    _decode,
    _encode,
    _ReentryGuard,
)

__all__ = ["MemoryStore"]


class MemoryStore:
    """Keeps documents in a dict, serialised to JSON so no caller can alias stored state.

    Thread-safe: one lock serialises every call. State is lost when the process ends.
    """

    def __init__(self) -> None:
        self._docs: dict[tuple[str, str], str] = {}
        self._lock = threading.Lock()
        self._guard = _ReentryGuard()
        self._closed = False

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        _check_ids(session, agent)
        self._guard.check()
        with self._lock:
            self._check_open()
            raw = self._docs.get((session, agent))
        return _decode(raw)

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`."""
        _check_ids(session, agent)
        key = (session, agent)
        with self._guard.hold(), self._lock:
            self._check_open()
            new = fn(_decode(self._docs.get(key)))
            if new is None:
                self._docs.pop(key, None)
            else:
                self._docs[key] = _encode(new)
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
            return sorted({session for session, _ in self._docs})

    def close(self) -> None:
        """Drop every document; the store cannot be used afterwards."""
        self._guard.check()
        with self._lock:
            self._closed = True
            self._docs.clear()

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("This session store is closed.")

"""An in-memory session store for one process: tests, demos and short-lived tools."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Collection, Mapping
from typing import TypeVar

from skillshelf.errors import UsageError
from skillshelf.stores.base import (
    Doc,
    Entries,
    EntriesUpdater,
    Updater,
    _check_ids,
    _check_names,
    _check_ttl,
    _decode,
    _decode_entries,
    _encode,
    _encode_changes,
    _ReentryGuard,
    check_name,
)

__all__ = ["MemoryStore"]

_Key = tuple[str, str]
V = TypeVar("V")


class MemoryStore:
    """Keeps documents in dicts, serialised to JSON so no caller can alias stored state.

    Thread-safe: one lock serialises every call. State is lost when the process ends.

    Args:
        ttl_s: When set, a document (or a record of entries) expires this many seconds
            after its last read or update.
        clock: Seconds now (tests pass a fake one).
    """

    def __init__(
        self, *, ttl_s: float | None = None, clock: Callable[[], float] = time.monotonic
    ) -> None:
        _check_ttl(ttl_s)
        # Ordered by last use: with one TTL for all, the expired ones are always at the front.
        self._docs: OrderedDict[_Key, tuple[str, float]] = OrderedDict()
        self._records: OrderedDict[_Key, tuple[dict[str, str], float]] = OrderedDict()
        # The keys of each session in either dict, so deleting a session is O(its keys).
        self._by_session: dict[str, set[_Key]] = {}
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
            held = self._touch(self._docs, (session, agent))
        return _decode(held)

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one document; see :class:`SessionStore`."""
        _check_ids(session, agent)
        key = (session, agent)
        with self._guard.hold(), self._lock:
            self._check_open()
            new = fn(_decode(self._touch(self._docs, key)))
            if new is None:
                self._drop(self._docs, key)
            else:
                self._put(self._docs, key, _encode(new))
        return new

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        """Return the named entries that exist; see :class:`SessionStore`."""
        _check_ids(session, agent)
        wanted = _check_names(names)
        self._guard.check()
        with self._lock:
            self._check_open()
            record = self._touch(self._records, (session, agent)) or {}
            raw = _pick(record, wanted)
        return _decode_entries(raw)

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        """Atomically read the named entries and apply ``fn``'s changes; see
        :class:`SessionStore`."""
        _check_ids(session, agent)
        wanted = _check_names(names) or []
        key = (session, agent)
        with self._guard.hold(), self._lock:
            self._check_open()
            record = self._touch(self._records, key) or {}
            changes = fn(_decode_entries(_pick(record, wanted)))
            encoded = _encode_changes(changes)
            if encoded:
                new = dict(record)
                for name, raw in encoded.items():
                    if raw is None:
                        new.pop(name, None)
                    else:
                        new[name] = raw
                if new:
                    self._put(self._records, key, new)
                else:
                    self._drop(self._records, key)
        return changes

    def delete_session(self, session: str) -> None:
        """Delete the documents and entries of every agent of ``session``."""
        check_name("session id", session)
        self._guard.check()
        with self._lock:
            self._check_open()
            for key in self._by_session.pop(session, ()):
                self._docs.pop(key, None)
                self._records.pop(key, None)

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document or entry, sorted."""
        self._guard.check()
        with self._lock:
            self._check_open()
            self._purge(self._docs)
            self._purge(self._records)
            return sorted(self._by_session)

    def close(self) -> None:
        """Drop every document; the store cannot be used afterwards."""
        self._guard.check()
        with self._lock:
            self._closed = True
            self._docs.clear()
            self._records.clear()
            self._by_session.clear()

    def _touch(self, held: OrderedDict[_Key, tuple[V, float]], key: _Key) -> V | None:
        """The stored value of ``key`` (None if absent or expired), its TTL started again."""
        self._purge(held)
        found = held.get(key)
        if found is None:
            return None
        held[key] = (found[0], self._expiry())
        held.move_to_end(key)
        return found[0]

    def _put(self, held: OrderedDict[_Key, tuple[V, float]], key: _Key, value: V) -> None:
        held[key] = (value, self._expiry())
        held.move_to_end(key)
        self._by_session.setdefault(key[0], set()).add(key)

    def _drop(self, held: OrderedDict[_Key, tuple[V, float]], key: _Key) -> None:
        if held.pop(key, None) is not None:
            self._forget(key)

    def _forget(self, key: _Key) -> None:
        """Drop ``key`` from its session's keys once neither dict holds it."""
        if key in self._docs or key in self._records:
            return
        keys = self._by_session.get(key[0])
        if keys is not None:
            keys.discard(key)
            if not keys:
                del self._by_session[key[0]]

    def _expiry(self) -> float:
        return float("inf") if self._ttl_s is None else self._clock() + self._ttl_s

    def _purge(self, held: OrderedDict[_Key, tuple[V, float]]) -> None:
        if self._ttl_s is None:
            return
        now = self._clock()
        while held:
            key, (_value, expiry) = next(iter(held.items()))
            if expiry > now:
                return
            del held[key]
            self._forget(key)

    def _check_open(self) -> None:
        if self._closed:
            raise UsageError("This session store is closed.")


def _pick(record: dict[str, str], names: list[str] | None) -> dict[str, str]:
    if names is None:
        return dict(record)
    return {name: record[name] for name in names if name in record}

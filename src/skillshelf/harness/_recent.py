"""A bounded map of the most recently used entries (:class:`Recent`): what a face keeps per
conversation — built sessions, the model of its last call, its run's slash loads — without
growing with the number of conversations it has seen."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable
from typing import Generic, TypeVar

__all__ = ["Recent"]

K = TypeVar("K")
V = TypeVar("V")


class Recent(Generic[K, V]):
    """Up to ``limit`` entries; using one (get, put, make) makes it the newest, and one more
    than ``limit`` drops the least recently used. Safe to share between threads."""

    def __init__(self, limit: int) -> None:
        self._limit = limit
        self._entries: OrderedDict[K, V] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            self._put(key, value)

    def make(self, key: K, build: Callable[[], V]) -> V:
        """The entry of ``key``, built (under the lock, so once) when there is none."""
        with self._lock:
            value = self._entries.get(key)
            if value is None:
                value = build()
                self._put(key, value)
            else:
                self._entries.move_to_end(key)
            return value

    def pop(self, key: K) -> V | None:
        with self._lock:
            return self._entries.pop(key, None)

    def __len__(self) -> int:
        return len(self._entries)

    def _put(self, key: K, value: V) -> None:
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self._limit:
            self._entries.popitem(last=False)

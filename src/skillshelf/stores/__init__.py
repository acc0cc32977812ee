"""Where per-session skill state lives: one protocol, three stores.

A store keeps one JSON document per (session, agent) pair and changes it only through
:meth:`SessionStore.update`, an atomic read-modify-write. The stores know nothing about what
the documents mean; session state builds on top of them.

* :class:`~skillshelf.stores.memory.MemoryStore` — one process, for tests and demos.
* :class:`~skillshelf.stores.sqlite.SQLiteStore` — the embedded default; several processes on
  one machine may share a file.
* :class:`~skillshelf.stores.redis.RedisStore` — many workers on many machines (needs the
  ``redis`` extra).

:func:`open_store` turns a URL (``memory:``, ``sqlite:PATH``, ``redis://host:port/db``) into one.
"""

from __future__ import annotations

import importlib
import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from skillshelf.errors import ConfigError, SkillshelfError, UsageError

if TYPE_CHECKING:
    from skillshelf.stores.memory import MemoryStore
    from skillshelf.stores.redis import RedisStore
    from skillshelf.stores.sqlite import SQLiteStore

__all__ = [
    "Doc",
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "SessionStore",
    "StoreConflictError",
    "StoreError",
    "Updater",
    "open_store",
]

Doc = dict[str, Any]
Updater = Callable[[Doc | None], Doc | None]

_LAZY = {
    "MemoryStore": "skillshelf.stores.memory",
    "SQLiteStore": "skillshelf.stores.sqlite",
    "RedisStore": "skillshelf.stores.redis",
}
_URL_FORMS = "'memory:', 'sqlite:PATH', 'sqlite:///PATH' or 'redis://host:port/db'"


class StoreError(SkillshelfError):
    """A session store failed: it cannot be reached or opened, a newer version wrote it, or it
    holds a document that is not valid JSON of the right shape."""


class StoreConflictError(StoreError):
    """An update kept colliding with concurrent writers and gave up after its bounded retries."""


@runtime_checkable
class SessionStore(Protocol):
    """One JSON document per (session, agent), changed only by atomic read-modify-write.

    Session and agent ids are non-empty strings (:class:`~skillshelf.errors.UsageError`
    otherwise). Documents are dicts that ``json`` can serialise; nothing is ever pickled.
    """

    def get(self, session: str, agent: str) -> Doc | None:
        """Return a fresh copy of the document, or None when there is none."""
        ...

    def update(self, session: str, agent: str, fn: Updater) -> Doc | None:
        """Atomically read-modify-write one (session, agent) document.

        ``fn`` gets the current document (None if absent) and returns the new one (None
        deletes it). Concurrent updates of the same key, from threads or processes, are
        serialised: no update is lost. Updates of different keys never see each other.
        ``fn`` may run more than once (a store may retry after a conflict), so it must only
        compute its result; it must not call back into the store.

        Returns:
            What ``fn`` returned.

        Raises:
            TypeError: ``fn`` returned something that is not a JSON-serialisable dict; the
                stored document is unchanged.
            StoreConflictError: The store gave up retrying under contention.
            StoreError: The store cannot be reached, or holds a corrupt document.
        """
        ...

    def delete_session(self, session: str) -> None:
        """Delete the documents of every agent of ``session``."""
        ...

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document, sorted."""
        ...

    def close(self) -> None:
        """Release connections. Using the store afterwards is a :class:`UsageError`."""
        ...


def open_store(url: str | None) -> SessionStore:
    """Open the store a URL names.

    Args:
        url: ``None`` or ``memory:`` for a private in-memory store; ``sqlite:PATH`` or
            ``sqlite:///PATH`` for a SQLite file (relative paths resolve against the working
            directory; ``sqlite:////abs/path`` is absolute); ``redis://host:port/db`` or
            ``rediss://…`` for Redis.

    Raises:
        ConfigError: The URL has an unknown scheme or no path.
        MissingExtraError: A Redis URL without the ``redis`` extra installed.
        StoreError: The store cannot be opened (see each store's constructor).
    """
    if url is None or url in ("memory:", "memory://"):
        from skillshelf.stores.memory import MemoryStore

        return MemoryStore()
    if url.startswith(("redis://", "rediss://")):
        from skillshelf.stores.redis import RedisStore

        return RedisStore(url)
    if url.startswith("sqlite:"):
        from skillshelf.stores.sqlite import SQLiteStore

        return SQLiteStore(_sqlite_path(url))
    raise ConfigError(f"Unknown session store URL {url!r}; expected {_URL_FORMS}.")


def _sqlite_path(url: str) -> Path:
    rest = url.removeprefix("sqlite:")
    if rest.startswith("///"):
        rest = rest[3:]
    elif rest.startswith("//"):
        raise ConfigError(
            f"A SQLite URL names no host: use 'sqlite:PATH' or 'sqlite:///PATH' in {url!r}."
        )
    if not rest or rest == ":memory:":
        raise ConfigError(f"{url!r} names no database file; use 'memory:' for an in-memory store.")
    return Path(rest).expanduser()


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


# Helpers shared by the stores (private to this package).


def _check_id(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise UsageError(f"The {what} id must be a non-empty string, not {value!r}.")
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"The {what} id must be valid Unicode text.") from None


def _check_ids(session: str, agent: str) -> None:
    _check_id("session", session)
    _check_id("agent", agent)


def _encode(doc: object) -> str:
    if not isinstance(doc, dict):
        raise TypeError(f"A session document must be a dict or None, not {type(doc).__name__}.")
    try:
        return json.dumps(doc, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"A session document must be JSON-serialisable: {exc}") from None


def _decode(raw: str | bytes | None) -> Doc | None:
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, and UnicodeDecodeError for bytes
        raise StoreError(f"A stored session document is not valid JSON: {exc}") from exc
    if not isinstance(doc, dict):
        raise StoreError(f"A stored session document is a JSON {type(doc).__name__}, not an object")
    return doc


class _ReentryGuard:
    """Refuses a store call made from inside an update's ``fn`` (it would deadlock or nest)."""

    def __init__(self) -> None:
        self._local = threading.local()

    @contextmanager
    def hold(self) -> Iterator[None]:
        self.check()
        self._local.busy = True
        try:
            yield
        finally:
            self._local.busy = False

    def check(self) -> None:
        if getattr(self._local, "busy", False):
            raise UsageError("An update's fn must not call the store it runs in.")

"""Where per-session skill state lives: one protocol, three stores.

A store keeps, per (session, agent) pair, one JSON document and a record of named entries
(each a JSON document read and written alone), and changes them only through atomic
read-modify-writes (:meth:`SessionStore.update`, :meth:`SessionStore.update_entries`). The
stores know nothing about what the documents mean; session state builds on top of them, as
entries.

* :class:`~skillshelf.stores.memory.MemoryStore` — one process, for tests and demos.
* :class:`~skillshelf.stores.sqlite.SQLiteStore` — the embedded default; several processes on
  one machine may share a file.
* :class:`~skillshelf.stores.redis.RedisStore` — many workers on many machines (needs the
  ``redis`` extra).

:func:`open_store` turns a URL (``memory:``, ``sqlite:PATH``, ``redis://host:port/db``) into one.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Final

from skillshelf._lazy import lazy_attributes
from skillshelf.errors import ConfigError
from skillshelf.stores.base import (
    MAX_DOC_DEPTH,
    MAX_NAME_CHARS,
    NAME_RULE,
    Doc,
    Entries,
    EntriesUpdater,
    SessionStore,
    StoreConflictError,
    StoreError,
    Updater,
    check_name,
)

if TYPE_CHECKING:
    from skillshelf.stores.memory import MemoryStore
    from skillshelf.stores.redis import RedisStore
    from skillshelf.stores.sqlite import SQLiteStore

__all__ = [
    "MAX_DOC_DEPTH",
    "MAX_NAME_CHARS",
    "NAME_RULE",
    "STATE_TTL_S",
    "Doc",
    "Entries",
    "EntriesUpdater",
    "MemoryStore",
    "RedisStore",
    "SQLiteStore",
    "SessionStore",
    "StoreConflictError",
    "StoreError",
    "Updater",
    "check_name",
    "open_store",
]

# The stores are imported on first use: Redis is an optional extra, SQLite costs start-up time.
_LAZY = {
    "MemoryStore": "skillshelf.stores.memory",
    "SQLiteStore": "skillshelf.stores.sqlite",
    "RedisStore": "skillshelf.stores.redis",
}
_URL_FORMS = "'memory:', 'sqlite:PATH', 'sqlite:///PATH' or 'redis://host:port/db'"


STATE_TTL_S: Final = 3600  # an hour idle: a conversation paused for lunch keeps its loads


def open_store(url: str | None, *, ttl_s: float | None = None) -> SessionStore:
    """Open the store a URL names.

    Args:
        url: ``None`` or ``memory:`` for a private in-memory store; ``sqlite:PATH`` or
            ``sqlite:///PATH`` for a SQLite file (relative paths resolve against the working
            directory; ``sqlite:////abs/path`` is absolute); ``redis://host:port/db`` or
            ``rediss://…`` for Redis.
        ttl_s: When set, a document expires this many seconds after its last read or update
            (natively in Redis, by an expiry column in SQLite); None keeps documents until
            they are deleted.

    Raises:
        ConfigError: The URL has an unknown scheme or no path.
        MissingExtraError: A Redis URL without the ``redis`` extra installed.
        StoreError: The store cannot be opened (see each store's constructor).
    """
    if url is None or url in ("memory:", "memory://"):
        from skillshelf.stores.memory import MemoryStore

        return MemoryStore(ttl_s=ttl_s)
    if url.startswith(("redis://", "rediss://")):
        from skillshelf.stores.redis import RedisStore

        return RedisStore(url, ttl_s=ttl_s)
    if url.startswith("sqlite:"):
        from skillshelf.stores.sqlite import SQLiteStore

        return SQLiteStore(_sqlite_path(url), ttl_s=ttl_s)
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


__getattr__ = lazy_attributes("skillshelf.stores", _LAZY, globals())

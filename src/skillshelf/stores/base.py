"""The session-store protocol, its errors and the helpers every store shares.

Stores import this module, never the package: :mod:`skillshelf.stores` picks a store by URL
and imports the stores, so the package and the stores never import each other.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Protocol, runtime_checkable

from skillshelf.errors import SkillshelfError, UsageError

__all__ = ["Doc", "SessionStore", "StoreConflictError", "StoreError", "Updater"]

Doc = dict[str, Any]
Updater = Callable[[Doc | None], Doc | None]


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


# Helpers shared by the stores (private to this package).


def _check_id(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise UsageError(f"The {what} id must be a non-empty string, not {value!r}.")
    if value.isascii():  # the common case, and always valid UTF-8
        return
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        raise UsageError(f"The {what} id must be valid Unicode text.") from None


def _check_ttl(ttl_s: float | None) -> None:
    if ttl_s is not None and not ttl_s > 0:
        raise UsageError(f"ttl_s must be a positive number of seconds or None, not {ttl_s}.")


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

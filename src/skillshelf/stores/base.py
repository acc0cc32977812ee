"""The session-store protocol, its errors and the helpers every store shares.

Stores import this module, never the package: :mod:`skillshelf.stores` picks a store by URL
and imports the stores, so the package and the stores never import each other.
"""

from __future__ import annotations

import json
import threading
import unicodedata
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from typing import Any, Final, Protocol, runtime_checkable

from skillshelf.errors import SkillshelfError, UsageError

__all__ = [
    "MAX_DOC_DEPTH",
    "MAX_NAME_CHARS",
    "NAME_RULE",
    "Doc",
    "Entries",
    "EntriesUpdater",
    "SessionStore",
    "StoreConflictError",
    "StoreError",
    "Updater",
    "check_name",
]

Doc = dict[str, Any]
Updater = Callable[[Doc | None], Doc | None]
Entries = dict[str, Doc]
# Gets the entries it asked for that exist; returns the changes: entry name -> document, or
# None to delete that entry.
EntriesUpdater = Callable[[Entries], Mapping[str, Doc | None]]
# How deep a stored document may nest (objects and arrays). What skillshelf writes nests under
# ten levels; a deeper one read back would make every recursive reader (json, ==, copies)
# risk RecursionError, so it is refused when written and is a corrupt document when read.
MAX_DOC_DEPTH: Final = 100
# Agent names and session ids are keys, shown in logs and traces: a bound keeps them keys.
MAX_NAME_CHARS: Final = 256
NAME_RULE: Final = (
    f"1-{MAX_NAME_CHARS} characters of valid Unicode, not only spaces, with no '#' "
    "and no control or format characters"
)


class StoreError(SkillshelfError):
    """A session store failed: it cannot be reached or opened, a newer version wrote it, or it
    holds a document that is not valid JSON of the right shape."""


class StoreConflictError(StoreError):
    """An update kept colliding with concurrent writers and gave up after its bounded retries."""


@runtime_checkable
class SessionStore(Protocol):
    """JSON documents per (session, agent), changed only by atomic read-modify-write.

    Two kinds of record live under a (session, agent) pair, side by side: one whole
    document (:meth:`get`, :meth:`update`: a chat history, a list of activations), and a
    record of named *entries* (:meth:`get_entries`, :meth:`update_entries`), each a document
    of its own that is read and written alone — what session state uses, so that a call
    costs what it touches, not what the session holds. Both expire and are deleted together
    with their session.

    Session ids follow :data:`NAME_RULE` (:func:`check_name`); agent ids and entry names are
    non-empty strings of valid Unicode (agent ids are keys: the library derives some, such
    as ``main#history``) — :class:`~skillshelf.errors.UsageError` otherwise. Documents are
    dicts that ``json`` can serialise, at most :data:`MAX_DOC_DEPTH` levels deep; nothing is
    ever pickled.
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

    def get_entries(
        self, session: str, agent: str, names: Collection[str] | None = None
    ) -> Entries:
        """Return fresh copies of the named entries of one (session, agent) record that
        exist (every entry when ``names`` is None); an empty dict when there are none."""
        ...

    def update_entries(
        self, session: str, agent: str, names: Collection[str], fn: EntriesUpdater
    ) -> Mapping[str, Doc | None]:
        """Atomically read the named entries of one record, and apply what ``fn`` changes.

        ``fn`` gets the named entries that exist and returns the changes: an entry name
        mapped to its new document, or to None to delete it. It may change entries it did
        not read; those are written as they are, without comparing what they held. An update
        applies only if no entry it read changed meanwhile: concurrent updates that read a
        common entry are serialised, and none is lost. A record left with no entry is
        gone. ``fn`` may run more than once, so it must only compute its result; it must not
        call back into the store.

        Returns:
            What ``fn`` returned.

        Raises:
            TypeError: ``fn`` returned something that is not a mapping of entry names to
                JSON-serialisable dicts or None; nothing is changed.
            StoreConflictError: The store gave up retrying under contention.
            StoreError: The store cannot be reached, or holds a corrupt entry.
        """
        ...

    def delete_session(self, session: str) -> None:
        """Delete the documents and entries of every agent of ``session``."""
        ...

    def sessions(self) -> list[str]:
        """Return the ids of the sessions that hold at least one document or entry, sorted."""
        ...

    def close(self) -> None:
        """Release connections. Using the store afterwards is a :class:`UsageError`."""
        ...


def check_name(what: str, value: object) -> str:
    """Check an agent name or a session (conversation) id a caller chose: one rule for both.

    ``#`` is reserved: skillshelf derives keys from an agent's name with it (skillshelf 0.1
    kept agent ``main``'s history under ``main#history``), so a name holding one could read or
    delete another agent's state. Control and format characters could forge a log or trace
    line, and the length keeps every key bounded.

    Returns:
        ``value``, when it follows :data:`NAME_RULE`.

    Raises:
        UsageError: It does not; the message states the rule.
    """
    if not isinstance(value, str) or not _follows_name_rule(value):
        shown = repr(value[:80] + "…" if isinstance(value, str) and len(value) > 80 else value)
        raise UsageError(f"The {what} {shown} is not a valid name: use {NAME_RULE}.")
    return value


def _follows_name_rule(value: str) -> bool:
    if not value.strip() or len(value) > MAX_NAME_CHARS or "#" in value:
        return False
    if not _is_unicode(value):
        return False
    return all(unicodedata.category(char) not in ("Cc", "Cf") for char in value)


# Helpers shared by the stores (private to this package).


def _check_id(what: str, value: object) -> None:
    if not isinstance(value, str) or not value:
        raise UsageError(f"The {what} id must be a non-empty string, not {value!r}.")
    if not _is_unicode(value):
        raise UsageError(f"The {what} id must be valid Unicode text.")


def _check_ttl(ttl_s: float | None) -> None:
    if ttl_s is not None and not ttl_s > 0:
        raise UsageError(f"ttl_s must be a positive number of seconds or None, not {ttl_s}.")


def _check_ids(session: str, agent: str) -> None:
    # The agent id is a key, not a name: the library derives keys such as "main#history".
    check_name("session id", session)
    _check_id("agent", agent)


def _check_names(names: Collection[str] | None) -> list[str] | None:
    if names is None:
        return None
    if isinstance(names, str):
        raise UsageError("Entry names must be a collection of names, not one string.")
    listed = list(dict.fromkeys(names))
    for name in listed:
        _check_id("entry", name)
    return listed


def _encode_changes(changes: object) -> dict[str, str | None]:
    """``fn``'s changes with each document encoded (None: delete), checked before any write."""
    if not isinstance(changes, Mapping):
        raise TypeError(
            f"An entries update must return a mapping of changes, not {type(changes).__name__}."
        )
    encoded: dict[str, str | None] = {}
    for name, doc in changes.items():
        if not isinstance(name, str) or not name or not _is_unicode(name):
            raise TypeError(f"An entry name must be a non-empty Unicode string, not {name!r}.")
        encoded[name] = None if doc is None else _encode(doc)
    return encoded


def _decode_entries(raw: Mapping[str, str | bytes]) -> Entries:
    entries: Entries = {}
    for name, value in raw.items():
        doc = _decode(value)
        if doc is not None:
            entries[name] = doc
    return entries


def _encode(doc: object) -> str:
    if not isinstance(doc, dict):
        raise TypeError(f"A session document must be a dict or None, not {type(doc).__name__}.")
    if not _within_depth(doc):
        raise TypeError(f"A session document must nest at most {MAX_DOC_DEPTH} levels deep.")
    try:
        text = json.dumps(doc, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"A session document must be JSON-serialisable: {exc}") from None
    if _is_unicode(text):
        return text
    # A lone surrogate (json.loads makes one of "\udc80") has no UTF-8 form for SQLite or
    # Redis: escaped as JSON does by default, it is stored as ASCII and read back the same.
    return json.dumps(doc, separators=(",", ":"), allow_nan=False)


def _is_unicode(text: str) -> bool:
    """Whether ``text`` has a UTF-8 form (holds no lone surrogate)."""
    if text.isascii():  # the common case, and always valid UTF-8
        return True
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _decode(raw: str | bytes | None) -> Doc | None:
    if raw is None:
        return None
    try:
        doc = json.loads(raw)
    except ValueError as exc:  # JSONDecodeError, and UnicodeDecodeError for bytes
        raise StoreError(f"A stored session document is not valid JSON: {exc}") from exc
    except RecursionError:  # json's own recursion is bounded by the interpreter's limit
        raise _too_deep() from None
    if not _within_depth(doc):
        raise _too_deep()
    if not isinstance(doc, dict):
        raise StoreError(f"A stored session document is a JSON {type(doc).__name__}, not an object")
    return doc


def _too_deep() -> StoreError:
    return StoreError(f"A stored session document nests deeper than {MAX_DOC_DEPTH} levels.")


def _within_depth(value: object, limit: int = MAX_DOC_DEPTH) -> bool:
    """Whether ``value`` nests at most ``limit`` containers deep (walked without recursion;
    a cycle counts as too deep)."""
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: Collection[object] = item.values()
        elif isinstance(item, list | tuple):
            children = item
        else:
            continue
        if depth > limit:
            return False
        pending.extend((child, depth + 1) for child in children)
    return True


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

"""The skill tools' record of one session and agent in a session store: the index of loaded
skills, an entry per loaded skill and the failure counts, each change atomic.

The state is read and changed a few entries at a time (:mod:`skillshelf.core.session` says
what each transition does); a session that still holds skillshelf 0.1's one document is
migrated on first use.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Final

from skillshelf.core.session import (
    FAILURES_ENTRY,
    INDEX_ENTRY,
    SKILL_ENTRY_PREFIX,
    LoadedSkill,
    SessionIndex,
    SessionState,
    failures_from_doc,
    record_failure,
    skill_entry,
)
from skillshelf.stores import Doc, Entries, SessionStore, StoreError

__all__ = ["Change", "SessionRecord"]

# The shapes a JSON document of the wrong form makes the session state's from_doc fail with
# (OverflowError: int() of the Infinity that json.loads reads).
_WRONG_SHAPE: Final = (TypeError, ValueError, AttributeError, OverflowError)
# A change of the session state: the index and the entries read → the entries to write.
Change = Callable[[SessionIndex, Entries], dict[str, Doc | None]]


class _Unmigrated(Exception):
    """A change found no index: the session may still hold skillshelf 0.1's one document."""


def _ended(index: SessionIndex, ended: list[str]) -> dict[str, Doc | None]:
    """The changes of a turn or request ending: the new index, the ended skills' entries gone."""
    return {INDEX_ENTRY: index.to_doc(), **{skill_entry(n): None for n in ended}}


_STORE_KINDS: Final = {"MemoryStore": "memory", "SQLiteStore": "SQLite", "RedisStore": "Redis"}


class SessionRecord:
    """The state of ``session_id``/``agent`` in ``store``, as the skill tools read and change it."""

    def __init__(self, store: SessionStore, session_id: str, agent: str) -> None:
        self.store = store
        self.session_id = session_id
        self.agent = agent
        self._no_legacy = False  # no skillshelf 0.1 state document to migrate (once seen)

    def state(self) -> SessionState:
        """The whole state, read from the store.

        Raises:
            StoreError: The store failed, or holds entries that are not a session state.
        """
        entries = self._entries(None)
        try:
            return SessionState.from_entries(entries)
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc

    def _entries(self, names: Sequence[str] | None) -> Entries:
        """The index and the named entries of this session's state (all with None)."""
        wanted = None if names is None else [INDEX_ENTRY, *names]
        entries = self.store.get_entries(self.session_id, self.agent, wanted)
        if INDEX_ENTRY not in entries and self._migrate():
            entries = self.store.get_entries(self.session_id, self.agent, wanted)
        return entries

    def change(self, names: Sequence[str], fn: Change) -> None:
        """Apply ``fn`` to the index and the named entries, atomically (``fn`` may run more
        than once; the last run is the one stored). Every change of a skill's entry changes
        the index too, so that two changes of one skill always collide on the index."""

        def step(entries: Entries) -> dict[str, Doc | None]:
            if INDEX_ENTRY not in entries and not migrated:
                raise _Unmigrated  # nothing written: look for a 0.1 document first
            try:
                return fn(SessionIndex.from_doc(entries.get(INDEX_ENTRY)), entries)
            except _WRONG_SHAPE as exc:
                raise self._not_a_state(exc) from exc

        migrated = self._no_legacy
        names = [INDEX_ENTRY, *names]
        try:
            self.store.update_entries(self.session_id, self.agent, names, step)
        except _Unmigrated:
            self._migrate()
            migrated = True
            self.store.update_entries(self.session_id, self.agent, names, step)

    def _migrate(self) -> bool:
        """Turn the one state document of skillshelf 0.1 into entries, if there is one.

        Looked for until found absent once per instance: skillshelf never writes such a
        document any more, so one that is not there does not appear later (a call's read
        and its change ask once between them).
        """
        if self._no_legacy:
            return False
        legacy = self.store.get(self.session_id, self.agent)
        if legacy is None:
            self._no_legacy = True
            return False
        try:
            entries = SessionState.from_doc(legacy).to_entries()
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc
        self.store.update_entries(
            self.session_id,
            self.agent,
            [INDEX_ENTRY],
            lambda now: {} if INDEX_ENTRY in now else entries,
        )
        self.store.update(self.session_id, self.agent, lambda d: None if d == legacy else d)
        self._no_legacy = True
        return True

    def loaded(self, name: str) -> LoadedSkill | None:
        """The session's entry for skill ``name``, reading the index and that entry only.

        Raises:
            StoreError: As :meth:`state`.
        """
        key = skill_entry(name)
        entries = self._entries([key])
        try:
            entry = entries.get(key)
            if entry is None or not SessionIndex.holds(entries.get(INDEX_ENTRY), name):
                return None
            return LoadedSkill.from_doc(name, entry)
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc

    def _not_a_state(self, exc: Exception) -> StoreError:
        return StoreError(
            f"The {self.store_kind()} session state of session {self.session_id!r}, "
            f"agent {self.agent!r} is not a session state: {exc}"
        )

    def store_kind(self) -> str:
        name = type(self.store).__name__
        return _STORE_KINDS.get(name, name)

    def begin_turn(self) -> None:
        """End the ``turn`` and ``once`` loads (the user sent a new message)."""
        self.change([], lambda index, _e: _ended(*index.begin_turn()))

    def after_request(self) -> None:
        """End the ``once`` loads already delivered (a model request was sent)."""
        self.change([], lambda index, _e: _ended(*index.after_request()))

    def unload(self, name: str) -> bool:
        """Drop the slot and the entry of ``name``; returns whether there was one."""
        was_loaded = [False]

        def drop(index: SessionIndex, _entries: Entries) -> dict[str, Doc | None]:
            was_loaded[0] = name in index.slots
            if not was_loaded[0]:
                return {}
            return {INDEX_ENTRY: index.unload(name).to_doc(), skill_entry(name): None}

        self.change([], drop)
        return was_loaded[0]

    def tie_call_id(self, name: str, call_id: str) -> None:
        """Set the call id of the load of ``name``, if it is loaded."""
        self.change_loaded(name, lambda i, s: (i, dataclasses.replace(s, call_id=call_id)))

    def change_loaded(
        self, name: str, fn: Callable[[SessionIndex, LoadedSkill], tuple[SessionIndex, LoadedSkill]]
    ) -> bool:
        """Apply ``fn`` to the index and the entry of ``name`` if it is loaded (atomically);
        returns whether it was."""
        key = skill_entry(name)
        loaded = [False]

        def change(index: SessionIndex, entries: Entries) -> dict[str, Doc | None]:
            doc = entries.get(key)
            loaded[0] = name in index.slots and doc is not None
            if doc is None or not loaded[0]:
                return {}
            index, entry = fn(index, LoadedSkill.from_doc(name, doc))
            return {INDEX_ENTRY: index.to_doc(), key: entry.to_doc()}

        self.change([key], change)
        return loaded[0]

    def record_failure(self, signature: str) -> int:
        """Add one to the failure count of the call ``signature``; returns the new count."""
        counted = [1]

        def count(_index: SessionIndex, entries: Entries) -> dict[str, Doc | None]:
            failures, counted[0] = record_failure(
                failures_from_doc(entries.get(FAILURES_ENTRY)), signature
            )
            return {FAILURES_ENTRY: dict(failures)}

        self.change([FAILURES_ENTRY], count)
        return counted[0]

    def unload_all(self) -> None:
        """Drop the skill state: the index, every skill's entry and the failure counts."""
        # Only the skill state: other entries of the record (the history, activations) stay.
        held = [
            n
            for n in self.store.get_entries(self.session_id, self.agent)
            if n in (INDEX_ENTRY, FAILURES_ENTRY) or n.startswith(SKILL_ENTRY_PREFIX)
        ]

        def drop(now: Entries) -> dict[str, Doc | None]:
            # The index is read, and every write of a skill's entry changes it: so the skills
            # it holds now are all that a load since ``held`` was read can have added.
            slots = (now.get(INDEX_ENTRY) or {}).get("slots")
            added = [skill_entry(str(n)) for n in slots] if isinstance(slots, dict) else []
            return dict.fromkeys([*held, *(n for n in now if n in held), INDEX_ENTRY, *added])

        self.store.update_entries(self.session_id, self.agent, [INDEX_ENTRY, *held], drop)
        self.store.update(self.session_id, self.agent, lambda _d: None)

"""The session-lifetime activations of one conversation: which activated tools stay in force
after the load that activated them ended. An entry of the agent's record beside its skill
state; a malformed entry reads as none (it is only a record of what was offered)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from skillshelf.stores import Doc, Entries, SessionStore

__all__ = ["ACTIVATIONS_ENTRY", "ActivationLog"]

ACTIVATIONS_ENTRY: Final = "activations"


class ActivationLog:
    """The (activation index, skill) pairs in force for the session, in one store entry."""

    def __init__(self, store: SessionStore, conversation: str, agent: str) -> None:
        self.store = store
        self.conversation = conversation
        self.agent = agent

    def persisted(self) -> list[tuple[int, str]]:
        entries = self.store.get_entries(self.conversation, self.agent, [ACTIVATIONS_ENTRY])
        return _activation_pairs(entries.get(ACTIVATIONS_ENTRY))

    def add(self, keep: Sequence[tuple[int, str]]) -> None:
        def add(entries: Entries) -> dict[str, Doc | None]:
            current = _activation_pairs(entries.get(ACTIVATIONS_ENTRY))
            pairs = current + [p for p in keep if p not in current]
            return {ACTIVATIONS_ENTRY: {"session": [list(p) for p in pairs]}}

        self.store.update_entries(self.conversation, self.agent, [ACTIVATIONS_ENTRY], add)


def _activation_pairs(doc: Doc | None) -> list[tuple[int, str]]:
    """The (activation index, skill) pairs of a stored activations entry."""
    pairs: list[tuple[int, str]] = []
    rows = doc.get("session") if isinstance(doc, dict) else None
    for row in rows if isinstance(rows, list) else ():
        if (
            isinstance(row, list)
            and len(row) == 2
            and isinstance(row[0], int)
            and isinstance(row[1], str)
        ):
            pairs.append((row[0], row[1]))
    return pairs

"""A conversation's message history, kept in the session store so a chat can be resumed.

The history is one entry (:data:`HISTORY_ENTRY`) of the (session, agent) record that holds the
agent's skill state; it is written with the store's atomic update after each completed user
turn (the last writer wins). A history stored by skillshelf 0.1 under the key
``agent + "#history"`` is read when the entry is absent, and moved into it on the next write;
agent names hold no ``#`` (:func:`~skillshelf.stores.check_name`), so that key is only ever
``agent``'s own.
The stored list is bounded: whole turns go from the oldest end, and a tool call never loses
its result (a provider rejects a call without one). When a trimmed result carried a
still-loaded skill's content, the materialiser's system-message fallback delivers that content
instead (see :mod:`skillshelf.harness`).

Pure functions (:func:`trim_history`, :func:`history_to_doc`, :func:`history_from_doc`) and
three store operations at the edge (:func:`load_history`, :func:`save_history`,
:func:`clear_history`).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from skillshelf.errors import SkillshelfError, UsageError
from skillshelf.stores import Doc, SessionStore, check_name

__all__ = [
    "HISTORY_ENTRY",
    "MAX_HISTORY_CHARS",
    "MAX_HISTORY_MESSAGES",
    "HistoryError",
    "HistoryLimit",
    "clear_history",
    "history_from_doc",
    "history_to_doc",
    "load_history",
    "save_history",
    "trim_history",
]

Message = dict[str, Any]
HISTORY_ENTRY: Final = "history"
_LEGACY_SUFFIX: Final = "#history"  # skillshelf 0.1 kept the history under agent + this
# Every turn rewrites the whole document; ~100k tokens is more than most models' context holds.
MAX_HISTORY_CHARS: Final = 400_000
# A bound on the list itself, so thousands of tiny messages cannot grow the document forever.
MAX_HISTORY_MESSAGES: Final = 2_000
_VERSION: Final = 1
_ROLES: Final = frozenset({"system", "user", "assistant", "tool"})


class HistoryError(SkillshelfError):
    """A stored history cannot be read: corrupt, or not written by this version of skillshelf."""


@dataclass(frozen=True, slots=True)
class HistoryLimit:
    """How much history is stored: at most ``max_messages`` messages and ``max_chars``
    characters of their JSON form."""

    max_messages: int = MAX_HISTORY_MESSAGES
    max_chars: int = MAX_HISTORY_CHARS

    def __post_init__(self) -> None:
        if self.max_messages < 1 or self.max_chars < 1:
            raise UsageError("A history limit must allow at least one message and one character")


# -- pure core ---------------------------------------------------------------------------------


def trim_history(messages: Sequence[Message], limit: HistoryLimit) -> list[Message]:
    """The messages to keep within ``limit``.

    Whole turns (a user message and everything up to the next one) are dropped from the oldest
    end. When the newest turn alone is still too big, its oldest tool exchanges (an assistant
    message with tool calls and all their results) go next; its user message and final answer
    always stay. Tool calls without all their results and results without their call are
    dropped, so the history stays valid to send.
    """
    turns = _turns(messages)
    sizes = [_block_size(turn) for turn in turns]
    kept = _Size(sum(n for n, _ in sizes), sum(c for _, c in sizes))
    start = 0
    while len(turns) - start > 1 and kept.over(limit):
        kept = kept.minus(sizes[start])
        start += 1
    turns = turns[start:]
    if turns and kept.over(limit):
        newest = turns[0]
        for index, block in enumerate(newest):
            if not kept.over(limit):
                break
            if _is_exchange(block):
                kept = kept.minus(_block_size([block]))
                newest[index] = []
    return _flatten(turns)


@dataclass(frozen=True, slots=True)
class _Size:
    messages: int
    chars: int

    def over(self, limit: HistoryLimit) -> bool:
        return self.messages > limit.max_messages or self.chars > limit.max_chars

    def minus(self, size: tuple[int, int]) -> _Size:
        return _Size(self.messages - size[0], self.chars - size[1])


def history_to_doc(messages: Sequence[Message]) -> Doc:
    """The stored JSON form of a history."""
    return {"v": _VERSION, "messages": list(messages)}


def history_from_doc(doc: Doc | None) -> list[Message]:
    """Read a stored history; None (nothing stored) is the empty history.

    Raises:
        HistoryError: The document is not a history this version wrote, a message is malformed,
            or a tool call and its result do not pair up.
    """
    if doc is None:
        return []
    if not isinstance(doc, dict):
        raise HistoryError("the stored history is not a JSON object")
    version = doc.get("v")
    if version != _VERSION:
        raise HistoryError(f"the stored history has version {version!r}; expected {_VERSION}")
    messages = doc.get("messages")
    if not isinstance(messages, list):
        raise HistoryError("the stored history has no list of messages")
    for index, message in enumerate(messages):
        problem = _message_problem(message)
        if problem:
            raise HistoryError(f"stored message {index + 1}: {problem}")
    if _flatten(_turns(messages)) != messages:
        raise HistoryError("the stored history has tool calls and results that do not pair up")
    return list(messages)


def _message_problem(message: object) -> str | None:
    if not isinstance(message, dict):
        return "not an object"
    role = message.get("role")
    if role not in _ROLES:
        return f"unknown role {role!r}"
    content = message.get("content")
    if not (isinstance(content, str) or (content is None and role == "assistant")):
        return "the content is not text"
    if role == "tool" and not isinstance(message.get("tool_call_id"), str):
        return "a tool result without a tool_call_id"
    calls = message.get("tool_calls")
    if calls is not None and (role != "assistant" or not _calls_ok(calls)):
        return "malformed tool_calls"
    return None


def _calls_ok(calls: object) -> bool:
    if not isinstance(calls, list) or not calls:
        return False
    for call in calls:
        function = call.get("function") if isinstance(call, dict) else None
        if not (
            isinstance(call, dict)
            and isinstance(call.get("id"), str)
            and isinstance(function, dict)
            and isinstance(function.get("name"), str)
            and isinstance(function.get("arguments"), str)
        ):
            return False
    return True


Block = list[Message]
Turn = list[Block]


def _turns(messages: Sequence[Message]) -> list[Turn]:
    """Split into turns of blocks: one message, or one tool exchange (call plus results)."""
    turns: list[Turn] = []
    index = 0
    while index < len(messages):
        message = messages[index]
        if message.get("role") == "user" or not turns:
            turns.append([])
        if message.get("tool_calls"):
            block, index = _exchange(messages, index)
            turns[-1].append(block)
            continue
        if message.get("role") != "tool":  # a result without its call is dropped
            turns[-1].append([message])
        index += 1
    return turns


def _exchange(messages: Sequence[Message], start: int) -> tuple[Block, int]:
    """The exchange starting at ``start`` and the index after it; empty when incomplete."""
    wanted = [str(call.get("id")) for call in messages[start]["tool_calls"]]
    index = start + 1
    results: list[Message] = []
    while index < len(messages) and messages[index].get("role") == "tool":
        results.append(messages[index])
        index += 1
    answered = sorted(str(m.get("tool_call_id")) for m in results)
    complete = answered == sorted(wanted) and len(set(wanted)) == len(wanted)
    return ([messages[start], *results] if complete else []), index


def _is_exchange(block: Block) -> bool:
    return bool(block) and bool(block[0].get("tool_calls"))


def _flatten(turns: list[Turn]) -> list[Message]:
    return [m for turn in turns for block in turn for m in block]


def _block_size(turn: Turn) -> tuple[int, int]:
    """Messages and characters of a turn (or of a list of blocks)."""
    messages = [m for block in turn for m in block]
    return len(messages), sum(_size(m) for m in messages)


def _size(message: Message) -> int:
    return len(json.dumps(message, ensure_ascii=False, separators=(",", ":")))


# -- the store edge ----------------------------------------------------------------------------


def load_history(store: SessionStore, session_id: str, agent: str) -> list[Message]:
    """The stored history of ``agent`` in ``session_id`` (empty when none is stored).

    Raises:
        HistoryError: The stored document is not a readable history.
        UsageError: ``agent`` is not a valid agent name.
    """
    entries = store.get_entries(session_id, agent, [HISTORY_ENTRY])
    if HISTORY_ENTRY in entries:
        return history_from_doc(entries[HISTORY_ENTRY])
    return history_from_doc(store.get(session_id, _legacy_key(agent)))


def save_history(
    store: SessionStore,
    session_id: str,
    agent: str,
    messages: Sequence[Message],
    *,
    limit: HistoryLimit | None = None,
) -> list[Message]:
    """Store ``messages`` trimmed to ``limit``, replacing the stored ones; returns those kept."""
    legacy = _legacy_key(agent)
    kept = trim_history(messages, limit or HistoryLimit())
    doc = history_to_doc(kept)
    store.update_entries(session_id, agent, [HISTORY_ENTRY], lambda _now: {HISTORY_ENTRY: doc})
    _drop_legacy(store, session_id, legacy)
    return kept


def clear_history(store: SessionStore, session_id: str, agent: str) -> None:
    """Delete the stored history of ``agent`` in ``session_id`` (skill state is kept)."""
    legacy = _legacy_key(agent)
    store.update_entries(session_id, agent, [HISTORY_ENTRY], lambda _now: {HISTORY_ENTRY: None})
    _drop_legacy(store, session_id, legacy)


def _legacy_key(agent: str) -> str:
    """The key skillshelf 0.1 kept ``agent``'s history under (checked first: a name holding
    ``#`` could make it another agent's key)."""
    return check_name("agent name", agent) + _LEGACY_SUFFIX


def _drop_legacy(store: SessionStore, session_id: str, key: str) -> None:
    """Remove a 0.1 history document once its entry replaced it."""
    if store.get(session_id, key) is not None:
        store.update(session_id, key, lambda _old: None)

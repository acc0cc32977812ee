"""Per-session, per-agent skill state: what is loaded, with which docs, for how long.

Pure values and pure transitions. A store (``skillshelf.stores``) keeps a session's state for
one agent as *entries* — a small :class:`SessionIndex` (clocks and which skills are loaded),
one :class:`LoadedSkill` per loaded skill, and the failure counts — and applies a change to
the entries it names atomically; so a call reads and writes what it concerns, whatever else
the session holds. :class:`SessionState` is the whole state assembled, for readers that want
all of it, and its transitions are the index's applied to the whole.

Load modes:

* ``once`` — the content goes into the next model request only;
* ``turn`` (default) — until the user's next message;
* ``session`` — until unloaded or the session ends.

At most ``max_loaded`` skills stay loaded; loading one more evicts the least recently touched
(loading and selecting docs both count as a touch).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, NamedTuple, get_args

from skillshelf.errors import UsageError

__all__ = [
    "DEFAULT_MAX_LOADED",
    "FAILURES_ENTRY",
    "FATAL_REPEAT_MESSAGE",
    "INDEX_ENTRY",
    "MAX_IDENTICAL_FAILURES",
    "STATE_VERSION",
    "DocSelection",
    "LoadMode",
    "LoadedSkill",
    "SessionIndex",
    "SessionState",
    "Slot",
    "TraceStatus",
    "call_signature",
    "failures_from_doc",
    "grade_failure",
    "record_failure",
    "skill_entry",
    "trace_outcome",
]

LoadMode = Literal["once", "turn", "session"]
DocSelection = list[str] | Literal["*"]
DEFAULT_MAX_LOADED: Final = 20
# The same failing call may be retried twice; the third identical failure is fatal.
MAX_IDENTICAL_FAILURES: Final = 3
FailureGrade = Literal["recoverable", "fatal"]
FATAL_REPEAT_MESSAGE: Final = (
    "This exact call has now failed {count} times in this session. Stop retrying it. Tell the "
    "user what you were trying to do and that the {tool} tool kept failing: {reason}"
)
# Distinct failing calls remembered per session; the oldest are forgotten first.
MAX_REMEMBERED_FAILURES: Final = 200
# The store entries of a session's state (see SessionIndex); version 1 was one document.
STATE_VERSION: Final = 2
INDEX_ENTRY: Final = "index"
FAILURES_ENTRY: Final = "failures"
SKILL_ENTRY_PREFIX: Final = "skill:"


_LOAD_MODES: Final = frozenset(get_args(LoadMode))


@dataclass(frozen=True, slots=True)
class LoadedSkill:
    """One loaded skill.

    Attributes:
        name: The skill.
        mode: How long it stays loaded.
        docs: Selected documents (relative paths), or ``"*"`` for all.
        touched: Logical clock of the last load or doc selection (for LRU eviction).
        turn: The user turn it was loaded in.
        request: Model requests already made when it was loaded (for ``once``).
        digest: Identity of the SKILL.md content delivered (mtime and size).
        call_id: The tool call whose result carries the content, if known.
    """

    name: str
    mode: LoadMode = "turn"
    docs: DocSelection = field(default_factory=list)
    touched: int = 0
    turn: int = 0
    request: int = 0
    digest: str = ""
    call_id: str | None = None

    def to_doc(self) -> dict[str, Any]:
        """JSON form."""
        return {
            "mode": self.mode,
            "docs": self.docs,
            "touched": self.touched,
            "turn": self.turn,
            "request": self.request,
            "digest": self.digest,
            "call_id": self.call_id,
        }

    @classmethod
    def from_doc(cls, name: str, doc: dict[str, Any]) -> LoadedSkill:
        """Read the JSON form (unknown modes fall back to ``turn``)."""
        mode = doc.get("mode", "turn")
        docs = doc.get("docs", [])
        return cls(
            name=name,
            mode=mode if mode in _LOAD_MODES else "turn",
            docs="*" if docs == "*" else [str(d) for d in docs],
            touched=int(doc.get("touched", 0)),
            turn=int(doc.get("turn", 0)),
            request=int(doc.get("request", 0)),
            digest=str(doc.get("digest", "")),
            call_id=doc.get("call_id"),
        )

    def slot(self) -> Slot:
        """What the session's index keeps of this skill."""
        return Slot(self.touched, self.mode, self.request)


class Slot(NamedTuple):
    """What the index keeps of one loaded skill: what eviction and the end of a turn or a
    request look at (the same values as the skill's own entry, written with it). A tuple,
    so that its JSON form is itself: ``[touched, mode, request]``."""

    touched: int
    mode: LoadMode
    request: int


@dataclass(frozen=True, slots=True)
class SessionIndex:
    """The part of a session's state every change reads: the clocks, and which skills are
    loaded with their :class:`Slot`.

    A store keeps it as one entry (:data:`INDEX_ENTRY`) beside one entry per loaded skill
    (:func:`skill_entry`) and one of failure counts (:data:`FAILURES_ENTRY`), so a call reads
    and writes the index and the entries it concerns, never the whole state. The index is
    bounded by ``max_loaded`` slots of three small numbers each.

    Attributes:
        slots: Loaded skills by name.
        clock: Logical clock for touch order.
        turn: User turns seen.
        requests: Model requests made.
    """

    slots: dict[str, Slot] = field(default_factory=dict)
    clock: int = 0
    turn: int = 0
    requests: int = 0

    def to_doc(self) -> dict[str, Any]:
        """JSON form for a store: each slot as ``[touched, mode, request]``."""
        return {
            "v": STATE_VERSION,
            "clock": self.clock,
            "turn": self.turn,
            "requests": self.requests,
            "slots": self.slots,
        }

    @staticmethod
    def holds(doc: dict[str, Any] | None, name: str) -> bool:
        """Whether the index document ``doc`` has ``name`` loaded, without reading the rest.

        Raises:
            TypeError, ValueError, AttributeError: The document is not an index.
        """
        if doc is None:
            return False
        slots = doc.get("slots", {})
        if not isinstance(slots, dict):
            raise TypeError(f"the index's slots are a {type(slots).__name__}, not a mapping")
        return name in slots

    @classmethod
    def from_doc(cls, doc: dict[str, Any] | None) -> SessionIndex:
        """Read the JSON form; None (nothing stored yet) is the empty index.

        Raises:
            TypeError, ValueError, OverflowError: The document is not an index.
        """
        if doc is None:
            return cls()
        slots = {}
        for name, (touched, mode, request) in dict(doc.get("slots", {})).items():
            if type(touched) is not int or type(request) is not int:  # exact: a bool is no count
                touched, request = int(touched), int(request)
            slots[str(name)] = Slot(touched, mode if mode in _LOAD_MODES else "turn", request)
        return cls(
            slots=slots,
            clock=int(doc.get("clock", 0)),
            turn=int(doc.get("turn", 0)),
            requests=int(doc.get("requests", 0)),
        )

    def load(
        self,
        name: str,
        *,
        mode: LoadMode,
        docs: DocSelection,
        digest: str,
        call_id: str | None,
        max_loaded: int = DEFAULT_MAX_LOADED,
    ) -> tuple[SessionIndex, LoadedSkill, list[str]]:
        """Load (or reload) ``name``: the new index, the skill's new entry and the names
        evicted (least recently touched first) to stay within ``max_loaded``."""
        if max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
        clock = self.clock + 1
        entry = LoadedSkill(
            name=name,
            mode=mode,
            docs=docs,
            touched=clock,
            turn=self.turn,
            request=self.requests,
            digest=digest,
            call_id=call_id,
        )
        slots = dict(self.slots)
        slots[name] = entry.slot()
        evicted: list[str] = []
        while len(slots) > max_loaded:
            oldest = min((n for n in slots if n != name), key=lambda n: (slots[n].touched, n))
            del slots[oldest]
            evicted.append(oldest)
        return replace(self, slots=slots, clock=clock), entry, evicted

    def select_docs(
        self, current: LoadedSkill, docs: DocSelection
    ) -> tuple[SessionIndex, LoadedSkill]:
        """Replace the doc selection of the loaded skill ``current`` (a touch)."""
        clock = self.clock + 1
        entry = replace(current, docs=docs, touched=clock)
        return replace(self, slots={**self.slots, entry.name: entry.slot()}, clock=clock), entry

    def unload(self, name: str) -> SessionIndex:
        """Forget ``name`` (no error if it was not loaded); its entry goes with it."""
        if name not in self.slots:
            return self
        return replace(self, slots={k: v for k, v in self.slots.items() if k != name})

    def begin_turn(self) -> tuple[SessionIndex, list[str]]:
        """The user sent a message: ``turn`` and ``once`` skills end (returned by name)."""
        ended = [k for k, v in self.slots.items() if v.mode != "session"]
        slots = {k: v for k, v in self.slots.items() if v.mode == "session"}
        return replace(self, slots=slots, turn=self.turn + 1), ended

    def after_request(self) -> tuple[SessionIndex, list[str]]:
        """A model request was made: ``once`` skills already sent in a request end."""
        requests = self.requests + 1
        ended = [k for k, v in self.slots.items() if v.mode == "once" and v.request < requests]
        slots = {k: v for k, v in self.slots.items() if k not in ended}
        return replace(self, slots=slots, requests=requests), ended


def record_failure(failures: dict[str, int], signature: str) -> tuple[dict[str, int], int]:
    """Count one more identical failure: the new counts (the most recent last, at most
    :data:`MAX_REMEMBERED_FAILURES`) and this signature's count."""
    counts = dict(failures)
    count = counts.pop(signature, 0) + 1
    counts[signature] = count  # re-inserted last: the dict stays in recency order
    while len(counts) > MAX_REMEMBERED_FAILURES:
        del counts[next(iter(counts))]
    return counts, count


def failures_from_doc(doc: dict[str, Any] | None) -> dict[str, int]:
    """Read the failure counts entry.

    Raises:
        TypeError, ValueError: The document is not failure counts.
    """
    return {str(k): int(v) for k, v in dict(doc or {}).items()}


def skill_entry(name: str) -> str:
    """The store entry that holds the :class:`LoadedSkill` of ``name``."""
    return SKILL_ENTRY_PREFIX + name


@dataclass(frozen=True, slots=True)
class SessionState:
    """Everything a session remembers for one agent, as one value (the entries assembled).

    Attributes:
        loaded: Loaded skills by name.
        clock: Logical clock for touch order.
        turn: User turns seen.
        requests: Model requests made.
        failures: Identical failing calls by signature → count.
    """

    loaded: dict[str, LoadedSkill] = field(default_factory=dict)
    clock: int = 0
    turn: int = 0
    requests: int = 0
    failures: dict[str, int] = field(default_factory=dict)

    # -- persistence -------------------------------------------------------------------

    def to_entries(self) -> dict[str, dict[str, Any]]:
        """The store entries of this state (see :class:`SessionIndex`)."""
        entries = {INDEX_ENTRY: self.index().to_doc()}
        entries |= {skill_entry(n): s.to_doc() for n, s in self.loaded.items()}
        if self.failures:
            entries[FAILURES_ENTRY] = dict(self.failures)
        return entries

    @classmethod
    def from_entries(cls, entries: Mapping[str, dict[str, Any]]) -> SessionState:
        """Assemble a state from its store entries: the skills the index holds, with their
        entries (a slot whose entry is missing is not loaded).

        Raises:
            TypeError, ValueError, OverflowError: An entry is not of its kind.
        """
        index = SessionIndex.from_doc(entries.get(INDEX_ENTRY))
        loaded = {}
        for name in index.slots:
            entry = entries.get(skill_entry(name))
            if entry is not None:
                loaded[name] = LoadedSkill.from_doc(name, entry)
        return cls(
            loaded=loaded,
            clock=index.clock,
            turn=index.turn,
            requests=index.requests,
            failures=failures_from_doc(entries.get(FAILURES_ENTRY)),
        )

    @classmethod
    def from_doc(cls, doc: dict[str, Any] | None) -> SessionState:
        """Read the one-document form of skillshelf 0.1 (``"v": 1``); None is the empty state.

        Raises:
            TypeError, ValueError, AttributeError, OverflowError: The document is not a
                session state.
        """
        if not doc:
            return cls()
        loaded = {
            name: LoadedSkill.from_doc(name, value)
            for name, value in dict(doc.get("loaded", {})).items()
        }
        return cls(
            loaded=loaded,
            clock=int(doc.get("clock", 0)),
            turn=int(doc.get("turn", 0)),
            requests=int(doc.get("requests", 0)),
            failures=failures_from_doc(doc.get("failures", {})),
        )

    def index(self) -> SessionIndex:
        """The :class:`SessionIndex` of this state."""
        slots = {n: s.slot() for n, s in self.loaded.items()}
        return SessionIndex(slots, self.clock, self.turn, self.requests)

    def _with(self, index: SessionIndex, loaded: dict[str, LoadedSkill]) -> SessionState:
        kept = {n: loaded[n] for n in index.slots if n in loaded}
        return replace(
            self, loaded=kept, clock=index.clock, turn=index.turn, requests=index.requests
        )

    # -- transitions (each returns a new state; the index's, applied to the whole) -------

    def load(
        self,
        name: str,
        *,
        mode: LoadMode,
        docs: DocSelection,
        digest: str,
        call_id: str | None,
        max_loaded: int = DEFAULT_MAX_LOADED,
    ) -> tuple[SessionState, list[str]]:
        """Load (or reload) ``name``; returns the new state and the names evicted."""
        index, entry, evicted = self.index().load(
            name, mode=mode, docs=docs, digest=digest, call_id=call_id, max_loaded=max_loaded
        )
        return self._with(index, {**self.loaded, name: entry}), evicted

    def unload(self, name: str) -> SessionState:
        """Forget ``name`` (no error if it was not loaded)."""
        return self._with(self.index().unload(name), self.loaded)

    def select_docs(self, name: str, docs: DocSelection) -> SessionState:
        """Replace the doc selection of a loaded skill (a touch)."""
        index, entry = self.index().select_docs(self.loaded[name], docs)
        return self._with(index, {**self.loaded, name: entry})

    def begin_turn(self) -> SessionState:
        """The user sent a message: ``turn`` and ``once`` skills end."""
        return self._with(self.index().begin_turn()[0], self.loaded)

    def after_request(self) -> SessionState:
        """A model request was made: ``once`` skills already sent in a request end."""
        return self._with(self.index().after_request()[0], self.loaded)

    def record_failure(self, signature: str) -> tuple[SessionState, int]:
        """Count one more identical failure; returns the new state and the count."""
        failures, count = record_failure(self.failures, signature)
        return replace(self, failures=failures), count


def call_signature(tool: str, arguments: object) -> str:
    """The counter key of a tool and its arguments (a JSON string or a mapping, compared
    canonically). Callers pass the arguments as validation read them
    (:func:`skillshelf.tools.failure_signature`), so a respelt call is the same call."""
    try:
        if isinstance(arguments, str):
            arguments = json.loads(arguments or "{}")
        canonical = json.dumps(arguments, sort_keys=True, default=str)
    except (ValueError, TypeError):
        canonical = repr(arguments)
    return hashlib.sha256(f"{tool}\0{canonical}".encode()).hexdigest()[:16]


# What a trace says of a call: its graded status, except that a command workspace_exec ran
# says how it ended (the model reads a non-zero exit or a timeout as a result, not an error).
TraceStatus = Literal["ok", "recoverable", "fatal", "nonzero_exit", "timed_out"]


def trace_outcome(
    status: str, kind: str | None, exit_code: int | None, *, timed_out: bool
) -> dict[str, Any]:
    """The outcome fields of a ``tool`` trace record, the same in every face that traces:
    ``status``, ``error_kind``, and for a command ``exit_code`` and ``timed_out``.

    The recorded status is the graded one, except for a command that ran and did not exit 0:
    ``nonzero_exit`` or ``timed_out`` (the model got its output as an ordinary result, so the
    graded status is ``ok``).

    Args:
        status: The graded status.
        kind: Why a graded failure failed (None when it did not).
        exit_code: The exit code of the command the call ran; None when it ran none.
        timed_out: The command was killed at its time limit.
    """
    if exit_code is None:
        return {"status": status, "error_kind": kind}
    ended: TraceStatus = "timed_out" if timed_out else "nonzero_exit" if exit_code else "ok"
    return {"status": ended, "error_kind": kind, "exit_code": exit_code, "timed_out": timed_out}


def grade_failure(
    tool: str, count: int, message: str, *, limit: int = MAX_IDENTICAL_FAILURES
) -> tuple[Literal["recoverable", "fatal"], str]:
    """The one grading of a failed call, for skill tools and user tools alike: the model may
    retry a recoverable failure until the same call has failed ``limit`` times (a user tool's
    retry budget plus one; MAX_IDENTICAL_FAILURES for the skill tools), then it is told to
    stop, in a message naming ``tool``."""
    if count >= max(1, limit):
        return "fatal", FATAL_REPEAT_MESSAGE.format(count=count, tool=tool, reason=message)
    return "recoverable", message

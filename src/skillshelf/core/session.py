"""Per-session, per-agent skill state: what is loaded, with which docs, for how long.

Pure values and pure transitions; a store (``skillshelf.stores``) persists the JSON form of
:class:`SessionState` under ``(session, agent)`` and applies a transition atomically.

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
from dataclasses import dataclass, field, replace
from typing import Any, Final, Literal, get_args

from skillshelf.errors import UsageError

__all__ = [
    "DEFAULT_MAX_LOADED",
    "FATAL_REPEAT_MESSAGE",
    "MAX_IDENTICAL_FAILURES",
    "DocSelection",
    "LoadMode",
    "LoadedSkill",
    "SessionState",
    "call_signature",
    "grade_failure",
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


@dataclass(frozen=True, slots=True)
class SessionState:
    """Everything a session remembers for one agent.

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

    def to_doc(self) -> dict[str, Any]:
        """JSON form for a store."""
        return {
            "v": 1,
            "loaded": {name: s.to_doc() for name, s in self.loaded.items()},
            "clock": self.clock,
            "turn": self.turn,
            "requests": self.requests,
            "failures": dict(self.failures),
        }

    @classmethod
    def from_doc(cls, doc: dict[str, Any] | None) -> SessionState:
        """Read the JSON form; None (nothing stored yet) is the empty state."""
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
            failures={str(k): int(v) for k, v in dict(doc.get("failures", {})).items()},
        )

    # -- transitions (each returns a new state) ------------------------------------------

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
        if max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
        clock = self.clock + 1
        loaded = dict(self.loaded)
        loaded[name] = LoadedSkill(
            name=name,
            mode=mode,
            docs=docs,
            touched=clock,
            turn=self.turn,
            request=self.requests,
            digest=digest,
            call_id=call_id,
        )
        evicted: list[str] = []
        while len(loaded) > max_loaded:
            oldest = min((s for s in loaded.values() if s.name != name), key=_touch_order)
            del loaded[oldest.name]
            evicted.append(oldest.name)
        return replace(self, loaded=loaded, clock=clock), evicted

    def unload(self, name: str) -> SessionState:
        """Forget ``name`` (no error if it was not loaded)."""
        loaded = {k: v for k, v in self.loaded.items() if k != name}
        return replace(self, loaded=loaded)

    def select_docs(self, name: str, docs: DocSelection) -> SessionState:
        """Replace the doc selection of a loaded skill (a touch)."""
        current = self.loaded[name]
        clock = self.clock + 1
        loaded = dict(self.loaded)
        loaded[name] = replace(current, docs=docs, touched=clock)
        return replace(self, loaded=loaded, clock=clock)

    def begin_turn(self) -> SessionState:
        """The user sent a message: ``turn`` and ``once`` skills end."""
        loaded = {k: v for k, v in self.loaded.items() if v.mode == "session"}
        return replace(self, loaded=loaded, turn=self.turn + 1)

    def after_request(self) -> SessionState:
        """A model request was made: ``once`` skills already sent in a request end."""
        requests = self.requests + 1
        loaded = {k: v for k, v in self.loaded.items() if v.mode != "once" or v.request >= requests}
        return replace(self, loaded=loaded, requests=requests)

    def record_failure(self, signature: str) -> tuple[SessionState, int]:
        """Count one more identical failure; returns the new state and the count."""
        failures = dict(self.failures)
        count = failures.pop(signature, 0) + 1
        failures[signature] = count  # re-inserted last: the dict stays in recency order
        while len(failures) > MAX_REMEMBERED_FAILURES:
            del failures[next(iter(failures))]
        return replace(self, failures=failures), count


def _touch_order(skill: LoadedSkill) -> tuple[int, str]:
    return (skill.touched, skill.name)


def call_signature(tool: str, arguments: object) -> str:
    """What makes two calls "the same call" for counting failures: the tool and its arguments
    (a JSON string or a mapping, compared canonically)."""
    try:
        if isinstance(arguments, str):
            arguments = json.loads(arguments or "{}")
        canonical = json.dumps(arguments, sort_keys=True, default=str)
    except (ValueError, TypeError):
        canonical = repr(arguments)
    return hashlib.sha256(f"{tool}\0{canonical}".encode()).hexdigest()[:16]


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

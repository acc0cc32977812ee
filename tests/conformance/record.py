"""What a face gives back after running a scenario: one uniform record for every face.

A scenario's script is written once (:mod:`conformance.scenarios`); each face turns it into
its framework's offline model, runs it and reports here what the model saw on each request
and what each tool call answered, so one set of assertions reads every face alike.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

# How much of a call's grade a face shows the model: the full grade (ok/recoverable/fatal),
# only success or failure, or nothing (the result is plain text).
Grading = Literal["full", "ok_or_error", "none"]
# A result's status as the face showed it: a full grade, "error" (failed, grade not shown) or
# None (the face shows no status at all).
Status = Literal["ok", "recoverable", "fatal", "error"] | None


_STATUSES: tuple[Status, ...] = ("ok", "recoverable", "fatal", "error")


def status_of(value: object) -> Status:
    """A status as a face reported it, checked against the known ones."""
    for status in _STATUSES:
        if value == status:
            return status
    raise AssertionError(f"unknown status {value!r}")


@dataclass(frozen=True, slots=True)
class Request:
    """What the model received on one request."""

    instructions: str
    tools: tuple[str, ...]
    messages: str  # every message after the instructions, as text (JSON of the face's shape)

    @property
    def context(self) -> str:
        """Everything the model read: instructions and messages."""
        return self.instructions + "\n" + self.messages


@dataclass(frozen=True, slots=True)
class Result:
    """One tool call's answer, as the model received it."""

    tool: str
    text: str
    status: Status


@dataclass(slots=True)
class TurnRecord:
    """One user message: its requests, the tool results in order, the final answer."""

    conversation: str
    requests: list[Request] = field(default_factory=list)
    results: list[Result] = field(default_factory=list)
    answer: str = ""


@dataclass(slots=True)
class Record:
    """A whole scenario run through one face."""

    face: str
    grading: Grading
    turns: list[TurnRecord] = field(default_factory=list)
    trace: list[dict[str, Any]] = field(default_factory=list)

    @property
    def results(self) -> list[Result]:
        return [r for t in self.turns for r in t.results]

    @property
    def requests(self) -> list[Request]:
        return [r for t in self.turns for r in t.requests]

    def tool_traces(self) -> list[dict[str, Any]]:
        return [r for r in self.trace if r.get("type") == "tool"]


def read_trace(text: str) -> list[dict[str, Any]]:
    """The records of a JSONL trace."""
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def dumped(items: Sequence[Any] | Mapping[str, Any]) -> str:
    """Messages as text, whatever their shape (dicts, pydantic models, dataclasses)."""
    return json.dumps(items, ensure_ascii=False, default=_plain)


def _plain(value: Any) -> Any:
    dump = getattr(value, "model_dump", None)
    if callable(dump):
        return dump(mode="json")
    if hasattr(value, "__dict__"):
        return {k: v for k, v in vars(value).items() if not k.startswith("_")}
    return str(value)

"""Trigger and failure rates from a JSONL decision trace (``skillshelf trace summary``).

A trace (:mod:`skillshelf.harness`) has a ``turn`` record when a run starts, ``model`` and
``tool`` records as it goes and a ``run`` record of totals when it ends. A run is counted from
its ``turn`` record, so traces written before ``run`` records existed are read too.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from skillshelf.errors import SkillshelfError, clip

__all__ = ["TraceReadError", "TraceSummary", "read_trace", "summarize_trace"]


class TraceReadError(SkillshelfError):
    """The trace file cannot be read."""


@dataclass(slots=True)
class TraceSummary:
    """What a trace says about triggering and failures.

    Attributes:
        runs: Runs started (user messages, sub-agent runs included).
        answered: Runs that ended with a final answer.
        errored: Runs that ended with an error (max steps, repeated failures, provider…).
        runs_with_load: Runs in which the model (or a slash command) loaded at least one skill.
        loads: Successful ``skill_load`` calls by skill.
        calls: Tool calls by the status their records give (a command that did not exit 0
            as ``nonzero_exit`` or ``timed_out``).
        kinds: Failed (``recoverable`` or ``fatal``) tool calls by error kind.
        steps: Model requests.
        unreadable: Lines that were not JSON records (skipped).
    """

    runs: int = 0
    answered: int = 0
    errored: int = 0
    runs_with_load: int = 0
    loads: Counter[str] = field(default_factory=Counter)
    calls: Counter[str] = field(default_factory=Counter)
    kinds: Counter[str] = field(default_factory=Counter)
    steps: int = 0
    unreadable: int = 0

    @property
    def trigger_rate(self) -> float:
        """Share of runs that loaded a skill."""
        return self.runs_with_load / self.runs if self.runs else 0.0

    @property
    def loads_per_run(self) -> float:
        """Successful loads per run."""
        return sum(self.loads.values()) / self.runs if self.runs else 0.0

    def failure_rate(self, kind: str) -> float:
        """Share of all tool calls that failed with ``kind``."""
        total = sum(self.calls.values())
        return self.kinds[kind] / total if total else 0.0

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` shape."""
        total = sum(self.calls.values())
        return {
            "runs": self.runs,
            "answered": self.answered,
            "errored": self.errored,
            "steps": self.steps,
            "trigger_rate": round(self.trigger_rate, 4),
            "loads_per_run": round(self.loads_per_run, 4),
            "loads": dict(sorted(self.loads.items())),
            "tool_calls": total,
            "by_status": dict(sorted(self.calls.items())),
            "failure_rates": {k: round(self.failure_rate(k), 4) for k in sorted(self.kinds)},
            "failures": dict(sorted(self.kinds.items())),
            "unreadable_lines": self.unreadable,
        }

    def render(self) -> str:
        """Plain text for a person."""
        total = sum(self.calls.values())
        lines = [
            f"runs: {self.runs} ({self.answered} answered, {self.errored} ended in an error); "
            f"model steps: {self.steps}",
            f"trigger rate: {self.runs_with_load}/{self.runs} runs loaded a skill "
            f"({self.trigger_rate:.0%}); {self.loads_per_run:.2f} loads per run",
        ]
        lines += [f"  {clip(name, 80)}: {n}" for name, n in sorted(self.loads.items())]
        statuses = ", ".join(f"{s} {n} ({n / total:.0%})" for s, n in sorted(self.calls.items()))
        lines.append(f"tool calls: {total}" + (f" — {statuses}" if total else ""))
        if self.kinds:
            lines.append("failures by kind (share of all tool calls):")
            width = max(len(k) for k in self.kinds)
            lines += [
                f"  {kind:<{width}}  {n}  ({self.failure_rate(kind):.0%})"
                for kind, n in sorted(self.kinds.items(), key=lambda kv: (-kv[1], kv[0]))
            ]
        if self.unreadable:
            lines.append(f"skipped {self.unreadable} line(s) that were not JSON records")
        return "\n".join(lines)


def read_trace(path: str | Path) -> tuple[list[dict[str, Any]], int]:
    """The records of a JSONL trace and the number of lines that were not records.

    Raises:
        TraceReadError: The file cannot be opened or decoded.
    """
    records: list[dict[str, Any]] = []
    bad = 0
    try:
        with open(path, encoding="utf-8") as stream:
            for line in stream:
                if not line.strip():
                    continue
                try:
                    value = json.loads(line)
                except ValueError:
                    bad += 1
                    continue
                if isinstance(value, dict):
                    records.append(value)
                else:
                    bad += 1
    except (OSError, UnicodeDecodeError) as exc:
        raise TraceReadError(f"Cannot read trace {clip(str(path))}: {exc}") from exc
    return records, bad


def summarize_trace(records: Iterable[Mapping[str, Any]], *, unreadable: int = 0) -> TraceSummary:
    """Count runs, loads and failures over trace records (pure)."""
    summary = TraceSummary(unreadable=unreadable)
    loaded_in: dict[tuple[Any, Any], bool] = {}  # the current run of each (session, agent)
    for record in records:
        kind = record.get("type")
        key = (record.get("session"), record.get("agent"))
        if kind == "turn":
            summary.runs += 1
            loaded_in[key] = False
        elif kind == "model":
            summary.steps += 1
        elif kind == "run":
            summary.answered += record.get("outcome") == "answer"
            summary.errored += record.get("outcome") == "error"
        elif kind == "tool":
            _count_tool(summary, record, loaded_in, key)
    return summary


def _count_tool(
    summary: TraceSummary,
    record: Mapping[str, Any],
    loaded_in: dict[tuple[Any, Any], bool],
    key: tuple[Any, Any],
) -> None:
    if record.get("source") == "declared":
        return  # loaded by the caller up front, not a decision of the run
    status = str(record.get("status"))
    summary.calls[status] += 1
    if status in ("recoverable", "fatal"):
        summary.kinds[str(record.get("error_kind") or "unrecorded")] += 1
    if status != "ok":
        # A command's nonzero_exit or timed_out is in the statuses only: the tool call
        # itself worked, so it is no failure of any kind.
        return
    arguments = record.get("arguments")
    if record.get("tool") == "skill_load" and isinstance(arguments, dict):
        summary.loads[str(arguments.get("skill"))] += 1
        if key in loaded_in and not loaded_in[key]:
            loaded_in[key] = True
            summary.runs_with_load += 1

"""Decision traces: one JSON line per model step and per tool call.

A trace tells "the model never called the skill" apart from "it called and the call failed":
every model step records the raw finish reason and which tools the model chose; every tool
call records its validated arguments, graded status, duration and retry count. When
``opentelemetry-api`` is importable the same events are also OpenTelemetry spans.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import threading
import time
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

__all__ = ["Trace", "digest", "span"]


def digest(text: str) -> str:
    """Short stable digest of a user message (the trace never stores the message itself)."""
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:16]


class Trace:
    """Appends JSONL records to a file (or an open text stream).

    Args:
        target: A path (opened for appending) or a writable text stream.
    """

    def __init__(self, target: str | Path | IO[str]) -> None:
        if isinstance(target, str | Path):
            self._stream: IO[str] = open(target, "a", encoding="utf-8")  # noqa: SIM115
            self._owned = True
        else:
            self._stream = target
            self._owned = False
        self._lock = threading.Lock()

    def record(self, kind: str, **fields: Any) -> dict[str, Any]:
        """Write one record ``{"type": kind, "ts": ..., **fields}`` and return it."""
        record = {"type": kind, "ts": datetime.now(UTC).isoformat(), **fields}
        line = json.dumps(record, ensure_ascii=False, default=str)
        with self._lock:
            self._stream.write(line + "\n")
            self._stream.flush()
        return record

    def close(self) -> None:
        """Close the file if this trace opened it."""
        if self._owned:
            self._stream.close()


def _tracer() -> Any:
    try:
        from opentelemetry import trace as otel
    except ImportError:
        return None
    return otel.get_tracer("skillshelf")


@contextlib.contextmanager
def span(name: str, attributes: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    """An OpenTelemetry span when the API is installed, else nothing.

    Yields a dict; attributes put in it before the block ends are added to the span.
    """
    extra: dict[str, Any] = {}
    tracer = _tracer()
    if tracer is None:
        yield extra
        return
    start = time.perf_counter()
    with tracer.start_as_current_span(name, attributes=_otel_attrs(attributes)) as current:
        yield extra
        extra.setdefault("duration_ms", round((time.perf_counter() - start) * 1000, 3))
        current.set_attributes(_otel_attrs(extra))


def _otel_attrs(values: Mapping[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in values.items():
        if value is None:
            continue
        if isinstance(value, bool | int | float | str):
            out[f"skillshelf.{key}"] = value
        else:
            out[f"skillshelf.{key}"] = json.dumps(value, ensure_ascii=False, default=str)
    return out

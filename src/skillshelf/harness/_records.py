"""What one tool call leaves behind (:class:`ToolRecord`) and what a tool learns about it
(:class:`ToolContext`): the records every face of the harness writes alike."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from skillshelf.core.session import MAX_IDENTICAL_FAILURES, trace_outcome

if TYPE_CHECKING:
    from skillshelf.harness._trace import Trace

__all__ = [
    "DEFAULT_TOOL_RETRIES",
    "DEFAULT_TOOL_TIMEOUT_S",
    "ToolContext",
    "ToolRecord",
    "ToolSink",
]

# A user tool (a sub-agent included) still running after this is hung, not busy: the model is
# told it timed out instead of the run waiting for ever.
DEFAULT_TOOL_TIMEOUT_S: Final = 300.0
DEFAULT_TOOL_RETRIES: Final = MAX_IDENTICAL_FAILURES - 1  # as many as the skill tools allow


@dataclass(frozen=True, slots=True)
class ToolRecord:
    """One executed tool call, as the trace and :class:`RunResult` show it.

    ``tool`` is the name the call was run as (a slipped name such as ``Skill-Load`` is read as
    ``skill_load``); ``status`` is the graded status the model got; ``error_kind`` says why a
    failed call failed (see :data:`~skillshelf.tools.ErrorKind`); ``repairs`` are
    the slips in the call that were forgiven. A command ``workspace_exec`` ran has its
    ``exit_code`` and ``timed_out`` (None and False for every other call); its graded status
    is ``ok`` however it ended, and :attr:`trace_status` says how it did. ``data`` is the
    result's structured form, when the tool gives one (``workspace_exec``'s ``stdout``…).
    """

    call_id: str
    tool: str
    arguments: Any
    status: str
    content: str
    duration_ms: float
    retry_count: int = 0
    source: str = "model"
    error_kind: str | None = None
    repairs: tuple[str, ...] = ()
    exit_code: int | None = None
    timed_out: bool = False
    data: Mapping[str, Any] | None = None

    def trace_fields(self) -> dict[str, Any]:
        """The outcome fields of this call's trace record
        (:func:`~skillshelf.core.session.trace_outcome`)."""
        return trace_outcome(self.status, self.error_kind, self.exit_code, timed_out=self.timed_out)

    @property
    def trace_status(self) -> str:
        """The status the trace records: :attr:`status`, or how a command ended
        (``nonzero_exit``, ``timed_out``)."""
        return str(self.trace_fields()["status"])


@dataclass(frozen=True, slots=True)
class ToolContext:
    """What a tool learns about the call (sub-agents use it to join the session)."""

    session_id: str
    agent: str
    trace: Trace | None


ToolSink = Callable[[ToolRecord], None]

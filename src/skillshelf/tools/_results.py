"""What a call of a skill tool returns: a graded :class:`ToolResult`, and the standard texts of
the fatal grades."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final, Literal

from skillshelf.core.session import trace_outcome

__all__ = [
    "FATAL_INTERNAL_MESSAGE",
    "FATAL_STORE_MESSAGE",
    "ErrorKind",
    "ToolResult",
    "ToolStatus",
]

ToolStatus = Literal["ok", "recoverable", "fatal"]
# Why a call failed, for traces: the argument problems (ArgumentProblem.kind), a policy refusal, a
# timeout, an error the tool itself reported (file not found, ToolRetry/ToolFailed), or a bug.
ErrorKind = Literal[
    "missing",
    "invalid",
    "unknown_skill",
    "unknown_tool",
    "refused",
    "timeout",
    "tool_error",
    "internal",
]
FATAL_INTERNAL_MESSAGE: Final = (
    "The skill tools hit an internal error and cannot complete this call. Stop retrying and "
    "tell the user the skill system failed: {reason}"
)
# What the model reads when the session store fails: never the driver's own text, which may
# carry hosts, paths or document contents.
FATAL_STORE_MESSAGE: Final = (
    "The skill system's session store ({kind}) is unavailable or holds unreadable data, so this "
    "call could not complete. Stop retrying it and tell the user the session store failed."
)


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The graded outcome of one tool call.

    Attributes:
        tool: The tool called.
        status: ``ok``, ``recoverable`` or ``fatal``.
        content: The text the model sees.
        data: Structured form of the result, when there is one. Read it, do not change it:
            parts of it may be shared with later calls (``skill_list``'s rows and lists are
            kept per repository scan).
        kind: Why it failed (None when it did not).
        notes: The slips in the arguments that were forgiven ("arguments adjusted").
    """

    tool: str
    status: ToolStatus
    content: str
    data: dict[str, Any] | None = None
    kind: ErrorKind | None = None
    notes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        """True unless the call succeeded."""
        return self.status != "ok"

    @property
    def exit_code(self) -> int | None:
        """The exit code of the command ``workspace_exec`` ran (None for any other call, and
        for a command that did not run)."""
        if self.tool != "workspace_exec" or self.status != "ok" or self.data is None:
            return None
        code = self.data.get("exit_code")
        return code if isinstance(code, int) else None

    @property
    def timed_out(self) -> bool:
        """The command ``workspace_exec`` ran was killed at its time limit."""
        return self.exit_code is not None and bool(self.data and self.data.get("timed_out"))

    def trace_fields(self) -> dict[str, Any]:
        """What the trace record of this call says of its outcome
        (:func:`~skillshelf.core.session.trace_outcome`)."""
        return trace_outcome(self.status, self.kind, self.exit_code, timed_out=self.timed_out)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``skillshelf call --json``."""
        return {"tool": self.tool, "status": self.status, "content": self.content}

"""What an agent run returns, how it fails, and how it retries a model request.

Kept apart from :mod:`skillshelf.agent.conversation` (the loop itself) and light to import, so the
CLI's options can use the defaults; :mod:`skillshelf.agent.loop` re-exports these names.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from skillshelf.errors import SkillshelfError
from skillshelf.harness import (
    DEFAULT_TOOL_RETRIES,
    DEFAULT_TOOL_TIMEOUT_S,
    ToolContext,
    ToolRecord,
    ToolSink,
)

if TYPE_CHECKING:
    from skillshelf.models import Usage

__all__ = [
    "DEFAULT_INSTRUCTIONS",
    "DEFAULT_MAX_STEPS",
    "DEFAULT_TOOL_RETRIES",
    "DEFAULT_TOOL_TIMEOUT_S",
    "AgentError",
    "EmptyResponseError",
    "MaxStepsError",
    "RepeatedToolFailureError",
    "RetryPolicy",
    "RunResult",
    "ToolContext",
    "ToolRecord",
    "ToolSink",
]

DEFAULT_MAX_STEPS: Final = 20  # model requests per user message before MaxStepsError
# The caller's part of the system prompt when it gives none (`skillshelf chat`, evals).
DEFAULT_INSTRUCTIONS: Final = "You are a helpful assistant."


class AgentError(SkillshelfError):
    """The run could not reach a final answer."""


class MaxStepsError(AgentError):
    """The model was still calling tools after ``max_steps`` requests."""


class RepeatedToolFailureError(AgentError):
    """The model repeated a tool call that was already answered as fatal."""


class EmptyResponseError(AgentError):
    """The model kept replying with neither text nor tool calls."""


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Retries of a model request after HTTP 5xx/429 or a connection failure.

    Delays double from ``base_delay`` up to ``max_delay``; a ``Retry-After`` from the server is
    honoured up to ``max_delay``. ``sleep`` is the wait (``anyio.sleep``; tests pass their own).
    """

    max_retries: int = 3
    base_delay: float = 0.5
    max_delay: float = 8.0
    sleep: Callable[[float], Awaitable[None]] | None = None

    def delay(self, attempt: int, retry_after: float | None) -> float:
        """Seconds to wait before retry number ``attempt`` (from 0)."""
        if retry_after is not None:
            return min(self.max_delay, max(0.0, retry_after))
        return min(self.max_delay, self.base_delay * 2.0**attempt)


@dataclass(frozen=True, slots=True)
class RunResult:
    """The outcome of one user message.

    Attributes:
        output: The final answer.
        steps: Model requests made.
        tool_calls: Every tool call executed, in order.
        finish_reason: The provider's finish reason of the final reply.
        usage: Tokens of every model request of the run, summed over the requests whose
            reply reported usage; None when none did.
    """

    output: str
    steps: int
    tool_calls: list[ToolRecord]
    finish_reason: str | None
    usage: Usage | None = None

"""The model protocol, its request/response/usage types, its errors and the helpers the
adapters share. Adapters import this module, never the package: :mod:`skillshelf.models` picks
an adapter by spec and imports the adapters, so the two never import each other.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar, runtime_checkable

from skillshelf.errors import SkillshelfError

C = TypeVar("C")

if TYPE_CHECKING:
    from skillshelf.core.tooldef import ToolDef

__all__ = [
    "LoopBoundClient",
    "Message",
    "Model",
    "ModelAuthError",
    "ModelError",
    "ModelRequest",
    "ModelResponse",
    "TextSink",
    "ToolCall",
    "TransientModelError",
    "Usage",
    "parse_json_object",
    "sdk_error",
    "system_text",
]

Message = dict[str, Any]
TextSink = Callable[[str], None]


class ModelError(SkillshelfError):
    """The model provider failed in a way retrying will not fix (bad request, bad response)."""


class ModelAuthError(ModelError):
    """The provider rejected the credentials (HTTP 401/403)."""


class TransientModelError(ModelError):
    """A failure worth retrying: HTTP 5xx or 429, a timeout or a refused connection.

    Attributes:
        status: The HTTP status, None for a connection failure.
        retry_after: Seconds the provider asked to wait, if it said.
    """

    def __init__(
        self, message: str, *, status: int | None = None, retry_after: float | None = None
    ) -> None:
        self.status = status
        self.retry_after = retry_after
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call the model made; ``arguments`` is the raw JSON text it sent."""

    id: str
    name: str
    arguments: str


@dataclass(frozen=True, slots=True)
class Usage:
    """Tokens one request (or a sum of requests) used, as the provider reported them.

    ``input_tokens`` is the whole prompt, whatever its price: Anthropic reports the cached parts
    apart from ``input_tokens`` and the adapter adds them back, so the total means the same for
    every provider. The cache fields say how much of that total was read from or written to the
    provider's prompt cache (0 when it did not say).

    Attributes:
        input_tokens: Prompt tokens (Anthropic: including cache reads and writes).
        output_tokens: Completion tokens.
        cache_read_tokens: Prompt tokens served from the cache (billed at a fraction).
        cache_write_tokens: Prompt tokens written to the cache (Anthropic bills them at a premium).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0

    @property
    def uncached_input_tokens(self) -> int:
        """Prompt tokens neither read from nor written to the cache."""
        return self.input_tokens - self.cache_read_tokens - self.cache_write_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
        )

    def to_json(self) -> dict[str, int]:
        """``{"input_tokens": …, "output_tokens": …}``, plus ``cache_read_tokens`` and
        ``cache_write_tokens`` when they are not 0 (so usage without caching keeps its shape)."""
        out = {"input_tokens": self.input_tokens, "output_tokens": self.output_tokens}
        if self.cache_read_tokens:
            out["cache_read_tokens"] = self.cache_read_tokens
        if self.cache_write_tokens:
            out["cache_write_tokens"] = self.cache_write_tokens
        return out

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Usage:
        """The inverse of :meth:`to_json` (missing cache fields are 0).

        Raises:
            KeyError: ``input_tokens`` or ``output_tokens`` is missing.
            ValueError: A count is not an integer.
        """
        return cls(
            int(data["input_tokens"]),
            int(data["output_tokens"]),
            int(data.get("cache_read_tokens", 0)),
            int(data.get("cache_write_tokens", 0)),
        )


@dataclass(frozen=True, slots=True)
class ModelRequest:
    """What the agent sends: messages (system first) and the tools the model may call."""

    messages: list[Message]
    tools: list[ToolDef] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class ModelResponse:
    """One model reply.

    Attributes:
        text: The reply's text (may be empty when it only calls tools).
        tool_calls: Tool calls, in the order the model made them.
        finish_reason: The provider's raw stop/finish reason.
        model: The model name the provider reported.
        usage: Tokens used, None when the provider did not report them.
    """

    text: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    finish_reason: str | None = None
    model: str | None = None
    usage: Usage | None = None

    def to_message(self) -> Message:
        """The assistant message for the history (OpenAI chat shape)."""
        message: Message = {"role": "assistant", "content": self.text or None}
        if self.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in self.tool_calls
            ]
        return message


@runtime_checkable
class Model(Protocol):
    """A chat model that can call tools."""

    @property
    def name(self) -> str:
        """Provider and model, e.g. ``openai:gpt-4o``."""
        ...

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        """Send one request; stream text to ``on_text`` when the adapter streams.

        Raises:
            ModelAuthError: Credentials rejected.
            TransientModelError: Worth retrying.
            ModelError: Anything else.
        """
        ...


def parse_json_object(text: str) -> dict[str, Any]:
    """Arguments text → a dict for providers that want objects ({} when it is not one)."""
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def system_text(messages: Sequence[Message]) -> list[str]:
    """The text of every system message, in order."""
    return [str(m.get("content") or "") for m in messages if m.get("role") == "system"]


def sdk_error(sdk: Any, exc: Exception) -> ModelError:
    """Translate an ``openai``/``anthropic`` SDK exception (both SDKs share the shape)."""
    if isinstance(exc, sdk.APIConnectionError):  # includes timeouts
        return TransientModelError(f"Cannot reach the model server: {exc}")
    if isinstance(exc, sdk.APIStatusError):
        status = exc.status_code
        message = str(getattr(exc, "message", exc))
        if status in (401, 403):
            return ModelAuthError(
                f"The model server rejected the API key (HTTP {status}). Check the key "
                f"(and the variable it is read from) and the base URL. Server said: {message}"
            )
        detail = f"HTTP {status} from the model server: {message}"
        if status == 429 or status >= 500:
            return TransientModelError(
                detail, status=status, retry_after=_retry_after(exc.response.headers)
            )
        return ModelError(detail)
    return ModelError(f"The model request failed: {exc}")


def _retry_after(headers: Any) -> float | None:
    try:
        return float(headers.get("retry-after"))
    except (TypeError, ValueError):
        return None


class LoopBoundClient(Generic[C]):
    """An SDK's async client, made anew for each event loop.

    An async HTTP pool belongs to one event loop, and the sync wrapper runs a new loop per
    run; sharing one client across loops breaks its connections.
    """

    def __init__(self, factory: Callable[[], C]) -> None:
        self._factory = factory
        self._client: C | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    def get(self) -> C:
        """The client for the running event loop."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = self._factory()
            self._loop = loop
        return self._client

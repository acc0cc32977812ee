"""OpenAI-compatible Chat Completions through the official ``openai`` SDK.

``base_url`` points it at any compatible server (vLLM, llama.cpp server, Ollama, LM Studio).
The SDK's own retries are off: the agent retries transient failures itself, with backoff it
can trace.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

from skillshelf.core.tooldef import to_openai
from skillshelf.errors import MissingExtraError
from skillshelf.models.base import (
    LoopBoundClient,
    ModelError,
    ModelRequest,
    ModelResponse,
    TextSink,
    ToolCall,
    Usage,
    sdk_error,
)

if TYPE_CHECKING:
    import openai

__all__ = ["OpenAIChatModel"]

DEFAULT_TIMEOUT_S: Final = 600.0  # one completion of a slow local model can take minutes


class OpenAIChatModel:
    """Chat Completions with tools (parallel tool calls allowed).

    Args:
        model: The model name the server knows.
        api_key: The key (local servers accept any).
        base_url: The server's ``/v1`` URL; None for OpenAI.
        stream: Stream the reply (text reaches ``on_text`` as it arrives).
        timeout_s: Per-request timeout.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        stream: bool = False,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        try:
            import openai  # the extra is needed only here
        except ImportError as exc:
            raise MissingExtraError(
                "openai", module="openai", feature="The OpenAI model adapter"
            ) from exc

        self._openai = openai
        self.model = model
        self.stream = stream
        self._clients = LoopBoundClient(
            lambda: openai.AsyncOpenAI(
                api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s
            )
        )

    @property
    def name(self) -> str:
        return f"openai:{self.model}"

    def _get_client(self) -> openai.AsyncOpenAI:
        return self._clients.get()

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        kwargs: dict[str, Any] = {"model": self.model, "messages": _chat_messages(request)}
        if request.tools:
            kwargs["tools"] = to_openai(request.tools)
        try:
            if self.stream:
                return await self._streamed(kwargs, on_text)
            completion = await self._get_client().chat.completions.create(**kwargs)
        except self._openai.APIError as exc:
            raise sdk_error(self._openai, exc) from exc
        if not completion.choices:
            raise ModelError("The model returned no choices.")
        choice = completion.choices[0]
        calls = tuple(
            ToolCall(c.id, c.function.name, c.function.arguments or "")
            for c in choice.message.tool_calls or ()
            if c.type == "function"
        )
        text = choice.message.content or ""
        if on_text is not None and text:
            on_text(text)
        return ModelResponse(
            text, calls, choice.finish_reason, completion.model, _usage(completion.usage)
        )

    async def _streamed(self, kwargs: dict[str, Any], on_text: TextSink | None) -> ModelResponse:
        # include_usage: the server sends one last chunk, without choices, carrying the usage.
        stream = await self._get_client().chat.completions.create(
            **kwargs, stream=True, stream_options={"include_usage": True}
        )
        text: list[str] = []
        calls: dict[int, dict[str, str]] = {}
        finish: str | None = None
        model: str | None = None
        usage: Usage | None = None
        async for chunk in stream:
            model = chunk.model or model
            usage = _usage(getattr(chunk, "usage", None)) or usage
            for choice in chunk.choices[:1]:
                delta = choice.delta
                if delta.content:
                    text.append(delta.content)
                    if on_text is not None:
                        on_text(delta.content)
                for part in delta.tool_calls or ():
                    call = calls.setdefault(part.index, {"id": "", "name": "", "arguments": ""})
                    call["id"] = part.id or call["id"]
                    if part.function is not None:
                        call["name"] += part.function.name or ""
                        call["arguments"] += part.function.arguments or ""
                finish = choice.finish_reason or finish
        tool_calls = tuple(
            ToolCall(c["id"] or f"call_{i}", c["name"], c["arguments"])
            for i, c in sorted(calls.items())
        )
        return ModelResponse("".join(text), tool_calls, finish, model, usage)


def _chat_messages(request: ModelRequest) -> list[dict[str, Any]]:
    """The messages as Chat Completions takes them: ``is_error`` (the Anthropic flag the loop
    sets on failed tool results) is not part of the schema, and strict servers refuse it."""
    return [
        {k: v for k, v in m.items() if k != "is_error"} if "is_error" in m else m
        for m in request.messages
    ]


def _usage(usage: Any) -> Usage | None:
    """The SDK's ``CompletionUsage`` → :class:`Usage` (None when the server sent none)."""
    if usage is None:
        return None
    # OpenAI caches prompt prefixes on its own and says how much it read in the details.
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None) or 0
    return Usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0), int(cached))

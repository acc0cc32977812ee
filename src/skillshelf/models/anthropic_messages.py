"""Anthropic Messages through the official ``anthropic`` SDK.

The OpenAI-shaped history is translated here: system messages become the top-level ``system``
blocks (the stable prompt first, so its prefix stays cacheable), assistant tool calls become
``tool_use`` blocks, tool results ``tool_result`` blocks in the following user turn, and
consecutive messages of one role are merged as the API requires.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Final

from skillshelf.models import (
    LoopBoundClient,
    Message,
    ModelError,
    ModelRequest,
    ModelResponse,
    TextSink,
    ToolCall,
    Usage,
    parse_json_object,
    sdk_error,
    system_text,
)
from skillshelf.toolspec import to_anthropic

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel", "to_anthropic_messages"]

DEFAULT_MAX_TOKENS: Final = 4096
DEFAULT_TIMEOUT_S: Final = 600.0  # long answers with tools can take minutes


class AnthropicModel:
    """Claude models over the Messages API, with tools.

    Args:
        model: The model name.
        api_key: The key.
        base_url: Another endpoint (a proxy, a gateway, a test server).
        stream: Stream the reply (text reaches ``on_text`` as it arrives).
        max_tokens: The reply's token limit (the API requires one).
        timeout_s: Per-request timeout.
    """

    def __init__(
        self,
        model: str,
        *,
        api_key: str,
        base_url: str | None = None,
        stream: bool = False,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        timeout_s: float = DEFAULT_TIMEOUT_S,
    ) -> None:
        import anthropic  # the extra is needed only here

        self._anthropic = anthropic
        self.model = model
        self.stream = stream
        self.max_tokens = max_tokens
        self._clients = LoopBoundClient(
            lambda: anthropic.AsyncAnthropic(
                api_key=api_key, base_url=base_url, max_retries=0, timeout=timeout_s
            )
        )

    @property
    def name(self) -> str:
        return f"anthropic:{self.model}"

    def _get_client(self) -> anthropic.AsyncAnthropic:
        return self._clients.get()

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        kwargs: dict[str, Any] = {
            "model": self.model,
            "max_tokens": self.max_tokens,
            "messages": to_anthropic_messages(request.messages),
        }
        system = [{"type": "text", "text": t} for t in system_text(request.messages) if t]
        if system:
            kwargs["system"] = system
        if request.tools:
            kwargs["tools"] = to_anthropic(request.tools)
        try:
            if self.stream:
                async with self._get_client().messages.stream(**kwargs) as stream:
                    async for event in stream:
                        if event.type == "text" and on_text is not None:
                            on_text(event.text)
                    message = await stream.get_final_message()
            else:
                message = await self._get_client().messages.create(**kwargs)
        except self._anthropic.APIError as exc:
            raise sdk_error(self._anthropic, exc) from exc
        return _response(message, on_text if not self.stream else None)


def _response(message: Any, on_text: TextSink | None) -> ModelResponse:
    texts: list[str] = []
    calls: list[ToolCall] = []
    for block in message.content or ():
        if block.type == "text":
            texts.append(block.text)
        elif block.type == "tool_use":
            calls.append(ToolCall(block.id, block.name, json.dumps(block.input)))
    if message.content is None:
        raise ModelError("The model returned a message without content.")
    text = "".join(texts)
    if on_text is not None and text:
        on_text(text)
    usage = _usage(getattr(message, "usage", None))
    return ModelResponse(text, tuple(calls), message.stop_reason, message.model, usage)


def _usage(usage: Any) -> Usage | None:
    """The SDK's ``Usage`` → :class:`Usage`; cache reads and writes count as input."""
    if usage is None:
        return None
    inputs = (
        (usage.input_tokens or 0)
        + (getattr(usage, "cache_creation_input_tokens", None) or 0)
        + (getattr(usage, "cache_read_input_tokens", None) or 0)
    )
    return Usage(int(inputs), int(usage.output_tokens or 0))


def to_anthropic_messages(messages: Sequence[Message]) -> list[dict[str, Any]]:
    """OpenAI-shaped messages (system ones skipped) → Anthropic ``messages``."""
    out: list[dict[str, Any]] = []
    for message in messages:
        role = message.get("role")
        if role == "system":
            continue
        if role == "tool":
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": str(message.get("tool_call_id")),
                "content": str(message.get("content") or ""),
            }
            if message.get("is_error"):
                block["is_error"] = True
            _append(out, "user", [block])
        elif role == "assistant":
            _append(out, "assistant", _assistant_blocks(message))
        else:
            _append(out, "user", _text_blocks(message.get("content")))
    return out


def _assistant_blocks(message: Message) -> list[dict[str, Any]]:
    blocks = _text_blocks(message.get("content"))
    for call in message.get("tool_calls") or ():
        function = call.get("function") or {}
        blocks.append(
            {
                "type": "tool_use",
                "id": str(call.get("id")),
                "name": str(function.get("name")),
                "input": parse_json_object(str(function.get("arguments") or "")),
            }
        )
    return blocks


def _text_blocks(content: object) -> list[dict[str, Any]]:
    if isinstance(content, list):
        return [dict(b) for b in content]
    text = str(content or "")
    return [{"type": "text", "text": text}] if text else []


def _append(out: list[dict[str, Any]], role: str, blocks: list[dict[str, Any]]) -> None:
    if not blocks:
        return
    if out and out[-1]["role"] == role:
        out[-1]["content"].extend(blocks)
    else:
        out.append({"role": role, "content": blocks})

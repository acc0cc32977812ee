"""Anthropic Messages through the official ``anthropic`` SDK.

The OpenAI-shaped history is translated here: system messages become the top-level ``system``
blocks (the stable prompt first, so its prefix stays cacheable), assistant tool calls become
``tool_use`` blocks, tool results ``tool_result`` blocks in the following user turn, and
consecutive messages of one role are merged as the API requires.

Prompt caching: Anthropic caches a prompt prefix only up to explicit ``cache_control``
breakpoints (at most four per request; the prompt is read in the order tools, system, messages).
:func:`with_cache_breakpoints` puts them where skillshelf's prompt is stable — after the last
tool definition, after the first system block (the catalog: its bytes change only when the
visible skill set does), after the newest message (so the next step of a tool loop reads this
step's history from the cache) and, when there are further system blocks (the materialiser's
"Loaded skill context:" fallback), after the last of them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final

from skillshelf.core.tooldef import to_anthropic
from skillshelf.errors import MissingExtraError
from skillshelf.models.base import (
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

if TYPE_CHECKING:
    import anthropic

__all__ = ["AnthropicModel", "to_anthropic_messages", "with_cache_breakpoints"]

DEFAULT_MAX_TOKENS: Final = 4096
DEFAULT_TIMEOUT_S: Final = 600.0  # long answers with tools can take minutes
MAX_BREAKPOINTS: Final = 4  # the API rejects a request with more cache_control markers
_EPHEMERAL: Final = {"type": "ephemeral"}  # the default five-minute cache
_UNCACHEABLE: Final = frozenset({"thinking", "redacted_thinking"})


class AnthropicModel:
    """Claude models over the Messages API, with tools.

    Args:
        model: The model name.
        api_key: The key.
        base_url: Another endpoint (a proxy, a gateway, a test server).
        stream: Stream the reply (text reaches ``on_text`` as it arrives).
        max_tokens: The reply's token limit (the API requires one).
        timeout_s: Per-request timeout.
        cache: Mark prompt-cache breakpoints (see :func:`with_cache_breakpoints`). Off, the
            requests carry no ``cache_control`` at all.
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
        cache: bool = True,
    ) -> None:
        try:
            import anthropic  # the extra is needed only here
        except ImportError as exc:
            raise MissingExtraError(
                "anthropic", module="anthropic", feature="The Anthropic model adapter"
            ) from exc

        self._anthropic = anthropic
        self.model = model
        self.stream = stream
        self.max_tokens = max_tokens
        self.cache = cache
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
        if self.cache:
            kwargs = with_cache_breakpoints(kwargs)
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
    """The SDK's ``Usage`` → :class:`Usage`.

    Anthropic's ``input_tokens`` counts only the prompt after the last cache breakpoint; the
    cached parts come apart, so the total is their sum (and the split is kept).
    """
    if usage is None:
        return None
    written = int(getattr(usage, "cache_creation_input_tokens", None) or 0)
    read = int(getattr(usage, "cache_read_input_tokens", None) or 0)
    inputs = int(usage.input_tokens or 0) + written + read
    return Usage(inputs, int(usage.output_tokens or 0), read, written)


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


# ---- prompt-cache breakpoints -------------------------------------------------------------

_PARTS: Final = ("tools", "system", "messages")  # the order the API reads the prompt in
_Where = tuple[str, int, int]  # (one of _PARTS, item index, block index in a message)


def with_cache_breakpoints(params: Mapping[str, Any]) -> dict[str, Any]:
    """Messages API request parameters → a copy with prompt-cache breakpoints.

    In this order of priority, each where it is not already: the last tool definition, the
    first system block, the last content block of the newest message, the last system block.
    Blocks that cannot carry a breakpoint (empty or blank text, an empty tool result,
    thinking) are passed over for the closest earlier one. Breakpoints the caller put in its
    own blocks count towards the API's limit of :data:`MAX_BREAKPOINTS`, and the lowest
    priorities are left out to stay within it. ``params`` is not modified; the same params
    always give the same result.

    Args:
        params: ``tools``, ``system`` (a list of blocks) and ``messages`` (content as lists
            of blocks, as :func:`to_anthropic_messages` makes them); other keys are copied.
    """
    parts: dict[str, list[Any]] = {
        key: list(value) for key in _PARTS if isinstance(value := params.get(key), list)
    }
    tools, system, messages = (parts.get(key, []) for key in _PARTS)
    budget = MAX_BREAKPOINTS - _count_marked(tools, system, messages)
    for where in _candidates(tools, system, messages)[: max(budget, 0)]:
        _mark(where, tools, system, messages)
    return {**params, **parts}


def _candidates(tools: list[Any], system: list[Any], messages: list[Any]) -> list[_Where]:
    """Where breakpoints go, best first, without duplicates or places already marked."""
    found: list[_Where | None] = [
        ("tools", len(tools) - 1, -1) if tools else None,
        _first_system(system),
        _last_message_block(messages),
        _last_system(system),
    ]
    out: list[_Where] = []
    for where in found:
        if where is None or where in out:
            continue
        if not _is_marked(where, tools, system, messages):
            out.append(where)
    return out


def _first_system(system: list[Any]) -> _Where | None:
    for index, block in enumerate(system):
        if _cacheable(block):
            return ("system", index, -1)
    return None


def _last_system(system: list[Any]) -> _Where | None:
    for index in range(len(system) - 1, -1, -1):
        if _cacheable(system[index]):
            return ("system", index, -1)
    return None


def _last_message_block(messages: list[Any]) -> _Where | None:
    for index in range(len(messages) - 1, -1, -1):
        content = messages[index].get("content") if isinstance(messages[index], dict) else None
        if not isinstance(content, list):
            continue
        for block_index in range(len(content) - 1, -1, -1):
            if _cacheable(content[block_index]):
                return ("messages", index, block_index)
    return None


def _cacheable(block: object) -> bool:
    """Whether the API accepts a breakpoint on this block."""
    if not isinstance(block, dict) or block.get("type") in _UNCACHEABLE:
        return False
    if block.get("type") == "text":
        return bool(str(block.get("text") or "").strip())
    if block.get("type") == "tool_result":
        return bool(block.get("content"))
    return True


def _is_marked(where: _Where, tools: list[Any], system: list[Any], messages: list[Any]) -> bool:
    kind, index, block_index = where
    if kind == "tools":
        return tools[index].get("cache_control") is not None
    if kind == "system":
        return system[index].get("cache_control") is not None
    return messages[index]["content"][block_index].get("cache_control") is not None


def _count_marked(tools: list[Any], system: list[Any], messages: list[Any]) -> int:
    blocks = [*tools, *system]
    for message in messages:
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            blocks += content
    return sum(1 for b in blocks if isinstance(b, dict) and b.get("cache_control") is not None)


def _mark(where: _Where, tools: list[Any], system: list[Any], messages: list[Any]) -> None:
    """Put a breakpoint at ``where``, copying each container it changes."""
    kind, index, block_index = where
    if kind == "tools":
        tools[index] = {**tools[index], "cache_control": dict(_EPHEMERAL)}
    elif kind == "system":
        system[index] = {**system[index], "cache_control": dict(_EPHEMERAL)}
    else:
        content = list(messages[index]["content"])
        content[block_index] = {**content[block_index], "cache_control": dict(_EPHEMERAL)}
        messages[index] = {**messages[index], "content": content}

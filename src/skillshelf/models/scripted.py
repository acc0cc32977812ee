"""A model that answers from a script: canned replies, or a function of the request.

For testing an agent without a provider, and for demos (``--model scripted:FILE``);
``scripted_by_query`` gives each user message its own script, so concurrent conversations (an
eval) can share one model. Re-exported by :mod:`skillshelf.testing`.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeAlias

from skillshelf.errors import ConfigError, UsageError
from skillshelf.models.base import ModelRequest, ModelResponse, TextSink, ToolCall, Usage

__all__ = ["Reply", "ScriptedModel", "reply", "scripted_by_query"]

Reply: TypeAlias = "ModelResponse | str | Mapping[str, Any]"


def reply(
    text: str = "",
    *,
    tools: Sequence[tuple[str, Mapping[str, Any] | str]] = (),
    finish_reason: str | None = None,
    usage: Usage | tuple[int, int] | None = None,
) -> ModelResponse:
    """Build a model reply: text and/or tool calls ``(name, arguments)`` with ids ``call_N``.

    Arguments given as a string are sent verbatim (to script malformed JSON). ``usage`` is the
    tokens the reply reports, a :class:`~skillshelf.models.Usage` or ``(input, output)``.
    """

    calls = tuple(
        ToolCall(f"call_{i}", name, args if isinstance(args, str) else json.dumps(args))
        for i, (name, args) in enumerate(tools, start=1)
    )
    reason = finish_reason or ("tool_calls" if calls else "stop")
    tokens = Usage(*usage) if isinstance(usage, tuple) else usage
    return ModelResponse(text, calls, reason, "scripted", tokens)


def _as_response(item: Reply) -> ModelResponse:

    if isinstance(item, ModelResponse):
        return item
    if isinstance(item, str):
        return reply(item)
    calls = [(str(c["name"]), c.get("arguments", {})) for c in item.get("tool_calls", ())]
    usage = item.get("usage")
    tokens = (int(usage["input_tokens"]), int(usage["output_tokens"])) if usage else None
    return reply(str(item.get("text", "")), tools=calls, usage=tokens)


class ScriptedModel:
    """A model that replies from a script and records every request it gets.

    Args:
        script: Replies in order — :class:`~skillshelf.models.ModelResponse`, plain text, or
            ``{"text": ..., "tool_calls": [{"name": ..., "arguments": {...}}]}`` — or a
            function of the request returning one.
        name: Shown in traces.

    Attributes:
        requests: Every request received, in order.

    Raises:
        UsageError: (when called) the script has run out of replies.
    """

    def __init__(
        self,
        script: Iterable[Reply] | Callable[[ModelRequest], Reply],
        *,
        name: str = "scripted",
    ) -> None:
        self._fn = script if callable(script) else None
        self._replies = [] if callable(script) else list(script)
        self._name = name
        self.requests: list[ModelRequest] = []

    @classmethod
    def from_file(cls, path: str | Path) -> ScriptedModel:
        """Read a JSON list of replies (text or ``{"text", "tool_calls"}`` objects)."""
        try:
            replies = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ConfigError(f"Cannot read the script {str(path)!r}: {exc}") from None
        if not isinstance(replies, list):
            raise ConfigError(f"The script {str(path)!r} must be a JSON list of replies")
        return cls(replies, name=f"scripted:{Path(path).name}")

    @property
    def name(self) -> str:
        return self._name

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        self.requests.append(request)
        if self._fn is not None:
            item = self._fn(request)
        elif len(self.requests) <= len(self._replies):
            item = self._replies[len(self.requests) - 1]
        else:
            raise UsageError(
                f"The scripted model has no reply left for request {len(self.requests)}"
            )
        response = _as_response(item)
        if on_text is not None and response.text:
            on_text(response.text)
        return response


def scripted_by_query(
    scripts: Mapping[str, Sequence[Reply]],
    *,
    default: Sequence[Reply] = ("(no script for this message)",),
    name: str = "scripted",
) -> ScriptedModel:
    """A :class:`ScriptedModel` whose reply depends on the conversation, not on call order.

    The script is chosen by the conversation's first user message (``default`` when none
    matches); the reply is the one at the index of the number of assistant messages already in
    the request. So each conversation follows its own script however many run at once. A
    script that runs out repeats its last reply.

    Args:
        scripts: Replies by user message.
        default: The script of any other message.
        name: Shown in traces.
    """
    table = {query: list(replies) for query, replies in scripts.items()}
    fallback = list(default)

    def answer(request: ModelRequest) -> Reply:
        users = [m for m in request.messages if m.get("role") == "user"]
        query = str(users[0].get("content") or "") if users else ""
        replies = table.get(query, fallback)
        done = sum(1 for m in request.messages if m.get("role") == "assistant")
        if not replies:
            raise UsageError(f"The script for {query!r} has no replies")
        return replies[min(done, len(replies) - 1)]

    return ScriptedModel(answer, name=name)

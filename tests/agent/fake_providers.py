"""Fake model providers on 127.0.0.1: an OpenAI Chat Completions server and an Anthropic
Messages server, each in a thread, answering from a script and recording every request.

Replies are written provider-neutrally (:func:`skillshelf.testing.reply`, or :class:`Fail` for an
HTTP error) and rendered in the protocol of the server, streamed as server-sent events when the
request asks for it.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self

from skillshelf.models import ModelResponse, Usage

# Joining the server thread after shutdown: it answers within milliseconds; a margin for CI.
_STOP_TIMEOUT_S = 10.0
# How often the serving loop checks for shutdown (the stdlib's 0.5 s makes every stop slow).
_POLL_S = 0.01


@dataclass(frozen=True)
class Fail:
    """An HTTP error reply."""

    status: int
    message: str = "scripted failure"
    retry_after: str | None = None


Scripted = ModelResponse | Fail
Script = Sequence[Scripted] | Callable[[dict[str, Any]], Scripted]


@dataclass
class Recorded:
    path: str
    headers: dict[str, str]
    body: dict[str, Any]


@dataclass
class FakeServer:
    """Base: subclasses render replies for one protocol."""

    script: Script
    requests: list[Recorded] = field(default_factory=list)
    port: int = 0
    _server: ThreadingHTTPServer | None = None
    _thread: threading.Thread | None = None
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def next_reply(self, body: dict[str, Any]) -> Scripted:
        with self._lock:
            if callable(self.script):
                return self.script(body)
            index = len(self.requests) - 1
            if index >= len(self.script):
                return Fail(500, f"the fake server has no reply scripted for request {index + 1}")
            return self.script[index]

    def start(self) -> Self:
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                body = json.loads(self.rfile.read(length) or b"{}")
                with outer._lock:
                    outer.requests.append(Recorded(self.path, dict(self.headers), body))
                reply = outer.next_reply(body)
                if isinstance(reply, Fail):
                    self._send_json(reply.status, outer.error_body(reply), reply.retry_after)
                elif body.get("stream"):
                    self.send_response(200)
                    self.send_header("content-type", "text/event-stream")
                    self.end_headers()
                    for event in outer.stream_events(reply, body):
                        self.wfile.write(event.encode())
                        self.wfile.flush()
                else:
                    self._send_json(200, outer.render(reply), None)

            def _send_json(self, status: int, payload: object, retry_after: str | None) -> None:
                data = json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(data)))
                if retry_after is not None:
                    self.send_header("retry-after", retry_after)
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self._thread = threading.Thread(
            target=self._server.serve_forever, args=(_POLL_S,), daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(_STOP_TIMEOUT_S)

    def render(self, reply: ModelResponse) -> dict[str, Any]:
        raise NotImplementedError

    def stream_events(self, reply: ModelResponse, body: dict[str, Any]) -> Iterator[str]:
        raise NotImplementedError

    def error_body(self, fail: Fail) -> dict[str, Any]:
        raise NotImplementedError

    # -- helpers for assertions ----------------------------------------------------------

    def bodies(self) -> list[dict[str, Any]]:
        return [r.body for r in self.requests]


class FakeOpenAI(FakeServer):
    """``POST /v1/chat/completions``."""

    def render(self, reply: ModelResponse) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant", "content": reply.text or None}
        if reply.tool_calls:
            message["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": c.arguments},
                }
                for c in reply.tool_calls
            ]
        return {
            "id": "chatcmpl-fake",
            "object": "chat.completion",
            "created": 0,
            "model": "fake-model",
            "choices": [{"index": 0, "message": message, "finish_reason": _finish(reply)}],
            "usage": _openai_usage(reply),
        }

    def stream_events(self, reply: ModelResponse, body: dict[str, Any]) -> Iterator[str]:
        def chunk(delta: dict[str, Any], finish: str | None = None) -> str:
            payload = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "fake-model",
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish}],
            }
            return f"data: {json.dumps(payload)}\n\n"

        yield chunk({"role": "assistant", "content": ""})
        for piece in _pieces(reply.text):
            yield chunk({"content": piece})
        for index, call in enumerate(reply.tool_calls):
            head = {"index": index, "id": call.id, "type": "function"}
            yield chunk(
                {"tool_calls": [{**head, "function": {"name": call.name, "arguments": ""}}]}
            )
            for piece in _pieces(call.arguments):
                yield chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
        yield chunk({}, _finish(reply))
        if (body.get("stream_options") or {}).get("include_usage"):
            # As OpenAI does: one more chunk, with no choices, carrying the usage.
            last = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": 0,
                "model": "fake-model",
                "choices": [],
                "usage": _openai_usage(reply),
            }
            yield f"data: {json.dumps(last)}\n\n"
        yield "data: [DONE]\n\n"

    def error_body(self, fail: Fail) -> dict[str, Any]:
        return {"error": {"message": fail.message, "type": "fake_error", "code": None}}


class FakeAnthropic(FakeServer):
    """``POST /v1/messages``.

    Like the real API it answers HTTP 400 to a request with more than four ``cache_control``
    breakpoints or with one on a blank text block, so every test through it checks those rules.
    """

    def next_reply(self, body: dict[str, Any]) -> Scripted:
        problem = _cache_control_problem(body)
        return Fail(400, problem) if problem else super().next_reply(body)

    def _blocks(self, reply: ModelResponse) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        if reply.text:
            blocks.append({"type": "text", "text": reply.text})
        for call in reply.tool_calls:
            blocks.append(
                {"type": "tool_use", "id": call.id, "name": call.name, "input": _obj(call)}
            )
        return blocks

    def render(self, reply: ModelResponse) -> dict[str, Any]:
        return {
            "id": "msg_fake",
            "type": "message",
            "role": "assistant",
            "model": "fake-claude",
            "content": self._blocks(reply),
            "stop_reason": "tool_use" if reply.tool_calls else "end_turn",
            "stop_sequence": None,
            "usage": _anthropic_usage(reply),
        }

    def stream_events(self, reply: ModelResponse, body: dict[str, Any]) -> Iterator[str]:
        def event(name: str, payload: dict[str, Any]) -> str:
            return f"event: {name}\ndata: {json.dumps({'type': name, **payload})}\n\n"

        usage = _anthropic_usage(reply)
        start = {
            **self.render(reply),
            "content": [],
            "stop_reason": None,
            "usage": {**usage, "output_tokens": 0},
        }
        yield event("message_start", {"message": start})
        for index, block in enumerate(self._blocks(reply)):
            if block["type"] == "text":
                yield event(
                    "content_block_start",
                    {"index": index, "content_block": {"type": "text", "text": ""}},
                )
                for piece in _pieces(block["text"]):
                    delta = {"type": "text_delta", "text": piece}
                    yield event("content_block_delta", {"index": index, "delta": delta})
            else:
                head = {**block, "input": {}}
                yield event("content_block_start", {"index": index, "content_block": head})
                for piece in _pieces(json.dumps(block["input"])):
                    delta = {"type": "input_json_delta", "partial_json": piece}
                    yield event("content_block_delta", {"index": index, "delta": delta})
            yield event("content_block_stop", {"index": index})
        stop = "tool_use" if reply.tool_calls else "end_turn"
        yield event(
            "message_delta",
            {
                "delta": {"stop_reason": stop, "stop_sequence": None},
                "usage": {"output_tokens": usage["output_tokens"]},
            },
        )
        yield event("message_stop", {})

    def error_body(self, fail: Fail) -> dict[str, Any]:
        return {"type": "error", "error": {"type": "fake_error", "message": fail.message}}


def _openai_usage(reply: ModelResponse) -> dict[str, Any]:
    """The reply's scripted usage (1 and 1 when it has none), in OpenAI's shape."""
    usage = reply.usage or Usage(1, 1)
    inputs, outputs = usage.input_tokens, usage.output_tokens
    out: dict[str, Any] = {
        "prompt_tokens": inputs,
        "completion_tokens": outputs,
        "total_tokens": inputs + outputs,
    }
    if usage.cache_read_tokens:
        out["prompt_tokens_details"] = {"cached_tokens": usage.cache_read_tokens}
    return out


def _anthropic_usage(reply: ModelResponse) -> dict[str, int]:
    """The reply's scripted usage (1 and 1 when it has none), in Anthropic's shape: the cached
    parts of the prompt apart from ``input_tokens``."""
    usage = reply.usage or Usage(1, 1)
    return {
        "input_tokens": usage.uncached_input_tokens,
        "cache_creation_input_tokens": usage.cache_write_tokens,
        "cache_read_input_tokens": usage.cache_read_tokens,
        "output_tokens": usage.output_tokens,
    }


# The Messages API's limit on cache_control breakpoints per request.
_MAX_BREAKPOINTS = 4


def _cache_control_problem(body: dict[str, Any]) -> str | None:
    """What the real API would reject about the request's cache breakpoints, if anything."""
    system = body.get("system")
    blocks = [*body.get("tools", ()), *(system if isinstance(system, list) else ())]
    for message in body.get("messages", ()):
        if isinstance(message.get("content"), list):
            blocks += message["content"]
    marked = [b for b in blocks if b.get("cache_control") is not None]
    if len(marked) > _MAX_BREAKPOINTS:
        return f"A maximum of {_MAX_BREAKPOINTS} blocks with cache_control may be provided."
    if any(b.get("type") == "text" and not str(b.get("text", "")).strip() for b in marked):
        return "cache_control cannot be set for empty text blocks"
    return None


def _finish(reply: ModelResponse) -> str:
    return "tool_calls" if reply.tool_calls else "stop"


def _obj(call: Any) -> dict[str, Any]:
    try:
        value = json.loads(call.arguments or "{}")
    except ValueError:
        return {}
    return value if isinstance(value, dict) else {}


def _pieces(text: str, size: int = 7) -> Iterator[str]:
    for start in range(0, len(text), size):
        yield text[start : start + size]

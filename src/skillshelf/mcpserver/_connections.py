"""The HTTP connection layer's own limits: connections at once, time to send headers and body.

uvicorn holds a connection whose request headers never finish for as long as the client
likes (its keep-alive timer stops at the first byte), and accepts connections until
``accept`` fails for want of descriptors; a thousand trickling clients then lock out
everyone. :func:`guarded_protocol` is uvicorn's h11 protocol with three checks added:

* past ``max_connections`` open connections, a new one is answered 503 and closed at once;
* a request's headers must be complete ``header_timeout_s`` after its first byte (or after
  the connection opened), else 408 and close;
* its body must be complete ``body_timeout_s`` after the headers, else 408 and close.

Refusals are written straight to the socket (h11 has no request to answer yet, or the app
is still reading), as a JSON-RPC error body like the SDK's own.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any, ClassVar, Final

import h11
from uvicorn.protocols.http.h11_impl import H11Protocol

from skillshelf.mcpserver.limits import ServeLimits

__all__ = ["GuardedH11Protocol", "guarded_protocol", "jsonrpc_error"]

logger = logging.getLogger("skillshelf.mcp")

_INVALID_REQUEST: Final = -32600
_SERVER_BUSY: Final = -32000  # implementation-defined server error (JSON-RPC 2.0 § 5.1)
_REASONS: Final = {408: b"Request Timeout", 503: b"Service Unavailable"}
# A flood is refused by the thousand: one warning per kind this often, with the count.
_WARN_EVERY_S: Final = 10.0


class _Warnings:
    """Warnings of one kind at most every :data:`_WARN_EVERY_S`, counting those held back."""

    def __init__(self) -> None:
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, now: float, kind: str, message: str) -> None:
        if now - self._last.get(kind, -_WARN_EVERY_S) < _WARN_EVERY_S:
            self._held[kind] = self._held.get(kind, 0) + 1
            return
        held = self._held.pop(kind, 0)
        self._last[kind] = now
        more = f" (and {held} more like it in the last {_WARN_EVERY_S:g} s)" if held else ""
        logger.warning("%s%s", message, more)


_WARNINGS: Final = _Warnings()


def jsonrpc_error(code: int, message: str) -> bytes:
    """A JSON-RPC error response body without a request id (the SDK's shape)."""
    error = {"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}}
    return json.dumps(error).encode()


def _raw_response(status: int, body: bytes) -> bytes:
    head = (
        f"HTTP/1.1 {status} {_REASONS[status].decode()}\r\n"
        "content-type: application/json\r\n"
        f"content-length: {len(body)}\r\n"
        "connection: close\r\n\r\n"
    )
    return head.encode() + body


class GuardedH11Protocol(H11Protocol):
    """One connection, refused when too many are open, dropped when it reads too slowly.

    The limits are class attributes, set by :func:`guarded_protocol` (uvicorn makes the
    protocol itself, one per connection).
    """

    max_connections: ClassVar[int]
    header_timeout_s: ClassVar[float]
    body_timeout_s: ClassVar[float]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._deadline: asyncio.TimerHandle | None = None
        self._reading: str | None = None  # the phase the deadline is for

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        full = len(self.connections) >= self.max_connections
        super().connection_made(transport)  # type: ignore[arg-type]
        if full:
            _WARNINGS.warn(
                self.loop.time(),
                "connections",
                f"refused a connection: {self.max_connections} are open (the limit)",
            )
            self._refuse(
                503,
                jsonrpc_error(
                    _SERVER_BUSY,
                    f"Too many open connections (the limit is {self.max_connections}); "
                    "try again later",
                ),
            )
            return
        self._arm()

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        self._arm()

    def on_response_complete(self) -> None:
        super().on_response_complete()
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def _arm(self) -> None:
        """Start the deadline of what the client is sending now, once per phase."""
        if self.transport.is_closing():
            self._disarm()
            return
        phase = self._phase()
        if phase == self._reading:
            return
        self._disarm()
        self._reading = phase
        if phase == "headers":
            self._deadline = self.loop.call_later(self.header_timeout_s, self._expire, phase)
        elif phase == "body":
            self._deadline = self.loop.call_later(self.body_timeout_s, self._expire, phase)

    def _phase(self) -> str | None:
        state = self.conn.their_state
        if state is h11.SEND_BODY:
            return "body"
        if state is not h11.IDLE or self.conn.our_state is not h11.IDLE:
            return None  # the app is answering
        # Between requests uvicorn's keep-alive timer runs; from the first byte on (which
        # stops it), or on a new connection, the header deadline does.
        return "idle" if self.timeout_keep_alive_task is not None else "headers"

    def _disarm(self) -> None:
        if self._deadline is not None:
            self._deadline.cancel()
            self._deadline = None
        self._reading = None

    def _expire(self, what: str) -> None:
        self._deadline = None
        if self.transport.is_closing():
            return
        limit = self.header_timeout_s if what == "headers" else self.body_timeout_s
        _WARNINGS.warn(
            self.loop.time(),
            what,
            f"dropped a connection: its request {what} took over {limit:g} s",
        )
        message = f"The request {what} did not arrive within {limit:g} s"
        started = self.cycle is not None and self.cycle.response_started
        self._refuse(408, b"" if started else jsonrpc_error(_INVALID_REQUEST, message))

    def _refuse(self, status: int, body: bytes) -> None:
        if body:
            self.transport.write(_raw_response(status, body))
        self.transport.close()


def guarded_protocol(limits: ServeLimits) -> type[asyncio.Protocol]:
    """:class:`GuardedH11Protocol` with ``limits``' connection cap and read timeouts."""

    class Configured(GuardedH11Protocol):
        max_connections = limits.connections()
        header_timeout_s = limits.header_timeout_s
        body_timeout_s = limits.body_timeout_s

    return Configured

"""Handshake-era (2025-11-25) sessions per client: :class:`SessionQuota`.

The SDK keeps at most ``max_sessions`` sessions and answers 503 to any client while that
many are open, until they idle out (30 minutes): one client opening sessions in a loop locks
every other legacy client out. Here each client (:func:`~skillshelf.mcpserver.handles.client_of`)
keeps at most ``sessions_per_client``, and at the total the client with the most gives one up
(:class:`~skillshelf.core.quota.FairPool`), once the SDK opened the new one (its own cap is
set above ours, see :data:`SDK_SESSION_SLACK`). An evicted
session is ended as if its client had sent ``DELETE``: its state and workspace go, and its
next request is answered 404 ("Session not found"), which tells a client to initialize again.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final

from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from skillshelf.core.quota import FairPool
from skillshelf.mcpserver.handles import client_of

__all__ = ["SDK_SESSION_SLACK", "SESSION_KEY_PREFIX", "SessionQuota", "peer_of"]

logger = logging.getLogger("skillshelf.mcp")

SESSION_KEY_PREFIX: Final = "http:"  # a legacy session's state key: prefix + Mcp-Session-Id
# The SDK's cap is ours plus this: sessions being opened at the same moment, before the one
# over our cap is ended, are still admitted (past it the SDK answers 503).
SDK_SESSION_SLACK: Final = 256
_VERSION_HEADER: Final = MCP_PROTOCOL_VERSION_HEADER.lower().encode("ascii")
_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


def peer_of(scope: _Scope) -> str | None:
    """The peer address of an ASGI connection, when the server knows it."""
    client = scope.get("client")
    return str(client[0]) if client else None


class SessionQuota:
    """ASGI middleware: handshake-era sessions capped per client, evicted fairly.

    Args:
        app: What serves MCP (session ends pass through it as ``DELETE``).
        pool: The sessions held, keyed by state key (``http:<Mcp-Session-Id>``).
        path: Where MCP is served.
    """

    def __init__(self, app: _ASGIApp, pool: FairPool, path: str) -> None:
        self.app = app
        self.pool = pool
        self.path = path

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path or not _handshake_era(scope):
            await self.app(scope, receive, send)
            return
        headers = dict(scope.get("headers") or ())
        client = client_of(_text(headers.get(b"authorization")), peer_of(scope))
        session = headers.get(b"mcp-session-id")
        if session is not None:
            key = SESSION_KEY_PREFIX + session.decode("latin-1")
            if self.pool.client_of(key) is not None:
                await self._end_all(scope, self.pool.touch(client, key))
            await self.app(scope, receive, send)
            if scope.get("method") == "DELETE":
                self.pool.discard(key)
            return
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        opened: list[str] = []

        async def noted(message: MutableMapping[str, Any]) -> None:
            if message["type"] == "http.response.start" and message["status"] < 400:
                for name, value in message.get("headers") or ():
                    if name.lower() == b"mcp-session-id":
                        opened.append(SESSION_KEY_PREFIX + value.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, noted)
        for key in opened:
            await self._end_all(scope, self.pool.touch(client, key))

    async def _end_all(self, scope: _Scope, keys: list[str]) -> None:
        for key in keys:
            logger.info("ending session %s: its client opened too many", key[:80])
            await self._end(scope, key.removeprefix(SESSION_KEY_PREFIX))

    async def _end(self, like: _Scope, session: str) -> None:
        """End ``session`` as its client's ``DELETE`` would, answering nobody."""
        kept = [(k, v) for k, v in like.get("headers") or () if k in (b"host", b"authorization")]
        scope = {
            **like,
            "method": "DELETE",
            "headers": [*kept, (b"mcp-session-id", session.encode("latin-1"))],
            "path": self.path,
            "raw_path": self.path.encode(),
            "query_string": b"",
        }

        async def receive() -> MutableMapping[str, Any]:
            return {"type": "http.request", "body": b"", "more_body": False}

        async def discard(_message: MutableMapping[str, Any]) -> None:
            return None

        await self.app(scope, receive, discard)


def _handshake_era(scope: _Scope) -> bool:
    """True for requests the SDK serves as handshake-era (no version header, or a 2025 one)."""
    version = dict(scope.get("headers") or ()).get(_VERSION_HEADER)
    return version is None or version.decode("latin-1") in HANDSHAKE_PROTOCOL_VERSIONS


def _text(value: bytes | None) -> str | None:
    return None if value is None else value.decode("latin-1")

"""Running a :class:`SkillServer`: stdio or streamable HTTP, hot reload, SIGHUP, bearer token.

Nothing here writes to stdout: under stdio it carries the protocol, and over HTTP the logs
still belong on stderr.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any, Final, Literal

import anyio
import anyio.abc

from skillshelf.errors import UsageError
from skillshelf.mcpserver.server import SkillServer

__all__ = ["WATCH_DEBOUNCE_MS", "is_loopback", "serve"]

logger = logging.getLogger("skillshelf.mcp")

# Editors save in bursts (write, rename, touch): one re-scan per burst, soon after it ends.
WATCH_DEBOUNCE_MS: Final = 300
MCP_PATH: Final = "/mcp"
_BACKLOG: Final = 2048  # uvicorn's default

Transport = Literal["stdio", "http"]
_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]
_ASGIApp = Callable[[_Scope, _Receive, _Send], Awaitable[None]]


def is_loopback(host: str) -> bool:
    """True for ``localhost`` and loopback addresses (127.0.0.0/8, ::1)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


async def serve(
    server: SkillServer,
    *,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    watch: bool = False,
    on_ready: Callable[[str], None] | None = None,
) -> None:
    """Serve until the client disconnects (stdio) or the process is stopped (HTTP).

    Args:
        server: What to serve.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``/mcp``).
        host: Address to bind for HTTP.
        port: Port for HTTP; 0 picks a free one (``on_ready`` gets the URL).
        token: Bearer token every HTTP request must carry.
        watch: Re-scan when files under the roots change; otherwise SIGHUP re-scans.
        on_ready: Called with the URL (or ``"stdio"``) once requests can be served.

    Raises:
        UsageError: A non-loopback HTTP address without a token.
    """
    if transport == "http" and not is_loopback(host) and not token:
        raise UsageError(
            f"Refusing to serve on {host!r} without a bearer token: anyone who can reach it "
            "could read every skill. Give it a token, or bind to 127.0.0.1."
        )
    await anyio.to_thread.run_sync(server.report_limits)
    async with anyio.create_task_group() as tg:
        if watch:
            tg.start_soon(_watch, server)
        elif hasattr(signal, "SIGHUP"):
            tg.start_soon(_on_sighup, server)
        if transport == "stdio":
            await _serve_stdio(server, on_ready)
        else:
            await _serve_http(server, host, port, token, on_ready)
        tg.cancel_scope.cancel()


async def _serve_stdio(server: SkillServer, on_ready: Callable[[str], None] | None) -> None:
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    options = server.server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    async with stdio_server() as (read_stream, write_stream):
        if on_ready is not None:
            on_ready("stdio")
        await server.server.run(read_stream, write_stream, options)


async def _serve_http(
    server: SkillServer,
    host: str,
    port: int,
    token: str | None,
    on_ready: Callable[[str], None] | None,
) -> None:
    import uvicorn

    app: _ASGIApp = server.server.streamable_http_app(streamable_http_path=MCP_PATH, host=host)
    if token:
        app = BearerTokenGate(app, token)
    sock = _bind(host, port)
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(app, log_config=None, access_log=False, lifespan="on")
    web = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}{MCP_PATH}")
    await web.serve(sockets=[sock])


def _bind(host: str, port: int) -> socket.socket:
    family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    # Listening before the URL is announced: a client that connects at once waits in the
    # backlog instead of being refused while uvicorn starts.
    sock.listen(_BACKLOG)
    sock.set_inheritable(True)
    return sock


class BearerTokenGate:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401."""

    def __init__(self, app: _ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                body = b'{"error":"invalid_token","error_description":"A bearer token is required"}'
                await send(
                    {
                        "type": "http.response.start",
                        "status": 401,
                        "headers": [
                            (b"content-type", b"application/json"),
                            (b"www-authenticate", b'Bearer error="invalid_token"'),
                            (b"content-length", str(len(body)).encode()),
                        ],
                    }
                )
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def _watched(server: SkillServer) -> list[str]:
    dirs = []
    for root in server.repo.roots:
        path = os.path.abspath(os.path.expanduser(root))
        if os.path.isdir(path):
            dirs.append(path)
    return dirs


async def _watch(server: SkillServer) -> None:
    from watchfiles import awatch

    dirs = _watched(server)
    if not dirs:
        logger.warning("watch: no root folder exists, nothing to watch")
        return
    logger.info("watching %s", ", ".join(dirs))
    server.shelf.trust_cache = True  # every change below clears the caches (refresh)
    try:
        async for _changes in awatch(*dirs, debounce=WATCH_DEBOUNCE_MS, step=50):
            try:
                await server.refresh()
            except Exception:  # a bad re-scan must not stop serving
                logger.exception("re-scan failed")
    finally:
        server.shelf.trust_cache = False


async def _on_sighup(server: SkillServer) -> None:
    with anyio.open_signal_receiver(signal.SIGHUP) as signals:
        async for _signum in signals:
            logger.info("SIGHUP: re-scanning")
            try:
                await server.refresh()
            except Exception:  # broad on purpose: a bad re-scan must not stop serving
                logger.exception("re-scan failed")


def configure_logging(level: int = logging.INFO) -> None:
    """Send skillshelf's, the SDK's and uvicorn's logs to stderr, never stdout."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("skillshelf").setLevel(level)

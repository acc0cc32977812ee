"""Running a :class:`SkillServer`: stdio or streamable HTTP, hot reload, SIGHUP, bearer token.

Nothing here writes to stdout: under stdio it carries the protocol, and over HTTP the logs
still belong on stderr.

Over HTTP every request, token or not, must name this server in ``Host`` (and, when a browser
sends one, in ``Origin``): the bound address, ``localhost`` for a loopback or wildcard bind, any
IP literal for a wildcard bind, and the names given in ``allowed_hosts``. Anything else is
answered 421 (Host) or 403 (Origin) before it reaches MCP, which defeats DNS rebinding: a page
whose name an attacker points at 127.0.0.1 still sends its own name.
"""

from __future__ import annotations

import hmac
import ipaddress
import logging
import os
import signal
import socket
import sys
from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any, Final, Literal, cast
from urllib.parse import urlsplit

import anyio
import anyio.abc

from skillshelf.errors import UsageError
from skillshelf.mcpserver._connections import guarded_protocol
from skillshelf.mcpserver._sessions import SDK_SESSION_SLACK, SessionQuota
from skillshelf.mcpserver.server import SkillServer
from skillshelf.mcpserver.signals import ServerSignals
from skillshelf.mcpserver.stdio import claimed_stdin

__all__ = [
    "WATCH_DEBOUNCE_MS",
    "BearerTokenGate",
    "HostGuard",
    "SessionEnds",
    "is_loopback",
    "serve",
]

logger = logging.getLogger("skillshelf.mcp")

# Editors save in bursts (write, rename, touch): one re-scan per burst, soon after it ends.
WATCH_DEBOUNCE_MS: Final = 300
# The watcher wakes this often when nothing changes: its first wake proves it is installed
# (serving is announced only after it); each later one costs a thread hop.
WATCH_IDLE_MS: Final = 200
MCP_PATH: Final = "/mcp"
# uvicorn waits this long for open requests and streams (an idle SSE stream never ends by
# itself) once told to stop, then closes them: a stop is never held up by a client.
HTTP_SHUTDOWN_GRACE_S: Final = 5
# The realm a 401 names: a static bearer token, not OAuth (no resource_metadata is offered,
# and the OAuth discovery documents under /.well-known/ answer 404).
TOKEN_REALM: Final = "skillshelf"

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
    allowed_hosts: Iterable[str] = (),
    signals: ServerSignals | None = None,
) -> None:
    """Serve until the client disconnects (stdio), or a stop signal arrives.

    Args:
        server: What to serve.
        transport: ``"stdio"`` or ``"http"`` (streamable HTTP at ``/mcp``).
        host: Address to bind for HTTP.
        port: Port for HTTP; 0 picks a free one (``on_ready`` gets the URL).
        token: Bearer token every HTTP request must carry.
        watch: Re-scan when files under the roots change; otherwise SIGHUP re-scans. With it,
            ``on_ready`` comes once the watcher is installed and the roots are re-scanned,
            so no edit made after the repository's first scan is missed.
        on_ready: Called with the URL (or ``"stdio"``) once requests can be served.
        allowed_hosts: Host names (besides the bound address) that HTTP requests may name in
            ``Host`` and ``Origin``, e.g. the name a reverse proxy forwards.
        signals: The process's signals, entered in the main thread before the event loop
            started: a stop signal ends serving (a pending one at once), and SIGHUP re-scans
            unless ``watch``. Without it, SIGHUP re-scans through the event loop's own handler
            and stopping is the caller's (cancel the task).

    Raises:
        UsageError: A non-loopback HTTP address without a token.
    """
    if transport == "http" and not is_loopback(host) and not token:
        raise UsageError(
            f"Refusing to serve on {host!r} without a bearer token: anyone who can reach it "
            "could read every skill. Give it a token, or bind to 127.0.0.1."
        )
    # The watcher's thread ends at its next step once this is set; cancelling alone would
    # wait for the thread's next wake before the server could stop.
    watch_stopped = anyio.Event()
    async with anyio.create_task_group() as tg:

        def stop() -> None:
            watch_stopped.set()
            tg.cancel_scope.cancel()

        if signals is not None:
            tg.start_soon(_stop_on_signal, signals, stop)
        if watch:
            # Watching, and re-scanned once (which reports the limits), before serving is
            # announced: no edit made after the first scan is missed.
            await tg.start(_watch, server, watch_stopped)
        else:
            await anyio.to_thread.run_sync(server.report_limits)
            if signals is not None:
                tg.start_soon(_rescan_on_signal, signals, server)
            elif hasattr(signal, "SIGHUP"):
                tg.start_soon(_on_sighup, server)
        if len(server.repo) == 0:
            logger.warning("%s", server.no_skills_warning())
        try:
            if transport == "stdio":
                await _serve_stdio(server, on_ready)
            else:
                await _serve_http(server, host, port, token, on_ready, allowed_hosts)
        finally:
            stop()


async def _serve_stdio(server: SkillServer, on_ready: Callable[[str], None] | None) -> None:
    from mcp.server.lowlevel.server import NotificationOptions
    from mcp.server.stdio import stdio_server

    options = server.server.create_initialization_options(
        NotificationOptions(prompts_changed=True, resources_changed=True, tools_changed=True)
    )
    with claimed_stdin() as stdin:
        async with stdio_server(stdin=cast(Any, stdin)) as (read_stream, write_stream):
            if on_ready is not None:
                on_ready("stdio")
            try:
                await server.server.run(read_stream, write_stream, options)
            finally:
                with anyio.CancelScope(shield=True):
                    await server.end_session(server.stdio_session)


async def _serve_http(
    server: SkillServer,
    host: str,
    port: int,
    token: str | None,
    on_ready: Callable[[str], None] | None,
    allowed_hosts: Iterable[str] = (),
) -> None:
    import uvicorn
    from mcp.server.transport_security import TransportSecuritySettings

    # The SDK checks Host/Origin only on /mcp and only for three fixed loopback names (which
    # would refuse the names of --allow-host); HostGuard checks every request, so the SDK's
    # own check is off rather than a second, different rule.
    limits = server.limits
    app: _ASGIApp = server.server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        host=host,
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
        max_sessions=limits.max_sessions + SDK_SESSION_SLACK,
    )
    app = SessionQuota(SessionEnds(app, server), server.sessions, MCP_PATH)
    if token:
        app = BearerTokenGate(app, token)
    app = HostGuard(app, host, allowed_hosts)
    sock = _bind(host, port, limits.backlog())
    bound = sock.getsockname()[1]
    shown = f"[{host}]" if ":" in host else host
    config = uvicorn.Config(
        app,
        http=guarded_protocol(limits),
        backlog=limits.backlog(),
        log_config=None,
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=HTTP_SHUTDOWN_GRACE_S,
    )
    web = uvicorn.Server(config)
    if on_ready is not None:
        on_ready(f"http://{shown}:{bound}{MCP_PATH}")
    await web.serve(sockets=[sock])


def _bind(host: str, port: int, backlog: int) -> socket.socket:
    family, kind, proto, _name, address = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)[0]
    sock = socket.socket(family, kind, proto)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(address)
    # Listening before the URL is announced: a client that connects at once waits in the
    # backlog instead of being refused while uvicorn starts.
    sock.listen(backlog)
    sock.set_inheritable(True)
    return sock


async def _refuse(
    send: _Send, status: int, body: bytes, headers: Iterable[tuple[bytes, bytes]] = ()
) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


class HostGuard:
    """ASGI middleware: a request whose ``Host`` or ``Origin`` names another site is refused.

    ``Host`` not allowed → 421 Misdirected Request; ``Origin`` present and not allowed → 403.
    """

    def __init__(self, app: _ASGIApp, bound: str, names: Iterable[str] = ()) -> None:
        self.app = app
        bound = bound.strip("[]").lower()
        self._names = {bound, *(n.strip().strip("[]").lower() for n in names if n.strip())}
        self._any_ip = _is_unspecified(bound)  # 0.0.0.0 / ::: reached by any address it has
        if is_loopback(bound) or self._any_ip:
            self._names.add("localhost")
        if bound == "localhost":
            self._names.update(("127.0.0.1", "::1"))

    def allows(self, name: str) -> bool:
        """True when ``name`` (a host without port) may be used to reach this server."""
        name = name.strip("[]").lower()
        if name in self._names:
            return True
        # A rebinding page always sends a name; an IP literal is the address itself.
        return self._any_ip and _is_ip(name)

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "websocket":
            # Nothing is served over WebSocket; refuse before the handshake, whatever Host says.
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or ())
            host = headers.get(b"host", b"").decode("latin-1")
            if not self.allows(_host_part(host)):
                logger.warning("refused a request for Host %r", host[:200])
                await _refuse(
                    send,
                    421,
                    b'{"error":"misdirected_request","error_description":'
                    b'"This server does not answer for that Host"}',
                )
                return
            origin = headers.get(b"origin")
            if origin is not None and not self._origin_allowed(origin.decode("latin-1")):
                logger.warning("refused a request from Origin %r", origin[:200])
                await _refuse(
                    send,
                    403,
                    b'{"error":"forbidden_origin","error_description":'
                    b'"Requests from that Origin are not accepted"}',
                )
                return
        await self.app(scope, receive, send)

    def _origin_allowed(self, origin: str) -> bool:
        try:
            parts = urlsplit(origin)
            hostname = parts.hostname
        except ValueError:
            return False
        return parts.scheme in ("http", "https") and bool(hostname) and self.allows(hostname or "")


def _host_part(host: str) -> str:
    """``Host`` without its port (``[::1]:8000`` → ``::1``)."""
    if host.startswith("["):
        return host[1:].split("]", 1)[0]
    return host.rsplit(":", 1)[0] if host.count(":") == 1 else host


def _is_ip(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True


def _is_unspecified(host: str) -> bool:
    try:
        return ipaddress.ip_address(host).is_unspecified
    except ValueError:
        return host == ""


class SessionEnds:
    """ASGI middleware: a legacy session the client ends with ``DELETE`` loses its state.

    Sessions that simply go quiet are ended by the SDK's idle timeout, and their state by the
    store's TTL.
    """

    def __init__(self, app: _ASGIApp, server: SkillServer) -> None:
        self.app = app
        self.server = server

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("method") != "DELETE":
            await self.app(scope, receive, send)
            return
        session = dict(scope.get("headers") or ()).get(b"mcp-session-id")

        async def ended(message: MutableMapping[str, Any]) -> None:
            # Before the client hears the session ended, its state is gone.
            if session and message["type"] == "http.response.start" and message["status"] < 400:
                await self.server.end_session("http:" + session.decode("latin-1"))
            await send(message)

        await self.app(scope, receive, ended)


class BearerTokenGate:
    """ASGI middleware: HTTP requests without ``Authorization: Bearer <token>`` get 401.

    The 401 says ``Bearer realm="skillshelf", error="invalid_token"`` and carries no
    ``resource_metadata``: the token is static, there is no OAuth to discover, and the OAuth
    discovery paths under ``/.well-known/`` pass through to a plain 404 so that clients
    (the MCP Inspector) conclude that instead of starting an interactive OAuth flow.
    """

    def __init__(self, app: _ASGIApp, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] == "http" and not str(scope.get("path", "")).startswith("/.well-known/"):
            given = dict(scope.get("headers") or ()).get(b"authorization")
            if given is None or not hmac.compare_digest(given, self._expected):
                why = (
                    "A bearer token is required"
                    if given is None
                    else "The bearer token is not valid"
                )
                challenge = (
                    f'Bearer realm="{TOKEN_REALM}", error="invalid_token", '
                    f'error_description="{why}"'
                ).encode()
                body = f'{{"error":"invalid_token","error_description":"{why}"}}'.encode()
                await _refuse(send, 401, body, [(b"www-authenticate", challenge)])
                return
        await self.app(scope, receive, send)


def _watched(server: SkillServer) -> list[str]:
    dirs = []
    for root in server.repo.roots:
        path = os.path.abspath(os.path.expanduser(root))
        if os.path.isdir(path):
            dirs.append(path)
    return dirs


async def _watch(
    server: SkillServer,
    stopped: anyio.Event,
    *,
    task_status: anyio.abc.TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
) -> None:
    """Re-scan after each debounced burst of changes under the folder roots, until ``stopped``.

    Started (``task_status``) once the watcher is installed and the roots have been re-scanned
    once more, so an edit made at any moment after the first scan is seen.
    """
    from watchfiles import awatch

    dirs = _watched(server)
    if not dirs:
        logger.warning("watch: no root folder exists, nothing to watch")
        await anyio.to_thread.run_sync(server.report_limits)
        task_status.started()
        return
    logger.info("watching %s", ", ".join(dirs))
    installed = False
    try:
        # With yield_on_timeout the first batch (empty after WATCH_IDLE_MS) comes from an
        # installed watcher: changes from then on are seen, but not those made between the
        # first scan and now, so that batch is always followed by a re-scan.
        async for changes in awatch(
            *dirs,
            debounce=WATCH_DEBOUNCE_MS,
            step=50,
            rust_timeout=WATCH_IDLE_MS,
            yield_on_timeout=True,
            stop_event=stopped,
        ):
            if not installed:
                server.shelf.trust_cache = True  # every change from now on clears the caches
            elif not changes:
                continue
            await _rescan(server)
            if not installed:
                installed = True
                task_status.started()
    finally:
        server.shelf.trust_cache = False
        if not installed:
            # Stopped before it was installed (a stop signal while starting): the starter
            # must not wait for it.
            task_status.started()


async def _stop_on_signal(signals: ServerSignals, stop: Callable[[], None]) -> None:
    signum = await signals.wait_for_stop()
    logger.info("%s: stopping", signal.Signals(signum).name)
    stop()


async def _rescan_on_signal(signals: ServerSignals, server: SkillServer) -> None:
    seen = 0
    while True:
        seen = await signals.wait_for_rescan(seen)
        logger.info("SIGHUP: re-scanning")
        await _rescan(server)


async def _on_sighup(server: SkillServer) -> None:
    with anyio.open_signal_receiver(signal.SIGHUP) as signals:
        async for _signum in signals:
            logger.info("SIGHUP: re-scanning")
            await _rescan(server)


async def _rescan(server: SkillServer) -> None:
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

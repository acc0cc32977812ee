"""What one HTTP client may hold of a ``serve`` process: connections, read time, sessions,
conversations.

A *client* here is who asks and from where: the digest of its ``Authorization`` header and
its peer address (:func:`~skillshelf.mcpserver.handles.client_of`). Behind a reverse proxy
every client has the proxy's address, so there a client is its credential.

Each limit has a default that leaves a single honest client far from it, and a flag of
``skillshelf serve`` (docs/mcp.md, "Limits"). The caps evict fairly
(:class:`~skillshelf.core.quota.FairPool`): a client over its own cap loses its own oldest;
at the total cap the client holding the most does.
"""

from __future__ import annotations

import resource
from dataclasses import dataclass
from typing import Final

from skillshelf.errors import UsageError

__all__ = [
    "BODY_TIMEOUT_S",
    "CONVERSATIONS_PER_CLIENT",
    "DESCRIPTOR_RESERVE",
    "HEADER_TIMEOUT_S",
    "MAX_BACKLOG",
    "MAX_CONVERSATIONS",
    "MAX_SESSIONS",
    "SESSIONS_PER_CLIENT",
    "ServeLimits",
    "descriptor_limit",
]

# A client on a slow link sends its request line and headers (at most 16 KiB, h11's cap) in
# well under this; a connection still without a whole header block after it is dropped.
HEADER_TIMEOUT_S: Final = 10.0
# A request body is at most 4 MiB (the SDK's cap): 30 s is ~140 KB/s, slower than any
# honest client; a body not complete by then is refused.
BODY_TIMEOUT_S: Final = 30.0
# Handshake-era (2025-11-25) sessions: the SDK's own total, and a tenth of it per client.
MAX_SESSIONS: Final = 10_000  # the SDK's DEFAULT_MAX_SESSIONS
SESSIONS_PER_CLIENT: Final = 1_000
# Sessionless (2026-07-28) conversations, each minted by a stateful call without a handle.
MAX_CONVERSATIONS: Final = 10_000
CONVERSATIONS_PER_CLIENT: Final = 1_000
# Descriptors kept free of connections for everything else a server opens: its listening
# socket, the store, the trace, skill files being read, workspace_exec's pipes.
DESCRIPTOR_RESERVE: Final = 128
_UNLIMITED_CONNECTIONS: Final = 10_000  # when RLIMIT_NOFILE is infinite
MAX_BACKLOG: Final = 2048  # uvicorn's default
_MIN_BACKLOG: Final = 16


def descriptor_limit() -> int | None:
    """This process's soft ``RLIMIT_NOFILE`` (None when unlimited)."""
    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    return None if soft == resource.RLIM_INFINITY else int(soft)


@dataclass(frozen=True, slots=True, kw_only=True)
class ServeLimits:
    """The limits of one ``serve`` process over HTTP.

    Attributes:
        max_connections: Open HTTP connections at once; one more is answered 503 and closed.
            None: the descriptor limit less :data:`DESCRIPTOR_RESERVE` (a quarter of it
            when that is less), so the server never runs out of descriptors.
        header_timeout_s: Seconds from a connection's first byte (or its opening) to the end
            of a request's headers; later, 408 and the connection is closed.
        body_timeout_s: Seconds from the end of the headers to the end of the body; later,
            408 and the connection is closed.
        max_sessions: Handshake-era sessions at once, all clients together.
        sessions_per_client: Handshake-era sessions one client keeps.
        max_conversations: Sessionless conversations kept at once, all clients together.
        conversations_per_client: Sessionless conversations one client keeps.
    """

    max_connections: int | None = None
    header_timeout_s: float = HEADER_TIMEOUT_S
    body_timeout_s: float = BODY_TIMEOUT_S
    max_sessions: int = MAX_SESSIONS
    sessions_per_client: int = SESSIONS_PER_CLIENT
    max_conversations: int = MAX_CONVERSATIONS
    conversations_per_client: int = CONVERSATIONS_PER_CLIENT

    def __post_init__(self) -> None:
        if self.header_timeout_s <= 0 or self.body_timeout_s <= 0:
            raise UsageError("the header and body read timeouts must be positive")
        for total, each, what in (
            (self.max_sessions, self.sessions_per_client, "sessions"),
            (self.max_conversations, self.conversations_per_client, "conversations"),
        ):
            if each < 1 or total < each:
                raise UsageError(
                    f"{what} per client must be at least 1 and at most the total ({total})"
                )

    def connections(self) -> int:
        """The connection limit in force: the one given, else one below the descriptor limit.

        Raises:
            UsageError: The one given leaves fewer than :data:`DESCRIPTOR_RESERVE` descriptors.
        """
        fds = descriptor_limit()
        if self.max_connections is not None:
            if self.max_connections < 1:
                raise UsageError("the connection limit must be at least 1")
            if fds is not None and self.max_connections > fds - DESCRIPTOR_RESERVE:
                raise UsageError(
                    f"a limit of {self.max_connections} connections leaves the server too few "
                    f"of its {fds} file descriptors (RLIMIT_NOFILE); give at most "
                    f"{fds - DESCRIPTOR_RESERVE}, or raise the limit (ulimit -n)"
                )
            return self.max_connections
        if fds is None:
            return _UNLIMITED_CONNECTIONS
        return max(1, min(fds - DESCRIPTOR_RESERVE, fds * 3 // 4))

    def backlog(self) -> int:
        """The listening backlog, which is also how many connections asyncio accepts in one
        go before any of them is refused: half the descriptors the connections leave free,
        so a burst over the limit is refused, not met with ``EMFILE`` (and a second's pause
        in accepting)."""
        fds = descriptor_limit()
        if fds is None:
            return MAX_BACKLOG
        spare = fds - self.connections()
        return max(_MIN_BACKLOG, min(MAX_BACKLOG, spare // 2))

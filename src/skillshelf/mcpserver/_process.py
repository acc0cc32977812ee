"""A whole server process in one call (:func:`run_server`): what ``skillshelf serve`` does
between parsing its flags and exiting, for an embedder to call the same way.

It refuses an unsafe bind, enters the process's signals before the event loop starts, keeps
``workspace_exec``'s workspaces in a private temporary folder, serves, and on every way out
(a stop signal, the client leaving, an error) removes the workspaces and closes the store and
the trace.
"""

from __future__ import annotations

import functools
import shutil
import tempfile
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import anyio

from skillshelf.errors import UsageError
from skillshelf.exec.workspace import MAX_LIVE_WORKSPACES, WORKSPACE_IDLE_TTL_S, WorkspaceManager
from skillshelf.harness import SkillSettings
from skillshelf.mcpserver.handles import HANDLE_LIFETIME_S
from skillshelf.mcpserver.limits import ServeLimits
from skillshelf.mcpserver.run import Transport, is_loopback, serve
from skillshelf.mcpserver.server import INSTRUCTIONS_BUDGET, SkillServer
from skillshelf.mcpserver.signals import ServerSignals
from skillshelf.repository import Repository

if TYPE_CHECKING:
    from skillshelf.mcpserver.shelf import Visibility

__all__ = ["run_server"]


def run_server(
    repo: Repository,
    *,
    settings: SkillSettings | None = None,
    transport: Transport = "stdio",
    host: str = "127.0.0.1",
    port: int = 8000,
    token: str | None = None,
    handle_secret: bytes | None = None,
    handle_lifetime_s: float = HANDLE_LIFETIME_S,
    limits: ServeLimits | None = None,
    enable_exec: bool = False,
    workspace_ttl_s: float = WORKSPACE_IDLE_TTL_S,
    max_workspaces: int = MAX_LIVE_WORKSPACES,
    visible: Visibility | None = None,
    instructions_budget: int | None = INSTRUCTIONS_BUDGET,
    watch: bool = False,
    allowed_hosts: Iterable[str] = (),
    on_ready: Callable[[str], None] | None = None,
) -> int | None:
    """Serve ``repo`` until the client leaves (stdio) or a stop signal (SIGTERM, SIGINT)
    arrives; call it from the main thread. The settings' store and trace are closed when it
    returns, and every workspace is removed.

    Args:
        repo: The skills.
        settings: The harness settings (see :class:`SkillServer`); ``workspace`` is made here
            when ``enable_exec`` (a private temporary folder, removed afterwards).
        transport, host, port, token, watch, allowed_hosts, on_ready: As for
            :func:`~skillshelf.mcpserver.serve`.
        handle_secret, handle_lifetime_s, limits: As for :class:`SkillServer`.
        enable_exec: Offer ``workspace_exec``.
        workspace_ttl_s: Seconds a workspace may stay idle before it is removed.
        max_workspaces: Workspaces kept at once; the longest idle goes to make room.
        visible: Hides skills from some viewers.
        instructions_budget: As for :class:`SkillServer`.

    Returns:
        The number of the signal that stopped the server (None when the client left or the
        loop ended).

    Raises:
        UsageError: HTTP on an address other than loopback without a token.
    """
    settings = settings if settings is not None else SkillSettings()
    try:
        if transport == "http" and not token and not is_loopback(host):
            raise UsageError(
                f"refusing to bind {host} without a bearer token: give the server a token, "
                "or bind to a loopback address"
            )
        # From here on a stop signal is recorded, never raised into running code: the server
        # stops at its next step, and the clean-up below always runs, whenever it came.
        with ServerSignals() as signals:
            base = Path(tempfile.mkdtemp(prefix="skillshelf-ws-")) if enable_exec else None
            workspaces: WorkspaceManager | None = None
            try:
                if base is not None:
                    workspaces = WorkspaceManager(
                        base, idle_ttl_s=workspace_ttl_s, max_live=max_workspaces
                    )
                    settings = settings.replace(workspace=workspaces)
                server = SkillServer(
                    repo,
                    settings=settings,
                    visible=visible,
                    instructions_budget=instructions_budget,
                    enable_exec=enable_exec,
                    handle_secret=handle_secret,
                    handle_lifetime_s=handle_lifetime_s,
                    limits=limits,
                )
                if signals.stopped_by is None:
                    run = functools.partial(
                        serve,
                        server,
                        transport=transport,
                        host=host,
                        port=port,
                        token=token,
                        watch=watch,
                        on_ready=on_ready,
                        allowed_hosts=allowed_hosts,
                        signals=signals,
                    )
                    anyio.run(run)
            finally:
                if workspaces is not None:
                    workspaces.close_all()
                if base is not None:
                    shutil.rmtree(base, ignore_errors=True)
        return signals.stopped_by
    finally:
        if settings.store is not None:
            settings.store.close()
        if settings.trace is not None:
            settings.trace.close()

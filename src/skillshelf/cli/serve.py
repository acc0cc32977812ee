"""``skillshelf serve``: the MCP server command (needs the ``mcp`` extra)."""

from __future__ import annotations

import logging
import os
import signal
import sys
from collections.abc import Callable
from typing import Any, Final, TypeVar

import click

from skillshelf.cli._common import exec_options, open_executor, repo_from, root_options
from skillshelf.cli._settings import settings_options, settings_values
from skillshelf.exec.workspace import MAX_LIVE_WORKSPACES, WORKSPACE_IDLE_TTL_S, ExecPolicy
from skillshelf.harness import SkillSettings
from skillshelf.stores import STATE_TTL_S

__all__ = ["serve"]

logger = logging.getLogger(__name__)
F = TypeVar("F", bound=Callable[..., Any])

# The harness settings serve offers as flags (cli/_settings.py declares each once); a server
# runs no model, so the model-side ones (tools, tool style, placement…) are not among them.
SERVE_SETTINGS = (
    "store",
    "load_mode",
    "max_loaded",
    "visible",
    "instructions",
    "catalog_format",
    "catalog_budget",
    "enforce_allowed_tools",
    "trace",
)
# The server's instructions budget (mcpserver.server.INSTRUCTIONS_BUDGET, not imported here:
# it needs the mcp extra; a test holds the two equal).
SERVE_CATALOG_BUDGET: Final = 8_000


_COUNT = click.IntRange(min=1)
_SECONDS = click.FloatRange(min=0, min_open=True)
# serve's HTTP limits, each a field of mcpserver.limits.ServeLimits (not imported here: it
# needs the mcp extra); unset, a flag leaves the library's default.
_LIMIT_FLAGS: Final[tuple[tuple[str, str, click.ParamType[Any], str], ...]] = (
    (
        "--max-connections",
        "max_connections",
        _COUNT,
        "HTTP connections open at once; one more is answered 503 (default: 3/4 of the file "
        "descriptor limit, at most that limit less 128).",
    ),
    (
        "--header-timeout",
        "header_timeout_s",
        _SECONDS,
        "Seconds a client has to send a request's headers; later, 408 and closed (default 10).",
    ),
    (
        "--body-timeout",
        "body_timeout_s",
        _SECONDS,
        "Seconds a client has to send a request's body after its headers; later, 408 and "
        "closed (default 30).",
    ),
    (
        "--max-sessions",
        "max_sessions",
        _COUNT,
        "Handshake-era (2025-11-25) sessions at once; the client holding the most loses its "
        "oldest to make room (default 10000).",
    ),
    (
        "--sessions-per-client",
        "sessions_per_client",
        _COUNT,
        "Handshake-era sessions one client (credential + address) keeps; one more ends its "
        "oldest (default 1000).",
    ),
    (
        "--max-conversations",
        "max_conversations",
        _COUNT,
        "Sessionless (2026-07-28) conversations kept at once; the client holding the most "
        "loses its oldest (default 10000).",
    ),
    (
        "--conversations-per-client",
        "conversations_per_client",
        _COUNT,
        "Sessionless conversations one client (credential + address) keeps; one more ends "
        "its oldest (default 1000).",
    ),
)


def _limit_options(command: F) -> F:
    """The options of :data:`_LIMIT_FLAGS`, all defaulting to None (the library's value)."""
    for flag, field, kind, text in reversed(_LIMIT_FLAGS):
        command = click.option(flag, field, type=kind, default=None, help=text)(command)
    return command


@click.command()
@root_options
@click.option(
    "--transport",
    type=click.Choice(["stdio", "http"]),
    default="stdio",
    show_default=True,
    help="stdio for a client that launches the server; http for streamable HTTP at /mcp.",
)
@click.option("--host", default="127.0.0.1", show_default=True, help="Address to bind (http).")
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=8000,
    show_default=True,
    help="Port to bind (http); 0 picks a free one.",
)
@click.option("--watch", is_flag=True, help="Re-scan when files under the roots change.")
@exec_options
@settings_options(
    *SERVE_SETTINGS, defaults={"instructions": "", "catalog_budget": SERVE_CATALOG_BUDGET}
)
@click.option(
    "--token-env",
    default=None,
    metavar="VAR",
    help="Require 'Authorization: Bearer <token>' on HTTP, the token read from $VAR.",
)
@click.option(
    "--handle-secret-env",
    default=None,
    metavar="VAR",
    help="Sign conversation handles (2026-07-28 clients) with the secret in $VAR; every worker "
    "behind one load balancer needs the same. Default: derived from the token, else random "
    "per process.",
)
@click.option(
    "--state-ttl",
    "state_ttl_s",
    type=click.IntRange(min=1),
    default=STATE_TTL_S,
    show_default=True,
    help="Seconds a session's or conversation's tool state lives after its last use.",
)
@click.option(
    "--handle-lifetime",
    "handle_lifetime_s",
    type=click.FloatRange(min=0, min_open=True),
    default=None,
    help="Seconds a conversation handle (2026-07-28 clients) verifies after it was minted "
    "(default 86400, at most 7 days).",
)
@_limit_options
@click.option(
    "--allow-host",
    "allow_hosts",
    multiple=True,
    metavar="NAME",
    help="Also answer HTTP requests whose Host/Origin names NAME (e.g. a reverse proxy's "
    "name); repeatable. Others get 421/403 (DNS-rebinding protection).",
)
@click.option(
    "--workspace-ttl",
    "workspace_ttl_s",
    type=click.FloatRange(min=0, min_open=True),
    default=WORKSPACE_IDLE_TTL_S,
    show_default=True,
    help="--exec: seconds a session's workspace may stay idle before it is removed.",
)
@click.option(
    "--max-workspaces",
    type=click.IntRange(min=1),
    default=MAX_LIVE_WORKSPACES,
    show_default=True,
    help="--exec: workspaces kept at once; the longest idle is removed to make room.",
)
def serve(
    transport: str,
    host: str,
    port: int,
    watch: bool,
    enable_exec: bool,
    sandbox: str | None,
    image: str | None,
    runtime: str | None,
    ro_paths: tuple[str, ...],
    token_env: str | None,
    handle_secret_env: str | None,
    state_ttl_s: int,
    handle_lifetime_s: float | None,
    allow_hosts: tuple[str, ...],
    workspace_ttl_s: float,
    max_workspaces: int,
    **kwargs: Any,
) -> None:
    """Serve the skills over MCP: the skills extension, skill:// resources, tools, prompts.

    Logs go to stderr; under stdio, stdout carries only the protocol. Without --watch, send
    SIGHUP to re-scan the roots (SIGHUP never stops the server, even while it starts).
    SIGTERM and SIGINT stop it, whatever it is doing, and remove every --exec workspace.
    """
    # Before anything slow: a SIGHUP now would otherwise kill the server with its default
    # action; the re-scan handler replaces this once serving starts.
    signal.signal(signal.SIGHUP, signal.SIG_IGN)
    executor = open_executor(enable_exec, sandbox, image=image, runtime=runtime, ro_paths=ro_paths)
    exec_policy = ExecPolicy(extra_ro_paths=ro_paths) if ro_paths else None
    # Without the mcp extra this import fails; skillshelf.cli.errors names the extra (exit 2).
    from skillshelf.mcpserver import run_server
    from skillshelf.mcpserver.handles import HANDLE_LIFETIME_S
    from skillshelf.mcpserver.limits import ServeLimits
    from skillshelf.mcpserver.run import configure_logging

    given = {field: kwargs.pop(field) for _flag, field, _kind, _help in _LIMIT_FLAGS}
    # Unset flags keep the library's defaults (mcpserver.limits); refused values (a cap over
    # its total, connections above the descriptors) stop here, before serving starts.
    limits = ServeLimits(**{k: v for k, v in given.items() if v is not None})
    limits.connections()
    token = _token(token_env)
    secret = _handle_secret(handle_secret_env, token)
    if transport == "http" and not token and not _loopback(host):
        raise click.UsageError(
            f"refusing to bind {host} without a bearer token; pass --token-env VAR "
            "(or bind to 127.0.0.1)"
        )
    configure_logging()
    repo = repo_from(kwargs)
    store_url: str | None = kwargs["store"]
    values = settings_values(kwargs, SERVE_SETTINGS, state_ttl_s=state_ttl_s)
    settings = SkillSettings(**values, executor=executor, exec_policy=exec_policy)
    if secret is None and store_url is not None and store_url.startswith(("redis", "rediss")):
        logger.warning(
            "a shared store without --handle-secret-env or --token-env: conversation handles "
            "minted here verify on no other worker"
        )

    def ready(where: str) -> None:
        print(f"skillshelf: serving {len(repo)} skills on {where}", file=sys.stderr, flush=True)

    stopped_by = run_server(
        repo,
        settings=settings,
        transport=transport,  # type: ignore[arg-type]
        host=host,
        port=port,
        token=token,
        handle_secret=secret,
        handle_lifetime_s=handle_lifetime_s or HANDLE_LIFETIME_S,
        limits=limits,
        enable_exec=enable_exec,
        workspace_ttl_s=workspace_ttl_s,
        max_workspaces=max_workspaces,
        watch=watch,
        allowed_hosts=allow_hosts,
        instructions_budget=settings.catalog_budget,
        on_ready=ready,
    )
    if stopped_by is not None and transport == "stdio":
        # The stdio transport's last read of stdin was abandoned in a worker thread that only
        # the client's next line would end; interpreter shutdown would wait for it.
        logging.shutdown()
        sys.stderr.flush()
        os._exit(0)


def _token(var: str | None) -> str | None:
    if var is None:
        return None
    value = os.environ.get(var, "").strip()
    if not value:
        raise click.UsageError(f"--token-env {var}: the environment variable is empty or unset")
    return value


def _handle_secret(var: str | None, token: str | None) -> bytes | None:
    from skillshelf.mcpserver.handles import derive_secret

    if var is None:
        return derive_secret(token) if token else None
    value = os.environ.get(var, "").strip()
    if len(value) < 16:
        raise click.UsageError(
            f"--handle-secret-env {var}: the environment variable must hold at least 16 characters"
        )
    return value.encode()


def _loopback(host: str) -> bool:
    from skillshelf.mcpserver.run import is_loopback

    return is_loopback(host)

"""Helpers for the MCP server tests: real server processes and the SDK client.

Servers run as real subprocesses (stdio and streamable HTTP on 127.0.0.1, port 0) with the
same ``skillshelf`` package the tests import, so what is tested is what a client launches.
"""

from __future__ import annotations

import contextlib
import os
import re
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mcp_types as types
from mcp import Client, StdioServerParameters
from mcp.shared.exceptions import MCPError
from pydantic import BaseModel, ConfigDict

import skillshelf

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
# A server starts in well under a second; the margin is for slow, busy CI machines.
SERVER_START_TIMEOUT_S = 30.0
# Stopping: SIGTERM first, then SIGKILL if uvicorn's graceful shutdown hangs.
SERVER_STOP_TIMEOUT_S = 10.0
# A handshake-era initialize request, for tests that speak raw JSON-RPC.
INITIALIZE_REQUEST: dict[str, Any] = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}
_READY = re.compile(r"skillshelf: serving \d+ skills on (\S+)")
_SRC = str(Path(skillshelf.__file__).resolve().parents[1])


def server_env(**extra: str) -> dict[str, str]:
    """The environment for a server subprocess: this package first on the path."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (_SRC, env.get("PYTHONPATH")) if p)
    env.update(extra)
    return env


def serve_command(*args: str, nofile: int | None = None) -> list[str]:
    """``skillshelf serve ARGS`` as a command line using this interpreter; ``nofile`` lowers
    its file descriptor limit (RLIMIT_NOFILE, soft and hard) first."""
    prelude = (
        ""
        if nofile is None
        else f"import resource; resource.setrlimit(resource.RLIMIT_NOFILE, ({nofile}, {nofile})); "
    )
    return [
        sys.executable,
        "-c",
        prelude + "from skillshelf.cli import main; main()",
        "serve",
        "--no-cache",
        *args,
    ]


@dataclass
class HttpServer:
    """A ``skillshelf serve --transport http`` subprocess and its URL."""

    process: subprocess.Popen[str]
    url: str
    stderr: list[str] = field(default_factory=list)
    reader: threading.Thread | None = None
    # Notified by the reader at each stderr line, and when stderr ends (``ended``).
    arrived: threading.Condition = field(default_factory=threading.Condition)
    ended: threading.Event = field(default_factory=threading.Event)

    def wait_for_line(self, pattern: str, timeout_s: float) -> str | None:
        """The first stderr line matching ``pattern``, waiting up to ``timeout_s`` for it
        (None if it did not come, or stderr ended first)."""
        regex = re.compile(pattern)
        deadline = time.monotonic() + timeout_s
        with self.arrived:
            while True:
                found = next((line for line in self.stderr if regex.search(line)), None)
                left = deadline - time.monotonic()
                if found is not None or left <= 0 or self.ended.is_set():
                    return found
                self.arrived.wait(left)

    def stop(self) -> None:
        """Stop the process and release its stderr pipe."""
        stop_process(self.process)
        if self.reader is not None:
            self.reader.join(SERVER_STOP_TIMEOUT_S)
        if self.process.stderr is not None:
            self.process.stderr.close()


def start_http_server(
    args: Sequence[str],
    *,
    env: dict[str, str] | None = None,
    on_ready: Callable[[], None] | None = None,
    nofile: int | None = None,
) -> HttpServer:
    """Start an HTTP server on a free port and wait (bounded) until it announces its URL.

    ``on_ready`` runs in the stderr reader thread the moment the "serving" line is read;
    ``nofile`` is as for :func:`serve_command`.
    """
    process = subprocess.Popen(
        serve_command("--transport", "http", "--port", "0", *args, nofile=nofile),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=env or server_env(),
    )
    lines: list[str] = []
    arrived = threading.Condition()
    ended = threading.Event()
    found = threading.Event()
    url: list[str] = []

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            match = _READY.search(line)
            if match and not found.is_set():
                if on_ready is not None:
                    on_ready()
                url.append(match.group(1))
                found.set()
            with arrived:
                lines.append(line)
                arrived.notify_all()
        found.set()  # the process ended
        with arrived:
            ended.set()
            arrived.notify_all()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    started = found.wait(SERVER_START_TIMEOUT_S) and bool(url)
    server = HttpServer(process, url[0] if url else "", lines, reader, arrived, ended)
    if not started:
        server.stop()
        raise AssertionError("server did not start:\n" + "".join(lines))
    return server


@contextlib.contextmanager
def http_server(
    args: Sequence[str], *, env: dict[str, str] | None = None, nofile: int | None = None
) -> Iterator[HttpServer]:
    """:func:`start_http_server` as a context: the server is stopped when it ends."""
    server = start_http_server(args, env=env, nofile=nofile)
    try:
        yield server
    finally:
        server.stop()


def refused_serve(*args: str, nofile: int | None = None) -> str:
    """The stderr of ``skillshelf serve --transport http ARGS``, which must refuse to start
    with a usage error (exit 2)."""
    done = subprocess.run(
        serve_command("--transport", "http", "--port", "0", *args, nofile=nofile),
        capture_output=True,
        text=True,
        timeout=SERVER_START_TIMEOUT_S,
        env=server_env(),
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 2, done.stderr
    return done.stderr


def stop_process(process: subprocess.Popen[str]) -> None:
    """Stop a server process: SIGTERM, then SIGKILL after a bounded wait."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(SERVER_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(SERVER_STOP_TIMEOUT_S)


class _Raw(BaseModel):
    """Any result, kept as received."""

    model_config = ConfigDict(extra="allow")


INVALID_PARAMS = -32602


async def request(client: Client, method: str, params: dict[str, Any]) -> dict[str, Any]:
    """Send a request the SDK has no method for (skills/list, skills/get, …)."""
    message = types.Request[dict[str, Any], str](method=method, params=params)
    result = await client.session.send_request(message, _Raw)
    return dict(result.model_extra or {})


async def error_code(client: Client, method: str, params: dict[str, Any]) -> int:
    """The JSON-RPC error code a request fails with (fails the test if it succeeds)."""
    try:
        await request(client, method, params)
    except MCPError as exc:
        return exc.error.code
    raise AssertionError(f"{method} {params} succeeded")


async def all_skills(client: Client) -> list[dict[str, Any]]:
    """Every skills/list entry, following nextCursor."""
    entries: list[dict[str, Any]] = []
    params: dict[str, Any] = {}
    while True:
        page = await request(client, "skills/list", params)
        entries.extend(page["skills"])
        if "nextCursor" not in page:
            return entries
        params = {"cursor": page["nextCursor"]}


def stored_records(db: Path, *, live_only: bool = False) -> int:
    """The (session, agent) pairs a SQLite session store holds state for: whole documents or
    records of entries (live ones only with ``live_only``)."""
    live = " WHERE expires_at IS NULL OR expires_at > :now" if live_only else ""
    sql = (
        f"SELECT count(*) FROM (SELECT session, agent FROM docs{live} "
        f"UNION SELECT session, agent FROM entries{live})"
    )
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(sql, {"now": time.time()}).fetchone()[0])
    finally:
        conn.close()


def stdio_params(command: list[str], env: dict[str, str]) -> StdioServerParameters:
    """Launch parameters for ``command`` (a ``serve_command`` line)."""
    return StdioServerParameters(command=command[0], args=command[1:], env=env)

"""Slow and numerous connections to ``skillshelf serve --transport http``: slowloris headers,
slow bodies, more connections than the limit, more than the descriptors allow.

Raw sockets against a real server subprocess on loopback, with the timeouts lowered by their
flags. Each refusal is an HTTP status with a JSON-RPC error body, and an honest client that
comes later is served.
"""

from __future__ import annotations

import contextlib
import json
import selectors
import socket
import time
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from pathlib import Path

from mcpserver.helpers import INITIALIZE_REQUEST, HttpServer, http_server, refused_serve
from skillshelf.testing import make_skill

# Generous bounds for a busy machine; each case ends in about its timeout when it works.
CLOSE_WITHIN_S = 20.0
SERVE_WITHIN_S = 30.0
PARTIAL_HEADERS = b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    skills = tmp_path_factory.mktemp("skills")
    make_skill(skills, "alpha", "A skill. Use when testing connections.")
    return skills


def _server(
    root: Path, *args: str, nofile: int | None = None
) -> contextlib.AbstractContextManager[HttpServer]:
    return http_server(["--root", str(root), *args], nofile=nofile)


def _address(server: HttpServer) -> tuple[str, int]:
    parts = urlsplit(server.url)
    assert parts.hostname is not None and parts.port is not None
    return parts.hostname, parts.port


@contextlib.contextmanager
def _sockets(server: HttpServer, count: int, first: bytes = b"") -> Iterator[list[socket.socket]]:
    opened: list[socket.socket] = []
    try:
        for _ in range(count):
            sock = socket.create_connection(_address(server), timeout=CLOSE_WITHIN_S)
            opened.append(sock)
            if first:
                sock.sendall(first)
        yield opened
    finally:
        for sock in opened:
            sock.close()


def _trickle_until_closed(sock: socket.socket, piece: bytes) -> tuple[bytes, float]:
    """Send ``piece`` every quarter second until the server closes; what it answered and
    how long that took (CLOSE_WITHIN_S when it never closed)."""
    start = time.monotonic()
    received = b""
    sock.settimeout(0.25)
    while time.monotonic() - start < CLOSE_WITHIN_S:
        try:
            sock.sendall(piece)
            chunk = sock.recv(65536)
        except TimeoutError:
            continue
        except (BrokenPipeError, ConnectionResetError):
            break
        if not chunk:
            break
        received += chunk
    return received, time.monotonic() - start


def _answers_of(socks: list[socket.socket]) -> list[bytes]:
    """What the server sent each socket before closing it, waiting at most CLOSE_WITHIN_S
    for all of them (a socket still open then answers None's stand-in, b"<open>")."""
    received = {sock: b"" for sock in socks}
    with selectors.DefaultSelector() as selector:
        for sock in socks:
            sock.setblocking(False)
            selector.register(sock, selectors.EVENT_READ)
        deadline = time.monotonic() + CLOSE_WITHIN_S
        open_ = set(socks)
        while open_ and time.monotonic() < deadline:
            for key, _events in selector.select(timeout=deadline - time.monotonic()):
                peer = key.fileobj
                assert isinstance(peer, socket.socket)
                try:
                    chunk = peer.recv(65536)
                except ConnectionResetError:
                    chunk = b""
                if chunk:
                    received[peer] += chunk
                else:
                    selector.unregister(peer)
                    open_.discard(peer)
    return [received[s] if s not in open_ else b"<open>" for s in socks]


def _initialize(server: HttpServer) -> int:
    """An honest client's initialize, retried (bounded) while the server makes room."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    deadline = time.monotonic() + SERVE_WITHIN_S
    while True:
        try:
            response = httpx.post(
                server.url, content=json.dumps(INITIALIZE_REQUEST), headers=headers, timeout=5
            )
            if response.status_code == 200 or time.monotonic() > deadline:
                return response.status_code
        except httpx.TransportError:
            if time.monotonic() > deadline:
                raise


def _error_message(answer: bytes) -> str:
    _head, _, body = answer.partition(b"\r\n\r\n")
    return str(json.loads(body)["error"]["message"])


def test_slowloris_headers_are_dropped_with_408_after_the_header_timeout(root: Path) -> None:
    with (
        _server(root, "--header-timeout", "1") as server,
        _sockets(server, 20, PARTIAL_HEADERS) as slow,
    ):
        assert _initialize(server) == 200  # served while 20 connections trickle
        answer, took = _trickle_until_closed(slow[0], b"X-Pad: a\r\n")
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert "did not arrive within 1 s" in _error_message(answer)
        assert took < CLOSE_WITHIN_S
        rest = _answers_of(slow[1:])
        assert all(a.startswith(b"HTTP/1.1 408 ") for a in rest), rest


def test_a_connection_that_sends_nothing_is_dropped_too(root: Path) -> None:
    with _server(root, "--header-timeout", "1") as server, _sockets(server, 3) as idle:
        assert all(a.startswith(b"HTTP/1.1 408 ") for a in _answers_of(idle))


def test_a_slow_body_is_dropped_with_408_after_the_body_timeout(root: Path) -> None:
    head = (
        b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-type: application/json\r\n"
        b"accept: application/json, text/event-stream\r\ncontent-length: 100000\r\n\r\n{"
    )
    with _server(root, "--body-timeout", "1") as server, _sockets(server, 5, head) as slow:
        answer, took = _trickle_until_closed(slow[0], b" ")
        assert answer.startswith(b"HTTP/1.1 408 "), answer
        assert "body did not arrive within 1 s" in _error_message(answer)
        assert took < CLOSE_WITHIN_S
        assert all(a.startswith(b"HTTP/1.1 408 ") for a in _answers_of(slow[1:]))
        assert _initialize(server) == 200


def test_a_connection_over_the_limit_is_refused_with_503(root: Path) -> None:
    with _server(root, "--max-connections", "8", "--header-timeout", "30") as server:
        with _sockets(server, 8, PARTIAL_HEADERS), _sockets(server, 1) as (extra,):
            (answer,) = _answers_of([extra])
            assert answer.startswith(b"HTTP/1.1 503 "), answer
            assert "Too many open connections (the limit is 8)" in _error_message(answer)
        assert _initialize(server) == 200  # once they are closed, room again


def test_the_default_connection_limit_stays_below_the_descriptor_limit(root: Path) -> None:
    # 256 descriptors: at most 128 connections. 300 trickling clients would exhaust them;
    # instead the surplus is refused at once and the rest dropped at the header timeout.
    with (
        _server(root, "--header-timeout", "2", nofile=256) as server,
        _sockets(server, 300, PARTIAL_HEADERS) as flood,
    ):
        answers = _answers_of(flood)
        assert b"<open>" not in answers
        refused = [a for a in answers if a.startswith(b"HTTP/1.1 503 ")]
        dropped = [a for a in answers if a.startswith(b"HTTP/1.1 408 ")]
        # How many are refused depends on how fast the 300 connect (the first are dropped
        # at the timeout meanwhile); every one is answered, none is left hanging.
        assert refused and len(refused) + len(dropped) == 300
        assert "the limit is 128" in _error_message(refused[0])
        assert _initialize(server) == 200
        assert server.process.poll() is None
        assert not any("Too many open files" in line for line in server.stderr)


def test_a_connection_limit_above_the_descriptors_is_refused(root: Path) -> None:
    err = refused_serve("--root", str(root), "--max-connections", "1000", nofile=512)
    assert "too few of its 512 file descriptors" in err

"""Hostile servers behind URL roots: a drip-feeding server, an https root sent to http.

Real servers on 127.0.0.1: a raw socket server that sends one byte at a time (every read
succeeds, so per-read timeouts never fire), and the TLS and plain servers of trust_helpers.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from click.testing import CliRunner

from adversarial.archives import GOOD_SKILL, zip_of
from skillshelf.cli import main
from skillshelf.repository import Repository
from skillshelf.skills.archive import ArchiveLimits
from skillshelf.testing import make_skill
from trust_helpers import http_server, self_signed_cert, server_tls

_DRIP_INTERVAL_S = 0.25  # far below the 30 s read timeout: only an overall deadline ends it
_DEADLINE_S = 1.0
# The fetch must end soon after the deadline; the margin is for a busy CI machine.
_BOUND_S = _DEADLINE_S + 10


@contextmanager
def drip_server(*, headers_first: bool, first: bytes | None = None) -> Iterator[str]:
    """A server that answers every request one byte at a time until the block ends.

    With ``headers_first`` the status line and headers arrive at once and the body drips;
    otherwise the headers themselves drip. With ``first``, the first request is answered
    at once with that body (a server that worked, then turned slow).
    """
    answered: list[bool] = []
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    head = b"HTTP/1.1 200 OK\r\nContent-Type: application/zip\r\nContent-Length: 100000\r\n\r\n"

    def serve_one(conn: socket.socket) -> None:
        with conn:
            conn.recv(65536)
            if first is not None and not answered:
                answered.append(True)
                conn.sendall(
                    b"HTTP/1.1 200 OK\r\nConnection: close\r\n"
                    + f"Content-Length: {len(first)}\r\n\r\n".encode()
                    + first
                )
                return
            with_drip = b"PK" * 50_000
            if headers_first:
                conn.sendall(head)
            else:
                with_drip = head + with_drip
            for byte in with_drip:
                if stop.wait(_DRIP_INTERVAL_S):
                    return
                try:
                    conn.sendall(bytes([byte]))
                except OSError:
                    return  # the client gave up, as it should

    def accept() -> None:
        listener.settimeout(0.1)
        workers = []
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                continue
            worker = threading.Thread(target=serve_one, args=(conn,))
            worker.start()
            workers.append(worker)
        for worker in workers:
            worker.join(5)

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/skills.zip"
    finally:
        stop.set()
        thread.join(5)
        listener.close()


@pytest.mark.parametrize("headers_first", [True, False], ids=["body_drips", "headers_drip"])
def test_drip_fed_download_ends_at_the_deadline_and_other_roots_keep_working(
    tmp_path: Path, headers_first: bool
) -> None:
    good = tmp_path / "good"
    make_skill(good, "alpha", "A good skill. Use when checking the others still load.")
    with drip_server(headers_first=headers_first) as url:
        started = time.monotonic()
        repo = Repository(
            [url, good],
            cache_dir=tmp_path / "cache",
            archive_limits=ArchiveLimits(download_deadline_s=_DEADLINE_S),
        )
        elapsed = time.monotonic() - started
    assert elapsed < _BOUND_S
    assert repo.names() == ["alpha"]
    [diagnostic] = repo.diagnostics
    assert diagnostic.code == "remote.deadline"
    assert diagnostic.path == url
    assert "1 s" in diagnostic.message
    assert "download_deadline_s" in diagnostic.message


def test_drip_fed_revalidation_falls_back_to_the_copy_downloaded_earlier(
    tmp_path: Path,
) -> None:
    limits = ArchiveLimits(download_deadline_s=_DEADLINE_S)
    with drip_server(headers_first=True, first=zip_of([GOOD_SKILL])) as url:
        first = Repository([url], cache_dir=tmp_path / "cache", archive_limits=limits)
        assert first.names() == ["demo"]
        started = time.monotonic()
        again = Repository([url], cache_dir=tmp_path / "cache", archive_limits=limits)
        elapsed = time.monotonic() - started
    assert elapsed < _BOUND_S
    assert again.names() == ["demo"]
    [note] = again.diagnostics
    assert (note.code, note.severity) == ("remote.offline", "warning")
    assert "download_deadline_s" in note.message


@pytest.fixture
def tls(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> object:
    cert, key = self_signed_cert(tmp_path)
    monkeypatch.setenv("SKILLSHELF_CA_BUNDLE", str(cert))
    return server_tls(cert, key)


def test_https_root_redirected_to_http_is_refused_and_never_fetched(
    tmp_path: Path, tls: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    good = tmp_path / "good"
    make_skill(good, "alpha", "A good skill. Use when checking the others still load.")
    with http_server() as plain, http_server(tls) as secure:  # type: ignore[arg-type]
        plain.files["skills.zip"] = zip_of([GOOD_SKILL])
        secure.redirects["skills.zip"] = plain.url("skills.zip")
        url = secure.url("skills.zip")
        repo = Repository([url, good], cache_dir=tmp_path / "cache")
        monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cli-cache"))
        result = CliRunner().invoke(main, ["list", "--root", url, "--root", str(good)])
        plain_requests = list(plain.requests)
    assert plain_requests == []  # not one byte in the clear
    assert repo.names() == ["alpha"]
    [diagnostic] = repo.diagnostics
    assert diagnostic.code == "remote.downgrade"
    assert diagnostic.path == url
    assert "Traceback" not in result.output
    assert "[remote.downgrade]" in result.output
    assert "alpha" in result.stdout


def test_https_root_redirected_within_https_is_followed(tmp_path: Path, tls: object) -> None:
    with http_server(tls) as secure:  # type: ignore[arg-type]
        secure.files["real.zip"] = zip_of([GOOD_SKILL])
        secure.redirects["moved.zip"] = secure.url("real.zip")
        repo = Repository([secure.url("moved.zip")], cache_dir=tmp_path / "cache")
    assert repo.diagnostics == []
    assert repo.names() == ["demo"]


def test_http_root_may_be_upgraded_to_https(tmp_path: Path, tls: object) -> None:
    with http_server() as plain, http_server(tls) as secure:  # type: ignore[arg-type]
        secure.files["skills.zip"] = zip_of([GOOD_SKILL])
        plain.redirects["skills.zip"] = secure.url("skills.zip")
        repo = Repository([plain.url("skills.zip")], cache_dir=tmp_path / "cache")
    assert repo.names() == ["demo"]


def test_https_redirect_loop_is_bounded(tmp_path: Path, tls: object) -> None:
    with http_server(tls) as secure:  # type: ignore[arg-type]
        secure.redirects["a.zip"] = secure.url("b.zip")
        secure.redirects["b.zip"] = secure.url("a.zip")
        repo = Repository([secure.url("a.zip")], cache_dir=tmp_path / "cache")
        hops = len(secure.requests)
    assert [d.code for d in repo.diagnostics] == ["remote.redirects"]
    assert hops == 6  # the first request and five redirects, then stop

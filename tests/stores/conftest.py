"""Fixtures for the session store tests: every store behind one factory, and a real redis-server."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from skillshelf.stores import SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore

StoreFactory = Callable[[], SessionStore]

# A fresh redis-server answers within milliseconds; the margin is for slow, busy CI machines.
_REDIS_START_TIMEOUT_S = 15.0
# Each PING attempt and each wait between attempts is this short, so startup is noticed quickly.
_POLL_S = 0.02
_REDIS_STOP_TIMEOUT_S = 10.0


@pytest.fixture(scope="session")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """A real redis-server on 127.0.0.1 for the whole test session (no persistence)."""
    server = shutil.which("redis-server")
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed; CI must install it (see .ci/run).")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    workdir = tmp_path_factory.mktemp("redis")
    log = workdir / "redis.log"
    port = _free_port()
    args = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--logfile", str(log)]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        _wait_until_ready(proc, port, log)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=_REDIS_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_REDIS_STOP_TIMEOUT_S)


@pytest.fixture
def redis_prefix() -> str:
    """A key prefix no other test uses, so tests share one server without seeing each other."""
    return f"test:{uuid.uuid4().hex}:"


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Opens handles onto one fresh store of each kind (memory: the same object every time).

    Separate handles are separate clients (SQLite connections, Redis connection pools) of the
    same stored state, as two workers would be. All are closed after the test.
    """
    factory = _factory(request, tmp_path)
    opened: list[SessionStore] = []

    def open_tracked() -> SessionStore:
        store = factory()
        opened.append(store)
        return store

    yield open_tracked
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> SessionStore:
    """One fresh store of each kind."""
    return make_store()


def _factory(request: pytest.FixtureRequest, tmp_path: Path) -> StoreFactory:
    if request.param == "memory":
        shared = MemoryStore()
        return lambda: shared
    if request.param == "sqlite":
        return lambda: SQLiteStore(tmp_path / "state" / "sessions.db")
    url: str = request.getfixturevalue("redis_url")
    prefix: str = request.getfixturevalue("redis_prefix")
    return lambda: RedisStore(url, prefix=prefix)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _answers_ping(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=_POLL_S) as sock:
            sock.settimeout(1.0)
            sock.sendall(b"PING\r\n")
            return sock.recv(16).startswith(b"+PONG")
    except OSError:
        return False


def _wait_until_ready(proc: subprocess.Popen[bytes], port: int, log: Path) -> None:
    deadline = time.monotonic() + _REDIS_START_TIMEOUT_S
    while not _answers_ping(port):
        try:
            # A bounded wait that also notices a server that exited (a taken port, bad flags).
            proc.wait(timeout=_POLL_S)
        except subprocess.TimeoutExpired:
            if time.monotonic() > deadline:
                pytest.fail(f"redis-server did not answer PING within {_REDIS_START_TIMEOUT_S}s")
            continue
        output = log.read_text(errors="replace")[-2000:] if log.exists() else ""
        pytest.fail(f"redis-server exited with status {proc.returncode}:\n{output}")

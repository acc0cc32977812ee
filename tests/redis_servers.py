"""Private redis-server processes on 127.0.0.1 for the store tests (no persistence)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path

import pytest

__all__ = ["RestartableRedis", "free_port", "redis_server_binary", "running_redis"]

# A fresh redis-server answers within milliseconds; the margin is for slow, busy CI machines.
_REDIS_START_TIMEOUT_S = 15.0
# Each PING attempt and each wait between attempts is this short, so startup is noticed quickly.
_POLL_S = 0.02
_REDIS_STOP_TIMEOUT_S = 10.0


class RestartableRedis:
    """A private redis-server that a test may restart on the same port (its data is lost)."""

    def __init__(self, server: str, workdir: Path) -> None:
        self._server = server
        self._workdir = workdir
        self._port = free_port()
        self._stack = ExitStack()
        self._stack.enter_context(running_redis(server, workdir, self._port))
        self.url = f"redis://127.0.0.1:{self._port}/0"

    def restart(self) -> None:
        """Stop the server and start a fresh one on the same port: no data, no scripts."""
        self._stack.close()
        self._stack.enter_context(running_redis(self._server, self._workdir, self._port))

    def stop(self) -> None:
        """Stop the server (harmless when already stopped)."""
        self._stack.close()


def redis_server_binary() -> str:
    """The redis-server executable; skips the test (fails it on CI) when there is none."""
    server = shutil.which("redis-server")
    if server is None:
        if os.environ.get("CI"):
            pytest.fail("redis-server is not installed; CI must install it (see .ci/run).")
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    return server


@contextmanager
def running_redis(server: str, workdir: Path, port: int) -> Iterator[None]:
    """Run redis-server on 127.0.0.1:``port`` until the block ends."""
    log = workdir / "redis.log"
    args = [server, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
    args += ["--dir", str(workdir), "--logfile", str(log)]
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
    try:
        _wait_until_ready(proc, port, log)
        yield
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=_REDIS_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=_REDIS_STOP_TIMEOUT_S)


def free_port() -> int:
    """A loopback port that was free a moment ago."""
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

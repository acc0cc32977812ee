"""``skillshelf serve`` stops on every SIGINT and SIGTERM, under CPU load, and leaves nothing.

Each round starts a real server (stdio or streamable HTTP, with ``--exec`` so it owns a
workspace folder), puts a request in flight, waits a random few milliseconds and sends SIGINT
or SIGTERM, while two busy loops keep both cores of a small machine occupied. Every server
must exit 0 within the bound and leave its temporary folder empty: a stop signal that lands
inside the event loop's own machinery must still stop it (it once hung 4 stops in 50).

``SKILLSHELF_STOP_ROUNDS`` sets the number of rounds per transport (default 25, so 50 stops),
plus four of a ``--watch`` server, whose watcher thread must not hold a stop up.
"""

from __future__ import annotations

import http.client
import json
import os
import random
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcpserver.helpers import (
    INITIALIZE_REQUEST,
    SERVER_START_TIMEOUT_S,
    serve_command,
    server_env,
)
from skillshelf.testing import make_skill

ROUNDS = int(os.environ.get("SKILLSHELF_STOP_ROUNDS", "25"))
# A stop takes well under a second; this bound is for a machine busy with two other loops.
STOP_BOUND_S = 10.0
PARALLEL = 3


@pytest.fixture(scope="module")
def busy_cores() -> Iterator[None]:
    loops = [
        subprocess.Popen([sys.executable, "-c", "while True: pass"], stdin=subprocess.DEVNULL)
        for _ in range(2)
    ]
    try:
        yield
    finally:
        for loop in loops:
            loop.kill()
            loop.wait(30)


def _round(root: Path, tmp: Path, transport: str, sig: signal.Signals, seed: int) -> str:
    """One start and stop; returns what went wrong, or "" when it stopped cleanly."""
    rng = random.Random(seed)
    watch = transport.endswith("+watch")
    transport = transport.removesuffix("+watch")
    args = ["--root", str(root), "--exec", "--sandbox", "local", "--transport", transport]
    if watch:
        args.append("--watch")  # its watcher thread must not hold the stop up
    if transport == "http":
        args += ["--port", "0"]
    process = subprocess.Popen(
        serve_command(*args),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=server_env(TMPDIR=str(tmp)),
    )
    lines: list[str] = []
    ready = threading.Event()
    url: list[str] = []

    def read_stderr() -> None:
        assert process.stderr is not None
        for raw in process.stderr:
            line = raw.decode(errors="replace")
            lines.append(line)
            if "skillshelf: serving" in line:
                url.append(line.rsplit(" ", 1)[-1].strip())
                ready.set()
        ready.set()

    def drain_stdout() -> None:
        assert process.stdout is not None
        for _ in process.stdout:
            pass

    readers = [threading.Thread(target=f, daemon=True) for f in (read_stderr, drain_stdout)]
    for reader in readers:
        reader.start()
    try:
        if not ready.wait(SERVER_START_TIMEOUT_S) or process.poll() is not None:
            return "did not start:\n" + "".join(lines)
        if list(tmp.iterdir()) == []:
            return "no workspace folder while serving"
        _put_a_request_in_flight(process, transport, url[0])
        threading.Event().wait(rng.uniform(0, 0.05))
        process.send_signal(sig)
        try:
            code = process.wait(STOP_BOUND_S)
        except subprocess.TimeoutExpired:
            return f"{transport} {sig.name}: still running {STOP_BOUND_S} s after the signal"
        if code != 0:
            return f"{transport} {sig.name}: exit {code}\n" + "".join(lines)
    finally:
        _reap(process, readers)
    log = "".join(lines)
    if "Traceback" in log:
        return f"{transport} {sig.name}: a traceback on stderr\n{log}"
    left = list(tmp.iterdir())
    return f"{transport} {sig.name}: left {left}" if left else ""


def _reap(process: subprocess.Popen[bytes], readers: list[threading.Thread]) -> None:
    if process.poll() is None:
        process.kill()
        process.wait(30)
    for reader in readers:
        reader.join(30)
    for stream in (process.stdin, process.stdout, process.stderr):
        if stream is not None:
            stream.close()


def _put_a_request_in_flight(process: subprocess.Popen[bytes], transport: str, url: str) -> None:
    if transport == "stdio":
        assert process.stdin is not None
        process.stdin.write(json.dumps(INITIALIZE_REQUEST).encode() + b"\n")
        process.stdin.flush()
        return

    def post() -> None:
        host_port = url.split("//", 1)[1].split("/", 1)[0]
        connection = http.client.HTTPConnection(host_port, timeout=STOP_BOUND_S)
        try:
            connection.request(
                "POST",
                "/mcp",
                json.dumps(INITIALIZE_REQUEST),
                {
                    "content-type": "application/json",
                    "accept": "application/json, text/event-stream",
                },
            )
            connection.getresponse().read()
        except (OSError, ValueError, http.client.HTTPException):
            pass  # the server may stop before or while it answers: that is the point
        finally:
            connection.close()

    threading.Thread(target=post, daemon=True).start()


@pytest.mark.parametrize(
    ("transport", "rounds"), [("stdio", ROUNDS), ("http", ROUNDS), ("stdio+watch", 4)]
)
def test_every_stop_signal_stops_serve_under_load_and_leaves_no_workspace(
    tmp_path: Path, busy_cores: None, transport: str, rounds: int
) -> None:
    root = tmp_path / "skills"
    make_skill(root, "demo", description="A skill to serve while being stopped.")
    signals = [signal.SIGINT, signal.SIGTERM]
    jobs = []
    for index in range(rounds):
        tmp = tmp_path / f"tmp-{index}"
        tmp.mkdir()
        jobs.append((root, tmp, transport, signals[index % 2], index))
    with ThreadPoolExecutor(PARALLEL) as pool:
        problems = [p for p in pool.map(lambda job: _round(*job), jobs) if p]
    assert problems == [], f"{len(problems)} of {rounds} stops failed:\n" + "\n".join(problems)

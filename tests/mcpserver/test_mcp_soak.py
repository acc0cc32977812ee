"""Soak: 10,000 tool calls over 200 short sessions leave neither state nor memory behind.

A real ``serve --transport http`` on 127.0.0.1 with a SQLite store and a 2-second state TTL.
Half the sessions speak 2025-11-25 (a protocol session, ended by the client's DELETE), half
2026-07-28 (a conversation handle, whose state expires). Afterwards the store holds no
document, and the server's RSS is within ``RSS_TOLERANCE_MIB`` of its level after warm-up.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client

from mcpserver.conversation import DOC, SKILL, Model
from mcpserver.helpers import HttpServer, start_http_server, stored_records

SESSIONS = 200
CALLS_PER_SESSION = 50  # 10,000 calls in all
CONCURRENT = 4  # sessions at once: keeps both cores busy (client and server)
STATE_TTL_S = 2
WARM_UP_SESSIONS = 20
# CPython rarely returns freed arenas to the OS: a flat server keeps RSS within a few MiB of
# its warmed-up level, while the leak this guards against (a document and a session per
# call) grew it by tens of MiB over the same run.
RSS_TOLERANCE_MIB = 16
# Bounds against a hang, not a speed target: the soak takes ~100 s on a quiet 2-core machine
# and several times that with two busy loops beside it; what it checks is state and memory.
SOAK_TIMEOUT_S = 1200.0
EXPIRY_WAIT_S = 60.0


def _rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


async def _session(url: str, mode: str) -> None:
    async with Client(url, mode=mode) as client:
        model = Model(client)
        cycle: list[tuple[str, dict[str, Any]]] = [
            ("skill_load", {"skill": SKILL}),
            ("skill_select_docs", {"skill": SKILL, "docs": [DOC]}),
            ("skill_read_file", {"skill": SKILL, "path": DOC}),
            ("skill_list_docs", {"skill": SKILL}),
            ("skill_unload", {"skill": SKILL}),
        ]
        for i in range(CALLS_PER_SESSION):
            tool, arguments = cycle[i % len(cycle)]
            text, is_error = await model.call(tool, arguments)
            assert not is_error, text
            if tool == "skill_select_docs":
                assert "not loaded" not in text


async def _sessions(url: str, first: int, count: int) -> None:
    limiter = anyio.CapacityLimiter(CONCURRENT)

    async def one(n: int) -> None:
        async with limiter:
            await _session(url, "legacy" if n % 2 else "auto")

    async with anyio.create_task_group() as tg:
        for n in range(first, first + count):
            tg.start_soon(one, n)


@pytest.fixture
def soak_server(tmp_path: Path) -> Any:
    from mcpserver.helpers import EXAMPLES

    db = tmp_path / "state.db"
    server = start_http_server(
        ["--root", str(EXAMPLES), "--store", f"sqlite:{db}", "--state-ttl", str(STATE_TTL_S)]
    )
    try:
        yield server, db
    finally:
        server.stop()


def test_ten_thousand_calls_leave_no_state_and_flat_memory(
    soak_server: tuple[HttpServer, Path],
) -> None:
    server, db = soak_server
    started = time.monotonic()

    async def soak() -> float:
        with anyio.fail_after(SOAK_TIMEOUT_S):
            await _sessions(server.url, 0, WARM_UP_SESSIONS)
            warm = _rss_mib(server.process.pid)
            await _sessions(server.url, WARM_UP_SESSIONS, SESSIONS - WARM_UP_SESSIONS)
            return warm

    warm = anyio.run(soak)
    soaked = time.monotonic() - started
    # Legacy sessions ended with DELETE; what is left are the handles' documents, expiring.
    assert stored_records(db) <= SESSIONS // 2
    deadline = time.monotonic() + EXPIRY_WAIT_S
    while stored_records(db, live_only=True) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert stored_records(db, live_only=True) == 0
    # Expired rows are purged by the next writes; one more short session makes them.
    anyio.run(_session, server.url, "legacy")
    assert stored_records(db) == 0
    end = _rss_mib(server.process.pid)
    calls = SESSIONS * CALLS_PER_SESSION
    print(f"soak: {calls} calls in {soaked:.1f} s, RSS {warm:.1f} -> {end:.1f} MiB")
    assert end - warm <= RSS_TOLERANCE_MIB

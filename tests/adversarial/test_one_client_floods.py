"""One HTTP client flooding ``skillshelf serve`` with what it may hold: conversations (handles
minted by stateful calls without one), handshake-era sessions, ``--exec`` workspaces.

Against real server subprocesses on loopback, with the caps lowered by their flags so that a
flood takes seconds. Clients are told apart by credential and address: each client here
connects from its own loopback address (127.0.0.x). In every case the flood ends the
flooder's own oldest, and the other clients keep what they had and still get in.
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from adversarial._exec_faces import skill_root
from mcpserver.helpers import INITIALIZE_REQUEST, http_server, refused_serve, server_env
from skillshelf.testing import make_skill

SKILL = "alpha"
ALICE, MALLORY, CAROL = "127.0.0.1", "127.0.0.2", "127.0.0.3"
FLOOD = 30
# One MCP exchange through a real server on a busy machine.
CALL_TIMEOUT_S = 60.0
_HEADERS = {"content-type": "application/json", "accept": "application/json, text/event-stream"}


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    skills = tmp_path_factory.mktemp("skills")
    make_skill(skills, SKILL, "A skill to load. Use when testing floods.")
    return skills


@contextlib.asynccontextmanager
async def _client(url: str, peer: str, *, mode: str = "auto") -> AsyncIterator[Client]:
    """An SDK client connecting from ``peer``."""
    transport = httpx2.AsyncHTTPTransport(local_address=peer)
    async with (
        httpx2.AsyncClient(transport=transport) as http,
        Client(streamable_http_client(url, http_client=http), mode=mode) as client,
    ):
        yield client


async def _call(client: Client, tool: str, **arguments: Any) -> dict[str, Any]:
    with anyio.fail_after(CALL_TIMEOUT_S):
        result = await client.call_tool(tool, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    return {**(result.structured_content or {}), "text": text, "is_error": result.is_error}


async def _mint(client: Client) -> str:
    """A new conversation: a stateful call without a handle."""
    result = await _call(client, "skill_load", skill=SKILL)
    assert not result["is_error"], result
    return str(result["conversation"])


async def _still_loaded(client: Client, handle: str) -> bool:
    result = await _call(client, "skill_load", skill=SKILL, conversation=handle)
    if "closed to make room" in result["text"]:
        assert result["is_error"] and result["conversation"] != handle
        return False
    assert "already loaded" in result["text"], result
    return True


# -- sessionless conversations ----------------------------------------------------------------


def test_a_handleless_flood_ends_the_flooders_own_oldest_conversations(root: Path) -> None:
    caps = ("--conversations-per-client", "4", "--max-conversations", "6")
    with http_server(["--root", str(root), *caps]) as server:

        async def check() -> None:
            async with _client(server.url, ALICE) as alice, _client(server.url, MALLORY) as bad:
                kept = await _mint(alice)
                flood = [await _mint(bad) for _ in range(FLOOD)]
                assert await _still_loaded(alice, kept)
                # Mallory keeps its 4 newest; its oldest was closed, and it is told so.
                assert await _still_loaded(bad, flood[-1])
                refused = await _call(bad, "skill_select_docs", skill=SKILL, conversation=flood[0])
                assert refused["is_error"] and "closed to make room" in refused["text"]
                assert "at most 4 conversations" in refused["text"]
                # At the total (6) the client holding the most gives one up, not Carol.
                async with _client(server.url, CAROL) as carol:
                    carols = [await _mint(carol) for _ in range(2)]
                    assert all([await _still_loaded(carol, h) for h in carols])
                assert await _still_loaded(alice, kept)

        anyio.run(check)


def test_a_handle_lifetime_is_capped_and_set_by_a_flag(root: Path) -> None:
    with http_server(["--root", str(root), "--handle-lifetime", "120"]) as server:

        async def check() -> None:
            async with _client(server.url, ALICE) as alice:
                handle = await _mint(alice)
            expiry = int(handle.split(".")[2])
            assert 0 < expiry - time.time() <= 121

        anyio.run(check)
    result = refused_serve("--root", str(root), "--handle-lifetime", str(8 * 24 * 3600))
    assert "at most 604800 s (7 days)" in result


# -- handshake-era sessions ------------------------------------------------------------------


def _open_session(url: str, peer: str) -> httpx.Response:
    transport = httpx.HTTPTransport(local_address=peer)
    with httpx.Client(transport=transport, timeout=CALL_TIMEOUT_S) as http:
        return http.post(url, content=json.dumps(INITIALIZE_REQUEST), headers=_HEADERS)


def _session_answers(url: str, peer: str, session: str) -> int:
    """The status of a ping in ``session``, sent from ``peer``."""
    ping = {"jsonrpc": "2.0", "id": 2, "method": "ping"}
    transport = httpx.HTTPTransport(local_address=peer)
    with httpx.Client(transport=transport, timeout=CALL_TIMEOUT_S) as http:
        headers = {**_HEADERS, "mcp-session-id": session}
        return http.post(url, content=json.dumps(ping), headers=headers).status_code


def test_a_legacy_session_flood_ends_the_flooders_own_oldest_sessions(root: Path) -> None:
    caps = ("--sessions-per-client", "3", "--max-sessions", "5")
    with http_server(["--root", str(root), *caps]) as server:

        async def alice_works() -> None:
            async with _client(server.url, ALICE, mode="legacy") as alice:
                first = await _call(alice, "skill_load", skill=SKILL)
                assert not first["is_error"], first
                flood = [_open_session(server.url, MALLORY) for _ in range(FLOOD)]
                assert all(r.status_code == 200 for r in flood), [r.status_code for r in flood]
                sessions = [r.headers["mcp-session-id"] for r in flood]
                # Alice's session kept its state; Mallory's oldest ended (404: start again),
                # its newest still answer.
                again = await _call(alice, "skill_load", skill=SKILL)
                assert "already loaded" in again["text"], again
                assert _session_answers(server.url, MALLORY, sessions[0]) == 404
                assert _session_answers(server.url, MALLORY, sessions[-1]) == 200
                # A third client still gets in, and at the total (5) the client holding the
                # most, Mallory, gives way again.
                carols = [_open_session(server.url, CAROL) for _ in range(2)]
                assert [r.status_code for r in carols] == [200, 200]
                for r in carols:
                    assert _session_answers(server.url, CAROL, r.headers["mcp-session-id"]) == 200
                again = await _call(alice, "skill_load", skill=SKILL)
                assert "already loaded" in again["text"], again

        anyio.run(alice_works)


def test_a_cap_above_its_total_is_refused_with_a_usage_error(root: Path) -> None:
    err = refused_serve("--root", str(root), "--sessions-per-client", "20", "--max-sessions", "10")
    assert "at most the total (10)" in err


# -- --exec workspaces -------------------------------------------------------------------------


def test_a_flood_of_exec_conversations_evicts_its_own_workspaces_first(tmp_path: Path) -> None:
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    args = ["--root", str(skill_root(tmp_path)), "--exec", "--sandbox", "local"]
    args += ["--max-workspaces", "3"]
    with http_server(args, env=server_env(TMPDIR=str(tmp))) as server:

        async def check() -> None:
            async with _client(server.url, ALICE) as alice, _client(server.url, MALLORY) as bad:
                made = await _call(alice, "workspace_exec", command="echo mine > kept")
                assert made["status"] == "ok" and made["exit_code"] == 0, made["text"]
                handle = made["conversation"]
                for _ in range(6):
                    flood = await _call(bad, "workspace_exec", command="echo x > x")
                    assert flood["status"] == "ok", flood
                seen = await _call(alice, "workspace_exec", command="cat kept", conversation=handle)
                assert re.search(r"\bmine\b", seen["text"]), seen

        anyio.run(check)

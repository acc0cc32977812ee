"""Streamable HTTP: a real server on 127.0.0.1, the SDK client, the bearer token."""

from __future__ import annotations

import base64
import hashlib
import json
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import anyio
import httpx2
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.client.streamable_http import streamable_http_client
from mcp_types import TextResourceContents

from mcpserver.helpers import (
    INITIALIZE_REQUEST,
    INVALID_PARAMS,
    HttpServer,
    all_skills,
    error_code,
    request,
    serve_command,
    server_env,
    start_http_server,
)
from skillshelf.testing import make_skill

TOKEN = "s3cret-token-for-tests"
_INIT = INITIALIZE_REQUEST


def _post(url: str, headers: dict[str, str]) -> int:
    data = json.dumps(_INIT).encode()
    headers = {
        "content-type": "application/json",
        "accept": "application/json, text/event-stream",
        **headers,
    }
    try:
        with urllib.request.urlopen(urllib.request.Request(url, data, headers), timeout=30) as r:
            return int(r.status)
    except urllib.error.HTTPError as exc:
        return exc.code


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_http_client_lists_and_reads_every_skill(http_server: HttpServer, mode: str) -> None:
    async def check() -> None:
        async with Client(http_server.url, mode=mode) as client:
            entries = await all_skills(client)
            assert len(entries) == 4
            for entry in entries:
                got = await request(client, "skills/get", {"uri": entry["uri"]})
                assert got["skill"] == entry
                for resource in entry["resources"]:
                    read = await client.read_resource(resource["uri"])
                    data = read.contents[0]
                    raw = (
                        data.text.encode()
                        if isinstance(data, TextResourceContents)
                        else base64.b64decode(data.blob)
                    )
                    assert "sha256:" + hashlib.sha256(raw).hexdigest() == resource["digest"]
            listing = await request(
                client, "resources/directory/read", {"uri": "skill://release-notes/references"}
            )
            assert listing["resources"] == [
                {
                    "uri": "skill://release-notes/references/templates",
                    "name": "templates",
                    "mimeType": "inode/directory",
                }
            ]
            code = await error_code(client, "resources/read", {"uri": "skill://x/../../etc/passwd"})
            assert code == INVALID_PARAMS

    anyio.run(check)


def test_http_tool_state_is_kept_per_mcp_session(http_server: HttpServer) -> None:
    async def load(client: Client) -> str:
        result = await client.call_tool("skill_load", {"skill": "csv-insights"})
        return result.content[0].text  # type: ignore[union-attr]

    async def check() -> None:
        async with Client(http_server.url, mode="legacy") as first:
            assert "<skill_content" in await load(first)
            assert "already loaded" in await load(first)
            async with Client(http_server.url, mode="legacy") as second:
                assert "<skill_content" in await load(second)

    anyio.run(check)


@pytest.fixture
def token_server(skills_root: Path) -> Any:
    server = start_http_server(
        ["--root", str(skills_root), "--token-env", "SKILLSHELF_TEST_TOKEN"],
        env=server_env(SKILLSHELF_TEST_TOKEN=TOKEN),
    )
    try:
        yield server
    finally:
        server.stop()


def test_bearer_token_is_required(token_server: HttpServer) -> None:
    assert _post(token_server.url, {}) == 401
    assert _post(token_server.url, {"authorization": "Bearer wrong"}) == 401
    assert _post(token_server.url, {"authorization": f"Bearer {TOKEN}"}) == 200

    async def check() -> None:
        headers = {"authorization": f"Bearer {TOKEN}"}
        async with httpx2.AsyncClient(headers=headers) as http:
            transport = streamable_http_client(token_server.url, http_client=http)
            async with Client(transport) as client:
                assert len(await all_skills(client)) == 4
                got = await request(client, "skills/get", {"uri": "skill://csv-insights/SKILL.md"})
                assert got["skill"]["frontmatter"]["name"] == "csv-insights"

    anyio.run(check)


def _run_serve(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        serve_command(*args),
        capture_output=True,
        text=True,
        timeout=60,
        env=env or server_env(),
        stdin=subprocess.DEVNULL,
    )


def test_non_loopback_bind_without_token_is_refused(skills_root: Path) -> None:
    done = _run_serve("--root", str(skills_root), "--transport", "http", "--host", "0.0.0.0")
    assert done.returncode == 2
    assert "without a bearer token" in done.stderr
    assert done.stdout == ""


def test_exec_with_an_unavailable_sandbox_is_a_usage_error(skills_root: Path) -> None:
    nowhere = server_env(DOCKER_HOST="unix:///nonexistent/docker.sock")
    done = _run_serve("--root", str(skills_root), "--exec", "--sandbox", "docker", env=nowhere)
    assert done.returncode == 2
    assert "no Docker engine at unix:///nonexistent/docker.sock" in done.stderr


def test_sandbox_without_exec_is_a_usage_error(skills_root: Path) -> None:
    done = _run_serve("--root", str(skills_root), "--sandbox", "local")
    assert done.returncode == 2
    assert "--sandbox only applies with --exec" in done.stderr


def test_empty_token_variable_is_a_usage_error(skills_root: Path) -> None:
    done = _run_serve(
        "--root", str(skills_root), "--transport", "http", "--token-env", "SKILLSHELF_UNSET_VAR"
    )
    assert done.returncode == 2
    assert "SKILLSHELF_UNSET_VAR" in done.stderr


# A re-scan after SIGHUP takes milliseconds; the margin is for slow, busy CI machines.
SIGHUP_TIMEOUT_S = 20.0


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="no SIGHUP on this platform")
def test_sighup_rescans_the_roots(http_server: HttpServer, skills_root: Path) -> None:
    make_skill(skills_root, "late-arrival", "Arrives after the server started. Use in tests.")
    changed = anyio.Event()

    async def on_message(message: IncomingMessage) -> None:
        if getattr(message, "method", None) == "notifications/tools/list_changed":
            changed.set()

    async def names(client: Client) -> list[str]:
        return [e["frontmatter"]["name"] for e in await all_skills(client)]

    async def check() -> None:
        async with Client(http_server.url, mode="legacy", message_handler=on_message) as client:
            assert "late-arrival" not in await names(client)
            http_server.process.send_signal(signal.SIGHUP)
            with anyio.fail_after(SIGHUP_TIMEOUT_S):
                await changed.wait()
            assert "late-arrival" in await names(client)

    anyio.run(check)


WATCH_TIMEOUT_S = 20.0  # a debounced re-scan lands within a second; margin for busy machines


def test_an_edit_the_moment_serving_is_announced_is_seen_under_watch(skills_root: Path) -> None:
    skill_md = skills_root / "csv-insights" / "SKILL.md"
    text = skill_md.read_text()

    def edit() -> None:  # in the reader thread, as the "serving" line arrives
        skill_md.write_text(text.replace("Profiles a CSV", "Profiles any CSV"))

    server = start_http_server(["--root", str(skills_root), "--watch"], on_ready=edit)
    try:
        rescanned = server.wait_for_line(r"re-scanned: .*'csv-insights'", WATCH_TIMEOUT_S)
        assert rescanned is not None, "".join(server.stderr)

        async def check() -> None:
            async with Client(server.url) as client:
                got = await request(client, "skills/get", {"uri": "skill://csv-insights/SKILL.md"})
            assert got["skill"]["frontmatter"]["description"].startswith("Profiles any CSV")

        anyio.run(check)
    finally:
        server.stop()

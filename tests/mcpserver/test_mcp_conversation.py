"""Tool state across calls in both protocol eras: sessions (2025-11-25) and handles (2026-07-28)."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp import Client

from mcpserver.conversation import (
    SKILL,
    Model,
    assert_state_spans_calls,
    load_select_read_unload,
)
from mcpserver.helpers import HttpServer, serve_command, server_env, stdio_params, stored_records

MODES = ["auto", "legacy"]  # auto speaks 2026-07-28 to this server


def _stdio(root: Path, mode: str) -> Client:
    return Client(stdio_params(serve_command("--root", str(root)), server_env()), mode=mode)


@pytest.mark.parametrize("mode", MODES)
def test_state_spans_calls_over_http_in_both_eras(http_server: HttpServer, mode: str) -> None:
    async def check() -> None:
        async with Client(http_server.url, mode=mode) as client:
            assert_state_spans_calls(await load_select_read_unload(client))

    anyio.run(check)


@pytest.mark.parametrize("mode", MODES)
def test_state_spans_calls_over_stdio_in_both_eras(skills_root: Path, mode: str) -> None:
    async def check() -> None:
        async with _stdio(skills_root, mode) as client:
            assert_state_spans_calls(await load_select_read_unload(client))

    anyio.run(check)


def test_sessionless_stateful_call_returns_a_handle_in_text_and_structured_data(
    http_server: HttpServer,
) -> None:
    async def check() -> None:
        async with Client(http_server.url) as client:
            result = await client.call_tool("skill_load", {"skill": SKILL})
            text = result.content[0].text  # type: ignore[union-attr]
            handle = (result.structured_content or {})["conversation"]
            assert f"conversation: {handle}" in text
            # A call that keeps no state mints nothing.
            read = await client.call_tool("skill_list", {})
            assert "conversation" not in (read.structured_content or {})

    anyio.run(check)


def test_tools_advertise_the_conversation_argument_on_stateful_tools_only(
    http_server: HttpServer,
) -> None:
    async def check() -> None:
        async with Client(http_server.url) as client:
            tools = {t.name: t for t in (await client.list_tools()).tools}
        stateful = {"skill_load", "skill_select_docs", "skill_unload"}
        for name, tool in tools.items():
            has = "conversation" in tool.input_schema["properties"]
            assert has == (name in stateful), name
            assert ("`conversation`" in (tool.description or "")) == (name in stateful)

    anyio.run(check)


@pytest.mark.parametrize(
    ("mangle", "why"),
    [
        (lambda h: h[:-2] + ("AA" if not h.endswith("AA") else "BB"), "not issued"),
        (lambda h: "c1.nothing.1.x", "not issued"),
        (lambda h: "hello", "is not a conversation handle"),
    ],
)
def test_a_forged_handle_is_refused_with_a_fresh_one(
    http_server: HttpServer, mangle: object, why: str
) -> None:
    async def check() -> None:
        async with Client(http_server.url) as client:
            model = Model(client)
            await model.call("skill_load", {"skill": SKILL})
            assert model.conversation is not None
            model.conversation = mangle(model.conversation)  # type: ignore[operator]
            text, is_error = await model.call("skill_select_docs", {"skill": SKILL, "docs": []})
            assert is_error and why in text
            # The refusal carries a fresh handle the model now uses; its state is empty.
            assert model.conversation is not None and len(model.handles_seen) == 2
            text, is_error = await model.call("skill_unload", {"skill": SKILL})
            assert not is_error and "was not loaded" in text

    anyio.run(check)


# What a model fills in when a strict schema (the OpenAI Agents SDK's) makes the optional
# `conversation` argument a required string.
PLACEHOLDERS = ["", "none", "None", "NULL", " null "]


def test_a_placeholder_handle_starts_a_conversation_instead_of_being_refused(
    http_server: HttpServer,
) -> None:
    async def check() -> None:
        async with Client(http_server.url) as client:
            for placeholder in PLACEHOLDERS:
                # A call that keeps no state stays stateless: no error, no handle.
                listed = await client.call_tool("skill_list", {"conversation": placeholder})
                assert not listed.is_error, placeholder
                assert "conversation" not in (listed.structured_content or {})
                # A stateful call starts a conversation, as without the argument.
                model = Model(client, conversation=placeholder)
                text, is_error = await model.call("skill_load", {"skill": SKILL})
                assert not is_error and "<skill_content" in text, (placeholder, text[:300])
                assert model.handles_seen == [model.conversation]
                text, is_error = await model.call("skill_select_docs", {"skill": SKILL, "docs": []})
                assert not is_error and "not loaded" not in text, (placeholder, text)

    anyio.run(check)


def test_a_handle_names_the_same_state_for_the_same_bearer(skills_root: Path) -> None:
    from mcpserver.helpers import start_http_server

    env = server_env(TOK="token-for-conversation-tests")
    server = start_http_server(["--root", str(skills_root), "--token-env", "TOK"], env=env)
    try:

        async def call(token: str, arguments: dict[str, str]) -> tuple[str, dict[str, object]]:
            import httpx2
            from mcp.client.streamable_http import streamable_http_client

            headers = {"Authorization": f"Bearer {token}"}
            async with (
                httpx2.AsyncClient(headers=headers) as http,
                Client(streamable_http_client(server.url, http_client=http)) as client,
            ):
                result = await client.call_tool("skill_load", arguments)
                text = result.content[0].text  # type: ignore[union-attr]
                return text, result.structured_content or {}

        async def check() -> None:
            _text, data = await call("token-for-conversation-tests", {"skill": SKILL})
            handle = str(data["conversation"])
            # Same bearer: the handle names the same state.
            text, _ = await call(
                "token-for-conversation-tests", {"skill": SKILL, "conversation": handle}
            )
            assert "already loaded" in text

        anyio.run(check)
    finally:
        server.stop()
    assert not re.search(r"c1\.[\w-]+\.\d+\.[\w-]+", "".join(server.stderr))


def test_a_short_handle_secret_is_a_usage_error(skills_root: Path) -> None:
    import subprocess

    done = subprocess.run(
        serve_command("--root", str(skills_root), "--handle-secret-env", "HS"),
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(HS="short"),
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    assert "at least 16 characters" in done.stderr


@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_an_ended_session_leaves_no_state_in_the_store(
    skills_root: Path, tmp_path: Path, transport: str
) -> None:
    from mcpserver.helpers import start_http_server

    db = tmp_path / "state.db"
    store = ["--store", f"sqlite:{db}"]

    async def use(client: Client) -> None:
        async with client:
            await client.call_tool("skill_load", {"skill": SKILL})
            assert stored_records(db) == 1

    if transport == "stdio":
        command = serve_command("--root", str(skills_root), *store)
        anyio.run(use, Client(stdio_params(command, server_env()), mode="legacy"))
        # The server deletes the state as its stdin closes; it exits right after.
    else:
        server = start_http_server(["--root", str(skills_root), *store])
        try:
            anyio.run(use, Client(server.url, mode="legacy"))  # ends with DELETE
        finally:
            server.stop()
    assert stored_records(db) == 0

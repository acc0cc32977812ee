"""What a client is told: no echoed floods, paths it can use, one rule for invalid skills,
a stop on Ctrl-C, and a loud warning when there is nothing to serve."""

from __future__ import annotations

import json
import re
import signal
import subprocess
import threading
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.client.session import IncomingMessage
from mcp.shared.exceptions import MCPError

from mcpserver.helpers import (
    INVALID_PARAMS,
    SERVER_START_TIMEOUT_S,
    SERVER_STOP_TIMEOUT_S,
    all_skills,
    request,
    serve_command,
    server_env,
    start_http_server,
    stdio_params,
)
from skillshelf.testing import make_skill

# A re-scan after an edit lands within a second; the margin is for slow, busy CI machines.
NOTIFY_TIMEOUT_S = 20.0
HUGE = 5_000_000  # characters of a hostile URI or name
GUIDE = "# Guide\n\nUse tables.\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "alpha",
        body="# Alpha\n\nSee [the guide](references/guide.md).\n",
        files={"references/guide.md": GUIDE},
    )
    make_skill(skills, "beta", body="# Beta\n\nSay $ARGUMENTS.\n")
    return skills


def _client(root: Path, *extra: str, mode: str = "auto", **kwargs: Any) -> Client:
    command = serve_command("--root", str(root), *extra)
    return Client(stdio_params(command, server_env()), mode=mode, **kwargs)


async def _error(client: Client, method: str, params: dict[str, Any]) -> tuple[int, str]:
    try:
        await request(client, method, params)
    except MCPError as exc:
        return exc.error.code, json.dumps(exc.error.model_dump(mode="json"))
    raise AssertionError(f"{method} succeeded")


def _text(result: Any) -> str:
    return str(result.content[0].text)


# -- echoed values are clipped --------------------------------------------------------------


def test_huge_uri_prompt_and_tool_names_give_small_errors(root: Path) -> None:
    async def check() -> None:
        async with _client(root) as client:
            cases: list[tuple[str, dict[str, Any]]] = [
                ("resources/read", {"uri": "skill://alpha/" + "a" * HUGE}),
                ("resources/read", {"uri": "skill://" + "a" * HUGE}),
                ("resources/read", {"uri": "file:///" + "a" * HUGE}),
                ("skills/get", {"uri": "skill://" + "a" * HUGE + "/SKILL.md"}),
                ("prompts/get", {"name": "p" * HUGE}),
                ("tools/call", {"name": "t" * HUGE, "arguments": {}}),
            ]
            for method, params in cases:
                code, error = await _error(client, method, params)
                assert code == INVALID_PARAMS, (method, error[:300])
                assert len(error) < 1024, (method, error[:300])
            result = await client.call_tool(
                "skill_read_file", {"skill": "alpha", "path": "x" * HUGE}
            )
            assert result.is_error
            assert len(_text(result)) < 1024
            assert len(json.dumps(result.structured_content)) < 2048

    anyio.run(check)


# -- the paths skill_load advises are the paths skill_read_file takes ----------------------


def _directory_line(text: str) -> str:
    match = re.search(r"^Skill directory: (.+)$", text, re.MULTILINE)
    assert match, text
    return match.group(1)


def test_stdio_skill_load_advice_followed_literally_reads_the_file(root: Path) -> None:
    async def check() -> None:
        async with _client(root) as client:
            loaded = _text(await client.call_tool("skill_load", {"skill": "alpha"}))
            directory = _directory_line(loaded)
            assert "use the absolute path in later tool calls" in loaded
            assert directory == str((root / "alpha").resolve())
            for path in (f"{directory}/references/guide.md", "references/guide.md"):
                result = await client.call_tool("skill_read_file", {"skill": "alpha", "path": path})
                assert not result.is_error and _text(result) == GUIDE, path

    anyio.run(check)


def test_http_results_show_no_server_path_and_their_advice_works(root: Path) -> None:
    server = start_http_server(["--root", str(root)])
    server_path = str(root.resolve().parent)

    async def check() -> None:
        async with Client(server.url, mode="legacy") as client:
            shown: list[str] = []

            async def call(tool: str, args: dict[str, Any]) -> Any:
                result = await client.call_tool(tool, args)
                shown.extend([_text(result), json.dumps(result.structured_content)])
                return result

            loaded = _text(await call("skill_load", {"skill": "alpha"}))
            directory = _directory_line(loaded)
            assert directory == "skill://alpha/"
            for path in ("references/guide.md", directory + "references/guide.md"):
                result = await call("skill_read_file", {"skill": "alpha", "path": path})
                assert not result.is_error and _text(result) == GUIDE, path
            await call("skill_list_docs", {"skill": "alpha"})
            await call("skill_read_file", {"skill": "alpha", "path": "references/none.md"})
            await call("skill_read_file", {"skill": "alpha", "path": "/etc/passwd"})
            prompt = await client.get_prompt("beta", {"arguments": "hi"})
            shown.append(str(prompt.messages[0].content.text))  # type: ignore[union-attr]
            shown.append(client.instructions or "")
            leaked = [text[:200] for text in shown if server_path in text]
            assert leaked == []

    try:
        anyio.run(check)
    finally:
        server.stop()


# -- a skill edited into invalid YAML: reload and restart agree ------------------------------


async def _offered(client: Client) -> dict[str, list[str]]:
    tools = {t.name: t for t in (await client.list_tools()).tools}
    enum = tools["skill_load"].input_schema["properties"]["skill"].get("enum", [])
    return {
        "tools": sorted(enum),
        "prompts": sorted(p.name for p in (await client.list_prompts()).prompts),
        "skills": sorted(e["frontmatter"]["name"] for e in await all_skills(client)),
    }


def test_skill_edited_into_invalid_yaml_is_dropped_as_a_restart_would(root: Path) -> None:
    async def check() -> None:
        changed = anyio.Event()

        async def on_message(message: IncomingMessage) -> None:
            if getattr(message, "method", None) == "notifications/tools/list_changed":
                changed.set()

        async with _client(root, "--watch", mode="legacy", message_handler=on_message) as client:
            assert (await _offered(client))["prompts"] == ["alpha", "beta"]
            (root / "beta" / "SKILL.md").write_text(
                "---\nname: beta\ndescription: [unclosed\n---\nSay hi.\n"
            )
            with anyio.fail_after(NOTIFY_TIMEOUT_S):
                await changed.wait()
            reloaded = await _offered(client)
            code, error = await _error(client, "prompts/get", {"name": "beta"})
            assert code == INVALID_PARAMS and "Internal error" not in error
            code, _error_text = await _error(client, "skills/get", {"uri": "skill://beta/SKILL.md"})
            assert code == INVALID_PARAMS
            result = await client.call_tool("skill_load", {"skill": "beta"})
            assert result.is_error
        async with _client(root) as restarted:
            assert await _offered(restarted) == reloaded
        assert reloaded == {"tools": ["alpha"], "prompts": ["alpha"], "skills": ["alpha"]}

    anyio.run(check)


# -- Ctrl-C ----------------------------------------------------------------------------------


def test_sigint_stops_a_stdio_server_cleanly(root: Path) -> None:
    process = subprocess.Popen(
        serve_command("--root", str(root)),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env=server_env(),
    )
    lines: list[str] = []
    ready = threading.Event()

    def read() -> None:
        assert process.stderr is not None
        for line in process.stderr:
            lines.append(line)
            if "skillshelf: serving" in line:
                ready.set()
        ready.set()

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    try:
        assert ready.wait(SERVER_START_TIMEOUT_S) and process.poll() is None, "".join(lines)
        process.send_signal(signal.SIGINT)  # what Ctrl-C in the terminal sends
        code = process.wait(SERVER_STOP_TIMEOUT_S)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait(SERVER_STOP_TIMEOUT_S)
        reader.join(SERVER_STOP_TIMEOUT_S)
        assert process.stdin is not None and process.stderr is not None
        process.stdin.close()
        process.stderr.close()
    assert code in (0, 130)
    assert "Traceback" not in "".join(lines)


# -- nothing to serve --------------------------------------------------------------------------


def test_a_server_without_skills_warns_on_stderr_and_in_its_instructions(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    done = subprocess.run(
        [*serve_command("--root", "empty"), "--transport", "stdio"],
        input="",
        capture_output=True,
        text=True,
        timeout=60,
        env=server_env(),
        cwd=tmp_path,
    )
    assert done.returncode == 0, done.stderr
    warning = [line for line in done.stderr.splitlines() if "no skills to offer" in line]
    assert warning and str(tmp_path / "empty") in warning[0]

    async def check() -> None:
        for mode in ("legacy", "auto"):
            async with _client(tmp_path / "empty", mode=mode) as client:
                instructions = client.instructions or ""
                assert "no skills to offer" in instructions, mode
                assert str(tmp_path / "empty") in instructions

    anyio.run(check)

"""The client matrix: real client libraries nobody on the project wrote drive ``skillshelf serve``.

Every client runs the same sequence over stdio and over streamable HTTP — load, select docs,
read a file, unload, select again — and the test checks the state (the select after the load
and the unload after it succeed; the select after the unload is refused as "not loaded") and
the text (the whole SKILL.md body, the whole file), in the representation that client gives
its caller or its model. Clients:

* the Python SDK ``Client`` in both protocol eras: 2025-11-25 (``mode="legacy"``, sessions)
  and 2026-07-28 (``mode="auto"``; over HTTP sessionless, the server-minted ``conversation``
  handle passed back);
* the TypeScript SDK (``@modelcontextprotocol/sdk``, through ``ts_client.mjs``);
* the MCP Inspector CLI (``--cli``, one process per call: state spans calls only through the
  2026-07-28 handle over HTTP), its ``skills/list --verify`` check, and every other method the
  server offers (lists, reads, directory reads, prompts, ``skills/get``) in both eras, each
  result checked against the Inspector's schema for that era;
* pydantic-ai's ``MCPToolset`` with a ``FunctionModel`` that asserts what the model received;
* openai-agents' ``MCPServerStdio`` / ``MCPServerStreamableHttp`` with
  ``use_structured_content`` on and off.

npm packages come from the cache outside the repository (``npm_packages.py``); the Python
libraries are dev dependencies. Under ``CI=true`` anything missing fails instead of skipping.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import warnings
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPDeprecationWarning

from mcpserver import npm_packages
from mcpserver.conversation import DOC, SKILL
from mcpserver.helpers import (
    EXAMPLES,
    HttpServer,
    serve_command,
    server_env,
    start_http_server,
    stdio_params,
)
from skillshelf.core.frontmatter import parse_frontmatter

TRANSPORTS = ["stdio", "http"]
# One client's whole sequence, server start included, on a busy 2-core machine.
CLIENT_TIMEOUT_S = 60.0
_HANDLE = re.compile(r"conversation: (c1\.\S+)")
_INSPECTOR = "@modelcontextprotocol/inspector/clients/launcher/build/index.js"
_TOOL_IS_ERROR = 5  # the Inspector CLI's exit status for a tool result with isError
_TS_CLIENT = Path(__file__).with_name("ts_client.mjs")

SEQUENCE: list[tuple[str, dict[str, Any]]] = [
    ("skill_load", {"skill": SKILL}),
    ("skill_select_docs", {"skill": SKILL, "docs": [DOC]}),
    ("skill_read_file", {"skill": SKILL, "path": DOC}),
    ("skill_unload", {"skill": SKILL}),
    ("skill_select_docs", {"skill": SKILL, "docs": [DOC]}),
]


@dataclass
class Step:
    """One tool result as a client surfaced it: the text, and whether it was an error."""

    text: str
    is_error: bool | None = None  # None: the client does not say
    structured: dict[str, Any] | None = None


BODY = parse_frontmatter((EXAMPLES / SKILL / "SKILL.md").read_text()).body.strip()
DOC_TEXT = (EXAMPLES / SKILL / DOC).read_text().strip()


def assert_text(steps: list[Step]) -> None:
    """The load holds the whole body and the read the whole file; structured text = content."""
    load, _, read, *_ = steps
    assert BODY in load.text, load.text[:500]
    assert DOC_TEXT in read.text, read.text[:500]
    for step in steps:
        if step.structured is not None:
            assert step.structured["text"] == step.text


def assert_state_spans_calls(steps: list[Step]) -> None:
    """Select after load and unload after load succeed; select after unload is refused."""
    assert_text(steps)
    load, select, read, unload, after = steps
    assert not any(s.is_error for s in (load, select, read, unload)), steps
    assert f"Docs selected for '{SKILL}': {DOC}" in select.text
    assert f"Skill '{SKILL}' unloaded." in unload.text
    assert after.is_error in (True, None)
    assert f"Skill '{SKILL}' is not loaded. Call skill_load first." in after.text


async def run_sequence(
    call: Callable[[str, dict[str, Any]], Awaitable[Step]], *, steps: int = len(SEQUENCE)
) -> list[Step]:
    """Run SEQUENCE (its first ``steps``), passing back a ``conversation`` handle as a model
    told about it would."""
    handle: str | None = None
    results = []
    for tool, arguments in SEQUENCE[:steps]:
        step = await call(
            tool, arguments if handle is None else {**arguments, "conversation": handle}
        )
        match = _HANDLE.search(step.text)
        if match:
            handle = match.group(1)
        results.append(step)
    return results


def _launch(root: Path) -> list[str]:
    return serve_command("--root", str(root))


@pytest.fixture(scope="module")
def server() -> Iterator[HttpServer]:
    """One HTTP server for the module: each client's state is its own session or handle."""
    running = start_http_server(["--root", str(EXAMPLES)])
    try:
        yield running
    finally:
        running.stop()


def _require(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the {module} client tests: pip install -e '.[dev]'")
        pytest.skip(f"{module} is not installed")


# -- Python SDK -----------------------------------------------------------------------------


@pytest.mark.parametrize("mode", ["auto", "legacy"], ids=["2026-07-28", "2025-11-25"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_python_sdk_client_keeps_state_and_reads_full_text(
    server: HttpServer, transport: str, mode: str
) -> None:
    target: Any = server.url
    if transport == "stdio":
        target = stdio_params(_launch(EXAMPLES), server_env())

    async def run() -> list[Step]:
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            async with Client(target, mode=mode) as client:
                if mode == "legacy":  # the one method no other client here sends
                    with warnings.catch_warnings():  # ping is gone from 2026-07-28 on
                        warnings.simplefilter("ignore", MCPDeprecationWarning)
                        await client.send_ping()

                async def call(tool: str, arguments: dict[str, Any]) -> Step:
                    result = await client.call_tool(tool, arguments)
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    return Step(text, bool(result.is_error), result.structured_content)

                return await run_sequence(call)

    steps = anyio.run(run)
    assert_state_spans_calls(steps)
    # Only the sessionless wire needs a handle; it is minted once, by the first load.
    minted = [s for s in steps if s.structured and "conversation" in s.structured]
    sessionless = transport == "http" and mode == "auto"
    assert [steps.index(s) for s in minted] == ([0] if sessionless else [])


# -- TypeScript SDK --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def node_modules() -> Path:
    return npm_packages.node_modules()


def _ts_steps() -> str:
    steps: list[dict[str, Any]] = [{"tool": t, "arguments": a} for t, a in SEQUENCE]
    steps.append({"resource": f"skill://{SKILL}/{DOC}"})
    return json.dumps(steps)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_typescript_sdk_client_keeps_state_and_reads_full_text(
    node_modules: Path, server: HttpServer, transport: str
) -> None:
    node = npm_packages.system_node(node_modules)
    target = _launch(EXAMPLES) if transport == "stdio" else [server.url]
    command = [str(node), str(_TS_CLIENT), str(node_modules), _ts_steps(), transport, *target]
    done = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=CLIENT_TIMEOUT_S,
        check=False,
        env=server_env(),
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"skill_load", "skill_select_docs", "skill_read_file", "skill_unload"} <= set(
        out["tools"]
    )
    steps = [Step(s["text"], s["isError"], s.get("structured")) for s in out["steps"]]
    assert_state_spans_calls(steps[:-1])
    assert DOC_TEXT in steps[-1].text  # resources/read of the same file
    if transport == "http":
        assert out["protocolVersion"] == "2025-11-25"  # SDK 1.32 speaks the handshake era


# -- MCP Inspector CLI -----------------------------------------------------------------------


def _inspector(
    node_modules: Path, tmp_path: Path, target: list[str], *args: str
) -> subprocess.CompletedProcess[str]:
    node = npm_packages.node22(node_modules)
    command = [str(node), str(node_modules / _INSPECTOR), "--cli", *args]
    if target[0].startswith("http"):
        command += target
    else:
        # The Inspector passes a stdio server only a default environment: name what it needs.
        command += ["-e", f"PYTHONPATH={server_env()['PYTHONPATH']}", "--", *target]
    env = server_env(MCP_CATALOG_PATH=str(tmp_path / "catalog.json"), HOME=str(tmp_path))
    return subprocess.run(
        command, capture_output=True, text=True, timeout=CLIENT_TIMEOUT_S, check=False, env=env
    )


async def _inspector_sequence(
    node_modules: Path, tmp_path: Path, target: list[str], era: str, steps: int
) -> list[Step]:
    async def call(tool: str, arguments: dict[str, Any]) -> Step:
        done = _inspector(
            node_modules, tmp_path, target, "--format", "json", "--protocol-era", era,
            "--method", "tools/call", "--tool-name", tool,
            "--tool-args-json", json.dumps(arguments),
        )  # fmt: skip
        result = json.loads(done.stdout or "{}").get("result", {})
        is_error = result.get("isError", False)
        # The CLI prints the result and exits 5 when the tool answered isError.
        assert done.returncode == (_TOOL_IS_ERROR if is_error else 0), done.stdout + done.stderr
        text = "".join(c.get("text", "") for c in result["content"])
        return Step(text, is_error, result.get("structuredContent"))

    return await run_sequence(call, steps=steps)


@pytest.mark.parametrize(
    ("transport", "era"),
    [("stdio", "legacy"), ("http", "legacy"), ("http", "modern")],
    ids=["stdio", "http-2025-11-25", "http-2026-07-28"],
)
def test_inspector_cli_runs_the_sequence(
    node_modules: Path, server: HttpServer, tmp_path: Path, transport: str, era: str
) -> None:
    target = _launch(EXAMPLES) if transport == "stdio" else [server.url]
    if era == "modern":
        # One process per call, but the handle carries the state from call to call.
        steps = anyio.run(_inspector_sequence, node_modules, tmp_path, target, era, len(SEQUENCE))
        assert_state_spans_calls(steps)
        return
    # One process (stdio) or one session (HTTP) per call: every call starts with no state, so
    # load → select → read shows the text and that a select never sees another call's load
    # (and the rest would repeat it at ~1-3 s per call).
    load, select, read = anyio.run(_inspector_sequence, node_modules, tmp_path, target, era, 3)
    assert_text([load, select, read])
    assert not load.is_error and not read.is_error
    assert select.is_error and "is not loaded. Call skill_load first" in select.text


# Every method the server offers that the sequence above and ``--verify`` below do not call,
# as the Inspector CLI calls it, and what its result must hold. The Inspector checks each
# result against its own schema for the era (2026-07-28 results must carry ttlMs/cacheScope).
_SKILL_DIR = f"skill://{SKILL}/"
_DOC_URI = f"{_SKILL_DIR}{DOC}"


def _listed(result: dict[str, Any], key: str, field: str = "name") -> list[str]:
    return [item[field] for item in result[key]]


INSPECTOR_CALLS: list[tuple[str, list[str], Callable[[dict[str, Any]], bool]]] = [
    ("tools/list", [], lambda r: {"skill_load", "skill_unload"} <= set(_listed(r, "tools"))),
    ("resources/list", [], lambda r: _DOC_URI in _listed(r, "resources", "uri")),
    ("resources/read", ["--uri", _DOC_URI], lambda r: DOC_TEXT in r["contents"][0]["text"]),
    (
        "resources/directory/read",
        ["--uri", _SKILL_DIR],
        lambda r: _listed(r, "resources") == ["SKILL.md", "references"],
    ),
    (
        "resources/directory/read",
        ["--uri", f"{_SKILL_DIR}references"],
        lambda r: _listed(r, "resources", "uri") == [_DOC_URI],
    ),
    ("prompts/list", [], lambda r: SKILL in _listed(r, "prompts")),
    (
        "prompts/get",
        ["--prompt-name", SKILL],
        lambda r: BODY in r["messages"][0]["content"]["text"],
    ),
    (
        "skills/get",
        ["--uri", f"{_SKILL_DIR}SKILL.md"],
        lambda r: r["skill"]["frontmatter"]["name"] == SKILL,
    ),
]
# Over stdio (a server process per call) only what differs by era: the directory read.
_STDIO_CALLS = [c for c in INSPECTOR_CALLS if c[0] == "resources/directory/read"]
_CACHEABLE = {"skills/get", "resources/directory/read"}  # extension results: ours to stamp
_CACHE_KEYS = {"ttlMs", "cacheScope"}


@pytest.mark.parametrize("era", ["legacy", "modern"], ids=["2025-11-25", "2026-07-28"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_inspector_cli_accepts_every_other_method_in_both_eras(
    node_modules: Path, server: HttpServer, tmp_path: Path, transport: str, era: str
) -> None:
    target = _launch(EXAMPLES) if transport == "stdio" else [server.url]
    failed = []
    for method, args, holds in INSPECTOR_CALLS if transport == "http" else _STDIO_CALLS:
        done = _inspector(
            node_modules, tmp_path, target, "--format", "json", "--protocol-era", era,
            "--method", method, *args,
        )  # fmt: skip
        said = json.loads(done.stdout or "{}")
        result = said.get("result")
        if done.returncode != 0 or result is None or not holds(result):
            failed.append(f"{method} {args}: {done.stdout[:600]}{done.stderr[-600:]}")
        elif era == "modern" and method in _CACHEABLE and not set(result) >= _CACHE_KEYS:
            failed.append(f"{method} {args}: no cache attributes: {done.stdout[:600]}")
    assert not failed, "\n".join(failed)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_inspector_cli_verifies_every_skill(
    node_modules: Path, server: HttpServer, tmp_path: Path, transport: str
) -> None:
    target = _launch(EXAMPLES) if transport == "stdio" else [server.url]
    done = _inspector(node_modules, tmp_path, target, "--method", "skills/list", "--verify")
    assert done.returncode == 0, done.stdout + done.stderr
    reports = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    assert len(reports) == len(list(EXAMPLES.glob("*/SKILL.md")))
    assert all(r["ok"] and r["outcome"] == "verified" for r in reports), done.stdout


# -- pydantic-ai -----------------------------------------------------------------------------


def _pydantic_step(part: Any) -> Step:
    """What pydantic-ai hands the model for a tool result (a ``ToolReturnPart``), as a Step."""
    said = json.loads(part.model_response_str())
    if part.outcome == "retried":  # a tool error: {"error": the structuredContent as JSON}
        said = json.loads(said["error"])
        return Step(said["text"], True, said)
    return Step(said["text"], False, said)


@pytest.mark.parametrize("transport", TRANSPORTS)
def test_pydantic_ai_model_receives_full_text_and_state(server: HttpServer, transport: str) -> None:
    _require("pydantic_ai")
    from fastmcp.client.transports import StdioTransport, StreamableHttpTransport
    from pydantic_ai import Agent
    from pydantic_ai.mcp import MCPToolset
    from pydantic_ai.messages import (
        ModelMessage,
        ModelRequest,
        ModelResponse,
        TextPart,
        ToolCallPart,
        ToolReturnPart,
    )
    from pydantic_ai.models.function import AgentInfo, FunctionModel

    received: list[Step] = []
    handle: list[str] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        parts = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if parts:  # what the model reads: structuredContent as JSON, or the retry prompt
            received.append(_pydantic_step(parts[-1]))
            if "conversation" in (received[-1].structured or {}):
                handle.append(received[-1].structured["conversation"])  # type: ignore[index]
        if len(parts) == len(SEQUENCE):
            return ModelResponse(parts=[TextPart("done")])
        tool, arguments = SEQUENCE[len(parts)]
        assert tool in [t.name for t in info.function_tools]
        if handle:
            arguments = {**arguments, "conversation": handle[-1]}
        return ModelResponse(parts=[ToolCallPart(tool, arguments)])

    if transport == "stdio":
        command = _launch(EXAMPLES)
        client: Any = StdioTransport(command[0], command[1:], env=server_env())
    else:
        client = StreamableHttpTransport(server.url)
    toolset = MCPToolset(client, init_timeout=CLIENT_TIMEOUT_S, read_timeout=CLIENT_TIMEOUT_S)
    agent = Agent(FunctionModel(model), toolsets=[toolset])

    async def run() -> None:
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            async with agent:
                result = await agent.run("Triage this API error.")
        assert result.output == "done"

    anyio.run(run)
    assert_state_spans_calls(received)
    # fastmcp 4 speaks 2026-07-28: over HTTP the model was handed a handle, once.
    assert len(set(handle)) == (1 if transport == "http" else 0)


# -- openai-agents ---------------------------------------------------------------------------


@asynccontextmanager
async def _openai_server(transport: str, url: str, structured: bool) -> AsyncIterator[Any]:
    from agents.mcp import MCPServerStdio, MCPServerStreamableHttp

    server: Any
    if transport == "stdio":
        command = _launch(EXAMPLES)
        server = MCPServerStdio(
            {"command": command[0], "args": command[1:], "env": server_env()},
            use_structured_content=structured,
            client_session_timeout_seconds=CLIENT_TIMEOUT_S,
        )
    else:
        server = MCPServerStreamableHttp(
            {"url": url},
            use_structured_content=structured,
            client_session_timeout_seconds=CLIENT_TIMEOUT_S,
        )
    async with server:
        yield server


@pytest.mark.parametrize("structured", [True, False], ids=["structured", "content"])
@pytest.mark.parametrize("transport", TRANSPORTS)
def test_openai_agents_tool_output_holds_full_text_and_state(
    server: HttpServer, transport: str, structured: bool
) -> None:
    _require("agents")
    from agents import RunContextWrapper
    from agents.mcp import MCPUtil

    def text_of(output: Any) -> str:
        if isinstance(output, str):  # structuredContent, as json.dumps gives it to the model
            return str(json.loads(output)["text"])
        return str(output["text"])

    async def run() -> list[Step]:
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            async with _openai_server(transport, server.url, structured) as mcp:
                tools = {t.name: t for t in await mcp.list_tools()}
                context = RunContextWrapper(context=None)

                async def call(tool: str, arguments: dict[str, Any]) -> Step:
                    output = await MCPUtil.invoke_mcp_tool(
                        mcp, tools[tool], context, json.dumps(arguments)
                    )
                    return Step(text_of(output))

                return await run_sequence(call)

    assert_state_spans_calls(anyio.run(run))

"""Agent frameworks that nobody on the project wrote read the skill tools' results in full.

pydantic-ai and openai-agents (with ``use_structured_content=True``) hand the model a tool's
``structuredContent`` when there is one; the server puts the full text there too, so what the
model reads holds the whole SKILL.md body (and an error's guidance), whichever field a client
prefers. Both libraries are dev dependencies: missing under ``CI=true`` is a failure, not a
skip (as for Redis).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import anyio
import pytest

from mcpserver.helpers import serve_command, server_env
from skillshelf.testing import make_skill

# Long enough that a summary or a status object could never pass for it.
BODY = "# Release checklist\n\n" + "".join(
    f"{i}. Step {i}: check the `{i}` item and write it down.\n" for i in range(1, 80)
)
# A real client connects, lists and calls well within this on a busy machine.
CLIENT_TIMEOUT_S = 60.0


def _require(module: str) -> None:
    try:
        __import__(module)
    except ImportError:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the {module} client tests: pip install -e '.[dev]'")
        pytest.skip(f"{module} is not installed")


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_skill(tmp_path / "skills", "release-checklist", body=BODY)
    return tmp_path / "skills"


def _launch(root: Path) -> tuple[str, list[str], dict[str, str]]:
    command = serve_command("--root", str(root))
    return command[0], command[1:], server_env()


def test_pydantic_ai_model_receives_the_full_skill_body(root: Path) -> None:
    _require("pydantic_ai")
    from fastmcp.client.transports import StdioTransport
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

    received: list[Any] = []

    def model(messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        returns = [
            part
            for message in messages
            if isinstance(message, ModelRequest)
            for part in message.parts
            if isinstance(part, ToolReturnPart)
        ]
        if not returns:
            assert "skill_load" in [t.name for t in info.function_tools]
            return ModelResponse(parts=[ToolCallPart("skill_load", {"skill": "release-checklist"})])
        received.append(returns[-1].model_response_str())
        return ModelResponse(parts=[TextPart("done")])

    command, args, env = _launch(root)
    toolset = MCPToolset(StdioTransport(command, args, env=env))
    agent = Agent(FunctionModel(model), toolsets=[toolset])

    async def run() -> None:
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            async with agent:
                result = await agent.run("Prepare the release.")
        assert result.output == "done"

    anyio.run(run)
    assert len(received) == 1
    assert BODY.strip() in json.loads(received[0])["text"]


@pytest.mark.parametrize("structured", [True, False])
def test_openai_agents_tool_output_holds_the_full_body_and_error_guidance(
    root: Path, structured: bool
) -> None:
    _require("agents")
    from agents import RunContextWrapper
    from agents.mcp import MCPServerStdio, MCPUtil

    command, args, env = _launch(root)

    def text_of(output: Any) -> str:
        if isinstance(output, str):  # structuredContent, as json.dumps gives it to the model
            return str(json.loads(output)["text"])
        return str(output["text"])

    async def run() -> None:
        server = MCPServerStdio(
            {"command": command, "args": args, "env": env},
            use_structured_content=structured,
            client_session_timeout_seconds=CLIENT_TIMEOUT_S,
        )
        with anyio.fail_after(CLIENT_TIMEOUT_S):
            async with server:
                tools = {t.name: t for t in await server.list_tools()}
                context = RunContextWrapper(context=None)

                async def call(name: str, arguments: dict[str, Any]) -> str:
                    tool = tools[name]
                    return text_of(
                        await MCPUtil.invoke_mcp_tool(server, tool, context, json.dumps(arguments))
                    )

                loaded = await call("skill_load", {"skill": "release-checklist"})
                assert BODY.strip() in loaded
                read = await call(
                    "skill_read_file", {"skill": "release-checklist", "path": "SKILL.md"}
                )
                assert BODY.strip() in read
                unknown = await call("skill_load", {"skill": "release-checklst"})
                assert "Did you mean: release-checklist" in unknown

    anyio.run(run)

"""Face 2: ``skillshelf serve --transport http`` (a real process on 127.0.0.1) and the official
MCP SDK client.

The "model" here is the scenario driving the client: each call goes out as ``tools/call``;
what the model would see on each request is the server's instructions, the tools/list names
and the results so far. Like a model that follows the tool descriptions, it passes back the
``conversation`` handle a result gave it. A user message's slash command is the MCP prompt
of that name (``prompts/get``), whose text joins the conversation. Scenario options become
``serve`` flags where ``serve`` has them (an option it lacks is left out, and the scenario
then shows what the server does without it).
"""

from __future__ import annotations

import json
import re
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from typing import Final

import anyio
import click
from mcp import Client
from mcp.shared.exceptions import MCPError

from conformance.faces import Env
from conformance.record import Grading, Record, Request, Result, TurnRecord, status_of
from conformance.scenarios import Call, Scenario
from mcpserver.helpers import HttpServer, start_http_server
from skillshelf.cli import main
from skillshelf.core.slash import parse_commands

_HANDLE: Final = re.compile(r"conversation: (c1\.\S+)")
# Servers by command line: scenarios with the same options share one (each conversation is a
# client session of its own, so they share nothing else); stopped by stop_servers().
_SERVERS: dict[tuple[str, ...], HttpServer] = {}


def server_for(args: list[str]) -> HttpServer:
    key = tuple(args)
    server = _SERVERS.get(key)
    if server is None or server.process.poll() is not None:
        server = _SERVERS[key] = start_http_server(args)
    return server


def stop_servers() -> None:
    while _SERVERS:
        _SERVERS.popitem()[1].stop()


def _serve_options() -> set[str]:
    serve = main.get_command(click.Context(main), "serve")
    assert serve is not None
    return {o for p in serve.params for o in getattr(p, "opts", ())}


def serve_args(scenario: Scenario, env: Env) -> list[str]:
    """The ``serve`` command line for ``scenario``."""
    options = _serve_options()
    args = ["--root", str(env.skills), "--load-mode", scenario.load_mode]
    if scenario.workspace:
        args += ["--exec", "--sandbox", "local"]
    if "--trace" in options:
        args += ["--trace", str(env.trace_path)]
    if scenario.enforce_allowed_tools and "--enforce-allowed-tools" in options:
        args.append("--enforce-allowed-tools")
    if scenario.catalog_budget is not None:
        args += ["--catalog-budget", str(scenario.catalog_budget)]
    return args


@dataclass
class _Conversation:
    """One MCP client session and what its model has read so far."""

    client: Client
    seen: list[str] = field(default_factory=list)
    handle: str | None = None

    def request(self, instructions: str, tools: tuple[str, ...]) -> Request:
        return Request(instructions, tools, json.dumps(self.seen, ensure_ascii=False))

    async def call(self, step: Call) -> Result:
        arguments = step.parsed()
        assert arguments is not None, "MCP carries arguments as a JSON object"
        if self.handle is not None:
            arguments = {**arguments, "conversation": self.handle}
        try:
            result = await self.client.call_tool(step.tool, arguments)
        except MCPError as exc:  # a protocol error: what a client host would show its model
            answer = Result(step.tool, exc.error.message, "error")
        else:
            text = "".join(getattr(c, "text", "") for c in result.content)
            status = (result.structured_content or {}).get("status")
            if status is None:
                status = "error" if result.is_error else "ok"
            match = _HANDLE.search(text)
            if match:
                self.handle = match.group(1)
            answer = Result(step.tool, text, status_of(status))
        self.seen.append(answer.text)
        return answer

    async def user(self, message: str, skills: list[str]) -> None:
        self.seen.append(message)
        for command in parse_commands(message, skills):
            prompt = await self.client.get_prompt(command.skill, {"arguments": command.arguments})
            self.seen += [getattr(m.content, "text", "") for m in prompt.messages]


class MCPFace:
    name: Final = "serve"
    grading: Final[Grading] = "full"

    def run(self, scenario: Scenario, env: Env) -> Record:
        server = server_for(serve_args(scenario, env))
        record = anyio.run(self._drive, scenario, server.url)
        record.trace = env.read_trace()
        return record

    async def _drive(self, scenario: Scenario, url: str) -> Record:
        record = Record(self.name, self.grading)
        async with AsyncExitStack() as stack:
            conversations: dict[str, _Conversation] = {}
            for turn in scenario.turns:
                conversation = conversations.get(turn.conversation)
                if conversation is None:
                    client = await stack.enter_async_context(Client(url))
                    conversation = conversations[turn.conversation] = _Conversation(client)
                client = conversation.client
                instructions = client.instructions or ""
                prompts = [p.name for p in (await client.list_prompts()).prompts]
                await conversation.user(turn.message, prompts)
                done = TurnRecord(turn.conversation)
                for step in turn.steps:
                    tools = tuple(t.name for t in (await client.list_tools()).tools)
                    done.requests.append(conversation.request(instructions, tools))
                    if isinstance(step, str):
                        done.answer = step
                        conversation.seen.append(step)
                        break
                    done.results.append(await conversation.call(step))
                record.turns.append(done)
        return record

"""The five faces of the harness, each driven by its own offline model from one script.

A script is a list of steps, one per model request: a tool call ``(name, raw JSON text)`` or a
final answer (a string). Each face turns it into its framework's own test model, runs one user
message in a conversation, and returns a :class:`Transcript`: the tool results in order, the
statuses where the face tells them, what the model saw on each request, and the final answer.
Skill state lives in the given store, so a second run in the same conversation resumes it.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import anyio

from skillshelf.harness import SkillSettings, Trace
from skillshelf.repository import Repository

Step = tuple[str, str] | str


@dataclass
class Transcript:
    """What one run of a script left: results, statuses (ok/error), what the model saw."""

    results: list[str] = field(default_factory=list)
    errors: list[bool] = field(default_factory=list)
    seen: list[str] = field(default_factory=list)
    answer: str = ""
    trace: list[dict[str, Any]] = field(default_factory=list)


def _traced(settings: SkillSettings) -> tuple[SkillSettings, io.StringIO]:
    """``settings`` writing their trace to a buffer the face reads back."""
    stream = io.StringIO()
    return settings.replace(trace=Trace(stream)), stream


def _records(stream: io.StringIO) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stream.getvalue().splitlines()]


class Face(Protocol):
    name: str

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript: ...


def _is_call(step: Step) -> bool:
    return isinstance(step, tuple)


# -- the agent loop ----------------------------------------------------------------------------


class AgentFace:
    name = "agent"

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript:
        from skillshelf.agent.loop import Agent
        from skillshelf.testing import ScriptedModel, reply

        replies = [reply(tools=[s]) if isinstance(s, tuple) else s for s in script]
        model = ScriptedModel(replies)
        settings, stream = _traced(settings)
        result = Agent(model, repo, settings=settings).run_sync(message, session_id=conversation)
        return Transcript(
            trace=_records(stream),
            results=[r.content for r in result.tool_calls if r.source == "model"],
            errors=[r.status != "ok" for r in result.tool_calls if r.source == "model"],
            seen=[json.dumps(r.messages, ensure_ascii=False) for r in model.requests],
            answer=result.output,
        )


# -- serve, through a real MCP client ----------------------------------------------------------


class ServeFace:
    """``serve``'s server (the same object ``skillshelf serve`` runs) reached by the official
    MCP SDK client; the script plays the model: each call goes through ``tools/call``."""

    name = "serve"

    def __init__(self) -> None:
        self._clients: dict[str, Any] = {}

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript:
        from mcp import Client

        from skillshelf.mcpserver.server import SkillServer
        from skillshelf.mcpserver.shelf import Viewer

        server = SkillServer(
            repo,
            store=settings.store,
            load_mode=settings.load_mode,
            enable_exec=settings.workspace is not None,
            workspaces=settings.workspace,
            executor=settings.executor,
        )
        out = Transcript()

        async def go() -> None:
            # One MCP session is one conversation.
            async with Client(server.server) as client:
                seen = server.instructions(Viewer())
                for step in script:
                    out.seen.append(seen)
                    if not isinstance(step, tuple):
                        out.answer = step
                        return
                    name, raw = step
                    result = await client.call_tool(name, json.loads(raw))
                    text = "".join(getattr(c, "text", "") for c in result.content)
                    out.results.append(text)
                    out.errors.append(bool(result.is_error))
                    seen += "\n" + text

        anyio.run(go)
        return out


# -- pydantic-ai ---------------------------------------------------------------------------------


class PydanticAiFace:
    name = "pydantic-ai"

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript:
        from pydantic_ai import Agent
        from pydantic_ai.messages import (
            ModelResponse,
            RetryPromptPart,
            TextPart,
            ToolCallPart,
            ToolReturnPart,
        )
        from pydantic_ai.models.function import AgentInfo, FunctionModel

        from skillshelf.integrations.pydantic_ai import SkillsToolset

        seen: list[str] = []
        steps = list(script)

        def model(messages: list[Any], info: AgentInfo) -> ModelResponse:
            seen.append(repr(messages) + repr([t.name for t in info.function_tools]))
            step = steps[len(seen) - 1]
            if isinstance(step, tuple):
                part = ToolCallPart(step[0], step[1], tool_call_id=f"c{len(seen)}")
                return ModelResponse(parts=[part])
            return ModelResponse(parts=[TextPart(step)])

        settings, stream = _traced(settings)
        toolset = SkillsToolset(repo, settings=settings)
        agent = Agent(FunctionModel(model), toolsets=[toolset])
        result = anyio.run(functools.partial(agent.run, message, conversation_id=conversation))
        out = Transcript(seen=seen, answer=result.output, trace=_records(stream))
        for item in result.all_messages():
            for part in getattr(item, "parts", ()):
                if isinstance(part, ToolReturnPart):
                    out.results.append(str(part.content))
                    out.errors.append(getattr(part, "outcome", "success") != "success")
                elif isinstance(part, RetryPromptPart):
                    out.results.append(str(part.content))
                    out.errors.append(True)
        return out


# -- the OpenAI Agents SDK -----------------------------------------------------------------------


class OpenAIAgentsFace:
    name = "openai-agents"

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript:
        from agents import Agent, Runner, set_tracing_disabled
        from agents.items import ModelResponse
        from agents.models.interface import Model
        from agents.usage import Usage
        from openai.types.responses import (
            ResponseFunctionToolCall,
            ResponseOutputMessage,
            ResponseOutputText,
        )

        from skillshelf.integrations.openai_agents import skill_tools

        set_tracing_disabled(True)
        seen: list[str] = []
        steps = list(script)
        prefix = f"{conversation}-{id(steps)}-"

        class Scripted(Model):
            async def get_response(
                self, system_instructions: str | None, input: Any, *args: Any, **kwargs: Any
            ) -> ModelResponse:
                items = input if isinstance(input, list) else [input]
                seen.append(f"{system_instructions}\n{items!r}")
                step = steps[len(seen) - 1]
                if isinstance(step, tuple):
                    output: Any = ResponseFunctionToolCall(
                        arguments=step[1],
                        call_id=f"{prefix}{len(seen)}",
                        name=step[0],
                        type="function_call",
                        id=f"fc-{prefix}{len(seen)}",
                        status="completed",
                    )
                else:
                    text = ResponseOutputText(text=step, type="output_text", annotations=[])
                    output = ResponseOutputMessage(
                        id=f"m-{len(seen)}",
                        content=[text],
                        role="assistant",
                        status="completed",
                        type="message",
                    )
                return ModelResponse(output=[output], usage=Usage(), response_id=None)

            def stream_response(self, *args: Any, **kwargs: Any) -> Any:  # pragma: no cover
                raise NotImplementedError

        settings, stream = _traced(settings)
        kit = skill_tools(repo, settings=settings)
        agent = Agent(
            name="assistant",
            instructions=kit.instructions,
            tools=kit.tools,
            hooks=kit.hooks,
            model=Scripted(),
        )

        async def go() -> Any:
            return await Runner.run(agent, message, context=kit.context(conversation))

        result = anyio.run(go)
        out = Transcript(seen=seen, answer=str(result.final_output), trace=_records(stream))
        for item in result.to_input_list():
            if isinstance(item, dict) and item.get("type") == "function_call_output":
                out.results.append(str(item.get("output")))
        records = [json.loads(line) for line in stream.getvalue().splitlines()]
        out.errors = [
            r["status"] not in ("ok", "nonzero_exit") for r in records if r["type"] == "tool"
        ]
        return out


# -- LangChain -----------------------------------------------------------------------------------


class LangChainFace:
    name = "langchain"

    def run(
        self,
        repo: Repository,
        settings: SkillSettings,
        script: Sequence[Step],
        conversation: str,
        message: str = "help me",
    ) -> Transcript:
        from langchain.agents import create_agent
        from langchain_core.language_models import BaseChatModel
        from langchain_core.messages import AIMessage, ToolMessage
        from langchain_core.messages.tool import invalid_tool_call
        from langchain_core.outputs import ChatGeneration, ChatResult
        from langchain_core.utils.function_calling import convert_to_openai_tool

        from skillshelf.integrations.langchain import SkillsMiddleware

        seen: list[str] = []
        replies: list[AIMessage] = []
        for index, step in enumerate(script):
            if not isinstance(step, tuple):
                replies.append(AIMessage(content=step))
                continue
            call_id = f"c{index}"
            try:
                args = json.loads(step[1])
            except ValueError:  # what a provider's parser makes of arguments that do not parse
                bad = invalid_tool_call(name=step[0], args=step[1], id=call_id, error="bad JSON")
                replies.append(AIMessage(content="", invalid_tool_calls=[bad]))
                continue
            calls = [{"name": step[0], "args": args, "id": call_id}]
            replies.append(AIMessage(content="", tool_calls=calls))

        class Scripted(BaseChatModel):
            @property
            def _llm_type(self) -> str:
                return "scripted"

            def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
                return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

            def _generate(self, messages: list[Any], *args: Any, **kwargs: Any) -> ChatResult:
                names = [t["function"]["name"] for t in kwargs.get("tools", [])]
                seen.append(repr([m.content for m in messages]) + repr(names))
                return ChatResult(generations=[ChatGeneration(message=replies[len(seen) - 1])])

        settings, stream = _traced(settings)
        graph = create_agent(Scripted(), middleware=[SkillsMiddleware(repo, settings=settings)])
        state = graph.invoke(
            {"messages": [{"role": "user", "content": message}]},
            {"configurable": {"thread_id": conversation}},
        )
        out = Transcript(seen=seen, trace=_records(stream))
        for item in state["messages"]:
            if isinstance(item, ToolMessage):
                out.results.append(str(item.content))
                out.errors.append(item.status == "error")
        final = state["messages"][-1]
        out.answer = str(final.content) if isinstance(final, AIMessage) else ""
        return out


FACES: tuple[Face, ...] = (
    AgentFace(),
    ServeFace(),
    PydanticAiFace(),
    OpenAIAgentsFace(),
    LangChainFace(),
)

"""Face 4: the OpenAI Agents SDK (``skill_tools``) driven by a scripted ``Model``."""

from __future__ import annotations

import itertools
from typing import Any, Final, NoReturn

import anyio
from agents import Agent, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.items import ModelResponse, ToolCallOutputItem
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from conformance.faces import Env
from conformance.record import Grading, Record, Request, Result, TurnRecord, dumped
from conformance.scenarios import Call, Scenario
from skillshelf.integrations.openai_agents import skill_tools

set_tracing_disabled(True)  # the SDK's own tracing would post to OpenAI
_IDS = itertools.count()


class _ScriptedModel(Model):
    def __init__(self, steps: list[Call | str]) -> None:
        self.steps = steps
        self.requests: list[Request] = []
        self.calls: dict[str, str] = {}  # call id → tool name

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[Any],
        model_settings: Any,
        tools: list[Any],
        output_schema: Any,
        handoffs: list[Any],
        tracing: Any,
        *,
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: Any,
    ) -> ModelResponse:
        items = [{"role": "user", "content": input}] if isinstance(input, str) else list(input)
        names = tuple(t.name for t in tools)
        self.requests.append(Request(system_instructions or "", names, dumped(items)))
        step = self.steps[len(self.requests) - 1]
        n = next(_IDS)
        if isinstance(step, str):
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            message = ResponseOutputMessage(
                id=f"m{n}", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        call = ResponseFunctionToolCall(
            type="function_call", call_id=f"call-{n}", name=step.tool, arguments=step.arguments
        )
        self.calls[call.call_id] = step.tool
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError


class OpenAIAgentsFace:
    name: Final = "openai-agents"
    grading: Final[Grading] = "none"  # a function_call_output is text, with no status

    def run(self, scenario: Scenario, env: Env) -> Record:
        model = _ScriptedModel([s for t in scenario.turns for s in t.steps])
        record = Record(self.name, self.grading)
        with env.trace() as trace:
            kit = skill_tools(env.repo(), settings=env.settings(scenario, trace))
            tools: list[Any] = list(kit.tools)
            for user_tool in scenario.user_tools:
                tool = function_tool(user_tool.function)
                if user_tool.activated:
                    tools.append(kit.activate(tool))
                elif scenario.enforce_allowed_tools:
                    tools.append(kit.restrict(tool))
                else:
                    tools.append(tool)
            agent = Agent(
                name="assistant",
                instructions=kit.instructions,
                tools=tools,
                hooks=kit.hooks,
                model=model,
            )
            # A kit that offers its own RunConfig (for the SDK's tool_not_found hook) gets it.
            run_config = getattr(kit, "run_config", None)
            sessions: dict[str, SQLiteSession] = {}
            for turn in scenario.turns:
                session = sessions.setdefault(turn.conversation, SQLiteSession(turn.conversation))
                asked = len(model.requests)
                turn.prepare(kit.session(turn.conversation))

                async def go(message: str = turn.message, session: SQLiteSession = session) -> Any:
                    return await Runner.run(
                        agent,
                        message,
                        session=session,
                        context=kit.context(session),
                        max_turns=20,
                        run_config=run_config,
                    )

                result = anyio.run(go)
                results = [
                    Result(model.calls.get(str(_call_id(i)), "?"), str(i.output), None)
                    for i in result.new_items
                    if isinstance(i, ToolCallOutputItem)
                ]
                record.turns.append(
                    TurnRecord(
                        turn.conversation,
                        model.requests[asked:],
                        results,
                        str(result.final_output),
                    )
                )
            for session in sessions.values():
                session.close()
        record.trace = env.read_trace()
        return record


def _call_id(item: ToolCallOutputItem) -> Any:
    raw = item.raw_item
    return raw.get("call_id") if isinstance(raw, dict) else getattr(raw, "call_id", None)

"""Face 3: pydantic-ai (``SkillsToolset``) driven by pydantic-ai's own ``FunctionModel``."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Final

import anyio
from pydantic_ai import Agent, FunctionToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    RetryPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel
from pydantic_ai.toolsets import AbstractToolset

from conformance.faces import Env
from conformance.record import Grading, Record, Request, Result, TurnRecord, dumped, status_of
from conformance.scenarios import Call, Scenario
from skillshelf.integrations.pydantic_ai import SkillsToolset


@dataclass(frozen=True)
class _Deps:
    conversation_id: str  # the host's: SkillsToolset keys the conversation by it


class _Script:
    def __init__(self, steps: list[Call | str]) -> None:
        self.steps = steps
        self.requests: list[Request] = []

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        n = len(self.requests)
        shown = ModelMessagesTypeAdapter.dump_python(messages, mode="json")
        tools = tuple(t.name for t in info.function_tools)
        self.requests.append(Request(info.instructions or "", tools, dumped(shown)))
        step = self.steps[n]
        if isinstance(step, str):
            return ModelResponse(parts=[TextPart(step)])
        part = ToolCallPart(step.tool, step.arguments, tool_call_id=f"call-{n}")
        return ModelResponse(parts=[part])


def _results(messages: list[ModelMessage]) -> list[Result]:
    out = []
    for message in messages:
        if not isinstance(message, ModelRequest):
            continue
        for part in message.parts:
            if isinstance(part, ToolReturnPart):
                status = "ok" if part.outcome == "success" else "error"
                out.append(Result(part.tool_name, str(part.content), status_of(status)))
            elif isinstance(part, RetryPromptPart) and part.tool_name:
                out.append(Result(part.tool_name, part.model_response(), "error"))
    return out


class PydanticAIFace:
    name: Final = "pydantic-ai"
    grading: Final[Grading] = "ok_or_error"

    def run(self, scenario: Scenario, env: Env) -> Record:
        script = _Script([s for t in scenario.turns for s in t.steps])
        record = Record(self.name, self.grading)
        with env.trace() as trace:
            skills = SkillsToolset(env.repo(), settings=env.settings(scenario, trace))
            toolsets: list[AbstractToolset[Any]] = [skills]
            plain = [t.function for t in scenario.user_tools if not t.activated]
            gated = [t.function for t in scenario.user_tools if t.activated]
            if plain:
                own = FunctionToolset(plain)
                restricted = scenario.enforce_allowed_tools
                toolsets.append(skills.restricted(own) if restricted else own)
            if gated:
                toolsets.append(skills.activated(FunctionToolset(gated)))
            agent = Agent(FunctionModel(script), deps_type=_Deps, toolsets=toolsets)
            histories: dict[str, list[ModelMessage]] = {}
            for turn in scenario.turns:
                asked = len(script.requests)
                turn.prepare(skills.session(turn.conversation))
                run = functools.partial(
                    agent.run,
                    turn.message,
                    deps=_Deps(turn.conversation),
                    message_history=histories.get(turn.conversation),
                )
                result = anyio.run(run)
                histories[turn.conversation] = result.all_messages()
                record.turns.append(
                    TurnRecord(
                        turn.conversation,
                        script.requests[asked:],
                        _results(result.new_messages()),
                        result.output,
                    )
                )
        record.trace = env.read_trace()
        return record

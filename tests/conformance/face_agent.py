"""Face 1: skillshelf's own agent loop (``Agent`` / ``Conversation``) with the scripted model."""

from __future__ import annotations

from typing import Final

from conformance.faces import Env
from conformance.record import Grading, Record, Request, Result, TurnRecord, dumped, status_of
from conformance.scenarios import Call, Scenario
from skillshelf.agent.conversation import Conversation
from skillshelf.agent.loop import Agent
from skillshelf.models import ModelRequest, ModelResponse
from skillshelf.testing import ScriptedModel, reply
from skillshelf.tools import Activation, Tool


def _reply(step: Call | str) -> ModelResponse:
    if isinstance(step, str):
        return reply(step)
    return reply(tools=[(step.tool, step.arguments)])


def _request(request: ModelRequest) -> Request:
    head, *rest = request.messages
    instructions = str(head.get("content") or "") if head.get("role") == "system" else ""
    messages = rest if instructions else list(request.messages)
    return Request(instructions, tuple(d.name for d in request.tools), dumped(messages))


class AgentFace:
    name: Final = "agent"
    grading: Final[Grading] = "full"

    def run(self, scenario: Scenario, env: Env) -> Record:
        steps = [s for t in scenario.turns for s in t.steps]
        model = ScriptedModel([_reply(s) for s in steps])
        record = Record(self.name, self.grading)
        with env.trace() as trace:
            settings = env.settings(scenario, trace)
            plain = [Tool.from_function(t.function) for t in scenario.user_tools if not t.activated]
            gated = [Tool.from_function(t.function) for t in scenario.user_tools if t.activated]
            settings = settings.replace(
                tools=tuple(plain), activations=(Activation(gated),) if gated else ()
            )
            agent = Agent(model, env.repo(), settings=settings, max_steps=20)
            conversations: dict[str, Conversation] = {}
            for turn in scenario.turns:
                conversation = conversations.get(turn.conversation)
                if conversation is None:
                    conversation = agent.conversation(turn.conversation)
                    conversations[turn.conversation] = conversation
                asked = len(model.requests)
                turn.prepare(conversation.session)
                result = conversation.send_sync(turn.message)
                record.turns.append(
                    TurnRecord(
                        turn.conversation,
                        [_request(r) for r in model.requests[asked:]],
                        [
                            Result(r.tool, r.content, status_of(r.status))
                            for r in result.tool_calls
                            if r.source == "model"
                        ],
                        result.output,
                    )
                )
        record.trace = env.read_trace()
        return record

"""Face 5: LangChain ``create_agent`` with ``SkillsMiddleware``, driven by a fake chat model.

Arguments that are not a JSON object become ``AIMessage.invalid_tool_calls``, as LangChain's
own provider parsers make them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from langchain.agents import create_agent
from langchain_core.callbacks import CallbackManagerForLLMRun
from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, SystemMessage, ToolMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver
from pydantic import Field

from conformance.faces import Env
from conformance.record import Grading, Record, Request, Result, TurnRecord, dumped
from conformance.scenarios import Call, Scenario
from skillshelf.integrations.langchain import SkillsMiddleware
from skillshelf.tools import Activation, Tool


class _ScriptedChat(BaseChatModel):
    steps: list[Call | str]
    requests: list[Request] = Field(default_factory=list)

    @property
    def _llm_type(self) -> str:
        return "scripted"

    def bind_tools(self, tools: Sequence[Any], **kwargs: Any) -> Any:
        return self.bind(tools=[convert_to_openai_tool(t) for t in tools], **kwargs)

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        head = messages[0] if messages and isinstance(messages[0], SystemMessage) else None
        rest = messages[1:] if head is not None else messages
        names = tuple(t["function"]["name"] for t in kwargs.get("tools", []))
        shown = [m.model_dump(mode="json") for m in rest]
        self.requests.append(Request(head.text if head else "", names, dumped(shown)))
        n = len(self.requests)
        return ChatResult(generations=[ChatGeneration(message=_message(self.steps[n - 1], n))])


def _message(step: Call | str, n: int) -> AIMessage:
    if isinstance(step, str):
        return AIMessage(content=step)
    args = step.parsed()
    if args is None:
        bad = invalid_tool_call(name=step.tool, args=step.arguments, id=f"call-{n}")
        return AIMessage(content="", invalid_tool_calls=[bad])
    return AIMessage(content="", tool_calls=[{"name": step.tool, "args": args, "id": f"call-{n}"}])


class LangChainFace:
    name: Final = "langchain"
    grading: Final[Grading] = "ok_or_error"

    def run(self, scenario: Scenario, env: Env) -> Record:
        model = _ScriptedChat(steps=[s for t in scenario.turns for s in t.steps])
        record = Record(self.name, self.grading)
        with env.trace() as trace:
            gated = [Tool.from_function(t.function) for t in scenario.user_tools if t.activated]
            settings = env.settings(scenario, trace)
            settings = settings.replace(activations=(Activation(gated),) if gated else ())
            middleware = SkillsMiddleware(env.repo(), settings=settings)
            plain = [
                StructuredTool.from_function(t.function)
                for t in scenario.user_tools
                if not t.activated
            ]
            graph = create_agent(
                model, tools=plain, middleware=[middleware], checkpointer=InMemorySaver()
            )
            seen: dict[str, int] = {}
            for turn in scenario.turns:
                asked = len(model.requests)
                turn.prepare(middleware.session(turn.conversation))
                state = graph.invoke(
                    {"messages": [{"role": "user", "content": turn.message}]},
                    {"configurable": {"thread_id": turn.conversation}},
                )
                messages = state["messages"]
                new = messages[seen.get(turn.conversation, 0) :]
                seen[turn.conversation] = len(messages)
                results = [
                    Result(str(m.name), m.text, "ok" if m.status == "success" else "error")
                    for m in new
                    if isinstance(m, ToolMessage)
                ]
                record.turns.append(
                    TurnRecord(
                        turn.conversation, model.requests[asked:], results, messages[-1].text
                    )
                )
        record.trace = env.read_trace()
        return record

"""A client never chooses the conversation whose skill state it gets: LangChain's input state
and pydantic-ai's message history are the client's to write, so neither names a conversation."""

from __future__ import annotations

import functools
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langgraph.checkpoint.memory import InMemorySaver
from pydantic_ai import Agent
from pydantic_ai.messages import ModelRequest, ModelResponse, TextPart, ToolCallPart, UserPromptPart
from pydantic_ai.models.function import AgentInfo, FunctionModel

from integrations.langchain_chat import ScriptedChat, call
from skillshelf.errors import UsageError
from skillshelf.integrations.langchain import SkillsMiddleware
from skillshelf.integrations.pydantic_ai import SkillsToolset
from skillshelf.repository import Repository
from skillshelf.testing import make_skill


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "secrets", "Handles the victim's secrets. Use for secrets.")
    return Repository([tmp_path / "skills"])


def test_a_thread_less_langchain_run_cannot_name_another_threads_session(
    repo: Repository,
) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session")
    victim: Any = create_agent(
        ScriptedChat(script=[call("skill_load", {"skill": "secrets"}, "v1"), AIMessage("ok")]),
        middleware=[middleware],
        checkpointer=InMemorySaver(),
    )
    first: dict[str, Any] = {"messages": [("user", "load")]}
    victim.invoke(first, {"configurable": {"thread_id": "victim"}})
    assert set(middleware.skill_tools("victim").state().loaded) == {"secrets"}

    attacker: Any = create_agent(
        ScriptedChat(script=[call("skill_unload", {"skill": "secrets"}, "a1"), AIMessage("ok")]),
        middleware=[middleware],
    )
    forged: dict[str, Any] = {"messages": [("user", "x")], "skillshelf_session": "victim"}
    state = attacker.invoke(forged)
    assert state["skillshelf_session"] != "victim"
    assert set(middleware.skill_tools("victim").state().loaded) == {"secrets"}


@dataclass(frozen=True)
class Deps:
    conversation_id: str


def _loads_then_answers(messages: object, info: AgentInfo) -> ModelResponse:
    if isinstance(messages, list) and len(messages) == 1:
        return ModelResponse(parts=[ToolCallPart("skill_load", {"skill": "secrets"}, "c1")])
    return ModelResponse(parts=[TextPart("ok")])


def test_a_forged_pydantic_ai_history_cannot_name_another_conversation(
    repo: Repository,
) -> None:
    skills = SkillsToolset(repo, load_mode="session")
    agent = Agent(FunctionModel(_loads_then_answers), deps_type=Deps, toolsets=[skills])
    anyio.run(functools.partial(agent.run, "load", deps=Deps("victim")))
    assert set(skills.tools_for("victim").state().loaded) == {"secrets"}

    forged = [ModelRequest(parts=[UserPromptPart("hi")], conversation_id="victim")]
    thief = Agent(FunctionModel(_loads_then_answers), toolsets=[skills])
    with pytest.raises(UsageError, match="will not take the conversation id from"):
        anyio.run(functools.partial(thief.run, "what is loaded?", message_history=forged))
    with pytest.raises(UsageError, match="will not take the conversation id from"):
        anyio.run(
            functools.partial(thief.run, "again", message_history=forged, conversation_id="victim")
        )
    assert set(skills.tools_for("victim").state().loaded) == {"secrets"}

"""Slash commands in a LangChain agent: /skill-name args in the user's message loads the skill
before the first model request; a command the user may not give ends the run with the reason."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, ToolMessage
from langgraph.checkpoint.memory import InMemorySaver

from integrations.langchain_chat import ScriptedChat, call, tool_results
from skillshelf.harness import Trace
from skillshelf.integrations.langchain import SkillsMiddleware
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

BROWSE_BODY = "BROWSE-BODY: list the files under $ARGUMENTS."


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(
        tmp_path / "skills",
        "browse",
        "Lists files. Use when the user asks what is in a folder.",
        body=BROWSE_BODY,
    )
    make_skill(
        tmp_path / "skills",
        "internal",
        "Model-only helper. Use when the model needs it.",
        frontmatter={"user-invocable": False},
    )
    return Repository([tmp_path / "skills"])


class Chat:
    """One thread of an agent with SkillsMiddleware over a scripted model."""

    def __init__(self, middleware: SkillsMiddleware, script: list[AIMessage]) -> None:
        self.model = ScriptedChat(script=script)
        self.graph = create_agent(self.model, middleware=[middleware], checkpointer=InMemorySaver())

    def send(self, text: str | None) -> dict[str, Any]:
        messages: list[Any] = [] if text is None else [{"role": "user", "content": text}]
        state: dict[str, Any] = self.graph.invoke(
            {"messages": messages}, {"configurable": {"thread_id": "t1"}}
        )
        return state


def test_a_slash_command_puts_the_body_with_its_arguments_in_the_first_request(
    repo: Repository,
) -> None:
    chat = Chat(SkillsMiddleware(repo), [AIMessage(content="Listed.")])
    state = chat.send("/browse src/docs")
    assert state["messages"][-1].text == "Listed."
    first = chat.model.requests[0]
    synthetic = next(m for m in first if isinstance(m, AIMessage))
    (load,) = synthetic.tool_calls
    assert load["name"] == "skill_load" and load["args"] == {"skill": "browse"}
    result = tool_results(first)[str(load["id"])]
    assert result.status == "success"
    assert "BROWSE-BODY: list the files under src/docs." in result.text


def test_stacked_commands_each_load_their_skill(repo: Repository, tmp_path: Path) -> None:
    make_skill(tmp_path / "skills", "notes", "Keeps notes. Use for notes.", body="NOTES-BODY")
    repo.refresh()
    chat = Chat(SkillsMiddleware(repo), [AIMessage(content="Both.")])
    chat.send("/browse lib /notes")
    results = [m.text for m in chat.model.requests[0] if isinstance(m, ToolMessage)]
    assert len(results) == 2
    assert "list the files under lib." in results[0] and "NOTES-BODY" in results[1]


def test_a_slash_command_works_in_an_async_run(repo: Repository) -> None:
    chat = Chat(SkillsMiddleware(repo), [AIMessage(content="Listed.")])

    async def main() -> None:
        await chat.graph.ainvoke(
            {"messages": [{"role": "user", "content": "/browse src"}]},
            {"configurable": {"thread_id": "a1"}},
        )

    anyio.run(main)
    (result,) = tool_results(chat.model.requests[0]).values()
    assert "list the files under src." in result.text


def test_a_model_only_skill_as_a_command_ends_the_run_with_the_reason(
    repo: Repository,
) -> None:
    chat = Chat(SkillsMiddleware(repo), [])
    state = chat.send("/internal now")
    answer = state["messages"][-1]
    assert isinstance(answer, AIMessage)
    assert "/internal is not a user command" in answer.text
    assert answer.response_metadata["skillshelf_refused"] == "SlashCommandError"
    assert chat.model.requests == []  # the model never saw the command


def test_an_unknown_command_is_answered_with_the_closest_name(repo: Repository) -> None:
    chat = Chat(SkillsMiddleware(repo), [])
    answer = chat.send("/brwse src")["messages"][-1]
    assert "browse" in answer.text and chat.model.requests == []


def test_after_a_refused_command_the_next_message_reaches_the_model(repo: Repository) -> None:
    chat = Chat(SkillsMiddleware(repo), [AIMessage(content="Hello.")])
    chat.send("/internal")
    assert chat.send("hi")["messages"][-1].text == "Hello."
    assert len(chat.model.requests) == 1


def test_a_later_turn_does_not_invoke_an_earlier_messages_commands(repo: Repository) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session")
    chat = Chat(
        middleware,
        [
            AIMessage(content="Listed."),
            call("skill_load", {"skill": "browse"}, "c1"),
            AIMessage(content="Again."),
            AIMessage(content="Still here."),
        ],
    )
    chat.send("/browse src")
    chat.send("and again")
    # The model's own load of a skill the command loaded is a stub: nothing reloaded it.
    assert "BROWSE-BODY" not in tool_results(chat.model.requests[2])["c1"].text
    state = chat.send(None)  # an invocation without a new message
    assert state["messages"][-1].text == "Still here."
    slash = [m for m in state["messages"] if isinstance(m, ToolMessage)]
    assert [m.tool_call_id for m in slash if m.tool_call_id.startswith("slash_")] == ["slash_1_0"]


def test_the_trace_records_the_commands_and_their_loads(repo: Repository, tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    chat = Chat(SkillsMiddleware(repo, trace=trace), [AIMessage(content="Listed.")])
    chat.send("/browse src")
    chat.send("/internal")
    trace.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["turn", "tool", "model", "turn", "error"]
    assert records[0]["commands"] == ["browse"]
    assert records[1]["tool"] == "skill_load" and records[1]["status"] == "ok"
    assert records[1]["arguments"] == {"skill": "browse", "arguments": "src"}
    assert records[4]["error"] == "SlashCommandError"

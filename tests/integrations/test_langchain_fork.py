"""context: fork in a LangChain agent: loading the skill runs its task in a sub-agent on the
run's model; only the sub-agent's answer comes back, and its skill state is its own."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage
from langchain_core.runnables import RunnableConfig
from langgraph.checkpoint.memory import InMemorySaver

from integrations.langchain_chat import ScriptedChat, call, tool_results
from skillshelf.harness import Trace
from skillshelf.integrations.langchain import SkillsMiddleware
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import make_skill

TASK_BODY = "SQUARE-TASK: square the number $ARGUMENTS."
LOAD_FORK = call("skill_load", {"skill": "square", "args": "7"}, "c1")


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(
        tmp_path / "skills",
        "square",
        "Squares numbers. Use when the user wants a square.",
        body=TASK_BODY,
        frontmatter={"context": "fork"},
    )
    make_skill(tmp_path / "skills", "notes", "Keeps notes. Use for notes.", body="NOTES-BODY")
    return Repository([tmp_path / "skills"])


def invoke(middleware: SkillsMiddleware, script: list[AIMessage]) -> ScriptedChat:
    model = ScriptedChat(script=script)
    graph = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())
    graph.invoke(
        {"messages": [{"role": "user", "content": "square 7"}]},
        {"configurable": {"thread_id": "t1"}},
    )
    return model


def test_a_fork_skill_runs_in_a_sub_agent_and_only_its_answer_comes_back(
    repo: Repository,
) -> None:
    script = [LOAD_FORK, AIMessage(content="FORK-ANSWER 49"), AIMessage(content="It is 49.")]
    model = invoke(SkillsMiddleware(repo), script)
    sub = model.requests[1]  # the sub-agent's request: its task, none of the parent's messages
    assert isinstance(sub[0], SystemMessage) and "square" in sub[0].text
    (task,) = sub[1:]
    assert isinstance(task, HumanMessage) and task.text == "SQUARE-TASK: square the number 7."
    result = tool_results(model.requests[2])["c1"]
    assert result.status == "success"
    assert "sub-agent" in result.text and "FORK-ANSWER 49" in result.text
    assert "SQUARE-TASK" not in result.text


def test_a_fork_runs_in_an_async_run(repo: Repository) -> None:
    script = [LOAD_FORK, AIMessage(content="FORK-ANSWER 49"), AIMessage(content="It is 49.")]
    model = ScriptedChat(script=script)
    graph = create_agent(model, middleware=[SkillsMiddleware(repo)], checkpointer=InMemorySaver())

    async def main() -> None:
        await graph.ainvoke(
            {"messages": [{"role": "user", "content": "square 7"}]},
            {"configurable": {"thread_id": "a1"}},
        )

    anyio.run(main)
    assert "FORK-ANSWER 49" in tool_results(model.requests[2])["c1"].text


def test_the_sub_agents_loads_are_its_own_under_the_same_conversation(
    repo: Repository,
) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session", store=open_store("memory:"))
    script = [
        LOAD_FORK,
        call("skill_load", {"skill": "notes"}, "s1"),  # the sub-agent loads a skill
        AIMessage(content="FORK-ANSWER 49"),
        AIMessage(content="It is 49."),
    ]
    model = ScriptedChat(script=script)
    graph = create_agent(model, middleware=[middleware])  # no thread id: a session key
    state = graph.invoke({"messages": [{"role": "user", "content": "square 7"}]})
    session = state["skillshelf_session"]
    forked = SkillsMiddleware(repo, settings=middleware.settings.forked("square"))
    assert set(forked.skill_tools(session).state().loaded) == {"notes"}
    assert set(middleware.skill_tools(session).state().loaded) == set()
    assert "NOTES-BODY" not in json.dumps([m.text for m in model.requests[3]])


class LoopingForkChat(ScriptedChat):
    """The parent loads the fork skill, then answers; the sub-agent never stops calling."""

    def reply(self, messages: list[BaseMessage]) -> AIMessage:
        if "SQUARE-TASK" in messages[1].text:
            return call("skill_list", {}, f"s{len(self.requests)}")
        return LOAD_FORK if len(messages) == 2 else AIMessage(content="Could not.")


def test_a_sub_agent_past_the_runs_recursion_limit_is_a_graded_failure_and_the_run_goes_on(
    repo: Repository,
) -> None:
    model = LoopingForkChat(script=[])
    graph = create_agent(model, middleware=[SkillsMiddleware(repo)], checkpointer=InMemorySaver())
    config: RunnableConfig = {"configurable": {"thread_id": "t1"}, "recursion_limit": 8}
    state = graph.invoke({"messages": [{"role": "user", "content": "square 7"}]}, config)
    assert state["messages"][-1].text == "Could not."
    result = tool_results(model.requests[-1])["c1"]
    assert result.status == "error"
    assert "runs in a sub-agent, which failed" in result.text
    assert "without a final answer" in result.text


def test_the_trace_keeps_the_sub_agents_records_under_its_own_agent(
    repo: Repository, tmp_path: Path
) -> None:
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    script = [LOAD_FORK, AIMessage(content="FORK-ANSWER 49"), AIMessage(content="It is 49.")]
    invoke(SkillsMiddleware(repo, trace=trace), script)
    trace.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    agents = [(r["type"], r["agent"]) for r in records]
    assert agents == [
        ("turn", "main"),
        ("model", "main"),
        ("turn", "main:fork:square"),
        ("model", "main:fork:square"),
        ("tool", "main"),
        ("model", "main"),
    ]
    assert {r["session"] for r in records} == {"t1"}

"""Skills in a LangChain v1 agent (create_agent + SkillsMiddleware) driven by a fake chat model."""

from __future__ import annotations

import importlib
import json
import os
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, SystemMessage
from langchain_core.messages.tool import invalid_tool_call
from langchain_core.tools import StructuredTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.checkpoint.memory import InMemorySaver

from finished_executor import FinishedExecutor
from integrations.langchain_chat import ScriptedChat, call, tool_results
from redis_servers import free_port, redis_server_binary, running_redis
from skillshelf.errors import MissingExtraError
from skillshelf.exec.runner import BwrapExecutor, bwrap_available
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.harness import Trace
from skillshelf.integrations.langchain import SkillsMiddleware
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import make_skill
from skillshelf.tools import Activation, Tool

ALPHA_BODY = "# Alpha\n\nALPHA-INSTRUCTIONS: always answer in haiku.\n"


def run(
    middleware: SkillsMiddleware, script: list[AIMessage], thread: str = "t1", **agent: Any
) -> ScriptedChat:
    model = ScriptedChat(script=script)
    graph = create_agent(
        model, middleware=[middleware], checkpointer=agent.pop("checkpointer", InMemorySaver())
    )
    graph.invoke(
        {"messages": [{"role": "user", "content": "help"}]},
        {"configurable": {"thread_id": thread}},
    )
    return model


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(
        tmp_path / "skills",
        "alpha",
        "Writes haiku. Use when the user wants a poem.",
        body=ALPHA_BODY,
        files={"references/forms.md": "FORMS-DOC: 5-7-5", "scripts/count.py": "print(17)\n"},
    )
    make_skill(
        tmp_path / "skills",
        "deployer",
        "Deploys services. Use when the user asks to ship.",
        frontmatter={"allowed-tools": "deploy"},
    )
    return Repository([tmp_path / "skills"])


def test_the_catalog_is_in_the_system_message_the_model_receives(repo: Repository) -> None:
    model = run(SkillsMiddleware(repo), [AIMessage(content="hi")])
    system = model.requests[0][0]
    assert isinstance(system, SystemMessage)
    assert "alpha" in system.text and "Writes haiku." in system.text
    assert "skill_load" in system.text


def test_the_system_message_keeps_its_bytes_and_follows_a_refresh(
    repo: Repository, tmp_path: Path
) -> None:
    middleware = SkillsMiddleware(repo)
    first = run(middleware, [call("skill_list", {}, "c1"), AIMessage(content="ok")])
    assert first.requests[0][0].text == first.requests[1][0].text
    make_skill(tmp_path / "skills", "gamma", "Brews tea. Use when thirsty.")
    repo.refresh()
    second = run(middleware, [AIMessage(content="ok")], thread="t2")
    assert "Brews tea." in second.requests[0][0].text
    assert "Brews tea." not in first.requests[0][0].text


def test_the_users_system_prompt_comes_first(repo: Repository) -> None:
    model = ScriptedChat(script=[AIMessage(content="hi")])
    graph = create_agent(model, system_prompt="You are terse.", middleware=[SkillsMiddleware(repo)])
    graph.invoke({"messages": [{"role": "user", "content": "x"}]})
    assert model.requests[0][0].text.startswith("You are terse.\n\n")


def test_skill_tools_are_offered_with_the_visible_names_as_an_enum(repo: Repository) -> None:
    model = ScriptedChat(script=[AIMessage(content="hi")])
    graph = create_agent(model, middleware=[SkillsMiddleware(repo)])
    captured: list[Any] = []
    original = model.bind_tools

    def spy(tools: Sequence[Any], **kwargs: Any) -> Any:
        captured.extend(convert_to_openai_tool(t) for t in tools)
        return original(tools, **kwargs)

    object.__setattr__(model, "bind_tools", spy)
    graph.invoke({"messages": [{"role": "user", "content": "x"}]})
    load = next(t for t in captured if t["function"]["name"] == "skill_load")
    assert load["function"]["parameters"]["properties"]["skill"]["enum"] == ["alpha", "deployer"]


def test_skill_load_puts_the_full_body_in_the_next_request(repo: Repository) -> None:
    model = run(
        SkillsMiddleware(repo),
        [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")],
    )
    result = tool_results(model.requests[1])["c1"]
    assert "ALPHA-INSTRUCTIONS" in result.text and result.status == "success"


def test_read_file_and_select_docs_work(repo: Repository) -> None:
    model = run(
        SkillsMiddleware(repo),
        [
            call("skill_load", {"skill": "alpha"}, "c1"),
            call("skill_select_docs", {"skill": "alpha", "docs": ["references/forms.md"]}, "c2"),
            call("skill_read_file", {"skill": "alpha", "path": "scripts/count.py"}, "c3"),
            AIMessage(content="done"),
        ],
    )
    results = tool_results(model.requests[-1])
    assert "references/forms.md" in results["c2"].text and results["c2"].status == "success"
    assert "print(17)" in results["c3"].text and results["c3"].status == "success"


def test_graded_failures_reach_the_model_as_error_results(repo: Repository) -> None:
    model = run(
        SkillsMiddleware(repo),
        [
            call("skill_load", {"skill": "alpah"}, "c1"),
            call("skill_read_file", {"skill": "alpha"}, "c2"),
            AIMessage(content="done"),
        ],
    )
    results = tool_results(model.requests[-1])
    assert results["c1"].status == "error" and "alpha" in results["c1"].text
    assert results["c2"].status == "error" and "path" in results["c2"].text


def test_a_call_whose_json_does_not_parse_is_answered_and_the_run_goes_on(
    repo: Repository,
) -> None:
    malformed = AIMessage(
        content="",
        invalid_tool_calls=[
            invalid_tool_call(name="skill_load", args='{"skill": "alpha"', id="c1", error="bad")
        ],
    )
    model = ScriptedChat(
        script=[malformed, call("skill_load", {"skill": "alpha"}, "c2"), AIMessage("haiku")]
    )
    graph = create_agent(model, middleware=[SkillsMiddleware(repo)])
    result = graph.invoke({"messages": [{"role": "user", "content": "a poem"}]})
    assert result["messages"][-1].text == "haiku"
    answer = tool_results(model.requests[1])["c1"]
    assert answer.status == "error" and "Arguments are not valid JSON" in answer.text
    assert "ALPHA-INSTRUCTIONS" in tool_results(model.requests[2])["c2"].text


def test_a_callers_tool_call_that_does_not_parse_is_answered_beside_a_valid_call_async(
    repo: Repository,
) -> None:
    def ship(target: str) -> str:
        """Ship a service."""
        return f"shipped {target}"

    reply = AIMessage(
        content="",
        tool_calls=[{"name": "skill_load", "args": {"skill": "alpha"}, "id": "c2"}],
        invalid_tool_calls=[invalid_tool_call(name="ship", args="{target: web}", id="c1")],
    )
    model = ScriptedChat(script=[reply, AIMessage("done")])
    graph = create_agent(
        model, tools=[StructuredTool.from_function(ship)], middleware=[SkillsMiddleware(repo)]
    )

    async def main() -> Any:
        return await graph.ainvoke({"messages": [{"role": "user", "content": "ship it"}]})

    result = anyio.run(main)
    assert result["messages"][-1].text == "done"
    answers = tool_results(model.requests[1])
    assert answers["c1"].status == "error" and "Arguments are not valid JSON" in answers["c1"].text
    assert "ALPHA-INSTRUCTIONS" in answers["c2"].text


def test_a_second_thread_does_not_see_the_first_threads_loads(repo: Repository) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session")
    saver = InMemorySaver()
    load = [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")]
    run(middleware, list(load), thread="t1", checkpointer=saver)
    other = run(middleware, list(load), thread="t2", checkpointer=saver)
    assert "ALPHA-INSTRUCTIONS" in tool_results(other.requests[1])["c1"].text
    again = run(
        middleware,
        [call("skill_load", {"skill": "alpha"}, "c9"), AIMessage(content="done")],
        thread="t1",
        checkpointer=saver,
    )
    assert "already loaded" in tool_results(again.requests[1])["c9"].text
    assert set(middleware.skill_tools("t1").state().loaded) == {"alpha"}
    assert set(middleware.skill_tools("t3").state().loaded) == set()


def test_a_turn_load_ends_with_the_invocation_and_its_result_becomes_a_note(
    repo: Repository,
) -> None:
    middleware = SkillsMiddleware(repo, load_mode="turn")
    saver = InMemorySaver()
    run(
        middleware,
        [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")],
        checkpointer=saver,
    )
    later = run(middleware, [AIMessage(content="ok")], checkpointer=saver)
    old = tool_results(later.requests[0])["c1"]
    assert "ALPHA-INSTRUCTIONS" not in old.text and "alpha" in old.text


def test_allowed_tools_activate_a_tool_only_after_the_load(repo: Repository) -> None:
    deployed: list[str] = []

    def deploy(target: str) -> str:
        """Deploy a service."""
        deployed.append(target)
        return f"deployed {target}"

    activation = Activation(tools=[Tool.from_function(deploy)])
    model = run(
        SkillsMiddleware(repo, activations=[activation]),
        [
            call("deploy", {"target": "early"}, "c0"),
            call("skill_load", {"skill": "deployer"}, "c1"),
            call("deploy", {"target": "web"}, "c2"),
            AIMessage(content="shipped"),
        ],
    )
    assert "deploy" not in model.offered[0] and "deploy" not in model.offered[1]
    assert "deploy" in model.offered[2]
    results = tool_results(model.requests[-1])
    assert results["c0"].status == "error" and "not available" in results["c0"].text
    assert results["c2"].text == "deployed web" and deployed == ["web"]


def test_the_trace_records_turns_model_steps_and_tool_calls(
    repo: Repository, tmp_path: Path
) -> None:
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    run(
        SkillsMiddleware(repo, trace=trace),
        [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")],
    )
    trace.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["turn", "model", "tool", "model"]
    assert (
        records[1]["tool_calls"] == ["skill_load"] and "skill_load" in records[1]["tools_offered"]
    )
    assert records[2]["status"] == "ok" and records[2]["session"] == "t1"


def test_the_trace_of_a_command_says_how_it_ended(repo: Repository, tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    middleware = SkillsMiddleware(
        repo,
        workspace=WorkspaceManager(tmp_path / "ws"),
        executor=FinishedExecutor(1),
        trace=trace,
    )
    model = run(
        middleware, [call("workspace_exec", {"command": "make"}, "c1"), AIMessage(content="no")]
    )
    trace.close()
    assert tool_results(model.requests[-1])["c1"].status == "success"
    (tool,) = [r for r in map(json.loads, path.read_text().splitlines()) if r["type"] == "tool"]
    assert (tool["status"], tool["exit_code"], tool["timed_out"]) == ("nonzero_exit", 1, False)


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'skills.db'}"
        return
    port = free_port()
    with running_redis(redis_server_binary(), tmp_path, port):
        yield f"redis://127.0.0.1:{port}/0"


def test_a_shared_store_keeps_a_threads_loads_for_a_new_middleware_and_history(
    repo: Repository, store_url: str
) -> None:
    load = [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")]
    run(SkillsMiddleware(repo, store=open_store(store_url), load_mode="session"), load)
    resumed = SkillsMiddleware(repo, store=open_store(store_url), load_mode="session")
    assert set(resumed.skill_tools("t1").state().loaded) == {"alpha"}
    assert set(resumed.skill_tools("t2").state().loaded) == set()
    # A fresh checkpointer: the thread's history is gone, its skill state is not, so the loaded
    # skill reaches the model in a system message after the prompt.
    resumed_model = run(resumed, [AIMessage(content="ok")])
    carried = resumed_model.requests[0][1]
    assert isinstance(carried, SystemMessage) and "ALPHA-INSTRUCTIONS" in carried.text


def test_a_run_without_a_thread_id_gets_its_own_session(repo: Repository) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session")
    model = ScriptedChat(
        script=[call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="ok")]
    )
    graph = create_agent(model, middleware=[middleware])
    state = graph.invoke({"messages": [{"role": "user", "content": "x"}]})
    session = state["skillshelf_session"]
    assert set(middleware.skill_tools(session).state().loaded) == {"alpha"}


@pytest.fixture
def bwrap() -> BwrapExecutor:
    problem = bwrap_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests for real: {problem}")
        pytest.skip(f"sandbox does not work here: {problem}")
    return BwrapExecutor()


def test_workspace_exec_runs_a_script_in_bwrap_and_its_output_reaches_the_model(
    repo: Repository, tmp_path: Path, bwrap: BwrapExecutor
) -> None:
    manager = WorkspaceManager(tmp_path / "workspaces")
    middleware = SkillsMiddleware(repo, workspace=manager, executor=bwrap)
    args = {"command": "python3 scripts/count.py", "skill": "alpha"}
    model = run(
        middleware,
        [
            call("skill_load", {"skill": "alpha"}, "c1"),
            call("workspace_exec", args, "c2"),
            AIMessage(content="17"),
        ],
    )
    assert "workspace_exec" in model.offered[0]
    result = tool_results(model.requests[-1])["c2"]
    assert result.status == "success", result.text
    assert "exit code 0" in result.text and "17" in result.text and "bwrap" in result.text


def test_an_async_run_keeps_threads_apart(repo: Repository) -> None:
    middleware = SkillsMiddleware(repo, load_mode="session")
    model = ScriptedChat(
        script=[call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")]
    )
    graph = create_agent(model, middleware=[middleware], checkpointer=InMemorySaver())

    async def main() -> None:
        await graph.ainvoke(
            {"messages": [{"role": "user", "content": "x"}]},
            {"configurable": {"thread_id": "async-1"}},
        )

    anyio.run(main)
    assert "ALPHA-INSTRUCTIONS" in tool_results(model.requests[1])["c1"].text
    assert set(middleware.skill_tools("async-1").state().loaded) == {"alpha"}
    assert set(middleware.skill_tools("async-2").state().loaded) == set()


def test_importing_without_the_extra_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "langchain.agents.middleware", None)
    monkeypatch.delitem(sys.modules, "skillshelf.integrations.langchain")
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module("skillshelf.integrations.langchain")
    assert caught.value.extra == "langchain"


def test_an_only_activation_replaces_the_callers_tools_while_in_force(repo: Repository) -> None:
    def status() -> str:
        """Report status."""
        return "green"

    def deploy(target: str) -> str:
        """Deploy a service."""
        return f"deployed {target}"

    activation = Activation(tools=[Tool.from_function(deploy)], skill="deployer", mode="only")
    model = ScriptedChat(
        script=[call("skill_load", {"skill": "deployer"}, "c1"), AIMessage(content="done")]
    )
    graph = create_agent(
        model,
        tools=[StructuredTool.from_function(status)],
        middleware=[SkillsMiddleware(repo, activations=[activation])],
    )
    graph.invoke({"messages": [{"role": "user", "content": "x"}]})
    assert "status" in model.offered[0] and "deploy" not in model.offered[0]
    assert "status" not in model.offered[1] and "deploy" in model.offered[1]
    assert "skill_load" in model.offered[1]


def test_system_placement_carries_loaded_content_in_a_system_message(repo: Repository) -> None:
    model = run(
        SkillsMiddleware(repo, placement="system"),
        [call("skill_load", {"skill": "alpha"}, "c1"), AIMessage(content="done")],
    )
    second = model.requests[1]
    assert isinstance(second[1], SystemMessage) and "ALPHA-INSTRUCTIONS" in second[1].text
    assert "ALPHA-INSTRUCTIONS" not in tool_results(second)["c1"].text


def ship(target: str) -> str:
    """Ship a service."""
    return f"shipped {target}"


def test_an_unknown_tool_is_answered_by_the_harness_with_the_agents_tools_named(
    repo: Repository,
) -> None:
    model = ScriptedChat(script=[call("shp", {"target": "web"}, "c1"), AIMessage("done")])
    graph = create_agent(
        model, tools=[StructuredTool.from_function(ship)], middleware=[SkillsMiddleware(repo)]
    )
    graph.invoke({"messages": [{"role": "user", "content": "ship it"}]})
    answer = tool_results(model.requests[1])["c1"]
    assert answer.status == "error"
    assert "Unknown tool 'shp'" in answer.text and "Did you mean: ship" in answer.text
    assert "skill_load" in answer.text and "is not a valid tool" not in answer.text


def test_the_third_identical_unknown_tool_call_is_fatal_async(repo: Repository) -> None:
    script = [call("nope", {"a": 1}, f"c{n}") for n in range(1, 4)] + [AIMessage("gave up")]
    model = ScriptedChat(script=script)
    graph = create_agent(model, middleware=[SkillsMiddleware(repo)])

    async def main() -> Any:
        return await graph.ainvoke({"messages": [{"role": "user", "content": "x"}]})

    assert anyio.run(main)["messages"][-1].text == "gave up"
    answers = [tool_results(model.requests[n])[f"c{n}"].text for n in (1, 2, 3)]
    assert "Stop retrying it" not in answers[0] + answers[1]
    assert "has now failed 3 times" in answers[2] and "Stop retrying it" in answers[2]


def test_a_slipped_skill_tool_name_runs_that_tool(repo: Repository) -> None:
    model = run(
        SkillsMiddleware(repo), [call("Skill-Load", {"skill": "alpha"}, "c1"), AIMessage("ok")]
    )
    answer = tool_results(model.requests[1])["c1"]
    assert answer.status != "error" and "ALPHA-INSTRUCTIONS" in answer.text

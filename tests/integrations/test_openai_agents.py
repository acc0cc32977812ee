"""The OpenAI Agents SDK integration, driven by a scripted ``agents.models.interface.Model``.

No network: the model is an instance passed to the agent, and the SDK's own tracing is off.
"""

from __future__ import annotations

import contextlib
import io
import itertools
import json
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn

import anyio
import pytest

pytest.importorskip("agents")

from agents import Agent, FunctionTool, Runner, SQLiteSession, function_tool, set_tracing_disabled
from agents.items import ModelResponse
from agents.models.interface import Model
from agents.usage import Usage
from openai.types.responses import (
    ResponseFunctionToolCall,
    ResponseOutputMessage,
    ResponseOutputText,
)

from finished_executor import FinishedExecutor
from skillshelf.errors import MissingExtraError, UsageError
from skillshelf.harness import Trace
from skillshelf.integrations.openai_agents import SkillKit, conversation_of, skill_tools
from skillshelf.repository import Repository
from skillshelf.stores import SessionStore, open_store
from skillshelf.testing import make_skill

set_tracing_disabled(True)

BODY = "Always count the rows before summarising."
GUIDE = "The guide says: group by region."


@dataclass
class Request:
    """What the model received in one request."""

    instructions: str
    input: list[Any]
    tools: list[str]

    def outputs(self) -> list[str]:
        """The tool results in the input, oldest first."""
        return [str(i["output"]) for i in self.input if _kind(i) == "function_call_output"]


def _kind(item: Any) -> str | None:
    return item.get("type") if isinstance(item, dict) else getattr(item, "type", None)


_MODELS = itertools.count()
Step = tuple[str, dict[str, Any]] | str


class ScriptedModel(Model):
    """Answers each request with the next step: a tool call ``(name, args)`` or final text."""

    def __init__(self, steps: list[Step]) -> None:
        self.steps = list(steps)
        self.requests: list[Request] = []
        self.prefix = f"call-{next(_MODELS)}-"  # call ids unique across models, as a provider's

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
        self.requests.append(Request(system_instructions or "", items, [t.name for t in tools]))
        step = self.steps.pop(0)
        n = len(self.requests)
        if isinstance(step, str):
            text = ResponseOutputText(type="output_text", text=step, annotations=[])
            message = ResponseOutputMessage(
                id=f"m{n}", type="message", role="assistant", status="completed", content=[text]
            )
            return ModelResponse(output=[message], usage=Usage(), response_id=None)
        name, arguments = step
        call = ResponseFunctionToolCall(
            type="function_call",
            call_id=f"{self.prefix}{n}",
            name=name,
            arguments=json.dumps(arguments),
        )
        return ModelResponse(output=[call], usage=Usage(), response_id=None)

    def stream_response(self, *args: Any, **kwargs: Any) -> NoReturn:
        raise NotImplementedError


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "csv-insights",
        "Summarise CSV files. Use when a CSV needs a summary.",
        body=f"# CSV\n\n{BODY}\n",
        files={"references/guide.md": GUIDE, "scripts/hello.py": "print('hello from bwrap')\n"},
    )
    make_skill(root, "release-notes", "Write release notes. Use for a changelog.")
    make_skill(
        root,
        "ticket-lookup",
        "Look up tickets. Use when a ticket id is mentioned.",
        frontmatter={"allowed-tools": "lookup"},
    )
    return Repository([root], cache_dir=False)


def run(kit: SkillKit, model: ScriptedModel, message: str, conversation: str, **agent: Any) -> str:
    tools = [*kit.tools, *agent.pop("tools", [])]
    built = Agent(
        name="assistant", instructions=kit.instructions, tools=tools, hooks=kit.hooks, model=model
    )

    async def go() -> str:
        result = await Runner.run(built, message, context=kit.context(conversation))
        return str(result.final_output)

    return anyio.run(go)


def test_the_catalog_is_in_the_instructions_the_model_receives(repo: Repository) -> None:
    kit = skill_tools(repo, instructions="Be brief.")
    model = ScriptedModel(["done", "done"])
    run(kit, model, "hi", "a")
    run(kit, model, "hi again", "a")
    first = model.requests[0].instructions
    assert first.startswith("Be brief.")
    assert "csv-insights" in first and "Summarise CSV files." in first
    assert "skill_load" in first  # the guidance
    assert model.requests[1].instructions == first  # byte-stable between runs
    assert "skill_load" in model.requests[0].tools


def test_a_refresh_reaches_the_next_run_instructions_and_enum(
    repo: Repository, tmp_path: Path
) -> None:
    kit = skill_tools(repo)
    model = ScriptedModel(["done", "done"])
    run(kit, model, "hi", "a")
    make_skill(tmp_path / "skills", "pdf-forms", "Fill PDF forms. Use for PDFs.")
    repo.refresh()
    run(kit, model, "hi", "a")
    assert "pdf-forms" not in model.requests[0].instructions
    assert "pdf-forms" in model.requests[1].instructions
    load = next(t for t in kit.tools if isinstance(t, FunctionTool) and t.name == "skill_load")
    assert "pdf-forms" in load.params_json_schema["properties"]["skill"]["enum"]


def test_skill_load_puts_the_full_body_in_the_next_request(repo: Repository) -> None:
    kit = skill_tools(repo)
    model = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "summarised"])
    assert run(kit, model, "summarise sales.csv", "a") == "summarised"
    assert BODY not in json.dumps(model.requests[0].input)
    assert BODY in model.requests[1].outputs()[0]
    assert list(kit.for_conversation("a").state().loaded) == ["csv-insights"]


def test_skill_read_file_and_skill_select_docs_work(repo: Repository) -> None:
    kit = skill_tools(repo)
    steps: list[Step] = [
        ("skill_load", {"skill": "csv-insights"}),
        ("skill_read_file", {"skill": "csv-insights", "path": "references/guide.md"}),
        ("skill_select_docs", {"skill": "csv-insights", "docs": ["references/guide.md"]}),
        "ok",
    ]
    model = ScriptedModel(steps)
    run(kit, model, "summarise", "a")
    outputs = model.requests[-1].outputs()
    assert GUIDE in outputs[1]
    assert "Docs selected for 'csv-insights': references/guide.md" in outputs[2]
    assert kit.for_conversation("a").state().loaded["csv-insights"].docs == ["references/guide.md"]


def test_the_grading_is_skillshelfs_unknown_names_get_the_closest(repo: Repository) -> None:
    kit = skill_tools(repo)
    model = ScriptedModel([("skill_load", {"skill": "csv-insight"}), "ok"])
    run(kit, model, "summarise", "a")
    output = model.requests[1].outputs()[0]
    assert "csv-insights" in output and BODY not in output


def test_a_missing_argument_tells_the_model_to_ask_the_user(repo: Repository) -> None:
    kit = skill_tools(repo)
    model = ScriptedModel(
        [("skill_load", {}), ("skill_read_file", {"skill": "csv-insights"}), "ok"]
    )
    run(kit, model, "hi", "a")
    missing_skill, missing_path = model.requests[2].outputs()
    assert "Missing required argument 'skill'" in missing_skill and "Ask the user" in missing_skill
    assert "path" in missing_path


def test_a_second_conversation_does_not_see_the_first_ones_loads(repo: Repository) -> None:
    kit = skill_tools(repo, load_mode="session")
    first = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"])
    run(kit, first, "summarise", "a")
    second = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"])
    assert kit.for_conversation("b").state().loaded == {}
    run(kit, second, "summarise", "b")
    assert BODY in second.requests[1].outputs()[0]  # in full, not "already loaded"
    assert set(kit.for_conversation("a").state().loaded) == {"csv-insights"}


@pytest.fixture(params=["memory", "sqlite", "redis"])
def store_pair(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[list[SessionStore]]:
    """Two handles onto one fresh store of each kind (two processes' clients)."""
    with contextlib.ExitStack() as stack:
        if request.param == "memory":
            shared = open_store(None)
            stores = [shared, shared]
        elif request.param == "sqlite":
            stores = [open_store(f"sqlite:///{tmp_path / 'state.db'}") for _ in range(2)]
        else:
            from redis_servers import free_port, redis_server_binary, running_redis

            port = free_port()
            stack.enter_context(running_redis(redis_server_binary(), tmp_path, port))
            stores = [open_store(f"redis://127.0.0.1:{port}/0") for _ in range(2)]
        yield stores
        for store in stores:
            store.close()


def test_every_store_keeps_conversations_apart_and_resumable(
    repo: Repository, store_pair: list[SessionStore]
) -> None:
    first = skill_tools(repo, store=store_pair[0], load_mode="session")
    run(first, ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"]), "hi", "a")
    run(first, ScriptedModel([("skill_load", {"skill": "release-notes"}), "ok"]), "hi", "b")
    resumed = skill_tools(repo, store=store_pair[1], load_mode="session")
    assert set(resumed.for_conversation("a").state().loaded) == {"csv-insights"}
    assert set(resumed.for_conversation("b").state().loaded) == {"release-notes"}


def test_a_resumed_session_keeps_its_loads_in_sqlite(repo: Repository, tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'state.db'}"
    session = SQLiteSession("thread-1", str(tmp_path / "history.db"))
    model = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"])
    kit = skill_tools(repo, store=open_store(url), load_mode="session")
    built = Agent(name="a", instructions=kit.instructions, tools=kit.tools, model=model)

    async def go(agent: Agent[Any], message: str) -> None:
        await Runner.run(agent, message, session=session, context=kit.context(session))

    anyio.run(go, built, "summarise")
    # A new process: a new kit over the same database, and the same SDK session.
    resumed = skill_tools(repo, store=open_store(url), load_mode="session")
    again = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"])
    agent = Agent(name="a", instructions=resumed.instructions, tools=resumed.tools, model=again)
    anyio.run(go, agent, "and again")
    assert set(resumed.for_conversation("thread-1").state().loaded) == {"csv-insights"}
    # The session history still holds the body, so the second load is a short stub.
    assert BODY in json.dumps(again.requests[0].input)
    assert BODY not in again.requests[1].outputs()[-1]
    assert resumed.for_conversation("other").state().loaded == {}


@function_tool
def lookup(ticket: str) -> str:
    """Look up a ticket."""
    return f"ticket {ticket}: open"


def test_an_activated_tool_answers_only_while_a_skill_naming_it_in_allowed_tools_is_loaded(
    repo: Repository,
) -> None:
    kit = skill_tools(repo)
    gated = kit.activate(lookup)
    steps: list[Step] = [
        ("lookup", {"ticket": "T-1"}),
        ("skill_load", {"skill": "ticket-lookup"}),
        ("lookup", {"ticket": "T-1"}),
        "ok",
    ]
    model = ScriptedModel(steps)
    run(kit, model, "what about T-1?", "a", tools=[gated])
    before, _load, during = model.requests[3].outputs()
    assert "lookup is not available now" in before and "ticket-lookup" in before
    assert during == "ticket T-1: open"
    # Declared all along: the SDK ends a run whose model calls a tool it was not offered.
    assert all("lookup" in r.tools for r in model.requests)


def test_an_activation_for_a_named_skill_ignores_other_loads(repo: Repository) -> None:
    kit = skill_tools(repo)
    gated = kit.activate(lookup, skill="release-notes")
    steps: list[Step] = [
        ("skill_load", {"skill": "ticket-lookup"}),
        ("lookup", {"ticket": "T-1"}),
        "ok",
    ]
    model = ScriptedModel(steps)
    run(kit, model, "hi", "a", tools=[gated])
    refusal = model.requests[2].outputs()[-1]
    assert "not available now" in refusal and "release-notes" in refusal


def _bwrap() -> Any:
    from skillshelf.exec.runner import BwrapExecutor, bwrap_available

    problem = bwrap_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests for real: {problem}")
        pytest.skip(f"bwrap does not work here: {problem}")
    return BwrapExecutor()


@pytest.fixture
def workspace(tmp_path: Path) -> Iterator[Any]:
    from skillshelf.exec.workspace import WorkspaceManager

    manager = WorkspaceManager(tmp_path / "ws")
    yield manager
    manager.close_all()


def test_workspace_exec_runs_a_script_in_bwrap_and_the_model_reads_its_output(
    repo: Repository, workspace: Any
) -> None:
    kit = skill_tools(repo, workspace=workspace, executor=_bwrap())
    command = {"command": "python3 scripts/hello.py", "skill": "csv-insights"}
    model = ScriptedModel([("workspace_exec", command), "ran"])
    run(kit, model, "run it", "a")
    assert "workspace_exec" in model.requests[0].tools
    output = model.requests[1].outputs()[0]
    assert "exit code 0" in output and "bwrap" in output
    assert "hello from bwrap" in output


def test_workspace_exec_is_absent_without_a_workspace(repo: Repository) -> None:
    assert "workspace_exec" not in [t.name for t in skill_tools(repo).tools]


def test_the_skill_tools_are_function_tools_with_an_enum_of_names(repo: Repository) -> None:
    tools = {t.name: t for t in skill_tools(repo).tools if isinstance(t, FunctionTool)}
    assert len(tools) == len(skill_tools(repo).tools) == 7
    enum = tools["skill_load"].params_json_schema["properties"]["skill"]["enum"]
    assert enum == ["csv-insights", "release-notes", "ticket-lookup"]


def test_the_trace_records_turns_model_steps_and_tool_calls(repo: Repository) -> None:
    stream = io.StringIO()
    kit = skill_tools(repo, trace=Trace(stream))
    run(kit, ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"]), "hi", "a")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["type"] for r in records] == ["turn", "model", "tool", "model"]
    tool = records[2]
    assert tool["tool"] == "skill_load" and tool["status"] == "ok" and tool["session"] == "a"
    # The arguments as the harness validated them: the agent loop's record.
    assert tool["arguments"] == {"skill": "csv-insights", "docs": [], "include_all_docs": False}
    assert records[1]["tool_calls"] == ["skill_load"]


def test_the_trace_of_a_command_says_how_it_ended(repo: Repository, workspace: Any) -> None:
    stream = io.StringIO()
    kit = skill_tools(repo, workspace=workspace, executor=FinishedExecutor(2), trace=Trace(stream))
    run(kit, ScriptedModel([("workspace_exec", {"command": "make"}), "ok"]), "build", "a")
    (tool,) = [r for r in map(json.loads, stream.getvalue().splitlines()) if r["type"] == "tool"]
    assert (tool["status"], tool["exit_code"], tool["timed_out"]) == ("nonzero_exit", 2, False)


def test_a_context_naming_no_conversation_is_a_clear_error(repo: Repository) -> None:
    kit = skill_tools(repo)
    built = Agent(name="a", instructions=kit.instructions, tools=kit.tools, model=ScriptedModel([]))
    with pytest.raises(UsageError, match="names no conversation"):
        anyio.run(lambda: Runner.run(built, "hi"))


@pytest.mark.parametrize(
    ("context", "expected"),
    [("t1", "t1"), ({"conversation_id": "t2"}, "t2"), (SQLiteSession("t3"), "t3")],
)
def test_a_conversation_is_named_by_a_string_mapping_or_session(
    context: Any, expected: str
) -> None:
    assert conversation_of(context) == expected


def test_without_the_sdk_the_missing_extra_is_named(
    repo: Repository, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "agents", None)
    with pytest.raises(MissingExtraError, match="openai-agents"):
        skill_tools(repo)


def test_a_load_whose_result_left_the_history_is_delivered_again_in_full(
    repo: Repository,
) -> None:
    kit = skill_tools(repo, load_mode="session")
    run(kit, ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"]), "hi", "a")
    # The same conversation, but the caller sent no history: the body is nowhere in the input.
    model = ScriptedModel([("skill_load", {"skill": "csv-insights"}), "ok"])
    run(kit, model, "again", "a")
    assert BODY in model.requests[1].outputs()[0]


def test_a_call_to_an_activated_tool_after_its_skills_turn_is_a_recoverable_tool_error(
    repo: Repository,
) -> None:
    kit = skill_tools(repo)
    gated = kit.activate(lookup)
    steps: list[Step] = [("skill_load", {"skill": "ticket-lookup"}), ("lookup", {"ticket": "T-1"})]
    run(kit, ScriptedModel([*steps, "ok"]), "what about T-1?", "a", tools=[gated])
    # A new run is a new turn: the load ended, but the model still calls the tool it used.
    later = ScriptedModel([("lookup", {"ticket": "T-2"}), "sorry"])
    assert run(kit, later, "and T-2?", "a", tools=[gated]) == "sorry"
    refusal = later.requests[1].outputs()[-1]
    assert "lookup is not available now" in refusal and "ticket T-2" not in refusal


def test_the_third_identical_call_to_an_inactive_tool_is_told_to_stop(repo: Repository) -> None:
    stream = io.StringIO()
    kit = skill_tools(repo, trace=Trace(stream))
    gated = kit.activate(lookup)
    model = ScriptedModel([("lookup", {"ticket": "T-1"})] * 3 + ["sorry"])
    assert run(kit, model, "T-1?", "a", tools=[gated]) == "sorry"
    first, second, third = model.requests[3].outputs()
    assert first == second and "not available now" in first and "Stop retrying" not in first
    assert "Stop retrying" in third
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    statuses = [r["status"] for r in records if r["type"] == "tool"]
    assert statuses == ["recoverable", "recoverable", "fatal"]

"""SkillsToolset in a real pydantic-ai Agent, driven by pydantic-ai's own FunctionModel."""

from __future__ import annotations

import functools
import importlib.util
import io
import json
import os
import runpy
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import anyio
import pytest
from pydantic_ai import Agent, AgentRunResult, FunctionToolset
from pydantic_ai.messages import (
    ModelMessage,
    ModelRequest,
    ModelResponse,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
)
from pydantic_ai.models.function import AgentInfo, FunctionModel

from finished_executor import FinishedExecutor
from redis_servers import free_port, redis_server_binary, running_redis
from skillshelf.core.session import LoadMode
from skillshelf.errors import MissingExtraError, UsageError, install_hint
from skillshelf.exec.runner import BwrapExecutor, bwrap_available
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.harness import Trace
from skillshelf.integrations.pydantic_ai import SkillsToolset, history_conversation_key
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import make_skill, reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "pydantic_ai_agent.py"
FAKE_PROVIDERS = Path(__file__).resolve().parents[1] / "agent" / "fake_providers.py"
SUMMARIZE = "python3 scripts/summarize_csv.py scripts/sample.csv --out out/summary.md"


def _fake_openai() -> Any:
    """tests/agent's fake OpenAI server class (a file of that folder, loaded by path)."""
    spec = importlib.util.spec_from_file_location("_pydantic_ai_fake_providers", FAKE_PROVIDERS)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module.FakeOpenAI


@dataclass
class Script:
    """A FunctionModel script: one step per model request, recording what each request held."""

    steps: Sequence[Callable[[AgentInfo], ModelResponse]]
    requests: list[tuple[list[ModelMessage], AgentInfo]] = field(default_factory=list)

    def __call__(self, messages: list[ModelMessage], info: AgentInfo) -> ModelResponse:
        self.requests.append((list(messages), info))
        return self.steps[len(self.requests) - 1](info)

    def tool_results(self, index: int) -> list[ToolReturnPart]:
        """The tool results the ``index``-th request carried (in its last message)."""
        last = self.requests[index][0][-1]
        assert isinstance(last, ModelRequest)
        return [p for p in last.parts if isinstance(p, ToolReturnPart)]

    def tools_offered(self, index: int) -> set[str]:
        return {t.name for t in self.requests[index][1].function_tools}


def call(tool: str, args: dict[str, Any], call_id: str = "c1") -> Callable[[AgentInfo], Any]:
    return lambda _info: ModelResponse(parts=[ToolCallPart(tool, args, tool_call_id=call_id)])


def say(text: str) -> Callable[[AgentInfo], ModelResponse]:
    return lambda _info: ModelResponse(parts=[TextPart(text)])


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "release-notes",
        "Draft release notes from commits. Use when preparing a release.",
        body="# Release notes\n\nGroup commits by type; see references/style.md.\n",
        files={"references/style.md": "Use past tense.\n"},
    )
    make_skill(
        root,
        "git-helper",
        "Inspect a git repository. Use when asked about history.",
        body="# Git\n\nRun git log.\n",
        frontmatter={"allowed-tools": "Bash(git:*) Read"},
    )
    return Repository([root])


def run_sync(agent: Agent[Any, str], prompt: str, **options: Any) -> AgentRunResult[str]:
    """``agent.run`` in a loop of its own, closed after (``Agent.run_sync`` leaves its loop open
    for the rest of the process, which warns when it is collected)."""
    return anyio.run(functools.partial(agent.run, prompt, **options))


def run(agent: Agent[Any, str], prompt: str, conversation: str) -> str:
    return run_sync(agent, prompt, conversation_id=conversation).output


def test_the_catalog_is_in_the_instructions_the_model_receives(repo: Repository) -> None:
    script = Script([say("done")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    run(agent, "hi", "conv-1")
    instructions = script.requests[0][1].instructions or ""
    assert "release-notes" in instructions and "git-helper" in instructions
    assert "call skill_load" in instructions


def test_the_instructions_function_gives_the_catalog_without_the_toolset(
    repo: Repository,
) -> None:
    skills = SkillsToolset(repo)
    script = Script([say("done")])
    run(Agent(FunctionModel(script), instructions=skills.instructions), "hi", "conv-1")
    assert script.requests[0][1].instructions == skills.instructions()
    assert "<available_skills>" in skills.instructions()


def test_the_instructions_keep_their_bytes_until_the_skills_change(
    repo: Repository, tmp_path: Path
) -> None:
    script = Script([say("a"), say("b"), say("c")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    run(agent, "one", "conv-1")
    run(agent, "two", "conv-1")
    make_skill(tmp_path / "skills", "csv-report", "Summarise a CSV file. Use for CSV data.")
    repo.refresh()
    run(agent, "three", "conv-1")
    first, second, third = (info.instructions for _m, info in script.requests)
    assert first == second and first is not None
    assert third is not None and "csv-report" in third and "csv-report" not in first


def test_skill_load_delivers_the_full_body_in_the_next_request(repo: Repository) -> None:
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    assert run(agent, "notes please", "conv-1") == "ok"
    (result,) = script.tool_results(1)
    assert result.tool_name == "skill_load"
    assert "Group commits by type" in str(result.content)


def test_the_skill_argument_is_an_enum_of_the_visible_names(repo: Repository) -> None:
    script = Script([say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    run(agent, "hi", "conv-1")
    load = next(t for t in script.requests[0][1].function_tools if t.name == "skill_load")
    skill = load.parameters_json_schema["properties"]["skill"]
    assert skill["enum"] == ["git-helper", "release-notes"]


def test_skill_read_file_and_skill_select_docs_work(repo: Repository) -> None:
    script = Script(
        [
            call("skill_load", {"skill": "release-notes"}, "c1"),
            call(
                "skill_read_file", {"skill": "release-notes", "path": "references/style.md"}, "c2"
            ),
            call(
                "skill_select_docs",
                {"skill": "release-notes", "docs": ["references/style.md"]},
                "c3",
            ),
            say("ok"),
        ]
    )
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    run(agent, "notes", "conv-1")
    (read,) = script.tool_results(2)
    assert "Use past tense." in str(read.content)
    (select,) = script.tool_results(3)
    assert "Docs selected for 'release-notes': references/style.md" in str(select.content)


def test_an_unknown_skill_is_answered_with_the_closest_names_as_a_failed_result(
    repo: Repository,
) -> None:
    script = Script([call("skill_load", {"skill": "release-note"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    run(agent, "notes", "conv-1")
    (result,) = script.tool_results(1)
    assert result.outcome == "failed"
    assert "release-notes" in str(result.content)


def test_a_missing_argument_asks_the_model_to_ask_the_user_and_the_run_goes_on(
    repo: Repository,
) -> None:
    script = Script(
        [
            call("skill_load", {}, "c1"),
            call("skill_read_file", {"skill": "release-notes"}, "c2"),
            say("ok"),
        ]
    )
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    assert run(agent, "notes", "conv-1") == "ok"
    assert "ask the user" in str(script.tool_results(1)[0].content).lower()


def test_a_second_conversation_does_not_see_the_first_ones_loads(repo: Repository) -> None:
    store = open_store(None)
    skills = SkillsToolset(repo, store=store, load_mode="session")
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok"), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills])
    run(agent, "notes", "conv-a")
    run(agent, "hello", "conv-b")
    assert list(skills.tools_for("conv-a").state().loaded) == ["release-notes"]
    assert not skills.tools_for("conv-b").state().loaded


def test_a_conversation_id_carried_by_the_message_history_is_refused_by_default(
    repo: Repository,
) -> None:
    # A history may come from a client: another conversation's state is one forged id away.
    skills = SkillsToolset(repo, load_mode="session")
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills])
    first = run_sync(agent, "notes")
    forged = first.all_messages()
    for explicit in ({}, {"conversation_id": first.conversation_id}):
        with pytest.raises(UsageError, match="will not take the conversation id from"):
            run_sync(agent, "again", message_history=forged, **explicit)


def test_a_resumed_conversation_keeps_its_loads_with_the_history_key(repo: Repository) -> None:
    skills = SkillsToolset(repo, load_mode="session", conversation_key=history_conversation_key)
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills])
    first = run_sync(agent, "notes")
    again = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    with agent.override(model=FunctionModel(again)):
        run_sync(agent, "again", message_history=first.all_messages())
    (result,) = again.tool_results(1)
    assert "already loaded" in str(result.content).lower()


@dataclass
class Deps:
    conversation_id: str


def test_the_conversation_can_come_from_the_deps(repo: Repository) -> None:
    skills = SkillsToolset(repo, load_mode="session")
    script = Script([call("skill_load", {"skill": "git-helper"}), say("ok")])
    agent = Agent(FunctionModel(script), deps_type=Deps, toolsets=[skills])
    run_sync(agent, "git", deps=Deps("user-7"))
    assert list(skills.tools_for("user-7").state().loaded) == ["git-helper"]


def git(command: str) -> str:
    """Run a git command."""
    return f"ran {command}"


def test_allowed_tools_activate_a_tool_that_was_absent_before_the_load(repo: Repository) -> None:
    skills = SkillsToolset(repo)
    gated = skills.activated(FunctionToolset([git], id="user").renamed({"Bash": "git"}))
    script = Script(
        [
            call("skill_load", {"skill": "git-helper"}),
            call("Bash", {"command": "git log"}, "c2"),
            say("ok"),
        ]
    )
    agent = Agent(FunctionModel(script), toolsets=[skills, gated])
    run(agent, "history?", "conv-1")
    assert "Bash" not in script.tools_offered(0)
    assert "Bash" in script.tools_offered(1)
    assert script.tool_results(2)[0].content == "ran git log"


def test_a_skill_with_allowed_tools_restricts_the_other_tools(repo: Repository) -> None:
    def Read(path: str) -> str:
        """Read a file."""
        return path

    def Write(path: str) -> str:
        """Write a file."""
        return path

    skills = SkillsToolset(repo)
    others = skills.restricted(FunctionToolset([Read, Write], id="files"))
    script = Script([call("skill_load", {"skill": "git-helper"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills, others])
    run(agent, "history?", "conv-1")
    assert {"Read", "Write"} <= script.tools_offered(0)
    assert "Read" in script.tools_offered(1) and "Write" not in script.tools_offered(1)


def test_a_turn_load_ends_with_the_run(repo: Repository) -> None:
    skills = SkillsToolset(repo, load_mode="turn")
    gated = skills.activated(FunctionToolset([git], id="user").renamed({"Bash": "git"}))
    script = Script([call("skill_load", {"skill": "git-helper"}), say("ok"), say("next")])
    agent = Agent(FunctionModel(script), deps_type=Deps, toolsets=[skills, gated])
    first = run_sync(agent, "history?", deps=Deps("conv-1"))
    run_sync(agent, "thanks", deps=Deps("conv-1"), message_history=first.all_messages())
    assert "Bash" in script.tools_offered(1) and "Bash" not in script.tools_offered(2)


@pytest.mark.parametrize("mode", ["once", "turn"])
def test_a_once_load_lasts_the_request_after_it_and_a_turn_load_the_run(
    repo: Repository, mode: LoadMode
) -> None:
    skills = SkillsToolset(repo, load_mode=mode)
    gated = skills.activated(FunctionToolset([git], id="user").renamed({"Bash": "git"}))
    script = Script(
        [
            call("skill_load", {"skill": "git-helper"}, "c1"),
            call("skill_list", {}, "c2"),
            call("skill_load", {"skill": "git-helper"}, "c3"),
            say("ok"),
        ]
    )
    run(Agent(FunctionModel(script), toolsets=[skills, gated]), "history?", "conv-1")
    offered = [("Bash" in script.tools_offered(i)) for i in range(4)]
    reload = str(script.tool_results(3)[0].content)
    if mode == "once":  # delivered in request 2 only: gone from request 3, loaded in full again
        assert offered == [False, True, False, True]
        assert "Run git log." in reload
    else:
        assert offered == [False, True, True, True]
        assert "already loaded" in reload.lower()


def test_workspace_exec_runs_a_script_in_bwrap_and_its_output_reaches_the_model(
    tmp_path: Path,
) -> None:
    problem = bwrap_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests for real: {problem}")
        pytest.skip(f"bwrap does not work here: {problem}")
    skills = SkillsToolset(
        Repository([EXAMPLES]),
        workspace=WorkspaceManager(tmp_path / "workspaces"),
        executor=BwrapExecutor(),
    )
    args = {"command": SUMMARIZE, "skill": "csv-insights", "collect": ["out/*.md"]}
    script = Script([call("workspace_exec", args), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills])
    run(agent, "summarise", "conv-1")
    assert "workspace_exec" in script.tools_offered(0)
    (result,) = script.tool_results(1)
    assert result.outcome == "success", result.content
    assert "exit code 0" in str(result.content) and "bwrap" in str(result.content)
    assert '<file path="out/summary.md">' in str(result.content)


@pytest.fixture(params=["sqlite", "redis"])
def store_url(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[str]:
    """A shared store two workers open: a SQLite file, or a real redis-server on 127.0.0.1."""
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path / 'skills.db'}"
        return
    port = free_port()
    with running_redis(redis_server_binary(), tmp_path, port):
        yield f"redis://127.0.0.1:{port}/0"


def test_loads_persist_in_a_shared_store_and_stay_per_conversation(
    repo: Repository, store_url: str
) -> None:
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    first, second = open_store(store_url), open_store(store_url)
    try:
        skills = SkillsToolset(repo, store=first, load_mode="session")
        run(Agent(FunctionModel(script), toolsets=[skills]), "notes", "conv-1")
        other_worker = SkillsToolset(repo, store=second)
        assert list(other_worker.tools_for("conv-1").state().loaded) == ["release-notes"]
        assert not other_worker.tools_for("conv-2").state().loaded
    finally:
        first.close()
        second.close()


def test_the_trace_has_a_line_per_run_and_per_tool_call(repo: Repository) -> None:
    stream = io.StringIO()
    skills = SkillsToolset(repo, trace=Trace(stream))
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    run(Agent(FunctionModel(script), toolsets=[skills]), "notes", "conv-1")
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [r["type"] for r in records] == ["run", "tool"]
    tool = records[1]
    assert tool["session"] == "conv-1" and tool["tool"] == "skill_load"
    assert tool["status"] == "ok" and tool["source"] == "pydantic-ai"


def test_the_trace_of_a_command_says_how_it_ended(repo: Repository, tmp_path: Path) -> None:
    stream = io.StringIO()
    skills = SkillsToolset(
        repo,
        workspace=WorkspaceManager(tmp_path / "ws"),
        executor=FinishedExecutor(-9, timed_out=True),
        trace=Trace(stream),
    )
    script = Script([call("workspace_exec", {"command": "make"}), say("ok")])
    run(Agent(FunctionModel(script), toolsets=[skills]), "build", "conv-1")
    (result,) = script.tool_results(1)
    assert result.outcome == "success"  # the model reads the timeout as a result
    (tool,) = [r for r in map(json.loads, stream.getvalue().splitlines()) if r["type"] == "tool"]
    assert (tool["status"], tool["exit_code"], tool["timed_out"]) == ("timed_out", -9, True)


def test_the_example_runs_against_an_openai_compatible_server(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = [
        reply(tools=[("skill_load", {"skill": "release-notes"})]),
        reply("Release notes drafted."),
    ]
    server = _fake_openai()(script).start()
    try:
        trace = tmp_path / "trace.jsonl"
        argv = ["pydantic_ai_agent.py", "notes for v1.4.0", "--base-url", f"{server.url}/v1"]
        monkeypatch.setattr(sys, "argv", [*argv, "--model", "any", "--trace", str(trace)])
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    finally:
        server.stop()
    assert capsys.readouterr().out == "Release notes drafted.\n"
    first, second = server.bodies()
    assert "<available_skills>" in json.dumps(first["messages"])
    assert "release notes" in json.dumps(second["messages"][-1]).lower()
    assert '"status": "ok"' in trace.read_text(encoding="utf-8")


def test_a_load_whose_result_left_the_history_is_delivered_again_in_full(
    repo: Repository,
) -> None:
    skills = SkillsToolset(repo, load_mode="session")
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[skills])
    run(agent, "notes", "conv-1")
    again = Script([call("skill_load", {"skill": "release-notes"}, "c9"), say("ok")])
    with agent.override(model=FunctionModel(again)):
        run(agent, "notes again, fresh history", "conv-1")
    assert "Group commits by type" in str(again.tool_results(1)[0].content)


def test_a_named_skill_activates_all_of_a_toolsets_tools(repo: Repository) -> None:
    skills = SkillsToolset(repo)
    gated = skills.activated(FunctionToolset([git], id="user"), skill="release-notes")
    script = Script([call("skill_load", {"skill": "release-notes"}), say("ok")])
    run(Agent(FunctionModel(script), toolsets=[skills, gated]), "notes", "conv-1")
    assert "git" not in script.tools_offered(0) and "git" in script.tools_offered(1)


def test_malformed_json_arguments_are_answered_and_the_run_goes_on(repo: Repository) -> None:
    script = Script(
        [
            call("skill_load", '{"skill": "release-notes"', "c1"),  # type: ignore[arg-type]
            call("skill_load", {"skill": "release-notes"}, "c2"),
            say("ok"),
        ]
    )
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    assert run(agent, "notes", "conv-1") == "ok"
    (malformed,) = script.tool_results(1)
    assert malformed.outcome == "failed"
    assert "Arguments are not valid JSON" in str(malformed.content)
    assert "Group commits by type" in str(script.tool_results(2)[0].content)


def test_without_pydantic_ai_the_module_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pydantic_ai", None)
    monkeypatch.delitem(sys.modules, "skillshelf.integrations.pydantic_ai")
    with pytest.raises(MissingExtraError) as caught:
        importlib.import_module("skillshelf.integrations.pydantic_ai")
    assert caught.value.extra == "pydantic-ai"
    assert install_hint("pydantic-ai") in str(caught.value)


def test_a_slash_command_the_user_may_not_give_ends_the_run_before_any_request(
    tmp_path: Path,
) -> None:
    from skillshelf.core.slash import SlashCommandError

    make_skill(
        tmp_path, "model-only", "Only the model loads it.", frontmatter={"user-invocable": False}
    )
    asked: list[int] = []

    def model(messages: list[Any], info: AgentInfo) -> Any:
        asked.append(1)
        return ModelResponse(parts=[TextPart("never")])

    skills = SkillsToolset(Repository([tmp_path], cache_dir=False))
    agent = Agent(FunctionModel(model), toolsets=[skills])
    with pytest.raises(SlashCommandError, match="not a user command"):
        anyio.run(functools.partial(agent.run, "/model-only go", conversation_id="c1"))
    assert asked == []
    assert skills.tools_for("c1").state().loaded == {}


def test_a_slash_command_loads_its_skill_for_that_run_only(tmp_path: Path) -> None:
    make_skill(tmp_path, "greet", "Greets. Use to greet.", body="Say hello to $ARGUMENTS.")
    seen: list[str] = []

    def model(messages: list[Any], info: AgentInfo) -> Any:
        seen.append(info.instructions or "")
        return ModelResponse(parts=[TextPart("done")])

    skills = SkillsToolset(Repository([tmp_path], cache_dir=False))
    agent = Agent(FunctionModel(model), deps_type=Deps, toolsets=[skills])
    first = anyio.run(functools.partial(agent.run, "/greet Ada", deps=Deps("c1")))
    anyio.run(
        functools.partial(
            agent.run, "thanks", deps=Deps("c1"), message_history=first.all_messages()
        )
    )
    assert "Say hello to Ada." in seen[0]
    assert "Say hello to Ada." not in seen[1]


def test_an_unknown_tool_is_answered_by_the_harness_with_the_agents_other_tools_named(
    repo: Repository,
) -> None:
    def git_log() -> str:
        return "log"

    script = Script([call("git_lgo", {}, "c1"), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo), FunctionToolset([git_log])])
    assert run(agent, "history", "conv-1") == "ok"
    (answer,) = script.tool_results(1)
    assert answer.outcome == "failed" and answer.retry is None
    assert "Unknown tool 'git_lgo'" in str(answer.content)
    assert "Did you mean: git_log?" in str(answer.content)
    assert "skill_load" in str(answer.content)


def test_repeated_unknown_tool_calls_are_counted_by_the_harness_not_pydantic_ais_budget(
    repo: Repository,
) -> None:
    # pydantic-ai's own budget (1 retry) would end this run on the second call.
    script = Script([call("nope", {"a": 1}, f"c{n}") for n in range(1, 4)] + [say("gave up")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    assert run(agent, "x", "conv-1") == "gave up"
    answers = [str(script.tool_results(n)[0].content) for n in (1, 2, 3)]
    assert all("Unknown tool 'nope'" in a for a in answers)
    assert "Stop retrying it" not in answers[0] + answers[1]
    assert "has now failed 3 times" in answers[2] and "Stop retrying it" in answers[2]


def test_a_slipped_skill_tool_name_runs_that_tool(repo: Repository) -> None:
    script = Script([call("Skill-Load", {"skill": "release-notes"}, "c1"), say("ok")])
    agent = Agent(FunctionModel(script), toolsets=[SkillsToolset(repo)])
    assert run(agent, "notes", "conv-1") == "ok"
    (answer,) = script.tool_results(1)
    assert answer.outcome == "success"
    assert "Group commits by type" in str(answer.content)

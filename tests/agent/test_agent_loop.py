"""The loop with the scripted model: steps, parallel calls, slash commands, activation,
sub-agents."""

from __future__ import annotations

import json
import logging
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from skillshelf.agent.loop import (
    GUIDANCE,
    Agent,
    EmptyResponseError,
    MaxStepsError,
    RunResult,
)
from skillshelf.core.session import SessionState
from skillshelf.core.slash import SlashCommandError
from skillshelf.errors import ToolFailed, ToolRetry, UsageError
from skillshelf.models import ModelRequest
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import Activation, Tool


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(root, "alpha", "Alpha things. Use for alpha.", body="ALPHA BODY $ARGUMENTS\n")
    make_skill(root, "beta", "Beta things. Use for beta.", body="BETA BODY first=$0 second=$1\n")
    make_skill(
        root,
        "gitty",
        "Git helper. Use for git.",
        body="GITTY BODY\n",
        frontmatter={"allowed-tools": "Bash(git:*) Read"},
    )
    make_skill(
        root,
        "hidden-cmd",
        "Only by command.",
        body="HIDDEN BODY\n",
        frontmatter={"disable-model-invocation": True},
    )
    make_skill(
        root,
        "model-only",
        "Only the model loads it.",
        body="MODEL ONLY BODY\n",
        frontmatter={"user-invocable": False},
    )
    return Repository([root], cache_dir=False)


def texts(request: ModelRequest) -> str:
    return json.dumps(request.messages)


def tools_in(request: ModelRequest) -> list[str]:
    return [d.name for d in request.tools]


def echo(text: str) -> str:
    """Echo the text."""
    return f"echo:{text}"


ECHO = Tool.from_function(echo)


# ---- the loop -----------------------------------------------------------------------------


def test_final_answer_without_tools(repo: Repository) -> None:
    model = ScriptedModel(["Hi."])
    result = Agent(model, repo).run_sync("hello")
    assert isinstance(result, RunResult)
    assert (result.output, result.steps, result.tool_calls) == ("Hi.", 1, [])
    system = model.requests[0].messages[0]
    assert system["role"] == "system" and GUIDANCE in system["content"]
    assert "hidden-cmd" not in system["content"] and "alpha" in system["content"]


def test_max_steps_is_a_clear_error(repo: Repository) -> None:
    model = ScriptedModel(lambda _r: reply(tools=[("skill_list", {})]))
    with pytest.raises(MaxStepsError, match="after 3 model requests"):
        Agent(model, repo, max_steps=3).run_sync("loop")
    assert len(model.requests) == 3


def test_parallel_calls_all_run_and_results_keep_their_order(repo: Repository) -> None:
    model = ScriptedModel(
        [
            reply(
                tools=[
                    ("echo", {"text": "one"}),
                    ("skill_load", {"skill": "alpha"}),
                    ("echo", {"text": "two"}),
                ]
            ),
            "done",
        ]
    )
    result = Agent(model, repo, tools=[ECHO]).run_sync("go")
    assert [r.tool for r in result.tool_calls] == ["echo", "skill_load", "echo"]
    tool_messages = [m for m in model.requests[1].messages if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in tool_messages] == ["call_1", "call_2", "call_3"]
    assert tool_messages[0]["content"] == "echo:one" and tool_messages[2]["content"] == "echo:two"
    assert "ALPHA BODY" in tool_messages[1]["content"]


def test_async_user_tools_run_concurrently(repo: Repository) -> None:
    both_started = anyio.Event()
    started: list[str] = []

    async def wait(name: str) -> str:
        started.append(name)
        if len(started) == 2:
            both_started.set()
        with anyio.fail_after(5):  # bounded: fails instead of hanging if calls were sequential
            await both_started.wait()
        return name

    model = ScriptedModel([reply(tools=[("wait", {"name": "a"}), ("wait", {"name": "b"})]), "ok"])
    result = Agent(model, repo, tools=[Tool.from_function(wait)]).run_sync("go")
    assert [r.content for r in result.tool_calls] == ["a", "b"]


def test_empty_replies_end_in_a_clear_error(repo: Repository) -> None:
    with pytest.raises(EmptyResponseError):
        Agent(ScriptedModel(lambda _r: reply("")), repo).run_sync("hi")


def test_user_tools_grade_their_own_failures_and_a_crash_is_fatal_and_logged(
    repo: Repository, caplog: pytest.LogCaptureFixture
) -> None:
    def fragile(kind: str) -> str:
        if kind == "soft":
            raise ToolRetry("try another kind")
        if kind == "stop":
            raise ToolFailed("the archive is gone")
        raise RuntimeError("disk on fire")

    model = ScriptedModel(
        [
            reply(
                tools=[
                    ("fragile", {"kind": "soft"}),
                    ("fragile", {"kind": "stop"}),
                    ("fragile", {"kind": "hard"}),
                    ("fragile", {}),
                ]
            ),
            "ok",
        ]
    )
    with caplog.at_level(logging.ERROR, logger="skillshelf.agent"):
        result = Agent(model, repo, tools=[Tool.from_function(fragile)]).run_sync("go")
    soft, stop, hard, missing = result.tool_calls
    assert (soft.status, soft.content) == ("recoverable", "try another kind")
    assert (stop.status, stop.content) == ("fatal", "the archive is gone")
    assert hard.status == "fatal" and "disk on fire" in hard.content
    assert missing.status == "recoverable" and "kind" in missing.content
    (record,) = caplog.records  # only the crash is logged, with its traceback
    assert record.exc_info is not None and isinstance(record.exc_info[1], RuntimeError)


def test_skill_tool_arguments_are_validated(repo: Repository) -> None:
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "alpah"})]), "ok"])
    result = Agent(model, repo).run_sync("go")
    assert result.tool_calls[0].status in ("ok", "recoverable")
    if result.tool_calls[0].status == "recoverable":
        assert "alpha" in result.tool_calls[0].content


def test_conversation_keeps_history_and_turn_loads_end(repo: Repository) -> None:
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "alpha"})]), "first", "second"])
    conversation = Agent(model, repo).conversation("s")
    conversation.send_sync("one")
    assert "alpha" in conversation.model_tools.state().loaded
    conversation.send_sync("two")
    assert conversation.model_tools.state().loaded == {}
    last = model.requests[-1].messages
    assert [m["role"] for m in last] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert "no longer loaded" in last[3]["content"]


def test_system_prompt_bytes_do_not_depend_on_loads(repo: Repository) -> None:
    model = ScriptedModel(
        [
            reply(tools=[("skill_load", {"skill": "alpha"})]),
            reply(tools=[("skill_load", {"skill": "beta"})]),
            "ok",
        ]
    )
    Agent(model, repo).run_sync("go")
    systems = {r.messages[0]["content"] for r in model.requests}
    assert len(systems) == 1


# ---- slash commands ---------------------------------------------------------------------


def test_slash_command_substitutes_arguments_before_the_first_request(repo: Repository) -> None:
    model = ScriptedModel(["ok"])
    Agent(model, repo).run_sync("/beta one 'two words' three")
    first = texts(model.requests[0])
    assert "BETA BODY first=one second=two words" in first


def test_stacked_slash_commands_load_each_skill(repo: Repository) -> None:
    model = ScriptedModel(["ok"])
    result = Agent(model, repo).run_sync("/alpha x y /beta p q")
    assert [(r.tool, r.source) for r in result.tool_calls] == [("skill_load", "slash")] * 2
    first = texts(model.requests[0])
    assert "ALPHA BODY x y" in first and "BETA BODY first=p second=q" in first


def test_user_only_skill_is_invocable_by_command_only(repo: Repository) -> None:
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "hidden-cmd"})]), "ok"])
    result = Agent(model, repo).run_sync("load hidden-cmd")
    assert result.tool_calls[0].status == "recoverable"
    assert "hidden-cmd" not in model.requests[0].messages[0]["content"]

    model = ScriptedModel(["ok"])
    Agent(model, repo).run_sync("/hidden-cmd")
    assert "HIDDEN BODY" in texts(model.requests[0])


def test_model_only_skill_refuses_slash_invocation(repo: Repository) -> None:
    with pytest.raises(SlashCommandError, match="user-invocable: false"):
        Agent(ScriptedModel(["ok"]), repo).run_sync("/model-only")


def test_unknown_command_suggests_names(repo: Repository) -> None:
    with pytest.raises(SlashCommandError, match="/alpha"):
        Agent(ScriptedModel(["ok"]), repo).run_sync("/alpah do it")


def test_slash_command_with_a_chinese_name_loads_the_skill(tmp_path: Path) -> None:
    root = tmp_path / "skills"
    make_skill(root, "目录浏览", "浏览目录。用于查看文件。", body="目录 BODY $ARGUMENTS\n")
    model = ScriptedModel(["ok"])
    result = Agent(model, Repository([root], cache_dir=False)).run_sync("/目录浏览 src")
    assert [(r.tool, r.source, r.status) for r in result.tool_calls] == [
        ("skill_load", "slash", "ok")
    ]
    assert "目录 BODY src" in json.dumps(model.requests[0].messages, ensure_ascii=False)


def test_a_path_is_not_a_command(repo: Repository) -> None:
    model = ScriptedModel(["ok"])
    assert Agent(model, repo).run_sync("/etc/hosts is broken").output == "ok"


# ---- tool activation --------------------------------------------------------------------


def named(name: str, result: str = "") -> Tool:
    return Tool(
        name, f"The {name} tool.", {"type": "object", "properties": {}}, lambda: result or name
    )


def test_only_activation_replaces_user_tools_but_keeps_skill_tools(repo: Repository) -> None:
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "alpha"})]), "ok"])
    agent = Agent(
        model,
        repo,
        tools=[ECHO],
        activations=[Activation([named("special")], skill="alpha", mode="only")],
    )
    agent.run_sync("go")
    before, after = (tools_in(r) for r in model.requests)
    assert "echo" in before and "special" not in before
    assert "echo" not in after and "special" in after and "skill_load" in after


def test_only_wins_over_include_and_identical_activations_merge(repo: Repository) -> None:
    shared = named("shared")
    activations = [
        Activation([named("extra")], skill="alpha", mode="include"),
        Activation([shared], skill="alpha", mode="only"),
        Activation([shared], skill="beta", mode="only"),
    ]
    model = ScriptedModel(
        [reply(tools=[("skill_load", {"skill": "alpha"}), ("skill_load", {"skill": "beta"})]), "ok"]
    )
    Agent(model, repo, tools=[ECHO], activations=activations).run_sync("go")
    after = tools_in(model.requests[1])
    assert after.count("shared") == 1 and "extra" not in after and "echo" not in after


def test_activated_tool_replaces_a_user_tool_of_the_same_name(repo: Repository) -> None:
    model = ScriptedModel(
        [reply(tools=[("skill_load", {"skill": "alpha"})]), reply(tools=[("echo", {})]), "ok"]
    )
    replacement = named("echo", "replaced")
    agent = Agent(model, repo, tools=[ECHO], activations=[Activation([replacement], skill="alpha")])
    result = agent.run_sync("go")
    assert tools_in(model.requests[1]).count("echo") == 1
    assert result.tool_calls[1].content == "replaced"


def test_activated_tool_named_like_a_skill_tool_is_ignored_with_a_warning(
    repo: Repository, caplog: pytest.LogCaptureFixture
) -> None:
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "alpha"})]), "ok"])
    agent = Agent(model, repo, activations=[Activation([named("skill_load")], skill="alpha")])
    assert agent.warnings and "skill_load" in agent.warnings[0]
    assert "built-in skill tool" in caplog.text
    agent.run_sync("go")
    after = model.requests[1]
    assert tools_in(after).count("skill_load") == 1
    assert "The skill_load tool." not in [d.description for d in after.tools]


def test_user_tool_named_like_a_skill_tool_is_a_usage_error(repo: Repository) -> None:
    with pytest.raises(UsageError):
        Agent(ScriptedModel([]), repo, tools=[named("skill_list")])


def test_lifetimes_invocation_ends_with_the_load_session_stays(repo: Repository) -> None:
    activations = [
        Activation([named("brief")], skill="alpha", lifetime="invocation"),
        Activation([named("lasting")], skill="alpha", lifetime="session"),
    ]
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "alpha"})]), "first", "second"])
    conversation = Agent(model, repo, activations=activations).conversation("s")
    conversation.send_sync("one")
    assert {"brief", "lasting"} <= set(tools_in(model.requests[1]))
    conversation.send_sync("two")  # turn load mode: alpha is unloaded now
    third = tools_in(model.requests[2])
    assert "brief" not in third and "lasting" in third


def test_allowed_tools_drive_activation(repo: Repository) -> None:
    pool = Activation([named("Bash"), named("Read"), named("Write")])
    model = ScriptedModel([reply(tools=[("skill_load", {"skill": "gitty"})]), "ok"])
    Agent(model, repo, activations=[pool]).run_sync("go")
    before, after = (tools_in(r) for r in model.requests)
    assert not {"Bash", "Read", "Write"} & set(before)
    assert {"Bash", "Read"} <= set(after) and "Write" not in after


def test_enforcement_uses_the_active_skill_and_spares_skill_tools(repo: Repository) -> None:
    def Bash(command: str) -> str:
        return f"ran {command}"

    model = ScriptedModel(
        [
            reply(tools=[("skill_load", {"skill": "gitty"})]),
            reply(tools=[("Bash", {"command": "git status && rm -rf /"}), ("skill_list", {})]),
            reply(tools=[("skill_load", {"skill": "alpha"})]),
            reply(tools=[("Bash", {"command": "ls"})]),
            "ok",
        ]
    )
    agent = Agent(model, repo, tools=[Tool.from_function(Bash)], enforce_allowed_tools=True)
    result = agent.run_sync("go")
    statuses = [(r.tool, r.status) for r in result.tool_calls]
    assert statuses == [
        ("skill_load", "ok"),
        ("Bash", "recoverable"),
        ("skill_list", "ok"),
        ("skill_load", "ok"),
        ("Bash", "ok"),  # alpha (no allowed-tools) is the active skill now
    ]


# ---- sub-agents -------------------------------------------------------------------------


def test_sub_agent_has_its_own_state_and_no_inherited_declared_loads(repo: Repository) -> None:
    store = open_store(None)
    child_model = ScriptedModel([reply(tools=[("skill_load", {"skill": "beta"})]), "child answer"])
    child = Agent(child_model, repo, name="researcher", description="Researches.", store=store)
    parent_model = ScriptedModel(
        [reply(tools=[("researcher", {"task": "find beta"})]), "parent answer"]
    )
    parent = Agent(parent_model, repo, tools=[child.as_tool()], declared=["alpha"], store=store)
    conversation = parent.conversation("shared-session")
    result = conversation.send_sync("delegate")
    assert result.output == "parent answer"
    assert result.tool_calls[0].content == "child answer"
    assert "ALPHA BODY" in texts(parent_model.requests[0])
    assert all("ALPHA BODY" not in texts(r) for r in child_model.requests)
    assert child_model.requests[0].messages[-1] == {"role": "user", "content": "find beta"}
    parent_state = SessionState.from_entries(store.get_entries("shared-session", "main"))
    child_state = SessionState.from_entries(store.get_entries("shared-session", "researcher"))
    assert set(parent_state.loaded) == {"alpha"}
    assert set(child_state.loaded) == {"beta"}


def test_declared_unknown_skill_fails_before_any_request(repo: Repository) -> None:
    from skillshelf.tools import DeclaredLoadError

    model = ScriptedModel(["ok"])
    with pytest.raises(DeclaredLoadError):
        Agent(model, repo, declared=["nope"]).run_sync("hi")
    assert model.requests == []


# ---- packaging --------------------------------------------------------------------------


def test_agent_imports_no_provider_sdk() -> None:
    code = (
        "import sys, skillshelf.agent.loop, skillshelf.models; "
        "print(','.join(m for m in ('openai', 'anthropic') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_scripted_model_from_file(tmp_path: Path, repo: Repository) -> None:
    from skillshelf.models import open_model

    script = tmp_path / "script.json"
    script.write_text(
        json.dumps(
            [{"tool_calls": [{"name": "skill_load", "arguments": {"skill": "alpha"}}]}, "done"]
        )
    )
    model = open_model(f"scripted:{script}")
    result = Agent(model, repo).run_sync("go")
    assert result.output == "done" and result.tool_calls[0].status == "ok"


def test_reused_or_empty_call_ids_get_fresh_ones(repo: Repository) -> None:
    from skillshelf.models import ModelResponse, ToolCall

    same = ModelResponse("", (ToolCall("", "skill_list", "{}"), ToolCall("", "skill_list", "{}")))
    model = ScriptedModel(
        [same, reply(tools=[("skill_list", {})]), reply(tools=[("skill_list", {})]), "ok"]
    )
    Agent(model, repo).run_sync("go")
    ids = [m["tool_call_id"] for m in model.requests[-1].messages if m["role"] == "tool"]
    assert len(ids) == 4 and len(set(ids)) == 4 and all(ids)
    calls = [c["id"] for m in model.requests[-1].messages for c in m.get("tool_calls", ())]
    assert calls == ids


def test_a_stopped_run_leaves_a_history_that_can_be_resent(repo: Repository) -> None:
    from skillshelf.agent.loop import RepeatedToolFailureError

    failing = reply(tools=[("skill_read_file", {"skill": "alpha", "path": "missing.md"})])
    model = ScriptedModel([failing] * 4 + ["recovered"])
    conversation = Agent(model, repo).conversation()
    with pytest.raises(RepeatedToolFailureError):
        conversation.send_sync("read it")
    assert conversation.messages[-1]["role"] == "tool"
    assert conversation.send_sync("never mind").output == "recovered"


def test_a_failure_after_text_was_shown_is_not_retried(repo: Repository) -> None:
    from skillshelf.agent.loop import RetryPolicy
    from skillshelf.models import ModelResponse, TextSink, TransientModelError

    class Flaky:
        name = "flaky"
        calls = 0

        async def complete(
            self, request: ModelRequest, *, on_text: TextSink | None = None
        ) -> ModelResponse:
            self.calls += 1
            if on_text is not None:
                on_text("partial ")
            raise TransientModelError("connection reset", status=None)

    async def no_wait(_seconds: float) -> None:
        pass

    model = Flaky()
    shown: list[str] = []
    agent = Agent(model, repo, retry=RetryPolicy(sleep=no_wait))
    with pytest.raises(TransientModelError):
        anyio.run(lambda: agent.run("hi", on_text=shown.append))
    assert model.calls == 1 and shown == ["partial "]

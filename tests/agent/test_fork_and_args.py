"""Claude Code compatibility: ``context: fork`` skills run in a sub-agent whose steps stay out
of the main conversation; ``skill_load`` takes ``args`` substituted into ``$ARGUMENTS``."""

from __future__ import annotations

import dataclasses
import io
import json
from pathlib import Path

import pytest

from skillshelf.agent.config import AgentConfig
from skillshelf.agent.fork import fork_config
from skillshelf.agent.loop import Agent
from skillshelf.agent.results import RetryPolicy
from skillshelf.harness import CLAUDE_CODE_GUIDANCE, SkillSettings, Trace
from skillshelf.models import ModelRequest, ModelResponse
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import SkillTools

RESEARCH = "Research $ARGUMENTS thoroughly. First topic word: $0.\n"


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "deep-research",
        "Researches a topic in depth. Use for research questions.",
        body=RESEARCH,
        frontmatter={"context": "fork", "agent": "Explore"},
    )
    make_skill(root, "greet", "Greets someone. Use to greet.", body="Say hello to $ARGUMENTS.\n")
    make_skill(root, "notes", "Takes notes.", body="Write notes.\n", files={"ref.md": "REF"})
    return Repository([str(root)], cache_dir=False)


def is_sub_agent(request: ModelRequest) -> bool:
    first_user = next(m for m in request.messages if m["role"] == "user")
    return str(first_user["content"]).startswith("Research ")


def test_loading_a_fork_skill_runs_it_in_a_sub_agent(repo: Repository) -> None:
    def script(request: ModelRequest) -> ModelResponse:
        if is_sub_agent(request):
            if not any(m["role"] == "tool" for m in request.messages):
                return reply(tools=[("skill_read_file", {"skill": "notes", "path": "ref.md"})])
            return reply("FINDINGS: tidal power is growing")
        if not any(m["role"] == "tool" for m in request.messages):
            args = {"skill": "deep-research", "args": "tidal power"}
            return reply(tools=[("skill_load", args)])
        return reply("Summary for the user.")

    model = ScriptedModel(script)
    stream = io.StringIO()
    conversation = Agent(model, repo, trace=Trace(stream)).conversation("s")
    result = conversation.send_sync("research tidal power")
    assert result.output == "Summary for the user."
    (load,) = result.tool_calls
    assert load.status == "ok" and "FINDINGS: tidal power is growing" in load.content
    assert "ran in a sub-agent ('Explore')" in load.content
    # The sub-agent got the body with the arguments substituted as its task...
    sub_requests = [r for r in model.requests if is_sub_agent(r)]
    task = next(m for m in sub_requests[0].messages if m["role"] == "user")["content"]
    assert task == "Research tidal power thoroughly. First topic word: tidal.\n"
    # ...and none of its steps are in the main conversation.
    main_history = json.dumps(conversation.messages)
    assert "skill_read_file" not in main_history and "REF" not in main_history
    assert "deep-research" not in conversation.model_tools.state().loaded
    agents = {json.loads(line)["agent"] for line in stream.getvalue().splitlines()}
    assert agents == {"main", "main:fork:deep-research"}


def test_a_fork_is_offered_the_skill_tools_in_its_parents_tool_style(repo: Repository) -> None:
    def script(request: ModelRequest) -> ModelResponse:
        if is_sub_agent(request):
            return reply("FINDINGS")
        if not any(m["role"] == "tool" for m in request.messages):
            return reply(tools=[("Skill", {"skill": "deep-research", "args": "tidal power"})])
        return reply("Summary for the user.")

    model = ScriptedModel(script)
    agent = Agent(model, repo, tool_style="claude-code")
    result = agent.conversation("s").send_sync("research tidal power")
    assert "FINDINGS" in result.tool_calls[0].content
    (sub,) = [r for r in model.requests if is_sub_agent(r)]
    assert [t.name for t in sub.tools] == [t.name for t in model.requests[0].tools]
    assert "Skill" in [t.name for t in sub.tools]
    assert CLAUDE_CODE_GUIDANCE in sub.messages[0]["content"]


def test_a_fork_keeps_every_option_of_its_parent_but_its_name_and_declared_loads(
    repo: Repository,
) -> None:
    parent = AgentConfig(
        ScriptedModel([]),
        repo,
        instructions="Be terse.",
        load_mode="session",
        max_loaded=3,
        max_steps=7,
        catalog_format="markdown",
        catalog_budget=500,
        catalog_placement="reminder",
        placement="system",
        tool_style="claude-code",
        enforce_allowed_tools=True,
        retry=RetryPolicy(max_retries=1),
        visible=lambda skill: True,
        tool_timeout_s=9.0,
        tool_retries=1,
    )
    sub = fork_config(parent, repo.get("deep-research"))
    # The trace goes to the sub-agent's conversation; a description is for an agent tool.
    own = {"agent", "declared", "trace", "fork_of", "fork_tree"}
    options = {"max_steps", "retry"} | {f.name for f in dataclasses.fields(SkillSettings)} - own
    assert {o: getattr(sub, o) for o in options} == {o: getattr(parent, o) for o in options}
    assert sub.model is parent.model and sub.repo is parent.repo


def test_the_agent_named_by_the_skill_runs_it_when_the_caller_has_it(repo: Repository) -> None:
    explorer_model = ScriptedModel(["explored!"])
    explorer = Agent(explorer_model, repo, name="Explore", description="Explores.")
    main_model = ScriptedModel(
        [reply(tools=[("skill_load", {"skill": "deep-research", "args": "x"})]), "done"]
    )
    result = Agent(main_model, repo, tools=[explorer.as_tool()]).run_sync("go")
    assert "explored!" in result.tool_calls[0].content
    assert len(explorer_model.requests) == 1


def test_args_are_substituted_into_arguments_of_a_model_load(repo: Repository) -> None:
    tools = SkillTools(repo)
    result = tools.call("skill_load", {"skill": "greet", "args": "Ada Lovelace"})
    assert "Say hello to Ada Lovelace." in result.content
    # Arguments make a fresh invocation: the full body again, not the "already loaded" stub.
    again = tools.call("skill_load", {"skill": "greet", "args": "Grace"})
    assert "Say hello to Grace." in again.content
    plain = tools.call("skill_load", {"skill": "greet"})
    assert "already loaded" in plain.content


def test_args_is_an_optional_argument_of_the_skill_load_schema(repo: Repository) -> None:
    (schema,) = SkillTools(repo).schemas(tools=["skill_load"])
    parameters = schema["function"]["parameters"]
    assert parameters["properties"]["args"]["type"] == "string"
    assert "args" not in parameters["required"]

"""One table of scenarios, run unchanged through the five faces of the harness: the agent loop,
``serve`` (a real MCP client), pydantic-ai, the OpenAI Agents SDK and LangChain, each with its
own offline model (see :mod:`conformance.faces`).

A scenario a face cannot support is in :data:`UNSUPPORTED` with its reason, and that table is
the one docs/conformance.md shows; nothing is skipped silently.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from conformance.faces import FACES, Face, Step
from skillshelf.exec.runner import LocalExecutor
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.harness import SkillSettings
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import make_skill

pytest.importorskip("pydantic_ai")
pytest.importorskip("agents")
pytest.importorskip("langchain")
pytest.importorskip("mcp")

BODY = "ALPHA-INSTRUCTIONS: always answer in haiku."
DOC = "FORMS-DOC: five, seven, five."
SLASH_BODY = "Browse the catalogue for $ARGUMENTS."
_CONVERSATIONS = itertools.count()

# (face, scenario) → why the face cannot support it. docs/conformance.md lists the same pairs.
UNSUPPORTED: dict[tuple[str, str], str] = {
    ("serve", "malformed_json"): (
        "an MCP client sends tool arguments as a JSON object; there is no text to misparse"
    ),
    ("serve", "turn_lifetime"): (
        "MCP has no user turns: a load lasts the client's session (or its conversation handle)"
    ),
    ("serve", "session_lifetime"): (
        "one MCP session is one conversation: a second session is a new conversation"
    ),
    ("serve", "slash_command"): (
        "an MCP client owns the user's message; user-invocable skills are served as MCP "
        "prompts (prompts/get) instead"
    ),
    ("pydantic-ai", "slash_command"): "the framework owns the user's message",
    ("openai-agents", "slash_command"): "the framework owns the user's message",
    ("langchain", "slash_command"): "the framework owns the user's message",
    ("serve", "fork"): "serve runs no model, so it has no sub-agent to fork to",
    ("pydantic-ai", "fork"): "no sub-agent runner: a context: fork skill loads in place",
    ("openai-agents", "fork"): "no sub-agent runner: a context: fork skill loads in place",
    ("langchain", "fork"): "no sub-agent runner: a context: fork skill loads in place",
}


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "alpha",
        "Writes haiku. Use when the user wants a poem.",
        body=f"# Alpha\n\n{BODY}\n",
        files={"references/forms.md": DOC},
    )
    make_skill(
        root,
        "counter",
        "Counts rows with a script. Use when asked to count.",
        body="Run scripts/count.py.",
        files={
            "scripts/count.py": "import sys\nprint(17)\nsys.exit(3)\n",
            "scripts/slow.py": "import time\ntime.sleep(30)\n",
        },
    )
    make_skill(root, "目录浏览", "Browse a catalogue. Use when asked to browse.", body=SLASH_BODY)
    make_skill(
        root,
        "researcher",
        "Researches a question in a sub-agent. Use for deep questions.",
        body="Research this: $ARGUMENTS",
        frontmatter={"context": "fork"},
    )
    return Repository([root])


def _conversation() -> str:
    return f"conv-{next(_CONVERSATIONS)}"


def _call(tool: str, raw: str) -> Step:
    return (tool, raw)


# -- the scenarios -------------------------------------------------------------------------------

Scenario = Callable[[Face, Repository], None]


def catalog_present(face: Face, repo: Repository) -> None:
    t = face.run(repo, SkillSettings(store=open_store(None)), ["done"], _conversation())
    assert "alpha" in t.seen[0] and "Writes haiku." in t.seen[0]
    assert t.answer == "done"


def load_then_body(face: Face, repo: Repository) -> None:
    script = [_call("skill_load", '{"skill": "alpha"}'), "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [False]
    assert BODY in t.seen[1]  # the next request has the full body
    assert t.answer == "done"


def read_and_select_docs(face: Face, repo: Repository) -> None:
    script = [
        _call("skill_read_file", '{"skill": "alpha", "path": "references/forms.md"}'),
        _call("skill_load", '{"skill": "alpha"}'),
        _call("skill_select_docs", '{"skill": "alpha", "docs": ["references/forms.md"]}'),
        "done",
    ]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [False, False, False]
    assert DOC in t.results[0]
    assert DOC in t.seen[3]


def unload(face: Face, repo: Repository) -> None:
    script = [
        _call("skill_load", '{"skill": "alpha"}'),
        _call("skill_unload", '{"skill": "alpha"}'),
        _call("skill_unload", '{"skill": "alpha"}'),
        "done",
    ]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert "unloaded" in t.results[1] and "was not loaded" in t.results[2]


def unknown_skill(face: Face, repo: Repository) -> None:
    script = [_call("skill_load", '{"skill": "alpah"}'), "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [True]
    assert "alpha" in t.results[0]  # the closest name, to try again
    assert t.answer == "done"


def missing_argument(face: Face, repo: Repository) -> None:
    script = [_call("skill_load", "{}"), "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [True] and "skill" in t.results[0]
    assert t.answer == "done"


def invalid_argument(face: Face, repo: Repository) -> None:
    script = [_call("skill_search", '{"query": "poem", "limit": "many"}'), "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [True] and "limit" in t.results[0]
    assert t.answer == "done"


def malformed_json(face: Face, repo: Repository) -> None:
    script = [_call("skill_load", '{"skill": "alpha"'), "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [True] and "JSON" in t.results[0]
    assert t.answer == "done"  # never a crash or an empty answer


def fatal_repeat_respelled(face: Face, repo: Repository) -> None:
    # The same failing call three times, its key spelt three ways: one call, so the third is
    # answered as fatal (stop retrying).
    script = [
        _call("skill_read_file", '{"skill": "alpha", "path": "missing.md"}'),
        _call("skill_read_file", '{"Skill": "alpha", "path": "missing.md"}'),
        _call("skill_read_file", '{"skill": "alpha", "Path": "missing.md"}'),
        "done",
    ]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert t.errors == [True, True, True]
    assert "Stop retrying" not in t.results[1]
    assert "Stop retrying" in t.results[2]


def workspace_exec(face: Face, repo: Repository) -> None:
    # A command's output and exit code reach the model and the trace; one past its timeout is
    # killed and says so. The exit code is the command's, not an error of the harness.
    workspaces = WorkspaceManager()
    settings = SkillSettings(store=open_store(None), workspace=workspaces, executor=LocalExecutor())
    script = [
        _call("workspace_exec", '{"skill": "counter", "command": "python3 scripts/count.py"}'),
        _call(
            "workspace_exec",
            '{"skill": "counter", "command": "python3 scripts/slow.py", "timeout_s": 1}',
        ),
        "done",
    ]
    try:
        t = face.run(repo, settings, script, _conversation())
    finally:
        workspaces.close_all()
    assert "17" in t.results[0] and "exit code 3" in t.results[0]
    assert "timed out and was killed" in t.results[1]
    assert t.answer == "done"
    tools = [r for r in t.trace if r["type"] == "tool" and r.get("tool") == "workspace_exec"]
    if face.name == "serve":  # serve writes no trace; its structured result carries them
        return
    assert [r["status"] for r in tools] == ["nonzero_exit", "timed_out"]
    assert tools[0]["exit_code"] == 3


def turn_lifetime(face: Face, repo: Repository) -> None:
    settings = SkillSettings(store=open_store(None), load_mode="turn")
    conversation = _conversation()
    face.run(repo, settings, [_call("skill_load", '{"skill": "alpha"}'), "ok"], conversation)
    t = face.run(repo, settings, [_call("skill_unload", '{"skill": "alpha"}'), "ok"], conversation)
    assert "was not loaded" in t.results[0]  # the next user message ended the turn's load


def session_lifetime(face: Face, repo: Repository) -> None:
    settings = SkillSettings(store=open_store(None), load_mode="session")
    conversation = _conversation()
    face.run(repo, settings, [_call("skill_load", '{"skill": "alpha"}'), "ok"], conversation)
    t = face.run(repo, settings, [_call("skill_unload", '{"skill": "alpha"}'), "ok"], conversation)
    assert re.search(r"'alpha' unloaded", t.results[0])


def isolation(face: Face, repo: Repository) -> None:
    settings = SkillSettings(store=open_store(None), load_mode="session")
    face.run(repo, settings, [_call("skill_load", '{"skill": "alpha"}'), "ok"], _conversation())
    t = face.run(repo, settings, [_call("skill_unload", '{"skill": "alpha"}'), "ok"], "other")
    assert "was not loaded" in t.results[0]


def slash_command(face: Face, repo: Repository) -> None:
    t = face.run(
        repo, SkillSettings(store=open_store(None)), ["ok"], _conversation(), "/目录浏览 maps"
    )
    assert "Browse the catalogue for maps." in t.seen[0]


def fork(face: Face, repo: Repository) -> None:
    script = [_call("skill_load", '{"skill": "researcher", "args": "tides"}'), "found", "done"]
    t = face.run(repo, SkillSettings(store=open_store(None)), script, _conversation())
    assert "ran in a sub-agent" in t.results[0] and "found" in t.results[0]
    assert "Research this: tides" in t.seen[1]  # the sub-agent's task


SCENARIOS: dict[str, Scenario] = {
    f.__name__: f
    for f in (
        catalog_present,
        load_then_body,
        read_and_select_docs,
        unload,
        unknown_skill,
        missing_argument,
        invalid_argument,
        malformed_json,
        fatal_repeat_respelled,
        workspace_exec,
        turn_lifetime,
        session_lifetime,
        isolation,
        slash_command,
        fork,
    )
}


def _cases() -> list[object]:
    cases: list[object] = []
    for face in FACES:
        for name, scenario in SCENARIOS.items():
            if (face.name, name) not in UNSUPPORTED:
                cases.append(pytest.param(face, scenario, id=f"{face.name}-{name}"))
    return cases


@pytest.mark.parametrize(("face", "scenario"), _cases())
def test_the_face_passes_the_scenario(face: Face, scenario: Scenario, repo: Repository) -> None:
    scenario(face, repo)


def test_every_unsupported_pair_names_a_real_face_and_scenario_and_is_documented() -> None:
    faces = {f.name for f in FACES}
    doc = (Path(__file__).parents[2] / "docs" / "conformance.md").read_text(encoding="utf-8")
    for (face, scenario), reason in UNSUPPORTED.items():
        assert face in faces and scenario in SCENARIOS
        assert f"| {face} | `{scenario}` | {reason} |" in doc


def test_the_agent_loop_supports_every_scenario() -> None:
    assert not [s for f, s in UNSUPPORTED if f == "agent"]

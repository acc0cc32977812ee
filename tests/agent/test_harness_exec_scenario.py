"""The whole harness from the command line: ``chat --exec --sandbox bwrap`` and ``eval --exec``
against a scripted OpenAI-compatible server run "load a skill → read its doc → run its script on
an input file → answer", and what the script produced reaches the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_cli import CLI_TIMEOUT_S, chat
from fake_providers import FakeOpenAI

from skillshelf.exec.runner import bwrap_available
from skillshelf.models import ModelResponse
from skillshelf.testing import make_skill, reply

COUNT_SCRIPT = """\
import pathlib, sys
words = pathlib.Path(sys.argv[1]).read_text().split()
pathlib.Path("out").mkdir(exist_ok=True)
pathlib.Path("out/count.txt").write_text(f"words: {len(words)}\\n")
print("counted", sys.argv[1])
"""
EXEC_CALL = {
    "command": "python3 scripts/count.py assets/input.txt",
    "skill": "word-count",
    "collect": ["out/*"],
}


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def needs_bwrap() -> None:
    problem = bwrap_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests for real: {problem}")
        pytest.skip(f"bubblewrap does not work here: {problem}")


@pytest.fixture
def skills(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_skill(
        root,
        "word-count",
        "Counts the words of a text file with a bundled script. Use when asked how many words.",
        body="# Word count\n\nRead references/guide.md, then run scripts/count.py on the file.\n",
        files={
            "references/guide.md": "A word is a run of characters between whitespace.\n",
            "scripts/count.py": COUNT_SCRIPT,
            "assets/input.txt": "alpha beta gamma delta\n",
        },
    )
    return root


def scenario() -> list[ModelResponse]:
    return [
        reply(tools=[("skill_load", {"skill": "word-count"})]),
        reply(tools=[("skill_read_file", {"skill": "word-count", "path": "references/guide.md"})]),
        reply(tools=[("workspace_exec", EXEC_CALL)]),
        reply("The file has 4 words."),
    ]


def last_tool_result(body: dict[str, Any]) -> str:
    return str([m for m in body["messages"] if m["role"] == "tool"][-1]["content"])


@pytest.mark.usefixtures("needs_bwrap")
def test_chat_with_exec_runs_a_skill_script_in_bwrap_and_the_output_reaches_the_model(
    servers: list[FakeOpenAI], skills: Path
) -> None:
    out, server = chat(
        servers,
        scenario(),
        *("--root", str(skills), "--exec", "--sandbox", "bwrap"),
        *("-m", "How many words are in the sample input?"),
    )
    assert out.returncode == 0, out.stderr
    assert out.stdout == "The file has 4 words.\n"
    assert "workspace_exec" in out.stderr and "→ ok" in out.stderr
    bodies = server.bodies()
    assert len(bodies) == 4
    assert "workspace_exec" in [t["function"]["name"] for t in bodies[0]["tools"]]
    assert "run of characters between whitespace" in last_tool_result(bodies[2])
    result = last_tool_result(bodies[3])
    assert "counted assets/input.txt" in result  # the script's stdout
    assert "words: 4" in result  # the collected out/count.txt, inline


def test_chat_without_exec_does_not_offer_workspace_exec(
    servers: list[FakeOpenAI], skills: Path
) -> None:
    out, server = chat(servers, [reply("No tools.")], "--root", str(skills), "-m", "hi")
    assert out.returncode == 0, out.stderr
    offered = [t["function"]["name"] for t in server.bodies()[0]["tools"]]
    assert "workspace_exec" not in offered and "skill_load" in offered


def test_sandbox_without_exec_is_a_usage_error(servers: list[FakeOpenAI], skills: Path) -> None:
    out, _ = chat(servers, [], "--root", str(skills), "--sandbox", "local", "-m", "hi")
    assert out.returncode == 2
    assert "--sandbox only applies with --exec" in out.stderr


@pytest.mark.usefixtures("needs_bwrap")
def test_eval_with_exec_scores_the_expected_workspace_exec_parameters(
    servers: list[FakeOpenAI], skills: Path, tmp_path: Path
) -> None:
    server = FakeOpenAI(scenario()).start()
    servers.append(server)
    cases = tmp_path / "cases.json"
    expected = {"command": EXEC_CALL["command"], "skill": "word-count"}
    case = {
        "id": "count-words",
        "query": "How many words are in the sample input?",
        "expected_skill": "word-count",
        "expected_params": {"workspace_exec": expected},
    }
    cases.write_text(json.dumps([case]))
    command = [sys.executable, "-c", "from skillshelf.cli import main; main()", "eval"]
    command += [str(cases), "--root", str(skills), "--no-cache", "--json"]
    command += ["--model", "openai:any", "--base-url", f"{server.url}/v1"]
    command += ["--exec", "--sandbox", "bwrap"]
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    out = subprocess.run(command, capture_output=True, text=True, env=env, timeout=CLI_TIMEOUT_S)
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    assert report["summary"]["param_accuracy"] == {"hits": 1, "total": 1, "value": 1.0}
    assert report["cases"][0]["status"] == "pass"
    assert "words: 4" in last_tool_result(server.bodies()[3])


def test_eval_case_expecting_workspace_exec_without_exec_is_a_usage_error(
    skills: Path, tmp_path: Path
) -> None:
    from click.testing import CliRunner

    from skillshelf.cli import main

    cases = tmp_path / "cases.json"
    case = {"user": "count", "tool": "workspace_exec", "expected_params": {"skill": "word-count"}}
    cases.write_text(json.dumps([case]))
    replies = tmp_path / "replies.json"
    replies.write_text("[]")
    result = CliRunner().invoke(
        main,
        ["eval", str(cases), "--root", str(skills), "--model", f"scripted:{replies}"],
    )
    assert result.exit_code == 2
    assert "workspace_exec is offered only when running commands is enabled" in result.output

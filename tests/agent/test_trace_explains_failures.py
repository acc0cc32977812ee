"""The trace explains failures: every failed tool record carries its error kind, the clipped
message the model got and the repairs applied; every run ends with a totals record; ``trace
summary`` turns a trace into trigger and failure rates."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from finished_executor import FinishedExecutor
from skillshelf.agent.loop import Agent, RepeatedToolFailureError
from skillshelf.cli import main
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.harness import Trace
from skillshelf.reports.tracereport import read_trace, summarize_trace
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import Tool

KINDS = [
    "missing",
    "invalid",
    "unknown_skill",
    "unknown_tool",
    "refused",
    "timeout",
    "tool_error",
    "internal",
]


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(root, "alpha", "Alpha things.", body="ALPHA\n")
    make_skill(
        root,
        "gitty",
        "Git helper.",
        body="GIT\n",
        frontmatter={"allowed-tools": "Bash(git:*) slow broken"},
    )
    return Repository([str(root)], cache_dir=False)


def failing_run(repo: Repository, path: Path, release: threading.Event) -> None:
    def count(n: int) -> str:
        return str(n)

    def Bash(command: str) -> str:
        return "ran"

    def slow(x: str) -> str:
        release.wait(10)  # bounded; released by the test
        return "late"

    def broken(x: str) -> str:
        raise RuntimeError("bug")

    tools = [
        Tool.from_function(count),
        Tool.from_function(Bash),
        Tool.from_function(slow, timeout_s=0.1),
        Tool.from_function(broken),
    ]
    model = ScriptedModel(
        [
            reply(tools=[("Skill-Load", {"skill": "gitty"})]),
            reply(
                tools=[
                    ("count", {}),
                    ("count", {"n": "lots"}),
                    ("skill_load", {"skill": "gammma"}),
                    ("launch", {}),
                    ("Bash", {"command": "rm -rf /"}),
                    ("slow", {"x": "1"}),
                    ("skill_read_file", {"skill": "gitty", "path": "nope.md"}),
                    ("broken", {"x": "1"}),
                ]
            ),
            "I could not do all of it.",
        ]
    )
    trace = Trace(path)
    try:
        agent = Agent(model, repo, tools=tools, enforce_allowed_tools=True, trace=trace)
        agent.run_sync("do things", session_id="s1")
        # A second run that ends in an error: the model repeats a call answered as fatal.
        repeat = ScriptedModel(
            [reply(tools=[("broken", {"x": "2"})]), reply(tools=[("broken", {"x": "2"})])]
        )
        with pytest.raises(RepeatedToolFailureError):
            Agent(repeat, repo, tools=tools, trace=trace).run_sync("again", session_id="s2")
    finally:
        trace.close()


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture
def trace_file(repo: Repository, tmp_path: Path) -> Path:
    release = threading.Event()
    path = tmp_path / "trace.jsonl"
    try:
        failing_run(repo, path, release)
    finally:
        release.set()
    return path


def test_each_failed_tool_record_carries_its_kind_and_message(trace_file: Path) -> None:
    tools = [r for r in records(trace_file) if r["type"] == "tool" and r["session"] == "s1"]
    load, *failed = tools
    assert (load["tool"], load["status"], load["error_kind"]) == ("skill_load", "ok", None)
    assert load["repairs"] == ["Read tool name 'Skill-Load' as 'skill_load'."]
    assert [r["error_kind"] for r in failed] == KINDS
    for record in failed:
        assert record["status"] != "ok" and record["message"]
        assert len(record["message"]) <= 600  # clipped
    by_kind = {r["error_kind"]: r for r in failed}
    assert "Ask the user" in by_kind["missing"]["message"]
    assert "Invalid argument 'n'" in by_kind["invalid"]["message"]
    assert "Refused" in by_kind["refused"]["message"]
    assert "timed out after 0.1s" in by_kind["timeout"]["message"]


def test_each_run_ends_with_a_totals_record(trace_file: Path) -> None:
    first, second = [r for r in records(trace_file) if r["type"] == "run"]
    assert first["outcome"] == "answer" and first["steps"] == 3
    assert first["tool_calls"] == {"ok": 1, "recoverable": 7, "fatal": 1}
    assert first["error_kinds"] == dict.fromkeys(KINDS, 1)
    assert first["loaded"] == ["gitty"] and first["duration_ms"] > 0
    assert second["outcome"] == "error" and second["error"] == "RepeatedToolFailureError"


def test_summary_gives_trigger_and_failure_rates(trace_file: Path) -> None:
    found, bad = read_trace(trace_file)
    summary = summarize_trace(found, unreadable=bad)
    assert (summary.runs, summary.answered, summary.errored) == (2, 1, 1)
    assert summary.trigger_rate == 0.5 and dict(summary.loads) == {"gitty": 1}
    assert summary.kinds["internal"] == 2 and summary.failure_rate("internal") == 0.2


def test_trace_summary_cli_prints_the_rates(trace_file: Path) -> None:
    with trace_file.open("a") as stream:
        stream.write("not json\n")
    text = CliRunner().invoke(main, ["trace", "summary", str(trace_file)])
    assert text.exit_code == 0, text.output
    assert "trigger rate: 1/2 runs loaded a skill (50%)" in text.output
    assert "internal" in text.output and "(20%)" in text.output
    assert "skipped 1 line(s)" in text.output
    as_json = CliRunner().invoke(main, ["trace", "summary", "--json", str(trace_file)])
    data = json.loads(as_json.output)
    assert data["failure_rates"]["timeout"] == 0.1 and data["loads"] == {"gitty": 1}
    assert set(data["failures"]) == set(KINDS)


@pytest.mark.parametrize(
    ("exit_code", "timed_out", "status"),
    [(0, False, "ok"), (3, False, "nonzero_exit"), (-9, True, "timed_out")],
)
def test_a_command_record_says_how_it_ended_while_the_model_gets_an_ordinary_result(
    repo: Repository, tmp_path: Path, exit_code: int, timed_out: bool, status: str
) -> None:
    path = tmp_path / "trace.jsonl"
    model = ScriptedModel([reply(tools=[("workspace_exec", {"command": "make"})]), "done"])
    trace = Trace(path)
    try:
        result = Agent(
            model,
            repo,
            workspace=WorkspaceManager(tmp_path / "ws"),
            executor=FinishedExecutor(exit_code, timed_out),
            trace=trace,
        ).run_sync("build it")
    finally:
        trace.close()
    (call,) = result.tool_calls
    assert (call.status, call.exit_code, call.timed_out) == ("ok", exit_code, timed_out)
    (tool,) = [r for r in records(path) if r["type"] == "tool"]
    assert (tool["status"], tool["exit_code"], tool["timed_out"]) == (status, exit_code, timed_out)
    assert tool["error_kind"] is None and tool["message"] is None
    (run,) = [r for r in records(path) if r["type"] == "run"]
    assert run["tool_calls"] == {status: 1}
    (message,) = [m for m in model.requests[-1].messages if m["role"] == "tool"]
    assert "is_error" not in message  # a command's failure is a result for the model
    summary = summarize_trace(read_trace(path)[0])
    assert summary.calls == {status: 1} and not summary.kinds

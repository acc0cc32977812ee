"""workspace_exec through SkillTools and the agent loop, and ``skillshelf exec``."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.agent.loop import Agent
from skillshelf.cli import main
from skillshelf.exec.runner import BwrapExecutor, LocalExecutor
from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, reply
from skillshelf.tools import SkillTools

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
SUMMARIZE = "python3 scripts/summarize_csv.py scripts/sample.csv --out out/summary.md"


@pytest.fixture
def repo() -> Repository:
    return Repository([EXAMPLES])


@pytest.fixture
def manager(tmp_path: Path) -> WorkspaceManager:
    return WorkspaceManager(tmp_path / "workspaces")


def test_workspace_exec_is_neither_offered_nor_run_without_a_workspace(repo: Repository) -> None:
    tools = SkillTools(repo)
    assert "workspace_exec" not in [s["function"]["name"] for s in tools.schemas()]
    result = tools.call("workspace_exec", {"command": "true"})
    assert result.status == "recoverable" and "not available" in result.content


def test_workspace_exec_is_offered_once_a_workspace_is_configured(
    repo: Repository, manager: WorkspaceManager
) -> None:
    tools = SkillTools(repo, workspace=manager, executor=LocalExecutor())
    assert "workspace_exec" in [s["function"]["name"] for s in tools.schemas()]


def test_workspace_exec_runs_the_example_skill_and_collects_its_output(
    repo: Repository, manager: WorkspaceManager, bwrap: BwrapExecutor
) -> None:
    tools = SkillTools(repo, workspace=manager, executor=bwrap, session_id="s1")
    args = {"command": SUMMARIZE, "skill": "csv-insights", "collect": ["out/*.md"]}
    result = tools.call("workspace_exec", args)
    assert result.status == "ok", result.content
    assert result.data is not None and result.data["exit_code"] == 0
    assert result.data["files"][0]["path"] == "out/summary.md"
    assert '<file path="out/summary.md">' in result.content
    assert (manager.open("s1").out_dir / "summary.md").is_file()


def test_a_skill_name_cannot_inject_a_command(
    repo: Repository, manager: WorkspaceManager, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    tools = SkillTools(repo, workspace=manager, executor=LocalExecutor())
    for name in ("csv-insights; touch pwned", "$(touch pwned)", "../../tmp"):
        result = tools.call("workspace_exec", {"command": "true", "skill": name})
        assert result.status != "ok"
    assert list(tmp_path.rglob("pwned")) == []


def test_the_policy_refusal_is_recoverable(repo: Repository, manager: WorkspaceManager) -> None:
    policy = ExecPolicy(allowed_commands=("python3",))
    tools = SkillTools(repo, workspace=manager, executor=LocalExecutor(), exec_policy=policy)
    result = tools.call("workspace_exec", {"command": "curl http://example.com"})
    assert result.status == "recoverable" and "not an allowed command" in result.content


def test_agent_loop_runs_the_example_skill_through_workspace_exec(
    repo: Repository, manager: WorkspaceManager, bwrap: BwrapExecutor
) -> None:
    exec_args = {"command": SUMMARIZE, "skill": "csv-insights", "collect": ["out/summary.md"]}
    model = ScriptedModel(
        [
            reply(tools=[("skill_load", {"skill": "csv-insights"})]),
            reply(tools=[("workspace_exec", exec_args)]),
            "The CSV has a few columns.",
        ]
    )
    agent = Agent(model, repo, workspace=manager, executor=bwrap)
    result = agent.run_sync("what is in the sample?", session_id="chat-1")
    assert [(r.tool, r.status) for r in result.tool_calls] == [
        ("skill_load", "ok"),
        ("workspace_exec", "ok"),
    ]
    assert "workspace_exec" in [d.name for d in model.requests[0].tools]
    assert "out/summary.md" in result.tool_calls[1].content
    assert "exit code 0" in result.tool_calls[1].content


def test_allowed_tools_limit_what_workspace_exec_starts(
    repo: Repository, manager: WorkspaceManager
) -> None:
    model = ScriptedModel(
        [
            reply(tools=[("skill_load", {"skill": "csv-insights"})]),
            reply(tools=[("workspace_exec", {"command": "curl http://example.com"})]),
            reply(tools=[("workspace_exec", {"command": "python3 -c 'print(1)'"})]),
            "done",
        ]
    )
    agent = Agent(
        model, repo, workspace=manager, executor=LocalExecutor(), enforce_allowed_tools=True
    )
    result = agent.run_sync("go")
    statuses = [(r.tool, r.status) for r in result.tool_calls]
    assert statuses[1:] == [("workspace_exec", "recoverable"), ("workspace_exec", "ok")]
    assert result.tool_calls[1].content.startswith("Refused")


def _exec(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["exec", "csv-insights", "--root", str(EXAMPLES), *args])
    return result.exit_code, result.stdout


def test_cli_exec_runs_the_example_skill_with_json_output(bwrap: BwrapExecutor) -> None:
    code, out = _exec(
        "--sandbox", "bwrap", "--collect", "out/*", "--json", "--", *SUMMARIZE.split()
    )
    assert code == 0
    data = json.loads(out)
    assert list(data) == [
        "exit_code",
        "timed_out",
        "stdout",
        "stderr",
        "stdout_truncated",
        "stderr_truncated",
        "files",
        "missing",
    ]
    assert [list(f) for f in data["files"]] == [["path", "size", "mime", "sha256"]]
    assert data["files"][0]["path"] == "out/summary.md"


def test_cli_exec_exit_code_is_the_commands(tmp_path: Path) -> None:
    assert _exec("--sandbox", "local", "--", "sh", "-c", "exit 3")[0] == 3


def test_cli_exec_exits_124_on_timeout() -> None:
    assert _exec("--sandbox", "local", "--timeout", "0.2", "--", "sleep", "30")[0] == 124


def test_cli_exec_places_inputs(tmp_path: Path) -> None:
    data = tmp_path / "data.csv"
    data.write_text("a,b\n1,2\n")
    code, out = _exec("--sandbox", "local", "--input", str(data), "--", "cat", "inputs/data.csv")
    assert (code, out) == (0, "a,b\n1,2\n")


def test_cli_exec_unknown_skill_fails_cleanly() -> None:
    result = CliRunner().invoke(main, ["exec", "nope", "--root", str(EXAMPLES), "--", "true"])
    assert result.exit_code == 1 and "Unknown skill" in result.stderr

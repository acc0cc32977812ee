"""``skillshelf call`` and ``skillshelf tools``: one tool call as a model makes it, and the schemas.

Driven in-process through click's ``CliRunner`` against ``examples/skills``; one test runs
the module in a real subprocess sharing a SQLite session with an in-process call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from skillshelf.cli import main

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
EXAMPLE_NAMES = ["api-error-triage", "commit-message", "csv-insights", "release-notes"]
SKILL_TOOLS = [
    "skill_search",
    "skill_list",
    "skill_load",
    "skill_list_docs",
    "skill_select_docs",
    "skill_read_file",
    "skill_unload",
]
STUB = "is already loaded and unchanged"
# Generous: a cold interpreter start plus a scan of four skills.
SUBPROCESS_TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def sqlite_url(tmp_path: Path) -> str:
    return f"sqlite:{tmp_path / 'state' / 'sessions.db'}"


def call(runner: CliRunner, tool: str, *args: str) -> Result:
    return runner.invoke(main, ["call", tool, *args, "--root", str(EXAMPLES)])


def call_json(runner: CliRunner, tool: str, *args: str) -> dict[str, Any]:
    result = call(runner, tool, *args, "--json")
    payload: dict[str, Any] = json.loads(result.stdout)
    assert result.exit_code == (0 if payload["status"] == "ok" else 1)
    return payload


# -- call ----------------------------------------------------------------------------------


def test_call_skill_load_prints_the_json_result_shape(runner: CliRunner) -> None:
    result = call(runner, "skill_load", '{"skill":"csv-insights"}', "--json")
    assert result.exit_code == 0, result.stderr
    payload = json.loads(result.stdout)
    assert list(payload) == ["tool", "status", "content"]
    assert payload["tool"] == "skill_load"
    assert payload["status"] == "ok"
    content = payload["content"]
    assert content.startswith('<skill_content name="csv-insights">\n# CSV Insights')
    assert f"Skill directory: {EXAMPLES.resolve() / 'csv-insights'}" in content
    assert "summarize_csv.py" in content.split("<skill_resources>")[1]


def test_call_without_json_prints_the_content(runner: CliRunner) -> None:
    result = call(runner, "skill_list_docs", '{"skill": "commit-message"}')
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "references/conventional-commits.md",
        "references/examples.md",
    ]


def test_call_without_arguments_runs_a_tool_that_needs_none(runner: CliRunner) -> None:
    payload = call_json(runner, "skill_list")
    assert payload["status"] == "ok"
    for name in EXAMPLE_NAMES:
        assert f"- {name} (v1.0): " in payload["content"]


def test_call_of_an_unknown_skill_exits_1_with_a_recoverable_result(runner: CliRunner) -> None:
    payload = call_json(runner, "skill_load", '{"skill": "csv-insight"}')
    assert payload["status"] == "recoverable"
    assert "Did you mean: csv-insights?" in payload["content"]


def test_call_error_in_text_mode_goes_to_stdout_with_its_grade_on_stderr(
    runner: CliRunner,
) -> None:
    result = call(
        runner, "skill_read_file", '{"skill": "csv-insights", "path": "../../etc/passwd"}'
    )
    assert result.exit_code == 1
    assert result.stdout.startswith("Refused path '../../etc/passwd'")
    assert "[recoverable]" in result.stderr


@pytest.mark.parametrize(
    ("tool", "raw", "expected"),
    [
        ("skill_load", "{not json", "not valid JSON"),
        ("skill_load", "{}", "Missing required argument 'skill'"),
        ("skill_search", '{"query": 3}', "Invalid argument 'query'"),
        ("skill_explode", "{}", "Unknown tool"),
    ],
)
def test_call_with_bad_arguments_exits_1(
    runner: CliRunner, tool: str, raw: str, expected: str
) -> None:
    payload = call_json(runner, tool, raw)
    assert payload["status"] == "recoverable"
    assert expected in payload["content"]


def test_call_with_an_unknown_store_url_is_a_usage_error(runner: CliRunner) -> None:
    result = call(runner, "skill_list", "--store", "mongo://x")
    assert result.exit_code == 2
    assert "Unknown session store URL" in result.stderr


def test_without_a_store_each_call_starts_afresh(runner: CliRunner) -> None:
    args = ('{"skill": "csv-insights"}',)
    assert call_json(runner, "skill_load", *args)["content"].startswith("<skill_content")
    assert call_json(runner, "skill_load", *args)["content"].startswith("<skill_content")


def test_successive_calls_with_a_sqlite_store_share_the_session(
    runner: CliRunner, sqlite_url: str
) -> None:
    shared = ("--store", sqlite_url, "--session", "s1")
    load = '{"skill": "csv-insights"}'
    first = call_json(runner, "skill_load", load, *shared)
    assert first["content"].startswith('<skill_content name="csv-insights">')
    second = call_json(runner, "skill_load", load, *shared)
    assert second["status"] == "ok"
    assert STUB in second["content"]
    unload = call_json(runner, "skill_unload", load, *shared)
    assert unload["content"] == "Skill 'csv-insights' unloaded."
    gone = call_json(runner, "skill_unload", load, *shared)
    assert gone["content"] == "Skill 'csv-insights' was not loaded."
    again = call_json(runner, "skill_load", load, *shared)
    assert again["content"].startswith("<skill_content")


def test_select_docs_across_calls_needs_the_earlier_load(
    runner: CliRunner, sqlite_url: str
) -> None:
    shared = ("--store", sqlite_url, "--session", "s1")
    select = '{"skill": "commit-message", "docs": ["references/examples.md"]}'
    assert call_json(runner, "skill_select_docs", select, *shared)["status"] == "recoverable"
    call_json(runner, "skill_load", '{"skill": "commit-message"}', *shared)
    payload = call_json(runner, "skill_select_docs", select, *shared)
    assert payload["content"] == "Docs selected for 'commit-message': references/examples.md"


def test_sessions_and_agents_are_separate_across_calls(runner: CliRunner, sqlite_url: str) -> None:
    load = '{"skill": "release-notes"}'
    call_json(runner, "skill_load", load, "--store", sqlite_url, "--session", "s1")
    for other in (("--session", "s2"), ("--session", "s1", "--agent", "sub")):
        payload = call_json(runner, "skill_load", load, "--store", sqlite_url, *other)
        assert payload["content"].startswith("<skill_content")


def test_the_third_identical_failure_across_calls_is_fatal(
    runner: CliRunner, sqlite_url: str
) -> None:
    args = ('{"skill": "csv-insights", "path": "nope.txt"}', "--store", sqlite_url)
    grades = [call_json(runner, "skill_read_file", *args)["status"] for _ in range(3)]
    assert grades == ["recoverable", "recoverable", "fatal"]


def test_a_real_subprocess_shares_the_sqlite_session(tmp_path: Path, sqlite_url: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKILLSHELF_ROOTS"}
    env["SKILLSHELF_CACHE_DIR"] = str(tmp_path / "subprocess-cache")
    command = [sys.executable, "-m", "skillshelf.cli", "call", "skill_load"]
    command += ['{"skill": "api-error-triage"}', "--root", str(EXAMPLES), "--json"]
    command += ["--store", sqlite_url, "--session", "s1"]

    def run() -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            command,
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            timeout=SUBPROCESS_TIMEOUT_S,
            check=False,
        )

    first, second = run(), run()
    assert first.returncode == 0, first.stderr
    assert json.loads(first.stdout)["content"].startswith('<skill_content name="api-error-triage">')
    assert second.returncode == 0
    assert STUB in json.loads(second.stdout)["content"]
    missing = subprocess.run(
        [*command[:4], '{"skill": "nope"}', *command[5:]],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert missing.returncode == 1
    assert json.loads(missing.stdout)["status"] == "recoverable"


# -- tools ---------------------------------------------------------------------------------


def _tools(runner: CliRunner, *args: str) -> list[dict[str, Any]]:
    result = runner.invoke(main, ["tools", *args, "--root", str(EXAMPLES)])
    assert result.exit_code == 0, result.stderr
    schemas: list[dict[str, Any]] = json.loads(result.stdout)
    return schemas


def _schema(fmt: str, entry: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    if fmt == "openai":
        assert entry["type"] == "function"
        return entry["function"]["name"], entry["function"]["parameters"]
    key = "input_schema" if fmt == "anthropic" else "inputSchema"
    return entry["name"], entry[key]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_tools_prints_the_seven_schemas_with_the_names_in_skill_load(
    runner: CliRunner, fmt: str
) -> None:
    schemas = _tools(runner, "--format", fmt)
    named = dict(_schema(fmt, entry) for entry in schemas)
    assert list(named) == SKILL_TOOLS
    for name, schema in named.items():
        assert schema["type"] == "object"
        skill = schema["properties"].get("skill")
        if name in ("skill_search", "skill_list"):
            assert skill is None
        else:
            assert skill.get("enum") == (EXAMPLE_NAMES if name == "skill_load" else None)
            assert "skill" in schema["required"]


@pytest.mark.parametrize("fmt", ["openai", "anthropic", "mcp"])
def test_tools_with_exec_adds_workspace_exec(runner: CliRunner, fmt: str) -> None:
    schemas = _tools(runner, "--format", fmt, "--with-exec")
    names = [_schema(fmt, entry)[0] for entry in schemas]
    assert names == [*SKILL_TOOLS, "workspace_exec"]
    exec_schema = _schema(fmt, schemas[-1])[1]
    assert exec_schema["properties"]["skill"] == {
        "type": "string",
        "description": "Run inside this skill's copy.",
    }
    assert exec_schema["required"] == ["command"]


def test_tools_defaults_to_the_openai_shape(runner: CliRunner) -> None:
    assert _tools(runner) == _tools(runner, "--format", "openai")


def test_tools_rejects_an_unknown_format(runner: CliRunner) -> None:
    result = runner.invoke(main, ["tools", "--format", "gemini", "--root", str(EXAMPLES)])
    assert result.exit_code == 2

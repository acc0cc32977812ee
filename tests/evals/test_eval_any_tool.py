"""Evals of any tool: cases offer user tools (a module path or a JSON-schema stub with a canned
result) and score the parameters of any tool call; the simple ``{user, tool, expected_params}``
shape is accepted beside the full one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillshelf.evals.cases import CasesError, check_cases, parse_cases
from skillshelf.evals.report import build_report
from skillshelf.evals.runner import RunOutcome, run_cases
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill, reply, scripted_by_query

LIST_FILES_STUB = {
    "name": "list_files",
    "description": "List the files under a folder.",
    "parameters": {
        "type": "object",
        "properties": {"path": {"type": "string"}},
        "required": ["path"],
    },
    "result": ["a.txt", "b.txt"],
}


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "alpha", "Alpha things. Use for alpha.")
    return Repository([tmp_path / "skills"], cache_dir=False)


def run(cases_json: list[Any], repo: Repository, scripts: Any) -> list[RunOutcome]:
    cases = parse_cases(json.dumps(cases_json), "json")
    check_cases(cases, {"alpha": Path(repo.get("alpha").directory)})
    return anyio.run(lambda: run_cases(cases, repo, scripted_by_query(scripts)))


def test_simple_shape_with_a_stub_tool_scores_the_call_parameters(repo: Repository) -> None:
    cases = [
        {"id": "right", "user": "list here", "tool": "list_files",
         "expected_params": {"path": "."}, "tools": [LIST_FILES_STUB]},
        {"id": "wrong", "user": "list there", "tool": "list_files",
         "expected_params": {"path": "."}, "tools": [LIST_FILES_STUB]},
    ]  # fmt: skip
    scripts = {
        "list here": [reply(tools=[("list_files", {"path": "."})]), reply("a.txt, b.txt")],
        "list there": [reply(tools=[("list_files", {"path": "/tmp"})]), reply("none")],
    }
    outcomes = run(cases, repo, scripts)
    assert [c.tool for c in outcomes[0].calls] == ["list_files"]
    assert outcomes[0].calls[0].status == "ok"
    report = build_report(
        parse_cases(json.dumps(cases), "json"), outcomes, model="m", runs_per_case=1
    )
    assert [c.status for c in report.cases] == ["pass", "fail"]
    assert (report.summary.param_accuracy.hits, report.summary.param_accuracy.total) == (1, 2)
    # The trigger is not scored: no null case, no skill rows, no false triggers.
    assert report.skills == () and report.summary.false_trigger.total == 0


def test_the_stub_answers_with_its_canned_result(repo: Repository) -> None:
    cases = [{"user": "list here", "tool": "list_files", "expected_params": {"path": "."},
              "tools": [LIST_FILES_STUB]}]  # fmt: skip
    model = ScriptedModel([reply(tools=[("list_files", {"path": "."})]), "ok"])
    parsed = parse_cases(json.dumps(cases), "json")
    anyio.run(lambda: run_cases(parsed, repo, model))
    assert model.requests[1].messages[-1]["content"] == '["a.txt", "b.txt"]'
    assert "list_files" in [d.name for d in model.requests[0].tools]


def test_a_stub_missing_a_required_argument_is_a_failed_call(repo: Repository) -> None:
    cases = [{"user": "list", "tool": "list_files", "expected_params": {"path": "."},
              "tools": [LIST_FILES_STUB]}]  # fmt: skip
    scripts = {"list": [reply(tools=[("list_files", {})]), reply("?")]}
    (outcome,) = run(cases, repo, scripts)
    assert outcome.calls[0].status == "recoverable"


def test_module_path_tools_are_offered_and_scored(repo: Repository) -> None:
    cases = [
        {"id": "fn", "user": "files", "tool": "list_files", "expected_params": {"path": "."},
         "tools": ["eval_user_tools:list_files"]},
        {"id": "tools", "query": "weather", "expected_skill": None,
         "expected_params": {"get_weather": {"city": "Oslo", "unit": "C"}},
         "tools": ["eval_user_tools:WEATHER"]},
    ]  # fmt: skip
    scripts = {
        "files": [reply(tools=[("list_files", {"path": "."})]), reply("two files")],
        "weather": [reply(tools=[("get_weather", {"city": "Oslo"})]), reply("20 C")],
    }
    outcomes = run(cases, repo, scripts)
    # Validated arguments are recorded, defaults filled in: unit "C" matches.
    assert outcomes[1].calls[0].arguments == {"city": "Oslo", "unit": "C"}
    report = build_report(
        parse_cases(json.dumps(cases), "json"), outcomes, model="m", runs_per_case=1
    )
    assert [c.status for c in report.cases] == ["pass", "pass"]


def test_simple_shape_may_still_name_the_expected_skill() -> None:
    (case,) = parse_cases(
        json.dumps(
            [{"user": "x", "tool": "skill_read_file", "expected_skill": "alpha",
              "expected_params": {"path": "SKILL.md"}}]
        ),
        "json",
    )  # fmt: skip
    assert case.scores_trigger and case.expected_skill == "alpha"
    assert case.expected_params == {"skill_read_file": {"path": "SKILL.md"}}


def test_unknown_tools_and_broken_specs_are_reported_with_the_case() -> None:
    cases = parse_cases(
        json.dumps(
            [
                {"user": "a", "tool": "list_file", "expected_params": {"path": "."},
                 "tools": [LIST_FILES_STUB]},
                {"user": "b", "tool": "x", "tools": ["no_such_module_here:fn"]},
                {"user": "c", "tool": "workspace_exec", "expected_params": {"command": "ls"}},
            ]
        ),
        "json",
    )  # fmt: skip
    with pytest.raises(CasesError) as exc:
        check_cases(cases, {}, exec_enabled=False)
    problems = [str(p) for p in exc.value.problems]
    assert "did you mean list_files" in problems[0]
    assert "cannot import 'no_such_module_here'" in problems[1]
    assert "workspace_exec is offered only when running commands is enabled" in problems[-1]


def test_bad_tool_entries_are_case_problems() -> None:
    with pytest.raises(CasesError) as exc:
        parse_cases(
            json.dumps(
                [
                    {"user": "a", "tool": "t", "tools": ["not a spec"]},
                    {"user": "b", "tool": "t", "tools": [{"name": "bad name!"}]},
                    {"user": "c", "tool": ["t"]},
                ]
            ),
            "json",
        )
    problems = [str(p) for p in exc.value.problems]
    assert problems == [
        "case 1, field 'tools': tool 1: 'not a spec' is not of the form package.module:name",
        "case 2, field 'tools': tool 1, name: must be 1-64 letters, digits, '_' or '-'",
        "case 3, field 'tool': must be the name of one tool",
    ]

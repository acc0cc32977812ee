"""One failure counter: user tools and skill tools are graded by ``core.session.grade_failure``
over the count kept in the session state, so the third identical failure is fatal for both and
the count survives a new conversation in the same session."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.agent.loop import Agent, RepeatedToolFailureError
from skillshelf.core.session import (
    FAILURES_ENTRY,
    FATAL_REPEAT_MESSAGE,
    MAX_IDENTICAL_FAILURES,
)
from skillshelf.errors import ToolRetry
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import Tool


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "alpha")
    return Repository([str(tmp_path / "skills")], cache_dir=False)


def _flaky(path: str) -> str:
    raise ToolRetry(f"no such file {path!r}")


@pytest.mark.parametrize(
    ("tool", "arguments", "tools"),
    [
        ("flaky", {"path": "x"}, [Tool.from_function(_flaky, name="flaky")]),
        ("skill_read_file", {"skill": "alpha", "path": "missing.md"}, []),
        ("no_such_tool", {"a": 1}, []),
    ],
)
def test_the_third_identical_failure_is_fatal_for_every_kind_of_tool(
    repo: Repository, tool: str, arguments: dict[str, object], tools: list[Tool]
) -> None:
    calls = [(tool, arguments)] * MAX_IDENTICAL_FAILURES
    model = ScriptedModel([*(reply(tools=[c]) for c in calls), "done"])
    result = Agent(model, repo, tools=tools).run_sync("go")
    statuses = [r.status for r in result.tool_calls]
    assert statuses == ["recoverable"] * (MAX_IDENTICAL_FAILURES - 1) + ["fatal"]
    assert [r.retry_count for r in result.tool_calls] == list(range(MAX_IDENTICAL_FAILURES))
    first, last = result.tool_calls[0], result.tool_calls[-1]
    assert last.content == FATAL_REPEAT_MESSAGE.format(
        count=MAX_IDENTICAL_FAILURES, tool=tool, reason=first.content
    )
    assert "skill tool" not in last.content or tool.startswith("skill_")


def _at(x: int) -> str:
    raise ToolRetry(f"nothing at {x}")


# Three spellings of one call for each kind of tool: keys in another case, order or alias,
# values as text or wrapped, other whitespace.
RESPELT = [
    ("at", ['{"x": 1}', '{"X":"1"}', '{ "x" : " 1 " }'], [Tool.from_function(_at, name="at")]),
    (
        "skill_read_file",
        [
            '{"skill": "alpha", "path": "missing.md"}',
            '{"path":"missing.md","skill":"alpha"}',
            '{"skillName": "Alpha", "file_path": "`missing.md`"}',
        ],
        [],
    ),
    ("no_such_tool", ['{"A": 1}', '{"a": 1}', '{ "a":1 }'], []),
]


@pytest.mark.parametrize(("tool", "spellings", "tools"), RESPELT)
def test_a_respelt_call_counts_as_the_same_call_for_every_kind_of_tool(
    repo: Repository, tool: str, spellings: list[str], tools: list[Tool]
) -> None:
    model = ScriptedModel([*(reply(tools=[(tool, a)]) for a in spellings), "done"])
    result = Agent(model, repo, tools=tools).run_sync("go")
    assert [r.status for r in result.tool_calls] == ["recoverable", "recoverable", "fatal"]
    assert [r.retry_count for r in result.tool_calls] == [0, 1, 2]


@pytest.mark.parametrize(("tool", "spellings", "tools"), RESPELT)
def test_repeating_a_fatal_call_respelt_stops_the_run(
    repo: Repository, tool: str, spellings: list[str], tools: list[Tool]
) -> None:
    calls = [*spellings, spellings[1]]  # the fatal answer came to spellings[2]
    model = ScriptedModel([*(reply(tools=[(tool, a)]) for a in calls), "done"])
    with pytest.raises(RepeatedToolFailureError):
        Agent(model, repo, tools=tools).run_sync("go")
    assert len(model.requests) == len(calls)


def test_the_count_lives_in_the_session_state(repo: Repository) -> None:
    store = open_store(None)
    flaky = Tool.from_function(_flaky, name="flaky")
    call = ("flaky", {"path": "x"})
    agent = Agent(
        ScriptedModel([reply(tools=[call]), "a", reply(tools=[call]), "b"]),
        repo,
        tools=[flaky],
        store=store,
    )
    agent.run_sync("one", session_id="s")
    second = agent.run_sync("two", session_id="s")  # a new conversation, the same session
    assert second.tool_calls[0].retry_count == 1
    (counts,) = store.get_entries("s", "main", [FAILURES_ENTRY]).values()
    assert counts[flaky.signature('{"path": "x"}')] == 2

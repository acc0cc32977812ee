"""User tools are graded like the skill tools: missing → ask the user, invalid → fix it, unknown
→ closest names, slipped tool names read as meant, a timeout and a retry budget per tool, a
crash logged and answered without ending the run."""

from __future__ import annotations

import logging
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillshelf.agent.loop import Agent, RunResult
from skillshelf.core.session import FATAL_REPEAT_MESSAGE
from skillshelf.errors import ToolRetry, UsageError
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import Tool


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "alpha", "Alpha things.", body="ALPHA BODY\n")
    return Repository([str(tmp_path / "skills")], cache_dir=False)


def get_weather(city: str, days: int = 1) -> str:
    """The forecast for a city."""
    return f"{city}: sunny for {days} day(s)"


WEATHER = Tool.from_function(get_weather)


def run_calls(
    repo: Repository,
    calls: Sequence[tuple[str, Mapping[str, Any]]],
    tools: list[Tool],
    **kw: Any,
) -> RunResult:
    model = ScriptedModel([reply(tools=list(calls)), "done"])
    return Agent(model, repo, tools=tools, **kw).run_sync("go")


def test_missing_argument_tells_the_model_to_ask_the_user(repo: Repository) -> None:
    (record,) = run_calls(repo, [("get_weather", {"days": 2})], [WEATHER]).tool_calls
    assert record.status == "recoverable" and record.error_kind == "missing"
    assert record.content.startswith("Missing required argument 'city' for get_weather.")
    assert "Ask the user" in record.content


def test_invalid_argument_names_the_field_and_the_fix(repo: Repository) -> None:
    calls = [("get_weather", {"city": "Oslo", "days": "many"})]
    (record,) = run_calls(repo, calls, [WEATHER]).tool_calls
    assert record.error_kind == "invalid"
    assert "Invalid argument 'days': must be a whole number" in record.content
    assert record.content.endswith("Fix it and call get_weather again.")


def test_schema_only_tool_missing_argument_is_graded_the_same(repo: Repository) -> None:
    schema = {"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]}
    lookup = Tool("lookup", "Look up.", schema, lambda **kw: f"found {kw}")
    ok, missing = run_calls(repo, [("lookup", {"Q": "x"}), ("lookup", {})], [lookup]).tool_calls
    assert ok.status == "ok" and ok.arguments == {"q": "x"}
    assert "Read argument 'Q' as 'q'." in ok.repairs
    assert missing.error_kind == "missing" and "Ask the user" in missing.content


def test_slips_in_arguments_are_repaired_and_recorded(repo: Repository) -> None:
    calls = [("get_weather", {"City": "Oslo", "days": "3"})]
    (record,) = run_calls(repo, calls, [WEATHER]).tool_calls
    assert record.status == "ok" and record.content.startswith("Oslo: sunny for 3 day(s)")
    assert "Read argument 'City' as 'city'." in record.repairs
    assert "(Arguments adjusted:" in record.content


def test_unknown_tool_suggests_the_closest_names(repo: Repository) -> None:
    (record,) = run_calls(repo, [("get_wether", {"city": "Oslo"})], [WEATHER]).tool_calls
    assert record.error_kind == "unknown_tool"
    assert "Did you mean: get_weather?" in record.content


@pytest.mark.parametrize(
    ("sent", "meant"),
    [("Skill-Load", "skill_load"), ("skillLoad", "skill_load"), ("Get-Weather", "get_weather")],
)
def test_tool_names_are_normalised_in_the_loop(repo: Repository, sent: str, meant: str) -> None:
    arguments = {"skill": "alpha"} if meant == "skill_load" else {"city": "Oslo"}
    (record,) = run_calls(repo, [(sent, arguments)], [WEATHER]).tool_calls
    assert (record.tool, record.status) == (meant, "ok")
    assert record.repairs[0] == f"Read tool name '{sent}' as '{meant}'."


def test_a_tool_past_its_timeout_does_not_delay_a_concurrent_fast_tool(
    repo: Repository,
) -> None:
    release = threading.Event()
    finished: list[str] = []

    def slow(x: str) -> str:
        release.wait(10)  # bounded: released by the test once the run is over
        finished.append("slow")
        return "slow result"

    def fast(x: str) -> str:
        finished.append("fast")
        return "fast result"

    tools = [Tool.from_function(slow, timeout_s=0.2), Tool.from_function(fast)]
    try:
        result = run_calls(repo, [("slow", {"x": "1"}), ("fast", {"x": "2"})], tools)
        assert finished == ["fast"]  # the run ended while slow was still blocked
    finally:
        release.set()
    slow_record, fast_record = result.tool_calls
    assert (fast_record.status, fast_record.content) == ("ok", "fast result")
    assert slow_record.status == "recoverable" and slow_record.error_kind == "timeout"
    assert "The tool slow timed out after 0.2s" in slow_record.content


def test_an_async_tool_past_the_agent_default_timeout_is_cancelled(repo: Repository) -> None:
    cancelled: list[bool] = []

    async def hang(x: str) -> str:
        try:
            await anyio.sleep_forever()
        except anyio.get_cancelled_exc_class():
            cancelled.append(True)
            raise
        return "never"

    (record,) = run_calls(
        repo, [("hang", {"x": "1"})], [Tool.from_function(hang)], tool_timeout_s=0.1
    ).tool_calls
    assert record.error_kind == "timeout" and "timed out after 0.1s" in record.content
    assert cancelled == [True]


def test_a_crash_is_logged_graded_internal_and_the_run_continues(
    repo: Repository, caplog: pytest.LogCaptureFixture
) -> None:
    def explode(x: str) -> str:
        raise RuntimeError("boom " + "x" * 1000)

    with caplog.at_level(logging.ERROR, logger="skillshelf.agent"):
        result = run_calls(
            repo,
            [("explode", {"x": "1"}), ("get_weather", {"city": "Oslo"})],
            [Tool.from_function(explode), WEATHER],
        )
    crash, fine = result.tool_calls
    assert result.output == "done" and fine.status == "ok"
    assert crash.status == "fatal" and crash.error_kind == "internal"
    assert "RuntimeError: boom" in crash.content and len(crash.content) < 400  # clipped
    (log,) = caplog.records
    assert log.exc_info is not None and isinstance(log.exc_info[1], RuntimeError)


def test_the_retry_budget_is_per_tool_and_the_stop_message_names_it(repo: Repository) -> None:
    def flaky(path: str) -> str:
        raise ToolRetry(f"no such file {path!r}")

    strict = Tool.from_function(flaky, retries=0)
    (record,) = run_calls(repo, [("flaky", {"path": "x"})], [strict]).tool_calls
    assert record.status == "fatal"
    assert record.content == FATAL_REPEAT_MESSAGE.format(
        count=1, tool="flaky", reason="no such file 'x'"
    )
    assert "skill tool" not in record.content


def test_the_agent_default_retry_budget_applies_when_the_tool_sets_none(
    repo: Repository,
) -> None:
    def flaky(path: str) -> str:
        raise ToolRetry("nope")

    call = ("flaky", {"path": "x"})
    model = ScriptedModel([reply(tools=[call]), reply(tools=[call]), "done"])
    result = Agent(model, repo, tools=[Tool.from_function(flaky)], tool_retries=1).run_sync("go")
    assert [r.status for r in result.tool_calls] == ["recoverable", "fatal"]


def test_bad_timeouts_and_budgets_are_usage_errors(repo: Repository) -> None:
    with pytest.raises(UsageError):
        Tool.from_function(get_weather, timeout_s=0)
    with pytest.raises(UsageError):
        Tool.from_function(get_weather, retries=-1)
    with pytest.raises(UsageError):
        Agent(ScriptedModel(["x"]), repo, tool_timeout_s=0)

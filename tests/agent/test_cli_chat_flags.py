"""``skillshelf chat``'s agent flags reach the agent: what the model is sent shows each one."""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from chat_cli import chat_in_process
from fake_providers import FakeOpenAI

from skillshelf.testing import reply


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for server in started:
        server.stop()


def tool_names(body: dict[str, object]) -> list[str]:
    return [t["function"]["name"] for t in body["tools"]]  # type: ignore[attr-defined]


def test_tool_flag_offers_an_imported_function_and_runs_it(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [reply(tools=[("shout", {"text": "hi"})]), reply("Done.")]
    out, server = chat_in_process(
        servers, script, "--tool", "chat_tools:shout", "-m", "shout hi", monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    first, second = server.bodies()
    assert "shout" in tool_names(first)
    assert second["messages"][-1]["content"] == "HI!"


def test_bad_tool_flag_is_a_usage_error(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = chat_in_process(
        servers, [], "--tool", "no_such_module_x:f", "-m", "x", monkeypatch=monkeypatch
    )
    assert out.exit_code == 2
    assert "--tool" in out.output and "cannot import" in out.output


def test_catalog_style_and_visibility_flags_shape_the_request(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, server = chat_in_process(
        servers,
        [reply("Hi.")],
        *("--catalog-placement", "reminder", "--tool-style", "claude-code"),
        *("--only", "csv-insights", "--instructions", "Be terse."),
        *("-m", "hello"),
        monkeypatch=monkeypatch,
    )
    assert out.exit_code == 0, out.output
    (body,) = server.bodies()
    system, reminder, user = body["messages"]
    assert system["content"].startswith("Be terse.") and "csv-insights" not in system["content"]
    assert reminder["content"].startswith("<system-reminder>")
    assert "csv-insights" in reminder["content"] and "release-notes" not in reminder["content"]
    assert tool_names(body) == ["Skill", "skill_read_file"]
    assert user["content"] == "hello"


def test_declare_flag_loads_the_skill_before_the_first_request(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, server = chat_in_process(
        servers,
        [reply("Hi.")],
        *("--declare", "commit-message", "-m", "hello"),
        monkeypatch=monkeypatch,
    )
    assert out.exit_code == 0, out.output
    assert "Conventional Commits" in json.dumps(server.bodies()[0]["messages"])


def test_exec_policy_flags_need_exec(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = chat_in_process(servers, [], "--allow-network", "-m", "x", monkeypatch=monkeypatch)
    assert out.exit_code == 2
    assert "need --exec" in out.output

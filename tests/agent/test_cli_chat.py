"""``skillshelf chat`` against the fake OpenAI-compatible server (as a subprocess, and in
process through click's runner where only the command's behaviour matters)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from chat_cli import EXAMPLES, chat, chat_in_process
from click.testing import CliRunner
from fake_providers import Fail, FakeOpenAI

from skillshelf.cli import main
from skillshelf.testing import reply


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for server in started:
        server.stop()


def test_one_message_prints_the_final_answer(servers: list[FakeOpenAI], tmp_path: Path) -> None:
    script = [reply(tools=[("skill_load", {"skill": "release-notes"})]), reply("Notes: all good.")]
    trace = tmp_path / "trace.jsonl"
    out, server = chat(servers, script, "-m", "write release notes", "--trace", str(trace))
    assert out.returncode == 0, out.stderr
    assert out.stdout == "Notes: all good.\n"
    assert "skill_load" in out.stderr and "→ ok" in out.stderr
    first, second = server.bodies()
    assert first["model"] == "any" and first["stream"] is True
    assert "<available_skills>" in first["messages"][0]["content"]
    assert "Turn a range of commits" in second["messages"][-1]["content"]
    kinds = [json.loads(line)["type"] for line in trace.read_text().splitlines()]
    assert kinds == ["turn", "model", "tool", "model", "run"]


def test_slash_command_from_the_command_line(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [reply("Subject: fix parser")]
    out, server = chat_in_process(
        servers, script, "-m", "/commit-message staged only", monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    sent = json.dumps(server.bodies()[0])
    assert "Conventional Commits" in sent and "staged only" in sent


def test_interactive_session_keeps_history(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    script = [reply("First."), reply("Second.")]
    out, server = chat_in_process(
        servers, script, "--no-stream", stdin="hello\nagain\n/exit\n", monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    assert out.stdout.splitlines() == ["First.", "Second."]
    roles = [m["role"] for m in server.bodies()[1]["messages"]]
    assert roles == ["system", "user", "assistant", "user"]


def test_rejected_key_exits_1_with_a_clear_message(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _server = chat_in_process(
        servers, [Fail(401, "bad key")], "-m", "hi", monkeypatch=monkeypatch
    )
    assert out.exit_code == 1
    assert "rejected the API key (HTTP 401)" in out.stderr


def test_unknown_provider_is_a_usage_error(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _server = chat_in_process(
        servers, [], "-m", "hi", "--model", "nope:x", monkeypatch=monkeypatch
    )
    assert out.exit_code == 2 and "Unknown model provider" in out.stderr


def test_slash_error_exits_1(servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch) -> None:
    out, server = chat_in_process(servers, [], "-m", "/comit-message", monkeypatch=monkeypatch)
    assert out.exit_code == 1 and "/commit-message" in out.stderr
    assert server.requests == []


def test_scripted_model_needs_no_server(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps(["Scripted hello."]))
    args = ["chat", "--root", str(EXAMPLES), "--no-cache", "--model", f"scripted:{script}"]
    out = CliRunner().invoke(main, [*args, "-m", "hi"])
    assert out.exit_code == 0, out.output
    assert out.stdout == "Scripted hello.\n"


def test_scripted_model_out_of_replies_is_a_usage_error(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "skill_list"}]}]))
    args = ["chat", "--root", str(EXAMPLES), "--no-cache", "--model", f"scripted:{script}"]
    out = CliRunner().invoke(main, [*args, "-m", "hi"])
    assert out.exit_code == 2 and "no reply left" in out.stderr

"""Pure pieces: slash command parsing and expansion, the allowed-tools grammar, trace spans."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from skillshelf.core.allowed_tools import call_allowed, pattern_tool
from skillshelf.core.slash import SlashCommand, SlashCommandError, expand, parse_commands
from skillshelf.harness import Trace, digest, span
from skillshelf.harness import _trace as trace_module

NAMES = {"alpha", "beta-two"}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("hello", []),
        ("/alpha", [SlashCommand("alpha", "")]),
        ("  /alpha  some args ", [SlashCommand("alpha", "some args")]),
        ("/alpha a /beta-two b c", [SlashCommand("alpha", "a"), SlashCommand("beta-two", "b c")]),
        ("/alpha /beta-two", [SlashCommand("alpha", ""), SlashCommand("beta-two", "")]),
        ("/alpha\n/beta-two x", [SlashCommand("alpha", ""), SlashCommand("beta-two", "x")]),
        ("/alpha see /usr/bin", [SlashCommand("alpha", "see /usr/bin")]),
        ("/etc/hosts", []),
        ("please /alpha", []),
    ],
)
def test_parse_commands(message: str, expected: list[SlashCommand]) -> None:
    assert parse_commands(message, NAMES) == expected


def test_unknown_command_is_an_error_with_suggestions() -> None:
    with pytest.raises(SlashCommandError, match="Did you mean: /alpha"):
        parse_commands("/alpah x", NAMES)


SCRIPTS = {"目录浏览", "ファイル一覧", "résumé-outil", "my_skill"}


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        ("/目录浏览", [SlashCommand("目录浏览", "")]),
        ("/目录浏览 src 目录", [SlashCommand("目录浏览", "src 目录")]),
        (
            "/ファイル一覧 /目录浏览 x",
            [SlashCommand("ファイル一覧", ""), SlashCommand("目录浏览", "x")],
        ),
        ("/résumé-outil cv.pdf", [SlashCommand("résumé-outil", "cv.pdf")]),
        # Typed decomposed (e + combining acute), as some keyboards send it: NFKC finds the name.
        ("/re\u0301sume\u0301-outil", [SlashCommand("résumé-outil", "")]),
        # A full-width solidus and space, as a CJK input method in full-width mode types them.
        ("／目录浏览\u3000参数", [SlashCommand("目录浏览", "参数")]),
        # A lenient-mode name outside the spec's characters is still the skill's name.
        ("/my_skill go", [SlashCommand("my_skill", "go")]),
        ("/usr/bin/env python", []),
        ("/目录/子目录 是什么", []),
        ("https://example.com/目录浏览", []),
        ("/* comment */", []),
        ("目录浏览 /目录浏览", []),
    ],
)
def test_commands_in_any_script_are_parsed(message: str, expected: list[SlashCommand]) -> None:
    assert parse_commands(message, SCRIPTS) == expected


def test_unknown_command_in_another_script_is_an_error_with_suggestions() -> None:
    with pytest.raises(SlashCommandError, match="Did you mean: /目录浏览"):
        parse_commands("/目录浏 src", SCRIPTS)


@pytest.mark.parametrize(
    ("body", "arguments", "expected"),
    [
        ("Do $ARGUMENTS.", "a b", "Do a b."),
        ("$0 then $1, $ARGUMENTS[1]", 'one "two three"', "one then two three, two three"),
        ("missing: [$3]", "a", "missing: []"),
        ("dir ${SKILL_DIR} and ${CLAUDE_SKILL_DIR}", "", "dir /s and /s"),
        ("No placeholder.\n", "extra words", "No placeholder.\n\nARGUMENTS: extra words\n"),
        ("No placeholder.\n", "", "No placeholder.\n"),
        ("Price $5 each", "", "Price  each"),
        ("unbalanced $0", "'a b", "unbalanced 'a"),
    ],
)
def test_expand(body: str, arguments: str, expected: str) -> None:
    assert expand(body, arguments, skill_dir="/s") == expected


@pytest.mark.parametrize(
    ("allowed", "tool", "arguments", "ok"),
    [
        (["Read"], "Read", {"path": "/x"}, True),
        (["Read"], "Write", {"path": "/x"}, False),
        (["Bash(git:*)"], "Bash", {"command": "git status"}, True),
        (["Bash(git:*)"], "Bash", {"command": "git"}, True),
        (["Bash(git:*)"], "Bash", {"command": "gitk"}, False),
        (["Bash(git:*)"], "Bash", {"command": "rm -rf /"}, False),
        (["Bash(git:*)"], "Bash", {"command": "git status; rm -rf /"}, False),
        (["Bash(git:*)"], "Bash", {"command": "git log | sh"}, False),
        (["Bash(git:*)"], "Bash", {"command": "git $(rm x)"}, False),
        (["Bash(git diff:*)"], "Bash", {"command": "git  diff --staged"}, True),
        (["Bash(git diff:*)"], "Bash", {"command": "git log"}, False),
        (["Bash(npm test)"], "Bash", {"command": "npm test"}, True),
        (["Bash(npm test)"], "Bash", {"command": "npm test --all"}, False),
        (["Read(*.md)"], "Read", {"file_path": "notes.md"}, True),
        (["Read(*.md)"], "Read", {"file_path": "notes.py"}, False),
        (["Bash(*)"], "Bash", {"command": "anything"}, True),
        (["Bash(git:*)"], "Bash", {}, False),
        (["Bash(git:*)", "Read"], "Read", {}, True),
        ([], "Read", {}, False),
    ],
)
def test_allowed_tools_grammar(
    allowed: list[str], tool: str, arguments: dict[str, Any], ok: bool
) -> None:
    assert call_allowed(allowed, tool, arguments) is ok


def test_pattern_tool_names() -> None:
    assert [pattern_tool(p) for p in ("Bash(git:*)", "Read", " Grep ")] == ["Bash", "Read", "Grep"]


def test_trace_writes_one_json_line_per_record(tmp_path: Path) -> None:
    path = tmp_path / "t.jsonl"
    trace = Trace(path)
    trace.record("tool", tool="skill_load", arguments={"skill": "x"})
    trace.record("model", finish_reason="stop")
    trace.close()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [line["type"] for line in lines] == ["tool", "model"]
    assert lines[0]["arguments"] == {"skill": "x"} and "ts" in lines[0]
    assert digest("hi") == digest("hi") != digest("ho")


class _FakeSpan:
    def __init__(self, name: str, attributes: Mapping[str, Any]) -> None:
        self.name = name
        self.attributes = dict(attributes)

    def set_attributes(self, attributes: Mapping[str, Any]) -> None:
        self.attributes.update(attributes)


class _FakeTracer:
    def __init__(self) -> None:
        self.spans: list[_FakeSpan] = []

    @contextmanager
    def start_as_current_span(
        self, name: str, attributes: Mapping[str, Any]
    ) -> Iterator[_FakeSpan]:
        current = _FakeSpan(name, attributes)
        self.spans.append(current)
        yield current


def test_spans_go_to_opentelemetry_when_available(monkeypatch: pytest.MonkeyPatch) -> None:
    tracer = _FakeTracer()
    monkeypatch.setattr(trace_module, "_tracer", lambda: tracer)
    with span("skillshelf.tool", {"tool": "skill_load", "args": {"a": 1}, "none": None}) as extra:
        extra["status"] = "ok"
    (recorded,) = tracer.spans
    assert recorded.name == "skillshelf.tool"
    assert recorded.attributes["skillshelf.tool"] == "skill_load"
    assert recorded.attributes["skillshelf.args"] == '{"a": 1}'
    assert recorded.attributes["skillshelf.status"] == "ok"
    assert "skillshelf.none" not in recorded.attributes


def test_spans_are_noops_without_opentelemetry(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(trace_module, "_tracer", lambda: None)
    with span("x", {}) as extra:
        extra["status"] = "ok"


def test_real_opentelemetry_api_accepts_the_spans() -> None:
    pytest.importorskip("opentelemetry.trace")
    with span("skillshelf.model", {"agent": "main", "step": 1}) as extra:
        extra["status"] = "ok"

"""SkillServer takes the harness's SkillSettings: what a server can apply reaches every tools/call
(through the one SkillSession), what it cannot is refused up front."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
import pytest
from mcp import Client

from skillshelf.errors import UsageError
from skillshelf.harness import SkillSettings, Trace
from skillshelf.mcpserver import SkillServer, Viewer
from skillshelf.repository import Repository
from skillshelf.testing import make_skill
from skillshelf.tools import Tool


def _repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "notes", "Release notes. Use when writing notes.")
    make_skill(tmp_path / "skills", "hidden", "Hidden skill. Use never.")
    return Repository([tmp_path / "skills"], cache_dir=False)


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("tool_style", "claude-code"),
        ("placement", "system"),
        ("catalog_placement", "reminder"),
        ("declared", ("notes",)),
        ("tools", (Tool("t", "a tool", {"type": "object", "properties": {}}, lambda: "x"),)),
    ],
)
def test_settings_a_server_cannot_apply_are_refused_by_name(
    tmp_path: Path, option: str, value: object
) -> None:
    settings = SkillSettings(**{option: value})  # type: ignore[arg-type]
    with pytest.raises(UsageError, match=option):
        SkillServer(_repo(tmp_path), settings=settings)


def test_the_settings_instructions_and_visibility_reach_the_server(tmp_path: Path) -> None:
    settings = SkillSettings(
        instructions="Answer in French.", visible=lambda skill: skill.name != "hidden"
    )
    server = SkillServer(_repo(tmp_path), settings=settings)
    text = server.instructions(Viewer())
    assert text.startswith("Answer in French.")
    assert "notes" in text and "hidden" not in text

    async def check() -> None:
        async with Client(server.server) as client:
            result = await client.call_tool("skill_load", {"skill": "hidden"})
            assert result.is_error
            loaded = await client.call_tool("skill_load", {"skill": "notes"})
            assert not loaded.is_error

    anyio.run(check)


def test_a_shortcut_overrides_the_settings(tmp_path: Path) -> None:
    server = SkillServer(
        _repo(tmp_path), settings=SkillSettings(load_mode="once"), load_mode="session"
    )
    assert server.settings.load_mode == "session"


def test_every_tool_call_is_traced_with_the_serve_source(tmp_path: Path) -> None:
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    server = SkillServer(_repo(tmp_path), trace=trace)

    async def check() -> None:
        async with Client(server.server) as client:
            await client.call_tool("skill_load", {"skill": "notes"})
            await client.call_tool("skill_load", {"skill": "nope"})

    anyio.run(check)
    trace.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    tools = [r for r in records if r.get("kind") == "tool" or r.get("tool")]
    assert [r["tool"] for r in tools] == ["skill_load", "skill_load"]
    assert [r["source"] for r in tools] == ["serve", "serve"]
    assert tools[0]["status"] == "ok" and tools[1]["status"] == "recoverable"
    assert tools[1]["arguments"] == {"skill": "nope"} and tools[1]["error_kind"]

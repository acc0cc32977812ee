"""A skill as an MCP prompt renders exactly as the same skill as a slash command in chat."""

from __future__ import annotations

import re
from pathlib import Path

import anyio
import pytest
from mcp import Client

from skillshelf.agent.loop import Agent
from skillshelf.mcpserver import SkillServer
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill

_LOADED = re.compile(r'<skill_content name="demo">\n(.*)\n</skill_content>', re.DOTALL)

CASES = [
    ("Fix $ARGUMENTS now.\n", "issue 12"),
    ("First $ARGUMENTS[0], second $ARGUMENTS[1].\n", 'a "b c"'),
    ("Shorthand $0 and $1.\n", "x 'y z'"),
    ("Missing $ARGUMENTS[5] and $7.\n", "a"),
    ("Costs $5.\n", ""),
    ("No placeholder.\n", "extra words"),
    ("No placeholder.\n", ""),
    ("Run ${SKILL_DIR}/scripts/go.sh and ${CLAUDE_SKILL_DIR}/x on $ARGUMENTS\n", "f.txt"),
    ("Only the dir ${SKILL_DIR}\n", "appended then"),
    ("Unbalanced $0\n", "'a b"),
    ("$ARGUMENTSX is not a placeholder\n", "q"),
]


def _chat_text(repo: Repository, arguments: str) -> str:
    model = ScriptedModel(["ok"])
    Agent(model, repo).run_sync(f"/demo {arguments}".rstrip())
    tool_messages = [m for m in model.requests[0].messages if m.get("role") == "tool"]
    match = _LOADED.search(str(tool_messages[0]["content"]))
    assert match is not None
    return match.group(1)


def _mcp_text(repo: Repository, arguments: str) -> str:
    async def get() -> str:
        async with Client(SkillServer(repo).server) as client:
            result = await client.get_prompt("demo", {"arguments": arguments})
            return result.messages[0].content.text  # type: ignore[union-attr]

    return anyio.run(get)


@pytest.mark.parametrize(("body", "arguments"), CASES)
def test_mcp_prompt_and_chat_slash_command_render_the_same_body(
    tmp_path: Path, body: str, arguments: str
) -> None:
    make_skill(tmp_path / "skills", "demo", body=body)
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    mcp = _mcp_text(repo, arguments)
    assert _chat_text(repo, arguments) == mcp.strip("\n")
    assert "$ARGUMENTS[" not in mcp and "${SKILL_DIR}" not in mcp


def test_mcp_prompt_substitutes_the_skill_directory(tmp_path: Path) -> None:
    skill_dir = make_skill(tmp_path / "skills", "demo", body="Run ${SKILL_DIR}/go.sh $0\n")
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    assert _mcp_text(repo, "now") == f"Run {repo.get('demo').directory}/go.sh now\n"
    assert repo.get("demo").directory == str(skill_dir)

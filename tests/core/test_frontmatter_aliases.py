"""Frontmatter from real collections: ``when_to_use``/``summary`` stand in for a missing
description in lenient mode, and a ``tools:`` list of agents is no allowed-tools ceiling."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.agent.loop import Agent
from skillshelf.core.allowed_tools import is_tool_pattern
from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Mode, parse_frontmatter
from skillshelf.core.manifest import Manifest, build_manifest
from skillshelf.lint import lint_repository
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, reply
from skillshelf.tools import Tool

# As in community collections that target several agents at once.
MULTI_AGENT = """\
name: pdf-tables
when_to_use: Use when the user wants tables pulled out of a PDF into CSV.
tools: [claude, cursor, gemini]
version: 1.2.0
"""
SUMMARY_ONLY = """\
name: release-notes
summary: Draft release notes from a git range. Use when preparing a release.
tags: [git, docs]
"""


def build(
    text: str, dir_name: str, mode: Mode = "lenient"
) -> tuple[Manifest | None, list[Diagnostic]]:
    fm = parse_frontmatter(f"---\n{text}---\n# Body\n", mode=mode)
    return build_manifest(fm, dir_name=dir_name, mode=mode)


def codes(diags: list[Diagnostic]) -> dict[str, str]:
    return {d.code: d.severity for d in diags}


@pytest.mark.parametrize(
    ("text", "name", "key"),
    [(MULTI_AGENT, "pdf-tables", "when_to_use"), (SUMMARY_ONLY, "release-notes", "summary")],
)
def test_a_stand_in_is_the_description_in_lenient_mode_with_a_warning(
    text: str, name: str, key: str
) -> None:
    manifest, diags = build(text, name)
    assert manifest is not None and manifest.description.startswith(
        "Use when" if key == "when_to_use" else "Draft release notes"
    )
    stand_in = next(d for d in diags if d.code == "description.stand_in")
    assert stand_in.severity == "warning" and stand_in.field == key and key in stand_in.message
    assert "error" not in codes(diags).values()


def test_strict_mode_still_refuses_a_missing_description() -> None:
    text = "name: release-notes\nsummary: Draft release notes.\n"
    manifest, diags = build(text, "release-notes", mode="strict")
    assert manifest is None and codes(diags)["description.missing"] == "error"


def test_a_real_description_wins_over_the_stand_ins() -> None:
    text = "name: x-y\ndescription: The real one.\nwhen_to_use: Use when asked.\nsummary: Short.\n"
    manifest, diags = build(text, "x-y")
    assert manifest is not None and manifest.description == "The real one."
    assert "description.stand_in" not in codes(diags)


def test_agent_names_under_tools_are_no_ceiling_and_are_reported() -> None:
    manifest, diags = build(MULTI_AGENT, "pdf-tables")
    assert manifest is not None
    assert manifest.allowed_tools == ()
    assert manifest.not_tools == ("claude", "cursor", "gemini")
    assert codes(diags)["allowed_tools.not_a_tool"] == "warning"


def test_tool_entries_are_kept_beside_agent_names() -> None:
    manifest, _ = build("name: a-b\ndescription: D.\ntools: [Bash(git:*), Read, claude]\n", "a-b")
    assert manifest is not None
    assert (manifest.allowed_tools, manifest.not_tools) == (("Bash(git:*)", "Read"), ("claude",))


@pytest.mark.parametrize(
    ("entry", "is_tool"),
    [
        ("Bash", True),
        ("Bash(git diff:*)", True),
        ("mcp__github__create_issue", True),
        ("get_weather", True),
        ("Read(*.md)", True),
        ("claude", False),
        ("Cursor", False),
        ("gemini-cli", False),
        ("run shell commands", False),
        ("Bash(git:*", False),
        ("(x)", False),
    ],
)
def test_the_tool_grammar(entry: str, is_tool: bool) -> None:
    assert is_tool_pattern(entry) is is_tool


def _skill(root: Path, name: str, frontmatter: str) -> None:
    folder = root / name
    folder.mkdir(parents=True)
    body = "Run this:\n\n```bash\npython3 scripts/extract.py in.pdf\n```\n"
    (folder / "SKILL.md").write_text(f"---\n{frontmatter}---\n{body}", encoding="utf-8")


def test_agent_names_do_not_block_bash_at_runtime(tmp_path: Path) -> None:
    _skill(tmp_path, "pdf-tables", MULTI_AGENT)
    repo = Repository([str(tmp_path)], cache_dir=False)

    def Bash(command: str) -> str:
        return "ran " + command

    model = ScriptedModel(
        [
            reply(tools=[("skill_load", {"skill": "pdf-tables"})]),
            reply(tools=[("Bash", {"command": "python3 scripts/extract.py in.pdf"})]),
            "done",
        ]
    )
    agent = Agent(model, repo, tools=[Tool.from_function(Bash)], enforce_allowed_tools=True)
    load, bash = agent.run_sync("extract").tool_calls
    assert load.status == "ok"
    assert (bash.status, bash.content) == ("ok", "ran python3 scripts/extract.py in.pdf")


def test_lint_warns_about_agent_names_and_not_about_bash(tmp_path: Path) -> None:
    _skill(tmp_path, "pdf-tables", MULTI_AGENT)
    report = lint_repository(Repository([str(tmp_path)], cache_dir=False))
    found = {f.code: f for f in report.findings}
    assert found["tools.not_a_tool"].severity == "warning"
    assert "claude" in found["tools.not_a_tool"].message
    assert "tools.not_granted" not in found

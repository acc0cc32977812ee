"""A description with an unquoted ': ' loads in lenient mode with a warning; strict refuses it."""

from __future__ import annotations

from pathlib import Path

from skillshelf.repository import Repository
from skillshelf.skills.skill import parse_skill_md
from skillshelf.testing import make_skill

RAW = (
    "---\nname: gmail-automation\n"
    "description: Automate Gmail tasks via Rube MCP (Composio): manage labels and drafts.\n"
    "---\n# Gmail\n"
)


def test_lenient_mode_recovers_the_description_with_a_warning(tmp_path: Path) -> None:
    make_skill(tmp_path, "gmail-automation", raw=RAW)
    skill = Repository([tmp_path], cache_dir=False).get("gmail-automation")
    assert skill.description.endswith("(Composio): manage labels and drafts.")
    [note] = [d for d in skill.diagnostics if d.code == "frontmatter.requoted"]
    assert (note.severity, note.field, note.line) == ("warning", "description", 3)


def test_strict_mode_refuses_it_as_skills_ref_does(tmp_path: Path) -> None:
    folder = make_skill(tmp_path, "gmail-automation", raw=RAW)
    parsed = parse_skill_md(folder / "SKILL.md", mode="strict")
    assert not parsed.valid
    assert [d.code for d in parsed.diagnostics] == ["frontmatter.yaml"]
    assert parse_skill_md(folder / "SKILL.md", mode="lenient").valid

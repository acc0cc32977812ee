"""The skills-ref drop-in on its own (no skills-ref, no network needed)."""

from __future__ import annotations

import datetime
from pathlib import Path

import pytest

from skillshelf.compat import skills_ref as compat


def _skill(tmp_path: Path, text: str | bytes, dir_name: str = "my-skill") -> Path:
    skill_dir = tmp_path / dir_name
    skill_dir.mkdir()
    raw = text.encode("utf-8") if isinstance(text, str) else text
    (skill_dir / "SKILL.md").write_bytes(raw)
    return skill_dir


def test_invalid_utf8_is_a_parse_error_where_skills_ref_crashes(tmp_path: Path) -> None:
    skill_dir = _skill(tmp_path, b"---\nname: my-skill\ndescription: caf\xe9\n---\n")
    with pytest.raises(compat.ParseError, match="not valid UTF-8"):
        compat.read_properties(skill_dir)
    (message,) = compat.validate(skill_dir)
    assert message.startswith("SKILL.md is not valid UTF-8")


def test_bom_fails_like_skills_ref(tmp_path: Path) -> None:
    skill_dir = _skill(tmp_path, "\ufeff---\nname: my-skill\ndescription: d\n---\n")
    assert compat.validate(skill_dir) == ["SKILL.md must start with YAML frontmatter (---)"]


def test_to_prompt_escapes_and_gives_the_resolved_skill_md(tmp_path: Path) -> None:
    skill_dir = _skill(tmp_path, "---\nname: my-skill\ndescription: Use <b> & co\n---\nBody\n")
    location = (skill_dir / "SKILL.md").resolve()
    assert compat.to_prompt([tmp_path / "." / "my-skill"]) == (
        "<available_skills>\n<skill>\n<name>\nmy-skill\n</name>\n"
        "<description>\nUse &lt;b&gt; &amp; co\n</description>\n"
        f"<location>\n{location}\n</location>\n</skill>\n</available_skills>"
    )
    assert compat.to_prompt([]) == "<available_skills>\n</available_skills>"


def test_read_properties_passes_values_through_like_skills_ref(tmp_path: Path) -> None:
    skill_dir = _skill(tmp_path, "---\nname: my-skill\ndescription: ' d '\n---\n")
    props = compat.read_properties(skill_dir)
    assert props.description == "d"
    metadata: object = props.metadata
    assert metadata is None  # skills-ref's quirk (typed as a dict), kept on purpose
    assert props.to_dict() == {"name": "my-skill", "description": "d"}


def test_metadata_values_are_stringified_like_skills_ref() -> None:
    data, body = compat.parse_frontmatter(
        "---\nname: a\nmetadata:\n  n:\n    k: v\n  l:\n    - 1\n---\n  body \n"
    )
    assert data["metadata"] == {"n": "{'k': 'v'}", "l": "['1']"}
    assert body == "body"


def test_validation_error_lists_its_message_by_default() -> None:
    assert compat.ValidationError("bad").errors == ["bad"]
    assert compat.ValidationError("bad", ["a", "b"]).errors == ["a", "b"]


def test_validate_metadata_takes_any_python_values() -> None:
    metadata = {"name": "my-skill", "description": "d", "metadata": {"day": datetime.date.today()}}
    assert compat.validate_metadata(metadata) == []
    assert compat.validate_metadata({"name": 5, "description": "d"}) == [
        "Field 'name' must be a non-empty string"
    ]


def test_validate_reports_paths_like_skills_ref(tmp_path: Path) -> None:
    assert compat.validate(tmp_path / "nope") == [f"Path does not exist: {tmp_path / 'nope'}"]
    (tmp_path / "file.txt").write_text("x")
    assert compat.validate(tmp_path / "file.txt") == [f"Not a directory: {tmp_path / 'file.txt'}"]
    (tmp_path / "empty").mkdir()
    assert compat.validate(tmp_path / "empty") == ["Missing required file: SKILL.md"]


def test_every_listed_module_name_exists() -> None:
    for names in compat.SKILLS_REF_MODULES.values():
        for name in names:
            assert hasattr(compat, name), name

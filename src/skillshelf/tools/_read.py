"""``skill_read_file``, and how results name a skill's directory: its absolute path or its
``skill://name/`` URI."""

from __future__ import annotations

import os
from typing import Any, Literal
from urllib.parse import quote, unquote

from skillshelf.skills.skill import Skill
from skillshelf.tools._view import SkillView

__all__ = ["Locations", "read", "skill_uri"]

# How results name a skill's directory (SkillTools' ``locations``).
Locations = Literal["paths", "uris"]


def read(
    view: SkillView, name: str, path: str, *, max_chars: int, locations: Locations
) -> tuple[str, dict[str, Any]]:
    """``skill_read_file``: the text of ``path`` in skill ``name``, at most ``max_chars``."""
    skill = view.skill(name)
    relative = _within(skill, path)
    content = view.repo.read_file(skill.name, relative, max_chars=max_chars)
    data = {
        "skill": name,
        "path": str(content.path) if locations == "paths" else content.relative,
        "size": content.size,
        "mime": content.mime,
        "binary": content.binary,
        "truncated": content.truncated,
    }
    return content.render(), data


def skill_uri(name: str) -> str:
    """``skill://name/``: the skill's directory as MCP clients name it."""
    return f"skill://{quote(name, safe='')}/"


def _within(skill: Skill, path: str) -> str:
    """``path`` relative to the skill: what ``skill_load`` advises, in either form, is accepted.

    The skill's ``skill://name/`` URI (segments percent-decoded one at a time) or its absolute
    directory in front of a path is removed; anything else goes to ``safe_join`` as sent,
    which refuses what would leave the skill.
    """
    uri = skill_uri(skill.name)
    if path.startswith(uri):
        return "/".join(unquote(part) for part in path[len(uri) :].split("/")) or "."
    for directory in dict.fromkeys((skill.directory, os.path.realpath(skill.directory))):
        if path == directory:
            return "."
        if path.startswith(directory + os.sep):
            return path[len(directory) + 1 :]
    return path

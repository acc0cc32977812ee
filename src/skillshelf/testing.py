"""Test helpers shipped with skillshelf, so integrations are tested the way skillshelf is.

``make_skill`` writes a skill folder from keyword arguments; nothing here mocks the
filesystem: skills are real folders under a directory you give (pytest's ``tmp_path``).
``ScriptedModel`` is a model that answers from a script (canned replies or a function of the
request), for testing an agent without a provider, and for demos; ``scripted_by_query`` gives
each user message its own script, so concurrent conversations (an eval) can share one model.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from skillshelf.models.scripted import ScriptedModel, reply, scripted_by_query

if TYPE_CHECKING:
    pass

__all__ = ["ScriptedModel", "make_skill", "reply", "scripted_by_query"]


def _yaml_scalar(value: str) -> str:
    # JSON strings are valid YAML double-quoted scalars, so this quotes anything safely.
    return json.dumps(value, ensure_ascii=False)


def make_skill(
    root: Path,
    name: str,
    description: str = "A test skill. Use when testing.",
    *,
    body: str = "# Instructions\n\nDo the thing.\n",
    dir_name: str | None = None,
    files: Mapping[str, str | bytes] | None = None,
    frontmatter: Mapping[str, object] | None = None,
    raw: str | bytes | None = None,
    skill_md_name: str = "SKILL.md",
) -> Path:
    """Create a skill folder ``root/<dir_name or name>`` and return its path.

    Args:
        root: The folder to create the skill in (created if needed).
        name: The ``name`` key (and the folder name unless ``dir_name`` is given).
        description: The ``description`` key.
        body: Markdown after the frontmatter.
        dir_name: Folder name, when it should differ from ``name``.
        files: Extra files by relative path (``{"scripts/run.py": "print(1)"}``).
        frontmatter: Extra keys; strings are quoted, lists and mappings written as JSON
            (flow style, which YAML accepts), ``True``/``False`` as ``true``/``false``.
        raw: Exact SKILL.md content, overriding everything above.
        skill_md_name: ``"SKILL.md"`` or ``"skill.md"``.
    """
    directory = root / (dir_name if dir_name is not None else name)
    directory.mkdir(parents=True, exist_ok=True)
    if raw is None:
        lines = ["---", f"name: {_yaml_scalar(name)}", f"description: {_yaml_scalar(description)}"]
        for key, value in (frontmatter or {}).items():
            if isinstance(value, bool):
                rendered = "true" if value else "false"
            elif isinstance(value, str):
                rendered = _yaml_scalar(value)
            else:
                rendered = json.dumps(value, ensure_ascii=False)
            lines.append(f"{key}: {rendered}")
        raw = "\n".join([*lines, "---", body])
    target = directory / skill_md_name
    if isinstance(raw, bytes):
        target.write_bytes(raw)
    else:
        target.write_text(raw, encoding="utf-8")
    for relative, content in (files or {}).items():
        path = directory / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            path.write_bytes(content)
        else:
            path.write_text(content, encoding="utf-8")
    return directory


def age_tree(directory: Path, seconds: int = 3600) -> None:
    """Set every time under ``directory`` (and its own) ``seconds`` back, links not followed:
    caches that distrust just-written files (a racy timestamp) then keep what they read."""
    past = time.time_ns() - seconds * 1_000_000_000
    for folder, dirs, files in os.walk(directory, topdown=False):
        for name in [*files, *dirs]:
            os.utime(os.path.join(folder, name), ns=(past, past), follow_symlinks=False)
    os.utime(directory, ns=(past, past))

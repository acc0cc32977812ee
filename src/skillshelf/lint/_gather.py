"""The I/O edge of lint: a discovered skill → a :class:`LintSubject` (body, file list, docs)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Final

from skillshelf.core.frontmatter import FrontmatterError, decode_skill_md, parse_frontmatter
from skillshelf.errors import FileAccessError, SkillshelfError
from skillshelf.lint._imports import script_imports, unavailable
from skillshelf.lint._model import LintSubject, ScriptImport
from skillshelf.skills.paths import open_skill_file
from skillshelf.skills.skill import Skill, read_skill_md
from skillshelf.skills.walk import walk_skill

__all__ = ["subject_from_skill"]

# A skill that vendors thousands of files is still linted; its listing stops here.
MAX_LISTED_FILES: Final = 5000
# Linked documents are read to follow their links; a bigger one is not a document to read.
MAX_DOC_BYTES: Final = 512 * 1024
_DOC_SUFFIXES: Final = (".md", ".markdown", ".mdx")
_SKIPPED_DIRS: Final = frozenset({".git", "__pycache__", "node_modules", ".venv"})
_TOOLS_KEYS: Final = ("allowed-tools", "allowed_tools", "tools")
# Python scripts whose imports are read, at most; a bigger file is not a script to read.
MAX_SCRIPTS: Final = 200


class _Docs(Mapping[str, str]):
    """Markdown documents of a skill, read from disk only when a check asks for one."""

    def __init__(self, root: Path, paths: frozenset[str]) -> None:
        self._root = root
        self._paths = paths
        self._texts: dict[str, str] = {}

    def __getitem__(self, relative: str) -> str:
        if relative not in self._paths:
            raise KeyError(relative)
        if relative not in self._texts:
            self._texts[relative] = _read_doc(self._root, relative)
        return self._texts[relative]

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._paths))

    def __len__(self) -> int:
        return len(self._paths)


def _read_doc(root: Path, relative: str) -> str:
    try:
        fd, _, _ = open_skill_file(root, relative)  # race-free, never blocks on a FIFO
        with os.fdopen(fd, "rb") as handle:
            data = handle.read(MAX_DOC_BYTES)
    except (OSError, FileAccessError):
        return ""  # listed a moment ago; a vanished or unreadable doc has no links to follow
    return data.decode("utf-8", errors="replace")


def _unavailable_imports(root: Path, files: frozenset[str]) -> tuple[ScriptImport, ...]:
    scripts = sorted(f for f in files if f.endswith(".py"))[:MAX_SCRIPTS]
    found = [i for script in scripts for i in script_imports(script, _read_doc(root, script))]
    return tuple(unavailable(found))


def _walk(root: Path) -> tuple[frozenset[str], frozenset[str]]:
    """Files and folders of a skill (relative POSIX paths) and symbolic links leading out.

    A filter over the one walk (:mod:`skillshelf.skills.walk`): lint does not report on
    vendored or generated folders, but never walks the skill a second way.
    """
    files: set[str] = set()
    escaping: set[str] = set()
    for entry in walk_skill(root).entries:
        if not _SKIPPED_DIRS.isdisjoint(entry.path.split("/")):
            continue
        if entry.kind == "symlink" and entry.target is None:
            escaping.add(entry.path)
            continue
        files.add(entry.path)
        if len(files) >= MAX_LISTED_FILES:
            break
    return frozenset(files), frozenset(escaping)


def subject_from_skill(skill: Skill) -> LintSubject:
    """Read what the lint checks need about ``skill``: its body, file list and documents.

    Raises:
        SkillshelfError: SKILL.md can no longer be read or parsed.
    """
    try:
        raw, _, _ = read_skill_md(skill.skill_md, full=True)
        text, _ = decode_skill_md(raw)
        fm = parse_frontmatter(text)
    except (OSError, FrontmatterError) as exc:
        raise SkillshelfError(f"Cannot read {skill.skill_md}: {exc}") from exc
    body = fm.body
    manifest = skill.manifest
    # A `tools:` list of agent names only is no ceiling: nothing to check the body against.
    declared = any(key in fm.data for key in _TOOLS_KEYS) and (
        bool(manifest.allowed_tools) or not manifest.not_tools
    )
    files, escaping = _walk(skill.path)
    docs = frozenset(
        f for f in files if f.lower().endswith(_DOC_SUFFIXES) and f != skill.skill_md_name
    )
    return LintSubject(
        name=skill.name,
        description=skill.description,
        directory=skill.directory,
        skill_md=skill.skill_md_name,
        body=body,
        body_line=text[: len(text) - len(body)].count("\n") + 1,
        description_line=fm.lines.get("description"),
        allowed_tools=manifest.allowed_tools if declared else None,
        not_tools=manifest.not_tools,
        when_to_use=manifest.when_to_use,
        files=files,
        docs=_Docs(skill.path, docs),
        escaping=escaping,
        unavailable_imports=_unavailable_imports(skill.path, files),
    )

"""The I/O edge of lint: a discovered skill → a :class:`LintSubject` (body, file list, docs)."""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from typing import Final

from skillshelf.core.frontmatter import FrontmatterError, decode_skill_md, parse_frontmatter
from skillshelf.errors import SkillshelfError
from skillshelf.lint._imports import script_imports, unavailable
from skillshelf.lint._model import LintSubject, ScriptImport
from skillshelf.skills.skill import Skill, read_skill_md
from skillshelf.skills.walk import open_beneath, walk_skill

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

    def __init__(self, files: _Files, paths: frozenset[str]) -> None:
        self._files = files
        self._paths = paths
        self._texts: dict[str, str] = {}

    def __getitem__(self, relative: str) -> str:
        if relative not in self._paths:
            raise KeyError(relative)
        if relative not in self._texts:
            self._texts[relative] = self._files.read(relative)
        return self._texts[relative]

    def __contains__(self, relative: object) -> bool:
        return relative in self._paths  # Mapping's own would read the document to find out

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._paths))

    def __len__(self) -> int:
        return len(self._paths)


class _Files:
    """What lint sees of a skill folder: a filter over the one walk, and reads of its files.

    Lint does not report on vendored or generated folders, but never walks the skill a
    second way (:mod:`skillshelf.skills.walk`). A file is read by the walk's own no-follow
    open from the skill folder, not joined and resolved again path by path: a regular
    file at its path, a link at the in-skill file it leads to.
    """

    def __init__(self, root: str) -> None:
        walk = walk_skill(root)
        self._root = walk.root
        self._readable: dict[str, str] = {}
        files: set[str] = set()
        escaping: set[str] = set()
        for entry in walk.entries:
            if not _SKIPPED_DIRS.isdisjoint(entry.path.split("/")):
                continue
            if entry.kind == "symlink" and entry.target is None:
                escaping.add(entry.path)
                continue
            files.add(entry.path)
            if entry.kind == "file":
                self._readable[entry.path] = entry.path
            elif entry.target_kind == "file" and entry.target is not None:
                self._readable[entry.path] = entry.target
            if len(files) >= MAX_LISTED_FILES:
                break
        self.files = frozenset(files)
        self.escaping = frozenset(escaping)

    def read(self, relative: str) -> str:
        """The start of a listed file as text; "" for a folder or anything not readable."""
        target = self._readable.get(relative)
        if target is None:
            return ""  # a folder, a FIFO or a device: no text, no links to follow
        try:
            with os.fdopen(open_beneath(self._root, target), "rb") as handle:
                data = handle.read(MAX_DOC_BYTES)
        except OSError:
            return ""  # listed a moment ago; a vanished or unreadable file has nothing to say
        return data.decode("utf-8", errors="replace")

    def scripts(
        self, known: dict[str, bool] | None
    ) -> tuple[tuple[ScriptImport, ...], tuple[str, ...]]:
        """The unavailable imports of the Python scripts, and the scripts too deep to parse."""
        found: list[ScriptImport] = []
        unparsable: list[str] = []
        for script in sorted(f for f in self.files if f.endswith(".py"))[:MAX_SCRIPTS]:
            imports = script_imports(script, self.read(script))
            if imports is None:
                unparsable.append(script)
            else:
                found.extend(imports)
        return tuple(unavailable(found, known)), tuple(unparsable)


def subject_from_skill(skill: Skill, *, known: dict[str, bool] | None = None) -> LintSubject:
    """Read what the lint checks need about ``skill``: its body, file list and documents.

    ``known`` carries :func:`~skillshelf.lint._imports.unavailable`'s answers from one skill
    to the next within a run.

    Raises:
        SkillshelfError: SKILL.md can no longer be read or parsed.
    """
    try:
        raw, _, _ = read_skill_md(os.path.join(skill.directory, skill.skill_md_name), full=True)
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
    listed = _Files(skill.directory)
    imports, unparsable = listed.scripts(known)
    docs = frozenset(
        f for f in listed.files if f.lower().endswith(_DOC_SUFFIXES) and f != skill.skill_md_name
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
        files=listed.files,
        docs=_Docs(listed, docs),
        escaping=listed.escaping,
        unavailable_imports=imports,
        unparsable_scripts=unparsable,
    )

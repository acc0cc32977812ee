"""What ``skill_load`` hands the model, gathered from disk: the skill's documents, the links
its body makes to missing files, and the :class:`~skillshelf.core.render.SkillSnapshot` that
:mod:`skillshelf.core.render` turns into text.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
from collections.abc import Sequence
from typing import Final

from skillshelf.core.files import FileTree
from skillshelf.core.render import DocSnapshot, SkillSnapshot, render_skill_load
from skillshelf.errors import FileAccessError
from skillshelf.skills.paths import file_tree, read_skill_file, safe_join
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import Entry, SkillWalk, walk_skill
from skillshelf.skills.walk_cache import WalkCache

__all__ = [
    "DOC_SUFFIXES",
    "MAX_DOCS",
    "gather_load",
    "list_docs",
    "missing_links",
    "render_load",
]

# Documents the model may select: text meant to be read, not run.
DOC_SUFFIXES: Final = frozenset(
    {".md", ".markdown", ".txt", ".rst", ".json", ".yaml", ".yml", ".csv", ".html", ".xml"}
)
MAX_DOCS: Final = 200
# Docs delivered in one load share this budget, so a load never floods the context.
MAX_DOC_CHARS_TOTAL: Final = 60_000
_SKIPPED_DIRS: Final = frozenset({"scripts", "__pycache__", "node_modules", ".git"})
# Links and images (an image's "!" changes nothing about its target). Starting with a literal
# "[" lets the regex engine skip ahead to candidates: ten times faster over long bodies.
_LINK: Final = re.compile(r"\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")


def list_docs(
    skill: Skill, *, walk: SkillWalk | None = None, walks: WalkCache | None = None
) -> list[str]:
    """The skill's document files (relative POSIX paths, sorted), SKILL.md excluded.

    A display filter over the one walk (:mod:`skillshelf.skills.walk`): readable files and
    in-skill links to them, with a document suffix, outside ``scripts/`` and tool folders.
    ``walk`` is the skill's walk when the caller already has it; else it comes from
    ``walks`` when given (reused while the folder is unchanged), else the folder is walked.
    """
    if walk is None and walks is not None:
        return list(walks.get(skill.directory).derive("docs", _docs))
    return list(_docs(walk if walk is not None else walk_skill(skill.directory)))


def _docs(walked: SkillWalk) -> tuple[str, ...]:
    found: list[str] = []
    for entry in sorted(walked.servable(), key=_walk_order):
        *folders, filename = entry.path.split("/")
        if any(f in _SKIPPED_DIRS or f.startswith(".") for f in folders):
            continue
        if os.path.splitext(filename)[1].lower() not in DOC_SUFFIXES:
            continue
        if entry.path.lower() != "skill.md":
            found.append(entry.path)
            if len(found) >= MAX_DOCS:
                break
    return tuple(found)


def _walk_order(entry: Entry) -> tuple[tuple[int, str], ...]:
    # A folder's own files before its subfolders, as a top-down listing reads.
    *folders, name = entry.path.split("/")
    return (*((1, f) for f in folders), (0, name))


def missing_links(skill: Skill, body: str, *, walk: SkillWalk | None = None) -> list[str]:
    """Relative Markdown link targets in ``body`` that name no file inside the skill.

    With the skill's ``walk``, a target the walk holds (a file, a folder, or a link leading
    inside) is found without touching the disk; every other target is still checked with
    :func:`~skillshelf.skills.paths.safe_join`, so the answer is the same either way.
    """
    return _missing_links(skill, body, _walked_paths(walk))


def _missing_links(skill: Skill, body: str, walked: frozenset[str]) -> list[str]:
    missing: list[str] = []
    if "](" not in body:  # every link _LINK matches has one: most bodies are done here
        return missing
    for match in _LINK.finditer(body):
        target = match.group(1).split("#", 1)[0].split("?", 1)[0]
        if not target or re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("/"):
            continue
        if posixpath.normpath(target.replace("\\", "/")) in walked:
            continue
        try:
            exists = safe_join(skill.path, target).exists()
        except FileAccessError:
            exists = False
        if not exists and target not in missing:
            missing.append(target)
    return missing


def _walked_paths(walk: SkillWalk | None) -> frozenset[str]:
    """Paths of a walk that certainly exist inside the skill (links only when they lead in)."""
    if walk is None:
        return frozenset()
    return frozenset(
        e.path
        for e in walk.entries
        if e.kind in ("file", "dir") or (e.kind == "symlink" and e.target is not None)
    )


def gather_load(
    skill: Skill,
    body: str,
    docs: Sequence[str],
    *,
    max_doc_chars: int = 24_000,
    directory: str | None = None,
    walk: SkillWalk | None = None,
    tree: FileTree | None = None,
    walks: WalkCache | None = None,
) -> SkillSnapshot:
    """Read what a ``skill_load`` result shows of ``skill`` into a value the core renders.

    Args:
        skill: The skill.
        body: Its SKILL.md body.
        docs: Documents to include (relative paths, already validated).
        max_doc_chars: Cap per document.
        directory: How the result names the skill's directory (default: its absolute path).
        walk: The skill's walk when the caller already has it.
        tree: ``file_tree(skill.path, walk=walk)`` when the caller already has it.
        walks: Where to take the walk (and the tree derived from it) from while the folder
            is unchanged, when ``walk`` is not given.
    """
    if walk is None and walks is not None:
        known = walks.get(skill.directory)
        if tree is None:
            tree, walked = known.derive("load", lambda w: _load_view(skill.directory, w))
        else:
            walked = known.derive("paths", _walked_paths)
    else:
        if walk is None:
            walk = walk_skill(skill.directory)  # one walk for the tree and the link check
        if tree is None:
            tree = file_tree(skill.path, walk=walk)
        walked = _walked_paths(walk)
    return SkillSnapshot(
        name=skill.name,
        directory=skill.directory if directory is None else directory,
        body=body,
        tree=tree,
        missing_links=tuple(_missing_links(skill, body, walked)),
        docs=_gather_docs(skill, docs, max_doc_chars=max_doc_chars),
        details=_details(skill),
    )


def _load_view(directory: str, walk: SkillWalk) -> tuple[FileTree, frozenset[str]]:
    """What every load of a skill takes from its walk: the tree shown, the paths it holds."""
    return file_tree(directory, walk=walk), _walked_paths(walk)


def _details(skill: Skill) -> tuple[tuple[str, str], ...]:
    manifest = skill.manifest
    pairs = (
        ("version", manifest.version),
        ("author", manifest.author),
        ("license", manifest.license),
        ("compatibility", manifest.compatibility),
        ("tags", ", ".join(manifest.tags) if manifest.tags else None),
        # Quoted: a trigger phrase may itself hold a comma or a semicolon.
        ("triggers", ", ".join(_quoted(t) for t in manifest.triggers) or None),
    )
    return tuple((label, value) for label, value in pairs if value)


def _quoted(phrase: str) -> str:
    return json.dumps(phrase, ensure_ascii=False)


def render_load(
    skill: Skill,
    body: str,
    docs: Sequence[str],
    *,
    max_doc_chars: int = 24_000,
    directory: str | None = None,
    walk: SkillWalk | None = None,
    tree: FileTree | None = None,
    walks: WalkCache | None = None,
) -> str:
    """The text of a ``skill_load`` result: :func:`gather_load`, then
    :func:`~skillshelf.core.render.render_skill_load`. Arguments as for :func:`gather_load`."""
    snapshot = gather_load(
        skill,
        body,
        docs,
        max_doc_chars=max_doc_chars,
        directory=directory,
        walk=walk,
        tree=tree,
        walks=walks,
    )
    return render_skill_load(snapshot)


def _gather_docs(
    skill: Skill, docs: Sequence[str], *, max_doc_chars: int
) -> tuple[DocSnapshot, ...]:
    gathered: list[DocSnapshot] = []
    # The budget is spent here, not in the renderer: it decides how much of each file is read.
    budget = MAX_DOC_CHARS_TOTAL
    for relative in docs:
        if budget <= 0:
            gathered.append(DocSnapshot(relative))
            continue
        try:
            content = read_skill_file(
                skill.real_path,
                relative,
                max_chars=min(max_doc_chars, budget),
                anchored=True,
                one_name=skill.untrusted,
            )
            doc = DocSnapshot(relative, content=content.file_text())
        except FileAccessError as exc:
            doc = DocSnapshot(relative, problem=str(exc))
        budget -= len(doc.text() or "")
        gathered.append(doc)
    return tuple(gathered)

"""Walking one root for skill folders, reusing an index of unchanged SKILL.md files.

A root is a directory holding skill folders at any depth, or a single skill folder. A folder
with a SKILL.md is a skill and is not descended into (its subfolders are its resources).
Hidden folders and ``node_modules`` are skipped unless ``include_hidden``; the root itself may
live inside a hidden folder. The walk is bounded in depth and in folders visited, follows
symlinked folders but never round a loop, and turns every problem into a diagnostic.
"""

from __future__ import annotations

import errno
import operator
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.core.frontmatter import FrontmatterError, Mode
from skillshelf.skills.index_cache import Index, Row, encode_row
from skillshelf.skills.skill import SKILL_MD_NAMES, ParsedSkillMd, parse_skill_md, read_skill_md

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_DIRS",
    "Found",
    "Index",
    "WalkOptions",
    "WalkResult",
    "walk_root",
]

DEFAULT_MAX_DEPTH: Final = 6
DEFAULT_MAX_DIRS: Final = 2000
# Folders that are never skills and can be huge.
_ALWAYS_SKIPPED: Final = frozenset({"node_modules", "__pycache__"})
_NOT_THERE: Final = frozenset({errno.ENOENT, errno.ENOTDIR, errno.EISDIR})


@dataclass(frozen=True, slots=True)
class WalkOptions:
    """How to walk a root.

    Attributes:
        mode: Validation mode for the SKILL.md files.
        include_hidden: Also walk hidden folders and ``node_modules``.
        max_depth: Folder levels below the root to look in.
        max_dirs: Folders visited per root before the walk stops with a diagnostic.
        full_read: Read whole SKILL.md files (validation) rather than just the frontmatter.
    """

    mode: Mode = "lenient"
    include_hidden: bool = False
    max_depth: int = DEFAULT_MAX_DEPTH
    max_dirs: int = DEFAULT_MAX_DIRS
    full_read: bool = False


class Found(NamedTuple):
    """A SKILL.md found by the walk.

    Attributes:
        skill_md: Its path.
        row: Its index row (reused when the file is unchanged).
        parsed: The fresh parse result, when the file was read on this walk.
    """

    skill_md: str
    row: Row
    parsed: ParsedSkillMd | None = None


@dataclass(slots=True)
class WalkResult:
    """Everything one walk found, in walk order (sorted, depth first)."""

    found: list[Found] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    dirs_visited: int = 0
    parsed: int = 0  # SKILL.md files actually read (not reused from the index)


def walk_root(root: str, options: WalkOptions, index: Index | None = None) -> WalkResult:
    """Find and parse every SKILL.md under ``root``.

    Args:
        root: An existing directory (walked by its real path).
        options: Walk bounds and validation mode.
        index: Earlier results by SKILL.md path; an entry whose file has the same mtime and size
            is reused instead of re-read.
    """
    walker = _Walker(options, index or {})
    root = os.path.realpath(root)
    single = walker.try_skill(root)
    if single is None:
        try:
            st = os.stat(root)
            walker.seen_dirs.add((st.st_dev, st.st_ino))
        except OSError:
            pass
        walker.descend(root, 0)
    return walker.result


class _Walker:
    def __init__(self, options: WalkOptions, index: Index) -> None:
        self.options = options
        self.index = index
        self.result = WalkResult()
        self.seen_dirs: set[tuple[int, int]] = set()
        self.capped = False

    def try_skill(self, directory: str) -> Found | None:
        """Record ``directory`` as a skill if it holds a SKILL.md."""
        for md_name in SKILL_MD_NAMES:
            md_path = f"{directory}{os.sep}{md_name}"
            cached = self.index.get(md_path)
            try:
                if cached is not None:
                    st = os.stat(md_path)
                    if cached[0] == st.st_mtime_ns and cached[1] == st.st_size:
                        found = Found(md_path, cached)
                        self.result.found.append(found)
                        return found
                preread = read_skill_md(md_path, full=self.options.full_read)
            except FrontmatterError as exc:
                return self._record(md_path, _failed(md_path, exc.code, exc.message))
            except OSError as exc:
                if exc.errno in _NOT_THERE:
                    continue
                message = f"Cannot read SKILL.md: {exc.strerror}"
                return self._record(md_path, _failed(md_path, "file.unreadable", message))
            self.result.parsed += 1
            parsed = parse_skill_md(
                md_path,
                mode=self.options.mode,
                full=self.options.full_read,
                dir_name=directory.rpartition(os.sep)[2],
                preread=preread,
            )
            return self._record(md_path, parsed)
        return None

    def _record(self, md_path: str, parsed: ParsedSkillMd) -> Found:
        found = Found(md_path, encode_row(parsed), parsed)
        self.result.found.append(found)
        return found

    def descend(self, directory: str, depth: int) -> None:
        if depth >= self.options.max_depth:
            return
        result = self.result
        max_dirs = self.options.max_dirs
        try_skill = self.try_skill
        for entry in self._subdirs(directory):
            if self.capped:
                return
            result.dirs_visited += 1
            if result.dirs_visited > max_dirs:
                self.capped = True
                self._diag(
                    "discovery.dir_cap",
                    f"Stopped after visiting {self.options.max_dirs:,} folders "
                    "(raise max_dirs to look further)",
                    directory,
                    severity="warning",
                )
                return
            # Symlinked folders are recorded by their real path, so every skill path is
            # canonical (containment checks and skills-ref's locations both rely on it).
            path = os.path.realpath(entry.path) if entry.is_symlink() else entry.path
            if try_skill(path) is None and self._enter(entry):
                self.descend(path, depth + 1)

    def _subdirs(self, directory: str) -> Iterator[os.DirEntry[str]]:
        try:
            with os.scandir(directory) as it:
                entries = sorted(it, key=_ENTRY_NAME)
        except OSError as exc:
            self._diag("discovery.unreadable_dir", f"Cannot list folder: {exc.strerror}", directory)
            return
        hidden_ok = self.options.include_hidden
        for entry in entries:
            name = entry.name
            if not hidden_ok and (name.startswith(".") or name in _ALWAYS_SKIPPED):
                continue
            try:
                if entry.is_dir():
                    yield entry
            except OSError:
                continue

    def _enter(self, entry: os.DirEntry[str]) -> bool:
        """Decide whether to walk into a non-skill folder (loop detection for symlinks)."""
        try:
            st = entry.stat()
        except OSError as exc:
            self._diag(
                "discovery.unreadable_dir", f"Cannot read folder: {exc.strerror}", entry.path
            )
            return False
        key = (st.st_dev, st.st_ino)
        if key in self.seen_dirs:
            if entry.is_symlink():
                self._diag(
                    "discovery.symlink_loop",
                    f"Symlink leads to a folder already visited ({os.path.realpath(entry.path)}); "
                    "not followed",
                    entry.path,
                    severity="warning",
                )
            return False
        self.seen_dirs.add(key)
        return True

    def _diag(self, code: str, message: str, path: str, *, severity: Severity = "error") -> None:
        self.result.diagnostics.append(Diagnostic(code, severity, message, None, path))


def _failed(md_path: str, code: str, message: str) -> ParsedSkillMd:
    return ParsedSkillMd(None, (Diagnostic(code, "error", message, None, md_path),))


_ENTRY_NAME: Final = operator.attrgetter("name")

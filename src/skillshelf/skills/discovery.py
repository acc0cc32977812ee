"""Walking one root for skill folders, reusing an index of unchanged SKILL.md files.

A root is a directory holding skill folders at any depth, or a single skill folder. A folder
with a SKILL.md is a skill and is not descended into (its subfolders are its resources).
Hidden folders and ``node_modules`` are skipped unless ``include_hidden``; the root itself may
live inside a hidden folder. The walk is bounded in depth and in folders visited, follows
symlinked folders but never round a loop, and turns every problem into a diagnostic.

Rules for real trees (docs/design.md, "Discovery rules"):

* A skill folder is named by the path it was reached by: a link ``root/x -> ../store/y`` is
  the skill folder ``root/x`` (its name is checked against ``x``); its resolved folder is kept
  beside it (:attr:`Found.real`) for reads that follow no link.
* One folder reached twice (directly and through a link, or through two links) is one skill:
  the direct path wins, else the first in walk order; the other is an ignored candidate
  (``discovery.same_folder``), never a skill "shadowed by" itself.
* A file named ``SKILL.MD`` or ``Skill.md`` (only ``SKILL.md`` and ``skill.md`` are read) and
  a SKILL.md link leading nowhere are ignored candidates (``discovery.wrong_case``,
  ``discovery.dangling``), reported, never silent.
* A SKILL.md link leading outside its folder is refused with that reason (a skipped SKILL.md:
  nothing would pin or scan what it says), never half-usable.
"""

from __future__ import annotations

import errno
import operator
import os
import time
from dataclasses import dataclass, field
from typing import Final, NamedTuple

from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.core.frontmatter import FrontmatterError, Mode
from skillshelf.skills.cache_files import matches, settled, stamp_of
from skillshelf.skills.index_cache import Index, Row, encode_row
from skillshelf.skills.skill import (
    SKILL_MD_NAMES,
    DanglingSkillMdError,
    ParsedSkillMd,
    parse_skill_md,
    read_skill_md_stat,
)

__all__ = [
    "DEFAULT_MAX_DEPTH",
    "DEFAULT_MAX_DIRS",
    "Found",
    "Index",
    "WalkOptions",
    "WalkResult",
    "nested_skill_mds",
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
        real: The skill folder with links resolved, when a link was on the way to it (None:
            ``skill_md``'s folder is already its real path).
        reusable: False when the file changed too recently to trust its ``stat`` data
            later (:func:`~skillshelf.skills.cache_files.settled`): the row is not kept.
    """

    skill_md: str
    row: Row
    parsed: ParsedSkillMd | None = None
    real: str | None = None
    reusable: bool = True


@dataclass(slots=True)
class WalkResult:
    """Everything one walk found, in walk order (sorted, depth first)."""

    found: list[Found] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    ignored: list[Diagnostic] = field(default_factory=list)  # candidates that are no skill
    dirs_visited: int = 0
    parsed: int = 0  # SKILL.md files actually read (not reused from the index)


def walk_root(root: str, options: WalkOptions, index: Index | None = None) -> WalkResult:
    """Find and parse every SKILL.md under ``root``.

    Args:
        root: An existing directory (walked by its real path).
        options: Walk bounds and validation mode.
        index: Earlier results by SKILL.md path; an entry whose file has the same
            modification time, size, inode and status-change time is reused instead of
            re-read.
    """
    walker = _Walker(options, index or {})
    reached = os.path.abspath(root)
    try:
        real = os.path.realpath(root)
    except OSError:  # a link on the way swapped out meanwhile: walk it by its name
        real = reached
    linked = None if real == reached else real
    single = walker.try_skill(reached, linked)
    if single is None:
        try:
            st = os.stat(real)
            walker.seen_dirs.add((st.st_dev, st.st_ino))
        except OSError:
            pass
        walker.descend(reached, linked, 0)
    _one_per_folder(walker.result)
    return walker.result


def _one_per_folder(result: WalkResult) -> None:
    """Keep one skill per real folder: the one reached directly, else the first."""
    if not any(f.real is not None for f in result.found):
        return
    kept: dict[str, Found] = {}
    for found in result.found:
        key = found.real or found.skill_md.rpartition(os.sep)[0]
        first = kept.get(key)
        if first is None or (first.real is not None and found.real is None):
            kept[key] = found
    dropped = [f for f in result.found if kept[f.real or f.skill_md.rpartition(os.sep)[0]] is not f]
    for found in dropped:
        winner = kept[found.real or found.skill_md.rpartition(os.sep)[0]]
        result.ignored.append(
            Diagnostic(
                "discovery.same_folder",
                "info",
                f"The same folder as {winner.skill_md.rpartition(os.sep)[0]} (reached again "
                "through a symbolic link); listed once, by that path",
                None,
                found.skill_md,
            )
        )
    gone = {id(f) for f in dropped}
    result.found = [f for f in result.found if id(f) not in gone]


class _Walker:
    def __init__(self, options: WalkOptions, index: Index) -> None:
        self.options = options
        self.index = index
        self.result = WalkResult()
        self.seen_dirs: set[tuple[int, int]] = set()
        self.capped = False
        self.now_ns = time.time_ns()

    def try_skill(self, directory: str, linked: str | None) -> Found | None:
        """Record ``directory`` as a skill if it holds a SKILL.md.

        ``linked`` is the folder with links resolved when a link was on the way, else None.
        """
        for md_name in SKILL_MD_NAMES:
            md_path = f"{directory}{os.sep}{md_name}"
            cached = self.index.get(md_path)
            try:
                if cached is not None:
                    st = os.stat(md_path)
                    if matches(cached, st):
                        found = Found(md_path, cached, None, linked)
                        self.result.found.append(found)
                        return found
                data, mtime_ns, size, st = read_skill_md_stat(md_path, full=self.options.full_read)
            except FrontmatterError as exc:
                return self._record(md_path, _failed(md_path, exc.code, exc.message), linked)
            except DanglingSkillMdError as exc:
                self._ignore("discovery.dangling", str(exc.strerror), md_path)
                continue
            except OSError as exc:
                if exc.errno in _NOT_THERE:
                    continue
                message = f"Cannot read SKILL.md: {exc.strerror}"
                return self._record(md_path, _failed(md_path, "file.unreadable", message), linked)
            self.result.parsed += 1
            parsed = parse_skill_md(
                md_path,
                mode=self.options.mode,
                full=self.options.full_read,
                dir_name=directory.rpartition(os.sep)[2],
                preread=(data, mtime_ns, size),
            )
            return self._record(md_path, parsed, linked, st)
        return None

    def _record(
        self,
        md_path: str,
        parsed: ParsedSkillMd,
        real: str | None,
        st: os.stat_result | None = None,
    ) -> Found:
        if st is None:  # a failure before or while reading: nothing to trust later
            found = Found(md_path, encode_row(parsed, _NO_STAT), parsed, real, False)
        else:
            row = encode_row(parsed, st)
            found = Found(md_path, row, parsed, real, settled(stamp_of(st), self.now_ns))
        self.result.found.append(found)
        return found

    def _ignore(self, code: str, message: str, path: str) -> None:
        self.result.ignored.append(Diagnostic(code, "warning", message, None, path))

    def descend(self, directory: str, linked: str | None, depth: int) -> None:
        """Walk the folders of ``directory`` (resolved: ``linked``, or itself when None)."""
        if depth >= self.options.max_depth:
            return
        entries = self._listing(directory)
        result = self.result
        found = result.found
        max_dirs = self.options.max_dirs
        hidden_ok = self.options.include_hidden
        index_get = self.index.get
        md_suffix = f"{os.sep}{SKILL_MD_NAMES[0]}"
        for entry in entries:
            name = entry.name
            if len(name) == 8 and name.lower() == "skill.md":
                self._wrong_case(entry)
                continue
            if not hidden_ok and (name[0] == "." or name in _ALWAYS_SKIPPED):
                continue
            if not _is_dir(entry):
                continue
            if self.capped:
                return
            result.dirs_visited += 1
            if result.dirs_visited > max_dirs:
                self._cap(directory)
                return
            path = entry.path
            # A folder is named by the path it was reached by (a link's name, as skills-ref
            # sees it); its real path is worked out only when a link is on the way.
            if entry.is_symlink():
                try:
                    entry_linked: str | None = os.path.realpath(path)
                except OSError:  # the link swapped out meanwhile: it leads nowhere now
                    continue
                if entry_linked == path:
                    entry_linked = None
            else:
                entry_linked = None if linked is None else f"{linked}{os.sep}{name}"
            # The re-open of an unchanged skill, inline: one stat and a comparison.
            md_path = path + md_suffix
            cached = index_get(md_path)
            if cached is not None and _unchanged_at(cached, md_path):
                found.append(Found(md_path, cached, None, entry_linked))
                continue
            if self.try_skill(path, entry_linked) is None and self._enter(entry):
                self.descend(path, entry_linked, depth + 1)

    def _cap(self, directory: str) -> None:
        self.capped = True
        self._diag(
            "discovery.dir_cap",
            f"Stopped after visiting {self.options.max_dirs:,} folders "
            "(raise max_dirs to look further)",
            directory,
            severity="warning",
        )

    def _listing(self, directory: str) -> list[os.DirEntry[str]]:
        try:
            with os.scandir(directory) as it:
                return sorted(it, key=_ENTRY_NAME)
        except OSError as exc:
            self._diag("discovery.unreadable_dir", f"Cannot list folder: {exc.strerror}", directory)
            return []

    def _wrong_case(self, entry: os.DirEntry[str]) -> None:
        # Listed in a folder that is not a skill: a SKILL.md here is a dangling link, which
        # try_skill has reported already.
        if entry.name in SKILL_MD_NAMES:
            return
        self._ignore(
            "discovery.wrong_case",
            f"A file named {entry.name!r} is not read: only SKILL.md (or skill.md) makes a "
            "skill; rename it",
            entry.path,
        )

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


def nested_skill_mds(directory: str) -> list[str]:
    """SKILL.md files (any case) below a skill folder, as paths relative to it.

    Skills are not looked for inside skills, so these are files of the outer skill. Found by
    the one skill walker (:func:`~skillshelf.skills.walk.walk_skill`), not a walk of its own.
    """
    from skillshelf.skills.walk import walk_skill

    return [
        e.path
        for e in walk_skill(directory).entries
        if "/" in e.path and e.path.rpartition("/")[2].lower() == "skill.md" and e.kind != "dir"
    ]


def _is_dir(entry: os.DirEntry[str]) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


def _unchanged_at(row: Row, path: str) -> bool:
    """Whether the file at ``path`` still has its index row's stamp."""
    try:
        return matches(row, os.stat(path))
    except OSError:
        return False


def _failed(md_path: str, code: str, message: str) -> ParsedSkillMd:
    return ParsedSkillMd(None, (Diagnostic(code, "error", message, None, md_path),))


_ENTRY_NAME: Final = operator.attrgetter("name")
_NO_STAT: Final = os.stat_result((0,) * 10)

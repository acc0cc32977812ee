"""Walks of skill folders kept while nothing they saw has changed, checked with ``lstat``.

``skill_load`` shows a skill's file tree and checks its body's links against the skill's files
on every call; walking the folder each time (a listing per folder, a ``stat`` per entry,
sorting, building entries) costs several times reading SKILL.md. A :class:`WalkCache` keeps the
walk — and values derived from it, such as the tree shown — and hands it out again after one
``lstat`` per folder and file it holds, all compared with what the walk saw:

* a file added, removed or renamed changes its folder's modification time;
* a file written changes its own size or modification time (a write of the same size within
  the file system's clock tick is invisible, but then everything shown is the same too:
  the tree shows names and sizes, nothing more);
* a folder or file swapped for another changes the inode number;
* and any of these, even when a tool puts the modification time back afterwards (``tar``,
  ``rsync -t``, ``cp -p`` and ``touch -d`` restore times; a folder's size does not move when
  an entry is added on most file systems), changes the inode's change time (``ctime``), which
  no system call sets.

A walk's files are stamped with the ``lstat`` the walk itself described them from; folders
with one ``stat`` each, the skill folder's before the walk and the others after it (a change
in between has a time inside the racy window below).

So what a reader gets is what a fresh walk would give. Two cases are never kept, and are
walked again on every use: walks holding anything but files and folders (a symbolic link can
change what it leads to without any of these times changing; FIFOs, devices, unreadable or
capped walks are rare and not worth it), and walks that saw a stamp not
:func:`~skillshelf.skills.cache_files.settled` at the walk itself — a change made in the same
clock tick as the walk might not move the time it changed (the "racy" case ``git`` guards
against the same way). Stamps and that rule are every cache's
(:mod:`skillshelf.skills.cache_files`).

Only the display faces use it (``skill_load``'s tree and link check, the document list);
the lockfile, the scanner and staging walk afresh, as they must.
"""

from __future__ import annotations

import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Any, Final, TypeVar

from skillshelf.skills.cache_files import RACY_NS, Stamp, matches, settled, stamp_of
from skillshelf.skills.walk import SkillWalk, absolute, walk_skill

__all__ = ["RACY_NS", "KnownWalk", "WalkCache"]

# Skills whose walks are kept; the least recently used is dropped first.
DEFAULT_LIMIT: Final = 1024
_T = TypeVar("_T")
_NONE: Final = object()  # no value derived yet (None may be one)
# The path and stamp of the skill folder and of every entry.
_Stamp = tuple[str, Stamp]


class KnownWalk:
    """A skill folder's walk, with values derived from it kept beside it.

    Attributes:
        walk: The walk.
        kept: True when the walk is cached (derived values are then kept too).
    """

    __slots__ = ("_derived", "_lock", "_stamps", "kept", "walk")

    def __init__(self, walk: SkillWalk, stamps: tuple[_Stamp, ...] | None) -> None:
        self.walk = walk
        self.kept = stamps is not None
        self._stamps = stamps or ()
        self._derived: dict[Hashable, Any] = {}
        self._lock = threading.Lock()

    def derive(self, key: Hashable, factory: Callable[[SkillWalk], _T]) -> _T:
        """``factory(walk)``, computed once per walk and ``key`` when the walk is kept.

        The value is shared by every later reader: it must not be changed.
        """
        if not self.kept:
            return factory(self.walk)
        value = self._derived.get(key, _NONE)
        if value is not _NONE:
            return value  # type: ignore[no-any-return]
        value = factory(self.walk)
        with self._lock:
            return self._derived.setdefault(key, value)  # type: ignore[no-any-return]

    def unchanged(self) -> bool:
        """Whether every folder and file the walk saw is still as it was."""
        try:
            for i, (path, stamp) in enumerate(self._stamps):
                # The skill folder itself is followed, as the walk follows it; nothing inside.
                if not matches(stamp, os.lstat(path) if i else os.stat(path)):
                    return False
        except OSError:
            return False
        return True


class WalkCache:
    """Walks of skill folders by folder, each handed out again only while unchanged.

    Thread-safe. Keep one per repository scan (e.g. through
    :meth:`~skillshelf.repository.Repository.memo`), so a refresh also starts afresh.

    Args:
        limit: Folders kept; the least recently used is dropped first.
    """

    def __init__(self, *, limit: int = DEFAULT_LIMIT) -> None:
        self._limit = limit
        self._known: OrderedDict[str, KnownWalk] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, directory: str) -> KnownWalk:
        """The walk of ``directory`` (a skill folder): the kept one if nothing it saw changed,
        else a fresh one (kept when it can be checked later)."""
        with self._lock:
            known = self._known.get(directory)
            if known is not None:
                self._known.move_to_end(directory)
        if known is not None and known.unchanged():
            return known
        known = _walk(directory)
        with self._lock:
            if known.kept:
                self._known[directory] = known
                self._known.move_to_end(directory)
                while len(self._known) > self._limit:
                    self._known.popitem(last=False)
            else:
                self._known.pop(directory, None)
        return known


def _walk(directory: str) -> KnownWalk:
    started = time.time_ns()
    root = absolute(directory)
    try:
        # Following a link to the folder, as the walk's own listing does.
        before = os.stat(root)
    except OSError:
        return KnownWalk(walk_skill(root), None)
    seen: dict[str, os.stat_result] = {}
    walk = walk_skill(root, stats=seen)
    if walk.capped is not None or any(e.kind not in ("file", "dir") for e in walk.entries):
        return KnownWalk(walk, None)
    stamps: list[_Stamp] = [(root, stamp_of(before))]
    # Anything changed during the walk (or just before it) has a stamp not settled at its start.
    if not settled(stamps[0][1], started):
        return KnownWalk(walk, None)
    # What walk.full_path gives, for the walk's relative paths (no empty or ``..`` parts).
    prefix = os.path.join(root, "")
    try:
        for entry in walk.entries:
            path = prefix + (entry.path if os.sep == "/" else entry.path.replace("/", os.sep))
            # A file's stamp is the lstat the walk took of it (what it described); a folder's
            # comes after its listing, which the racy window covers.
            stamp = stamp_of(seen.get(entry.path) or os.lstat(path))
            if not settled(stamp, started):
                return KnownWalk(walk, None)
            stamps.append((path, stamp))
    except OSError:  # changed while walked: walk again next time
        return KnownWalk(walk, None)
    return KnownWalk(walk, tuple(stamps))

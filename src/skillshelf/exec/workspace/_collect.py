"""Collecting a command's output files from a workspace, never through a link.

The sandbox made the tree and collection runs with the harness's rights, so the walk opens
each folder relative to its parent's descriptor with ``O_NOFOLLOW`` and reports a link by its
(escaped) name without reading its target.
"""

from __future__ import annotations

import errno
import fnmatch
import hashlib
import os
import stat
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from skillshelf.core.mime import OCTET_STREAM, guess_mime
from skillshelf.errors import clip

__all__ = [
    "INLINE_TEXT_BYTES",
    "MAX_COLLECT_BYTES",
    "MAX_COLLECT_FILES",
    "CollectedFile",
    "collect_files",
    "escape_name",
]

INLINE_TEXT_BYTES: Final = 16 * 1024
MAX_COLLECT_FILES: Final = 50
MAX_COLLECT_BYTES: Final = 20 << 20
# Entries a collect glob may look at, and folders it may descend: the sandbox made the tree.
MAX_COLLECT_SCAN: Final = 10_000
MAX_COLLECT_DEPTH: Final = 32
DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW


@dataclass(frozen=True, slots=True)
class CollectedFile:
    """One output file, described (and inlined when it is small text)."""

    path: str
    size: int
    mime: str
    sha256: str
    text: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """The ``--json`` shape: path, size, mime, sha256."""
        return {"path": self.path, "size": self.size, "mime": self.mime, "sha256": self.sha256}


def collect_files(
    root: Path,
    globs: Sequence[str],
    *,
    max_files: int = MAX_COLLECT_FILES,
    max_bytes: int = MAX_COLLECT_BYTES,
) -> tuple[list[CollectedFile], list[str]]:
    """Files matching ``globs`` (relative to ``root``) and notes on what was refused.

    See :meth:`~skillshelf.exec.workspace.Workspace.collect`.
    """
    files: list[CollectedFile] = []
    notes: list[str] = []
    seen: set[str] = set()
    total = 0
    root_fd = os.open(root, DIR_FLAGS)
    try:
        for pattern in globs:
            for relative in _matches(root_fd, pattern, notes):
                if relative in seen:
                    continue
                seen.add(relative)
                if len(files) >= max_files:
                    notes.append(
                        f"{escape_name(relative)}: not collected (limit {max_files} files)"
                    )
                    continue
                described = _describe(root_fd, relative, max_bytes - total, notes)
                if described is not None:
                    total += described.size
                    files.append(described)
    finally:
        os.close(root_fd)
    return files, notes


def _matches(root_fd: int, pattern: str, notes: list[str]) -> list[str]:
    cleaned = pattern.strip().replace("\\", "/")
    parts = [p for p in cleaned.split("/") if p not in ("", ".")]
    if not parts or cleaned.startswith(("/", "~")) or ".." in parts or "\0" in cleaned:
        shown = escape_name(clip(pattern))
        notes.append(f"{shown!r}: refused (globs are relative to the workspace, no '..')")
        return []
    walk = _GlobWalk(notes)
    walk.run(root_fd, "", parts)
    if not walk.found and not walk.links:
        notes.append(f"{escape_name(clip(pattern))!r}: no file matched")
    return sorted(walk.found)


class _GlobWalk:
    """Matches a glob's parts against the tree below a directory descriptor, never via links."""

    def __init__(self, notes: list[str]) -> None:
        self.notes = notes
        self.found: set[str] = set()
        self.links: set[str] = set()
        self.looked = 0

    def run(self, dir_fd: int, prefix: str, parts: Sequence[str], depth: int = 0) -> None:
        if not parts:
            self.found.add(prefix)
            return
        if depth > MAX_COLLECT_DEPTH:
            self.notes.append(
                f"{escape_name(prefix)}: not searched (deeper than {MAX_COLLECT_DEPTH})"
            )
            return
        head, rest = parts[0], parts[1:]
        if head == "**":
            self.run(dir_fd, prefix, rest, depth)  # ** matches no folder too
        for name, kind in self._entries(dir_fd, prefix):
            relative = f"{prefix}/{name}" if prefix else name
            if head == "**":
                if kind == "dir":
                    self._descend(dir_fd, name, relative, parts, depth)
                continue
            if not fnmatch.fnmatchcase(name, head):
                continue
            if kind == "link":
                self._link(relative)
            elif not rest:
                self.found.add(relative)
            elif kind == "dir":
                self._descend(dir_fd, name, relative, rest, depth)

    def _entries(self, dir_fd: int, prefix: str) -> list[tuple[str, str]]:
        entries: list[tuple[str, str]] = []
        if self.looked > MAX_COLLECT_SCAN:
            return entries  # stopped already (and said so once)
        with os.scandir(dir_fd) as listing:
            for entry in listing:
                self.looked += 1
                if self.looked > MAX_COLLECT_SCAN:
                    where = escape_name(prefix) or "."
                    self.notes.append(f"{where}: search stopped after {MAX_COLLECT_SCAN} entries")
                    break
                if entry.is_symlink():
                    kind = "link"
                elif entry.is_dir(follow_symlinks=False):
                    kind = "dir"
                else:
                    kind = "other"
                entries.append((entry.name, kind))
        return sorted(entries)

    def _descend(
        self, dir_fd: int, name: str, relative: str, parts: Sequence[str], depth: int
    ) -> None:
        try:
            sub = os.open(name, DIR_FLAGS, dir_fd=dir_fd)
        except OSError:  # swapped for a link or removed since it was listed: not followed
            self._link(relative)
            return
        try:
            self.run(sub, relative, parts, depth + 1)
        finally:
            os.close(sub)

    def _link(self, relative: str) -> None:
        if relative not in self.links:
            self.links.add(relative)
            self.notes.append(f"{escape_name(relative)}: refused (symbolic link)")


def _open_beneath(root_fd: int, relative: str) -> int:
    """A descriptor for the regular file ``relative`` under ``root_fd``; no link is followed.

    Raises:
        OSError: A component is a link, missing, or the file is not a regular file.
    """
    *folders, name = relative.split("/")
    fd = os.dup(root_fd)
    try:
        for folder in folders:
            sub = os.open(folder, DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = sub
        # O_NONBLOCK: a FIFO the sandbox made must not hang the harness before fstat says so.
        found = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=fd)
    finally:
        os.close(fd)
    if not stat.S_ISREG(os.fstat(found).st_mode):
        os.close(found)
        raise IsADirectoryError(relative)
    return found


def _describe(root_fd: int, relative: str, room: int, notes: list[str]) -> CollectedFile | None:
    shown = escape_name(relative)
    try:
        fd = _open_beneath(root_fd, relative)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            notes.append(f"{shown}: refused (symbolic link)")
        return None  # a folder, a FIFO, a device: not an output file
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        if size > room:
            notes.append(f"{shown}: not collected (limit {MAX_COLLECT_BYTES} B in total)")
            return None
        digest = hashlib.sha256()
        head = b""
        remaining = size  # what fstat said: a file growing meanwhile is read no further
        while remaining > 0 and (chunk := handle.read(min(1 << 20, remaining))):
            remaining -= len(chunk)
            digest.update(chunk)
            if len(head) <= INLINE_TEXT_BYTES:
                head += chunk[: INLINE_TEXT_BYTES + 1 - len(head)]
    mime = guess_mime(relative.rsplit("/", 1)[-1], head)
    text = _inline_text(head) if size <= INLINE_TEXT_BYTES else None
    if text is not None and mime == OCTET_STREAM:
        mime = "text/plain"  # a NUL-free head that still decodes as UTF-8 past the sniff
    return CollectedFile(shown, size, mime, digest.hexdigest(), text)


def escape_name(name: str) -> str:
    """A name from the sandbox as harness text may show it: one line, nothing invisible.

    Control, format (bidi overrides, zero-width), separator and unassigned characters and
    the backslash become ``\\xNN``/``\\uNNNN`` escapes, so a file name cannot start a new
    line of the result or reorder what a reader sees.
    """
    # str.isprintable is False exactly for the Cc, Cf, Cs, Co, Cn, Zl, Zp and Zs-but-space
    # categories: controls, bidi and zero-width formats, undecodable bytes, separators.
    if name.isprintable() and "\\" not in name:
        return name
    return "".join(_escape_char(c) for c in name)


def _escape_char(char: str) -> str:
    if char == "\\":
        return "\\\\"
    if char.isprintable():
        return char
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _inline_text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None

"""Joining model-supplied paths to a skill directory, and reading what they lead to.

This is the one place where a path that came from a model meets the filesystem. Every tool
that takes a path goes through :func:`safe_join`, so containment is decided once, here.
"""

from __future__ import annotations

import codecs
import errno
import os
import re
from dataclasses import dataclass, field, fields
from pathlib import Path

# The tree and text values are pure, so they live in the core (which renders them); they are
# re-exported here beside the functions that produce them.
from skillshelf.core.files import FileText, FileTree, TreeEntry, human_size, tree_order
from skillshelf.core.mime import SNIFF_BYTES, guess_mime, is_binary
from skillshelf.errors import FileAccessError, UsageError, clip
from skillshelf.skills.walk import SkillWalk, open_beneath, walk_skill

__all__ = [
    "FileContent",
    "FileTree",
    "TreeEntry",
    "file_tree",
    "human_size",
    "open_skill_file",
    "read_skill_file",
    "safe_join",
]

_HINT = "Use a path relative to the skill directory, such as 'references/guide.md'."
_DRIVE = re.compile(r"[A-Za-z]:")
_SHOWN_PATH_CHARS = 200  # a model may send a huge "path"; don't echo all of it back
_SNIFF_BYTES = SNIFF_BYTES
# Not shown in the tree, to spare the model's context. A display filter only: the walk
# includes them, so they are locked, scanned, staged and readable like any other entry.
_CLUTTER = frozenset({"__pycache__", ".git", ".DS_Store"})


def safe_join(base: Path, relative: str) -> Path:
    """Join a model-supplied relative path to ``base`` and prove the result stays inside it.

    Backslashes count as separators, ``..`` is allowed only while it stays inside ``base``,
    and symbolic links are followed before the containment check. ``"."`` returns ``base``.

    Args:
        base: The skill directory; it may itself be reached through a symbolic link.
        relative: The path as the model sent it.

    Returns:
        The absolute path, with every symbolic link resolved. It need not exist.

    Raises:
        FileAccessError: ``reason="refused"``, with a message the model can act on, for an
            empty, absolute, ``~``-prefixed or NUL-containing path, or one leading outside.
    """
    return _join(base, relative)[0]


def _join(base: Path, relative: str) -> tuple[Path, str]:
    """Return the resolved path and the normalised POSIX relative path ("." for base)."""
    return _join_under(_resolved_folder(base, relative), relative)


def _resolved_folder(base: Path, relative: str) -> Path:
    try:
        return base.resolve()
    except (OSError, RuntimeError) as exc:  # swapped or removed while being resolved
        raise _refused(relative, "the skill folder cannot be resolved") from exc


def _join_under(root: Path, relative: str) -> tuple[Path, str]:
    parts = _normalise(relative)
    try:
        resolved = root.joinpath(*parts).resolve()
    except (OSError, RuntimeError) as exc:  # Python 3.11 reports a symlink loop as RuntimeError
        raise _refused(relative, "it cannot be resolved (a symbolic link loop?)") from exc
    if not resolved.is_relative_to(root):
        raise _refused(relative, "a symbolic link in it leads outside the skill directory")
    return resolved, "/".join(parts) or "."


def _normalise(relative: str) -> tuple[str, ...]:
    if not relative.strip():
        raise FileAccessError(f"Refused an empty path. {_HINT}", reason="refused")
    if "\x00" in relative:
        raise _refused(relative, "it contains a NUL byte")
    # Backslashes are separators everywhere, so a Windows-style '..\..' cannot slip past.
    text = relative.replace("\\", "/")
    if text.startswith("/") or _DRIVE.match(text):
        raise _refused(relative, "it is absolute")
    if text.startswith("~"):
        raise _refused(relative, "'~' (a home directory) is never expanded")
    parts: list[str] = []
    for part in text.split("/"):
        if part == "..":
            if not parts:
                raise _refused(relative, "its '..' leads outside the skill directory")
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return tuple(parts)


def _refused(relative: str, why: str) -> FileAccessError:
    return FileAccessError(
        f"Refused path {clip(relative, _SHOWN_PATH_CHARS)!r}: {why}. {_HINT}", reason="refused"
    )


@dataclass(frozen=True, slots=True)
class FileContent(FileText):
    """A file read from a skill, ready to show a model through :meth:`render`: a
    :class:`~skillshelf.core.files.FileText` (relative path, size, MIME type, text or binary,
    cut marker) plus where it was read from.

    Attributes:
        path: Absolute path of the file (symbolic links resolved).
    """

    path: Path = field(kw_only=True)

    def file_text(self) -> FileText:
        """The pure value the renderers take: everything but the absolute path."""
        return FileText(**{f.name: getattr(self, f.name) for f in fields(FileText)})


def read_skill_file(
    skill_dir: Path,
    relative: str,
    *,
    max_chars: int = 24_000,
    anchored: bool = False,
    one_name: bool = False,
) -> FileContent:
    """Read a file inside a skill, safely joined, capped, and classified as text or binary.

    Text is decoded as UTF-8 (a BOM is dropped, invalid bytes become U+FFFD). At most about
    ``4 * max_chars`` bytes are read, so a huge file costs no more than a small one. The file
    is opened with :func:`open_skill_file` (race-free, never blocks, regular files only).

    Args:
        skill_dir: The skill directory.
        relative: The path as the model sent it.
        max_chars: Characters of text to keep; the rest is cut and the cut is marked.
        anchored: ``skill_dir`` is a skill's canonical folder; see :func:`open_skill_file`.
        one_name: Refuse a hard link; see :func:`open_skill_file`.

    Raises:
        FileAccessError: ``reason="refused"`` for a path :func:`safe_join` refuses,
            ``"missing"`` for a missing file or a directory, ``"unreadable"`` when the
            operating system denies reading or it is not a regular file.
    """
    if max_chars < 1:
        raise UsageError(f"max_chars must be at least 1, got {max_chars}")
    fd, path, shown = open_skill_file(skill_dir, relative, anchored=anchored, one_name=one_name)
    # Enough bytes for max_chars + 1 characters after a BOM, so "more text follows" is certain.
    limit = max(4 * (max_chars + 1) + 3, _SNIFF_BYTES)
    try:
        data, size, complete = _read_head(fd, limit=limit)
    except OSError as exc:
        raise FileAccessError(
            f"{clip(shown, _SHOWN_PATH_CHARS)!r} cannot be read: {exc.strerror or exc}.",
            reason="unreadable",
        ) from exc
    mime, binary = _classify(path.name, data)
    if binary:
        return FileContent(shown, size, mime, binary=True, text=None, truncated=False, path=path)
    # final=False while the file goes on: a character cut at the read limit is dropped, not
    # turned into a spurious U+FFFD.
    decoder = codecs.getincrementaldecoder("utf-8-sig")(errors="replace")
    text = decoder.decode(data, final=complete)
    total = len(text) if complete else None
    cut = len(text) > max_chars
    return FileContent(shown, size, mime, False, text[:max_chars], cut, total, path=path)


def open_skill_file(
    skill_dir: Path, relative: str, *, anchored: bool = False, one_name: bool = False
) -> tuple[int, Path, str]:
    """Open a file of a skill for reading, race-free; the one way a model's path is opened.

    The path is joined with :func:`safe_join`'s rules (in-skill symbolic links lead to their
    target), then opened with :func:`~skillshelf.skills.walk.open_beneath` relative to the
    skill folder's descriptor, following no link: a file or folder swapped for a link
    between the check and the open is refused, never followed. FIFOs and devices are refused
    without blocking.

    Args:
        skill_dir: The skill folder.
        relative: The path as the model sent it.
        anchored: ``skill_dir`` is the skill's canonical folder (``Skill.real_path``, links
            resolved at discovery): it is then not followed either, so the skill folder
            itself swapped for a link is refused too. Otherwise it may be a link.
        one_name: Refuse a file with more than one name (a hard link), checked on the open
            descriptor: for a skill from an untrusted root (:attr:`Skill.untrusted`), whose
            hard link may be any file of this machine, like a symbolic link out of it.

    Returns:
        ``(fd, path, shown)``: an open descriptor of a regular file (the caller closes it),
        its resolved path, and the normalised relative path as the model sent it.

    Raises:
        FileAccessError: ``reason="refused"`` for a refused path or a link swapped in,
            ``"missing"`` for a missing file or a directory, ``"unreadable"`` for anything
            that is not a regular file or that the operating system denies.
    """
    root = Path(os.path.abspath(skill_dir)) if anchored else _resolved_folder(skill_dir, relative)
    path, shown = _join_under(root, relative)
    clipped = clip(shown, _SHOWN_PATH_CHARS)
    inside = path.relative_to(root).as_posix()
    try:
        fd = open_beneath(str(root), inside, follow_root=not anchored)
    except IsADirectoryError as exc:
        raise FileAccessError(f"{clipped!r} is a directory, not a file.", reason="missing") from exc
    except OSError as exc:
        if exc.errno == errno.ENOENT or (exc.errno == errno.ENOTDIR and not _link_in(root, inside)):
            raise FileAccessError(
                f"No file {clipped!r} in this skill; check the path against the skill's file list.",
                reason="missing",
            ) from exc
        if exc.errno in (errno.ELOOP, errno.ENOTDIR):
            # Checked a moment ago: something in the path became a link (or a file) since.
            raise _refused(relative, "it changed into a symbolic link while being read") from exc
        if exc.errno == errno.EINVAL:
            raise FileAccessError(
                f"{clipped!r} is not a regular file ({exc.strerror}).", reason="unreadable"
            ) from exc
        raise FileAccessError(
            f"{clipped!r} cannot be read: {exc.strerror or exc}.", reason="unreadable"
        ) from exc
    if one_name:
        _refuse_hard_link(fd, clipped)
    return fd, path, shown


def _refuse_hard_link(fd: int, shown: str) -> None:
    """Close ``fd`` and refuse it when its file has more than one name."""
    names = os.fstat(fd).st_nlink
    if names > 1:
        os.close(fd)
        raise FileAccessError(
            f"Refused {shown!r}: it is a hard link (the file has {names} names, so its bytes "
            "may be any file of this machine), and a skill from an untrusted root is served "
            "no hard link, as it is served no symbolic link out of the skill.",
            reason="refused",
        )


def _link_in(root: Path, inside: str) -> bool:
    """Whether a folder on the way to ``inside`` is a link now (only chooses a message)."""
    parts = inside.split("/")[:-1]
    return any(root.joinpath(*parts[: i + 1]).is_symlink() for i in range(len(parts)))


def _read_head(fd: int, *, limit: int) -> tuple[bytes, int, bool]:
    """Return up to ``limit`` bytes, the file size, and whether that was the whole file."""
    with os.fdopen(fd, "rb") as handle:
        size = os.fstat(fd).st_size
        data = handle.read(limit)
        complete = not handle.read(1)
    return data, max(size, len(data)), complete


def _classify(name: str, head: bytes) -> tuple[str, bool]:
    """Return (MIME type, is binary) from the one MIME table and the file's first bytes."""
    mime = guess_mime(name, head)
    return mime, is_binary(mime, head)


def file_tree(
    skill_dir: Path | str,
    *,
    max_depth: int = 4,
    max_entries: int = 200,
    walk: SkillWalk | None = None,
) -> FileTree:
    """List a skill's files, shallowest first when the caps bite, rendered in tree order.

    A display over the one walk (:mod:`skillshelf.skills.walk`): files and folders, in-skill
    symbolic links as what they lead to (a linked folder is listed, not entered). Links
    leading outside the skill or nowhere, FIFOs and devices are left out, since
    :func:`read_skill_file` refuses them. ``__pycache__``, ``.git`` and ``.DS_Store`` are not
    shown, to spare the model's context; they are still part of the skill (locked, scanned,
    staged and readable), like every other walked entry.

    Args:
        skill_dir: The skill directory.
        max_depth: Directory levels to list; 1 lists only the skill directory's own entries.
        max_entries: Entries to list; the rest are counted in ``omitted``.
        walk: ``walk_skill(skill_dir)`` when the caller already has it (one walk serves
            every display of a skill it reads at once).

    Raises:
        FileAccessError: ``reason="missing"`` when ``skill_dir`` is not a directory.
    """
    if max_depth < 1 or max_entries < 0:
        raise UsageError(
            f"need max_depth >= 1 and max_entries >= 0, got {max_depth}, {max_entries}"
        )
    if walk is None:
        walk = walk_skill(skill_dir)
    if not walk.entries and not os.path.isdir(walk.root):
        raise FileAccessError(
            f"The skill directory {str(skill_dir)!r} does not exist.", reason="missing"
        )
    listed = _listed(walk)
    # A FileTree puts its entries in tree order itself: they need an order of their own only
    # when a cap bites.
    if len(listed) > max_entries or any(e.depth >= max_depth for e in listed):
        # Breadth first, so that the caps keep the shallow, telling entries.
        listed.sort(key=lambda e: (e.depth, tree_order(e)))
        kept = [e for e in listed if e.depth < max_depth][:max_entries]
    else:
        kept = listed
    return FileTree(tuple(kept), len(listed) - len(kept), walk.capped is not None)


def _listed(walk: SkillWalk) -> list[TreeEntry]:
    listed: list[TreeEntry] = []
    sizes: dict[str, int] | None = None  # what in-skill links to files show, made on need
    for entry in walk.entries:
        path, kind = entry.path, entry.kind
        if not _CLUTTER.isdisjoint(path.split("/")):
            continue
        if kind == "file":
            listed.append(TreeEntry(path, False, entry.size, path.count("/")))
        elif kind == "dir" or entry.target_kind == "dir":
            listed.append(TreeEntry(path, True, None, path.count("/")))
        elif entry.target_kind == "file" and entry.target is not None:
            if sizes is None:
                sizes = {e.path: e.size for e in walk.entries if e.kind == "file"}
            listed.append(TreeEntry(path, False, sizes.get(entry.target), path.count("/")))
    return listed

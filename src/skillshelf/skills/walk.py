"""The one walker of a skill folder, its one policy, and the one content digest.

Every face that looks at a skill's files — the lockfile (``lock``/``verify``), the content
scanner, the trust gate's change check, workspace staging, ``skill_load``'s file tree and
document list, the MCP resource list and digests, lint and the token report — starts from
:func:`walk_skill`, so *whatever can be staged or served is exactly what is locked and scanned*.

Policy:

* **Nothing is skipped by name.** Dotfiles, ``.git/``, ``__pycache__/``, ``node_modules/`` and
  files without an extension are entries like any other: a ``.pyc`` dropped into a locked skill
  is drift, is scanned, and would be staged. A face may *display* fewer entries (the document
  list shows documents), but only as a filter over this walk, never as a walk of its own.
* **Regular files** (kind ``file``) are the only entries whose bytes are ever read, always
  through :func:`open_beneath` (via :func:`read_chunks`): opened relative to the skill
  folder's descriptor one component at a time with ``O_NOFOLLOW`` (``O_DIRECTORY`` for
  folders) and ``O_NONBLOCK``, and checked to be a regular file *after* opening, so a file or
  folder swapped for a link or a FIFO between the walk and the read is refused, never
  followed; read in :data:`CHUNK`-byte pieces, never whole. Every reader of skill bytes —
  ``read_skill_file``, SKILL.md, MCP resources, digests, the scanner, staging — opens here.
* **Symbolic links** (kind ``symlink``) are never followed by the walk. Each is reported with its
  link text; one that resolves inside the skill also carries the target's relative path and
  kind (``file`` or ``dir``). Faces treat them alike: locked and digested by link text, served
  as their in-skill target (whose bytes are an entry of their own, so they are locked and
  scanned), staged as a relative link to the staged target, and left out everywhere when they
  lead outside the skill or nowhere.
* **Everything else** — FIFOs, sockets, devices (kinds ``fifo``, ``socket``, ``device``) — is
  reported and never opened, so nothing can block or read a device. They count in the digest
  (adding one is drift), are never staged or served, and the scanner reports them.
* **Bounded**: at most :data:`MAX_ENTRIES` entries, :data:`MAX_DEPTH` folder levels,
  :data:`MAX_FILE_BYTES` bytes in one file and :data:`MAX_TOTAL_BYTES` bytes of regular files
  (sizes from ``lstat``: a 5 GB sparse file costs one system call). Past a cap the walk
  stops and says why in :attr:`SkillWalk.capped`; a capped skill cannot be verified, scanned
  whole or staged, and those faces refuse it with that reason.

The digest (:func:`digest_walk`) is stable across machines: SHA-256 over the entries in sorted
path order (UTF-8 bytes), each line its ``/``-separated relative path, a NUL, its digest
(``sha256:<hex>`` of a file's bytes as they are, followed by ``+x`` when any execute bit is
set, since ``chmod +x`` turns a document into a program; ``symlink:<link text>``,
``special:<kind>``) and a newline. Directories carry no content of their own.
"""

from __future__ import annotations

import errno
import hashlib
import operator
import os
import stat
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "CHUNK",
    "MAX_DEPTH",
    "MAX_ENTRIES",
    "MAX_FILE_BYTES",
    "MAX_TOTAL_BYTES",
    "Entry",
    "EntryKind",
    "Fingerprint",
    "SkillDigest",
    "SkillWalk",
    "absolute",
    "combine",
    "digest_skill",
    "digest_walk",
    "entry_digest",
    "open_beneath",
    "open_regular",
    "read_chunks",
    "resolve_inside",
    "walk_skill",
]

EntryKind = Literal["file", "dir", "symlink", "fifo", "socket", "device", "unreadable"]

# A skill vendoring more entries than this is not something a person reviewed, and every face
# (lock, scan, skill_load) must stay cheap on it.
MAX_ENTRIES: Final = 10_000
# Deeper nesting is generated, not authored; the cap also bounds a pathological tree.
MAX_DEPTH: Final = 32
# Beyond 1 GiB of file bytes nothing is hashed or copied (a 5 GB sparse file costs one lstat).
MAX_TOTAL_BYTES: Final = 1 << 30
# One file bigger than this is not hashed, scanned, staged or served: it matches the sandbox's
# file-size limit, so no script could have written it, and it bounds the time of one read.
MAX_FILE_BYTES: Final = 256 << 20
# Files are hashed, scanned and copied in pieces this big, never read whole.
CHUNK: Final = 1 << 16
# What SkillWalk.fingerprint() gives: per entry path, kind, size, mtime, link text, link count
# and whether it is executable.
Fingerprint = tuple[tuple[str, str, int, int, str | None, int, bool], ...]
# Any execute bit makes a file a program: chmod +x is a change of the skill, digested as this.
_EXECUTE_BITS: Final = stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH
_EXECUTABLE_MARK: Final = "+x"
_DIR_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_DIRECTORY", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_ROOT_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0)
_OPEN_FLAGS: Final = (
    os.O_RDONLY
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NONBLOCK", 0)  # a FIFO swapped in after the walk must not block the open
    | getattr(os, "O_CLOEXEC", 0)
    | getattr(os, "O_BINARY", 0)
)


@dataclass(frozen=True, slots=True)
class Entry:
    """One thing found in a skill folder.

    Attributes:
        path: POSIX path relative to the skill folder.
        kind: What it is, from ``lstat`` (a symbolic link is ``symlink``, never its target).
        size: Size in bytes (for a symlink, of the link itself).
        mtime_ns: Modification time, nanoseconds.
        link: The link text, for a symbolic link.
        target: For a symbolic link resolving inside the skill: the target's relative path
            (``""`` for the skill folder itself); None when it leads outside or nowhere.
        target_kind: ``"file"`` or ``"dir"`` for such a link; None otherwise.
        nlink: Hard links to a regular file (more than 1: the same bytes have another name,
            possibly outside the skill).
        executable: A regular file with any execute bit set.
    """

    path: str
    kind: EntryKind
    size: int
    mtime_ns: int
    link: str | None = None
    target: str | None = None
    target_kind: Literal["file", "dir"] | None = None
    nlink: int = 1
    executable: bool = False

    @property
    def servable_file(self) -> bool:
        """A regular file, or a link to one inside the skill: what can be read and served."""
        return self.kind == "file" or self.target_kind == "file"

    @property
    def special(self) -> bool:
        """A FIFO, socket or device: reported, never opened."""
        return self.kind in ("fifo", "socket", "device")


@dataclass(frozen=True, slots=True)
class SkillWalk:
    """Every entry of a skill folder, sorted by path, or as many as the caps allow.

    Attributes:
        root: The skill folder as given, made absolute (in-skill link targets are relative
            to it).
        entries: The entries, in UTF-8 byte order of their paths (folders carry no size or
            time: what changes in them shows in their files).
        capped: Why the walk stopped early, or None when it saw everything.
    """

    root: str
    entries: tuple[Entry, ...]
    capped: str | None = None

    def files(self) -> tuple[Entry, ...]:
        """The regular files (the only entries whose bytes are read)."""
        return tuple(e for e in self.entries if e.kind == "file")

    def servable(self) -> tuple[Entry, ...]:
        """Regular files and links to regular files inside the skill."""
        return tuple(e for e in self.entries if e.servable_file)

    def fingerprint(self) -> Fingerprint:
        """Cheap identity of the content (paths, kinds, sizes, times, link texts, link counts:
        a hard link made to a file changes no time of it, only its count; execute bits: nor
        does a ``chmod``)."""
        return tuple(
            (e.path, e.kind, e.size, e.mtime_ns, e.link, e.nlink, e.executable)
            for e in self.entries
        )

    def full_path(self, relative: str) -> str:
        """The on-disk path of ``relative`` (a path from this walk)."""
        return os.path.join(self.root, *relative.split("/")) if relative else self.root


def walk_skill(
    directory: str | os.PathLike[str], *, stats: dict[str, os.stat_result] | None = None
) -> SkillWalk:
    """Walk a skill folder under the module's policy (breadth first, sorted, bounded).

    A folder that cannot be listed is an ``unreadable`` entry (the skill folder itself: an
    empty walk whose ``capped`` says so).

    Args:
        directory: The skill folder.
        stats: When given, receives the ``lstat`` the walk took of entries, by relative path
            (of every entry but folders, whose kind the listing tells): what a cache of the
            walk can stamp it with without a second ``lstat``.
    """
    root = absolute(directory)
    real = _RealRoot(root)
    found: list[Entry] = []
    total = 0
    capped: str | None = None
    queue: deque[tuple[str, str, int]] = deque([(root, "", 0)])
    while queue and capped is None:
        folder, prefix, depth = queue.popleft()
        children = _list(folder)
        if children is None:
            if not prefix:
                return SkillWalk(root, (), f"the folder {root!r} cannot be listed")
            found.append(Entry(prefix.rstrip("/"), "unreadable", 0, 0))
            continue
        for child in children:
            entry = _describe(child, prefix + child.name, real, stats)
            kind = entry.kind
            if kind == "file":
                total += entry.size
            # Only an entry near a cap pays for working out which (sizes: only files count).
            if len(found) >= MAX_ENTRIES or total > MAX_TOTAL_BYTES or entry.size > MAX_FILE_BYTES:
                capped = _over_caps(len(found) + 1, total, entry)
                if capped is not None:
                    break  # the entry over a cap is not kept: a capped walk holds MAX_ENTRIES
            found.append(entry)
            if kind == "dir":
                if depth + 1 >= MAX_DEPTH:
                    capped = f"folders nested deeper than {MAX_DEPTH} levels"
                    break
                queue.append((child.path, entry.path + "/", depth + 1))
    # Code point order is UTF-8 byte order, so this is the digest's order too.
    found.sort(key=_path)
    return SkillWalk(root, tuple(_dedupe(found)), capped)


def absolute(path: str | os.PathLike[str]) -> str:
    """``os.path.abspath(path)``, without its work for a path that is already absolute and
    normal (as discovery's skill folders are)."""
    path = os.fspath(path)
    sep = os.sep
    if path[:1] != sep or sep + "." in path or sep * 2 in path or path.endswith(sep):
        return os.path.abspath(path)
    return path


class _RealRoot:
    """The skill folder with links resolved, worked out only when a link needs it."""

    def __init__(self, root: str) -> None:
        self._root = root
        self._real: str | None = None

    def get(self) -> str:
        if self._real is None:
            try:
                self._real = os.path.realpath(self._root)
            except OSError:  # a link on the way swapped out meanwhile: contain to the name
                self._real = os.path.abspath(self._root)
        return self._real


def _dedupe(found: list[Entry]) -> list[Entry]:
    # An unlistable folder appears as its ``dir`` entry and its ``unreadable`` one: keep the
    # latter, so the digest records that its content could not be seen.
    unreadable = {e.path for e in found if e.kind == "unreadable"}
    if not unreadable:
        return found
    return [e for e in found if not (e.kind == "dir" and e.path in unreadable)]


def _over_caps(count: int, total: int, entry: Entry) -> str | None:
    if count > MAX_ENTRIES:
        return f"more than {MAX_ENTRIES:,} files and folders"
    if entry.kind == "file" and entry.size > MAX_FILE_BYTES:
        return (
            f"a file over the per-file limit of {MAX_FILE_BYTES:,} bytes "
            f"({entry.path!r}: {entry.size:,} bytes)"
        )
    if total > MAX_TOTAL_BYTES:
        return f"more than {MAX_TOTAL_BYTES:,} bytes of files (reached at {entry.path!r})"
    return None


def _sort_key(path: str) -> bytes:
    return path.encode("utf-8", "surrogateescape")


_path: Final = operator.attrgetter("path")
_name: Final = operator.attrgetter("name")


def _list(folder: str) -> list[os.DirEntry[str]] | None:
    try:
        with os.scandir(folder) as scan:
            return sorted(scan, key=_name)
    except OSError:
        return None


def _describe(
    child: os.DirEntry[str],
    relative: str,
    root: _RealRoot,
    stats: dict[str, os.stat_result] | None = None,
) -> Entry:
    try:
        if child.is_dir(follow_symlinks=False):  # from the directory listing: no system call
            return Entry(relative, "dir", 0, 0)
        info = child.stat(follow_symlinks=False)
    except OSError:  # vanished between listing and stat
        return Entry(relative, "unreadable", 0, 0)
    if stats is not None:
        stats[relative] = info
    if stat.S_ISREG(info.st_mode):  # nearly every entry: spare _kind
        executable = bool(info.st_mode & _EXECUTE_BITS)
        return Entry(
            relative,
            "file",
            info.st_size,
            info.st_mtime_ns,
            None,
            None,
            None,
            info.st_nlink,
            executable,
        )
    kind = _kind(info.st_mode)
    if kind != "symlink":
        if kind != "file":
            return Entry(relative, kind, 0, info.st_mtime_ns)
        return Entry(
            relative,
            kind,
            info.st_size,
            info.st_mtime_ns,
            nlink=info.st_nlink,
            executable=bool(info.st_mode & _EXECUTE_BITS),
        )
    try:
        text = os.readlink(child.path)
    except OSError:
        return Entry(relative, "unreadable", 0, 0)
    target, target_kind = resolve_inside(child.path, root.get())
    return Entry(relative, "symlink", info.st_size, info.st_mtime_ns, text, target, target_kind)


def _kind(mode: int) -> EntryKind:
    if stat.S_ISREG(mode):
        return "file"
    if stat.S_ISDIR(mode):
        return "dir"
    if stat.S_ISLNK(mode):
        return "symlink"
    if stat.S_ISFIFO(mode):
        return "fifo"
    if stat.S_ISSOCK(mode):
        return "socket"
    return "device"


def resolve_inside(path: str, root: str) -> tuple[str | None, Literal["file", "dir"] | None]:
    """Where ``path`` leads, when that is a file or folder inside ``root`` (links resolved).

    ``root`` must have its own links resolved. Returns the target's relative path (``""`` for
    ``root`` itself) and kind, or ``(None, None)`` when it leads outside or nowhere. Only a
    decision about names: open what it returns with :func:`open_beneath`.
    """
    try:
        # realpath itself raises when a link on the way is swapped out between its lstat and
        # readlink: a link that leads nowhere at this moment.
        real = os.path.realpath(path)
        if real != root and not real.startswith(root.rstrip(os.sep) + os.sep):
            return None, None
        mode = os.lstat(real).st_mode  # realpath leaves a loop's last link unresolved
    except OSError:
        return None, None
    relative = os.path.relpath(real, root).replace(os.sep, "/")
    if stat.S_ISREG(mode):
        return relative, "file"
    if stat.S_ISDIR(mode):
        return ("" if relative == "." else relative), "dir"
    return None, None


def open_beneath(root: str, relative: str, *, follow_root: bool = True) -> int:
    """Open the regular file ``relative`` below the folder ``root`` without following any link.

    ``root`` is opened as a folder — through a link in its last component only when
    ``follow_root`` (pass False for a skill's canonical folder, so that even the folder
    swapped for a link is refused); then each component of ``relative`` is opened relative
    to its parent's descriptor with ``O_NOFOLLOW`` (``O_DIRECTORY`` for folders), so no
    link — however fast it is swapped in — is followed, and the opened descriptor, not the
    path, is checked to be a regular file. The open never blocks (``O_NONBLOCK``; blocking
    is restored after the check, since a regular file never blocks anyway).

    Returns:
        A file descriptor the caller must close.

    Raises:
        OSError: ``ELOOP``/``ENOTDIR`` when a component is (now) a link, ``EISDIR`` for a
            folder, ``EINVAL`` for a FIFO, socket or device, or what ``open`` reports.
    """
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if ".." in parts:
        raise OSError(errno.EINVAL, "'..' is never opened", relative)
    if follow_root and len(parts) == 1:
        fd, _ = open_regular(os.path.join(root, parts[0]), label=relative)
        os.set_blocking(fd, True)
        return fd
    fd = os.open(root, _ROOT_FLAGS if follow_root else _DIR_FLAGS)
    try:
        for part in parts[:-1]:
            parent, fd = fd, -1
            try:
                fd = os.open(part, _DIR_FLAGS, dir_fd=parent)
            finally:
                os.close(parent)
        if not parts:
            raise IsADirectoryError(errno.EISDIR, "a folder, not a file", relative or ".")
        folder, fd = fd, -1
        try:
            fd = os.open(parts[-1], _OPEN_FLAGS, dir_fd=folder)
        finally:
            os.close(folder)
        _check_regular(fd, relative)
        os.set_blocking(fd, True)
    except BaseException:
        if fd >= 0:
            os.close(fd)
        raise
    return fd


def open_regular(path: str, *, label: str | None = None) -> tuple[int, os.stat_result]:
    """Open the regular file ``path`` following links up to its folder but none in its name.

    :func:`open_beneath`'s one-component case in one system call: the kernel follows links
    up to and in the folder (as opening the folder would) and none in the file's own name
    (``O_NOFOLLOW``); a folder that is not one fails with ``ENOTDIR``. Every SKILL.md is
    opened so. The descriptor stays non-blocking, which changes nothing for a regular file
    (:func:`open_beneath` restores blocking for callers that wrap it in a file object).

    Args:
        path: The file.
        label: The name errors carry (default: ``path``).

    Returns:
        The descriptor (the caller closes it) and its ``fstat``, taken once.

    Raises:
        OSError: as :func:`open_beneath`.
    """
    fd = os.open(path, _OPEN_FLAGS)
    try:
        return fd, _check_regular(fd, path if label is None else label)
    except BaseException:
        os.close(fd)
        raise


def _check_regular(fd: int, relative: str) -> os.stat_result:
    """Refuse an opened folder, FIFO, socket or device; return the descriptor's ``fstat``."""
    st = os.fstat(fd)
    mode = st.st_mode
    if stat.S_ISREG(mode):
        return st
    if stat.S_ISDIR(mode):
        raise IsADirectoryError(errno.EISDIR, "a folder, not a file", relative)
    raise OSError(errno.EINVAL, f"not a regular file (a {_kind(mode)})", relative)


def read_chunks(root: str, relative: str, *, limit: int | None = None) -> Iterator[bytes]:
    """The bytes of the regular file ``relative`` below ``root``, in :data:`CHUNK`-byte pieces.

    Opened with :func:`open_beneath` (no link followed, never blocks, regular files only);
    stops after ``limit`` bytes when given.

    Raises:
        OSError: It cannot be opened, or it is not a regular file (``EINVAL``).
    """
    fd = open_beneath(root, relative)
    with os.fdopen(fd, "rb", buffering=0) as handle:
        left = limit
        while left is None or left > 0:
            chunk = handle.read(CHUNK if left is None else min(CHUNK, left))
            if not chunk:
                return
            if left is not None:
                left -= len(chunk)
            yield chunk


@dataclass(frozen=True, slots=True)
class SkillDigest:
    """The content of a skill folder, digested.

    Attributes:
        digest: ``"sha256:<hex>"`` over all entries (see the module docs).
        files: Per-entry digest by relative path (folders have none).
        capped: Why the walk stopped early: then the digest does not cover the whole skill.
    """

    digest: str
    files: Mapping[str, str]
    capped: str | None = None


def entry_digest(
    walk: SkillWalk, entry: Entry, *, sink: Callable[[bytes], object] | None = None
) -> str | None:
    """The digest of one entry (None for a folder); a file's bytes also go to ``sink``."""
    if entry.kind == "file":
        hasher = hashlib.sha256()
        try:
            for chunk in read_chunks(walk.root, entry.path):
                hasher.update(chunk)
                if sink is not None:
                    sink(chunk)
        except OSError as exc:
            return f"unreadable:{exc.errno}"
        return "sha256:" + hasher.hexdigest() + (_EXECUTABLE_MARK if entry.executable else "")
    if entry.kind == "symlink":
        return f"symlink:{entry.link}"
    if entry.kind == "dir":
        return None
    if entry.kind == "unreadable":
        return "unreadable"
    return f"special:{entry.kind}"


def digest_walk(walk: SkillWalk) -> SkillDigest:
    """Digest every entry of ``walk`` (files read in chunks, in sorted path order)."""
    files: dict[str, str] = {}
    for entry in walk.entries:
        value = entry_digest(walk, entry)
        if value is not None:
            files[entry.path] = value
    return combine(files, capped=walk.capped)


def combine(files: Mapping[str, str], *, capped: str | None = None) -> SkillDigest:
    """The skill digest of per-entry digests (ordered here, so callers need not)."""
    ordered = dict(sorted(files.items(), key=lambda kv: _sort_key(kv[0])))
    total = hashlib.sha256()
    for relative, value in ordered.items():
        total.update(_sort_key(relative) + b"\0" + value.encode("utf-8", "surrogateescape"))
        total.update(b"\n")
    if capped is not None:
        # A capped walk never matches a complete one, so it cannot pass for approved content.
        total.update(b"\0capped\0" + capped.encode("utf-8"))
    return SkillDigest("sha256:" + total.hexdigest(), ordered, capped)


def digest_skill(directory: str | os.PathLike[str]) -> SkillDigest:
    """Walk and digest a skill folder."""
    return digest_walk(walk_skill(directory))

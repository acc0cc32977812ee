"""A skill's files as SEP-2640 sees them: ``skill://`` URIs, digests, limits, directories.

Every URI a client sends is parsed here and every path it names is joined to the skill
directory by :func:`skillshelf.skills.paths.safe_join`, so nothing outside a skill is ever served.
What is listed and digested is the one walk of the skill (:mod:`skillshelf.skills.walk`): the
file set the lockfile digests, the scanner reads and staging copies; types come from the one
MIME table (:func:`skillshelf.core.mime.guess_mime`).
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Final
from urllib.parse import quote, unquote

from skillshelf.core.mime import OCTET_STREAM, SNIFF_BYTES, guess_mime
from skillshelf.errors import FileAccessError, SkillshelfError, clip
from skillshelf.skills.cache_files import Stamp, settled, stamp_of
from skillshelf.skills.paths import open_skill_file, safe_join
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import Entry, SkillWalk, open_beneath, read_chunks, walk_skill

__all__ = [
    "DIRECTORY_MIME",
    "MAX_FILES",
    "MAX_TOTAL_BYTES",
    "SCHEME",
    "SKILL_MD",
    "Child",
    "DigestCache",
    "FileEntry",
    "SkillFiles",
    "SkillUri",
    "UriError",
    "directory_children",
    "file_mime",
    "file_uri",
    "over_limit",
    "parse_uri",
    "read_bytes",
    "resolve",
    "skill_files",
]

SCHEME: Final = "skill://"
SKILL_MD: Final = "SKILL.md"
DIRECTORY_MIME: Final = "inode/directory"
# The extension's per-skill limits: every conforming host accepts skills up to these.
MAX_FILES: Final = 512
MAX_TOTAL_BYTES: Final = 16 * 1024 * 1024
_PLAIN: Final = re.compile(r"[A-Za-z0-9._~-]+")
_PLAIN_PATH: Final = re.compile(r"[A-Za-z0-9._~-]+(?:/[A-Za-z0-9._~-]+)*")


class UriError(SkillshelfError):
    """A URI that names nothing this server serves (JSON-RPC -32602)."""


@dataclass(frozen=True, slots=True)
class SkillUri:
    """A parsed ``skill://<name>/<path>``; ``path`` is ``""`` for the skill's root directory."""

    name: str
    path: str


@dataclass(frozen=True, slots=True)
class FileEntry:
    """One file of a skill: its path relative to the skill, byte size, sha256 digest, type."""

    relative: str
    size: int
    digest: str
    mime: str = OCTET_STREAM


@dataclass(frozen=True, slots=True)
class SkillFiles:
    """Every file of a skill, ``SKILL.md`` first, or why the skill is over the limits."""

    files: tuple[FileEntry, ...]
    over_limit: str | None = None


@dataclass(frozen=True, slots=True)
class Child:
    """A direct child of a directory resource."""

    name: str
    relative: str
    is_dir: bool
    size: int | None
    mime: str = DIRECTORY_MIME


def file_uri(name: str, relative: str = SKILL_MD) -> str:
    """The URI of a file (or, with ``relative=""``, the root directory) of skill ``name``."""
    if _PLAIN.fullmatch(name) and (not relative or _PLAIN_PATH.fullmatch(relative)):
        return f"{SCHEME}{name}/{relative}" if relative else SCHEME + name  # nothing to escape
    if not relative:
        return SCHEME + quote(name, safe="")
    return SCHEME + quote(name, safe="") + "/" + "/".join(quote(p) for p in relative.split("/"))


def parse_uri(uri: str) -> SkillUri:
    """Split a ``skill://`` URI into skill name and relative path, refusing anything unusual.

    Segments are percent-decoded one at a time, so an encoded ``/`` or ``..`` can never
    become a separator or a parent step.

    Raises:
        UriError: Another scheme, a query or fragment, an empty, ``.`` or ``..`` segment, or a
            decoded segment holding a separator or NUL.
    """
    if not uri.startswith(SCHEME):
        raise UriError(f"Not a skill:// URI: {clip(uri)}")
    rest = uri[len(SCHEME) :]
    if "?" in rest or "#" in rest:
        raise UriError(f"skill:// URIs take no query or fragment: {clip(uri)}")
    raw = rest[:-1].split("/") if rest.endswith("/") else rest.split("/")
    parts = [unquote(p) for p in raw]
    for part in parts:
        if part in ("", ".", "..") or any(c in part for c in "/\\\x00"):
            raise UriError(f"No resource is served at {clip(uri)}")
    return SkillUri(parts[0], "/".join(parts[1:]))


def file_mime(root: str, relative: str, name: str) -> str:
    """The type of the file ``relative`` (below ``root``) called ``name``: the table, else its
    first bytes (read with the walker's race-free open)."""
    mime = guess_mime(name)
    if mime != OCTET_STREAM:
        return mime
    try:
        head = b"".join(read_chunks(root, relative, limit=SNIFF_BYTES))
    except OSError:
        return mime
    return guess_mime(name, head)


def _on_disk(skill: Skill, relative: str) -> str:
    return skill.skill_md_name if relative == SKILL_MD else relative


def resolve(skill: Skill, relative: str) -> Path:
    """The file or directory ``relative`` names inside ``skill``, proven to stay inside it.

    Raises:
        UriError: The path escapes the skill or passes through a skipped name.
    """
    if not relative:
        return skill.path.resolve()
    try:
        return safe_join(skill.path, _on_disk(skill, relative))
    except FileAccessError as exc:
        raise UriError(str(exc)) from None


class DigestCache:
    """sha256 digests keyed by path, reused while the file's stamp (modification and
    status-change times, size, inode) is the one hashed and was settled when it was hashed
    (:mod:`skillshelf.skills.cache_files`: the one freshness rule of every cache)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._digests: dict[str, tuple[Stamp, str]] = {}

    def digest(self, root: str, relative: str, info: os.stat_result) -> str:
        """The ``sha256:<hex>`` digest of the file ``relative`` below ``root`` (stat ``info``)."""
        path = os.path.join(root, relative)
        stamp = stamp_of(info)
        with self._lock:
            cached = self._digests.get(path)
        if cached is not None and cached[0] == stamp:
            return cached[1]
        now_ns = time.time_ns()
        hasher = hashlib.sha256()
        for chunk in read_chunks(root, relative):
            hasher.update(chunk)
        value = "sha256:" + hasher.hexdigest()
        with self._lock:
            if settled(stamp, now_ns):
                self._digests[path] = (stamp, value)
            else:  # changed within a clock tick of this read: hash it again next time
                self._digests.pop(path, None)
        return value

    def clear(self) -> None:
        """Forget every digest."""
        with self._lock:
            self._digests.clear()


def skill_files(
    skill: Skill,
    cache: DigestCache,
    *,
    root: str | None = None,
    walk: SkillWalk | None = None,
) -> SkillFiles:
    """List every file of ``skill`` with its digest, ``SKILL.md`` first.

    The files are the servable ones of the one walk: regular files and links to files inside
    the skill (served as their target). Nothing is hashed when the skill is over a limit.

    Args:
        skill: The skill.
        cache: Digests already computed.
        root: The skill directory with symbolic links resolved, when the caller knows it.
        walk: A walk of ``root`` the caller already holds (default: a fresh one).
    """
    real = root if root is not None else os.path.realpath(skill.directory)
    found, over = _walk(skill, real, walk)
    if over is not None:
        return SkillFiles((), over)
    entries = tuple(
        FileEntry(rel, st.st_size, cache.digest(real, on_disk, st), file_mime(real, on_disk, rel))
        for rel, on_disk, st in found
    )
    return SkillFiles(entries)


def over_limit(skill: Skill) -> str | None:
    """Why ``skill`` is over the extension's limits, or None (nothing is hashed)."""
    return _walk(skill, os.path.realpath(skill.directory))[1]


def _walk(
    skill: Skill, root: str, walk: SkillWalk | None = None
) -> tuple[list[tuple[str, str, os.stat_result]], str | None]:
    if walk is None:
        walk = walk_skill(root)
    if walk.capped is not None:
        return [], walk.capped
    found: list[tuple[str, str, os.stat_result]] = []
    total = 0
    for entry in walk.servable():
        try:
            on_disk, info = _regular(walk, entry)
        except OSError:
            continue  # vanished since the walk
        relative = SKILL_MD if entry.path == skill.skill_md_name else entry.path
        found.append((relative, on_disk, info))
        total += info.st_size
        if len(found) > MAX_FILES:
            return [], f"more than {MAX_FILES} files"
        if total > MAX_TOTAL_BYTES:
            return [], f"more than {MAX_TOTAL_BYTES:,} bytes"
    found.sort(key=lambda row: (row[0] != SKILL_MD, row[0]))
    return found, None


def _regular(walk: SkillWalk, entry: Entry) -> tuple[str, os.stat_result]:
    """The relative path and stat of the regular file a servable entry stands for (a link's
    in-skill target)."""
    relative = entry.path if entry.kind == "file" else (entry.target or "")
    info = os.lstat(walk.full_path(relative))
    if not stat.S_ISREG(info.st_mode):
        raise OSError(22, "not a regular file", relative)
    return relative, info


def directory_children(skill: Skill, relative: str) -> list[Child]:
    """The direct children of a directory of ``skill``, sorted by name.

    Raises:
        UriError: No such directory, or it is a file.
    """
    path = resolve(skill, relative)
    if not path.is_dir():
        what = "does not exist" if not path.exists() else "is not a directory resource"
        raise UriError(f"{clip(file_uri(skill.name, relative))} {what}")
    walk = walk_skill(skill.directory)
    real = os.path.relpath(path, os.path.realpath(walk.root)).replace(os.sep, "/")
    parent = "" if real == "." else real + "/"
    sizes = {e.path: e.size for e in walk.entries if e.kind == "file"}
    prefix = relative + "/" if relative else ""
    children = []
    for entry in walk.entries:
        name = entry.path[len(parent) :]
        if not entry.path.startswith(parent) or "/" in name or not name:
            continue
        is_dir = entry.kind == "dir" or entry.target_kind == "dir"
        if not (is_dir or entry.target_kind == "file" or entry.kind == "file"):
            continue  # links leading out, FIFOs and devices are never served
        child_rel = prefix + name
        if child_rel == skill.skill_md_name:
            child_rel = name = SKILL_MD
        if is_dir:
            children.append(Child(name, child_rel, True, None))
            continue
        on_disk = entry.target or entry.path
        mime = file_mime(walk.root, on_disk, name)
        children.append(Child(name, child_rel, False, sizes.get(on_disk), mime))
    return sorted(children, key=lambda c: c.name)


def read_bytes(skill: Skill, relative: str) -> bytes:
    """The raw bytes of a file of ``skill``, opened race-free (no link swapped in is followed).

    Raises:
        UriError: No such file, a directory, anything but a regular file, a path that escapes
            the skill, or a file over :data:`MAX_TOTAL_BYTES`.
    """
    uri = clip(file_uri(skill.name, relative))
    try:
        fd = _open(skill, relative)
    except FileAccessError as exc:
        if exc.reason == "refused":
            raise UriError(str(exc)) from None
        if exc.reason == "missing" and not resolve(skill, relative).is_dir():
            raise UriError(f"No resource is served at {uri}") from None
        raise UriError(f"{uri} is not a file") from None
    with os.fdopen(fd, "rb", buffering=0) as handle:
        if os.fstat(fd).st_size > MAX_TOTAL_BYTES:
            raise UriError(f"{uri} is over the {MAX_TOTAL_BYTES:,}-byte limit")
        data = handle.read(MAX_TOTAL_BYTES + 1)
    if len(data) > MAX_TOTAL_BYTES:  # grew since the size check
        raise UriError(f"{uri} is over the {MAX_TOTAL_BYTES:,}-byte limit")
    return data


def _open(skill: Skill, relative: str) -> int:
    if relative == SKILL_MD and not skill.untrusted:
        # SKILL.md's name on disk comes from discovery, not from the client: opened beneath
        # the skill's canonical folder following no link, it is the file the joined path
        # below leads to. Anything else (a link, a file gone) takes that path, for its answer.
        try:
            return open_beneath(skill.real_directory, skill.skill_md_name, follow_root=False)
        except OSError:
            pass
    on_disk = _on_disk(skill, relative)
    fd, _, _ = open_skill_file(skill.real_path, on_disk, anchored=True, one_name=skill.untrusted)
    return fd

"""Archive and URL roots: safe extraction into the cache.

A root may be a ``.zip``, ``.skill`` (a zip), ``.tar``, ``.tar.gz`` or ``.tgz`` file, or an
``http(s)://`` URL to one (downloaded by :mod:`skillshelf.skills.remote`;
:mod:`skillshelf.skills.sources` picks which). Archives are extracted into a fresh folder
which is then renamed into place, so a crash never leaves a half-extracted root.

Extraction refuses, with an :class:`ArchiveError` carrying a stable code, anything that could
write outside the target or exhaust the disk: absolute paths, ``..``, links that resolve
outside the tree, device files and FIFOs, too many entries, too much data in total or in one
file, extreme compression ratios, and entries that decompress to more than they declared.
A malformed archive (truncated, corrupt, encrypted, a path that is both a file and a folder,
a member twice) is refused the same way: every problem is an :class:`ArchiveError`, never a
traceback.

The compression ratio is *measured*: bytes written against compressed bytes read, for the
archive as a whole, and per member where the format records a compressed size (zip). A big
asset stored uncompressed is never mistaken for a bomb.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import io
import lzma
import os
import posixpath
import shutil
import stat
import struct
import tarfile
import tempfile
import time
import zipfile
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any, Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.errors import SkillshelfError
from skillshelf.skills.cache_files import CACHE_FIX, private_tree, stamp_of
from skillshelf.skills.roots import ARCHIVE_SUFFIXES

__all__ = [
    "DOWNLOAD_DEADLINE_S",
    "ArchiveError",
    "ArchiveLimits",
    "Materialized",
    "extract_archive",
    "kind_of_url",
    "materialize_archive",
]

_ZIP_SUFFIXES: Final = (".zip", ".skill")
# A URL root's whole download (redirects, headers, body): 256 MiB at under 1 MiB/s still fits;
# a server that drips bytes to hold the fetch open does not.
DOWNLOAD_DEADLINE_S: Final = 300.0
_CHUNK: Final = 1 << 16
# A staging folder untouched this long belongs to an extraction that crashed.
_STALE_STAGING_S: Final = 3600
# Small members may compress extremely well (a file of spaces) without being a danger: the
# ratio is only judged past this many bytes written (per member, and for the whole archive).
_RATIO_FLOOR: Final = 1024 * 1024
# Errors the decompressors and archive readers raise on malformed input.
_CORRUPT: Final = (
    zipfile.BadZipFile,
    tarfile.TarError,
    EOFError,
    ValueError,
    zlib.error,
    lzma.LZMAError,
    struct.error,
)


class ArchiveError(SkillshelfError):
    """An archive or URL root was refused or could not be fetched.

    Attributes:
        code: Stable diagnostic code (``archive.unsafe_path``, ``archive.too_large``, …).
    """

    def __init__(self, code: str, message: str) -> None:
        self.code = code
        super().__init__(message)


@dataclass(frozen=True, slots=True)
class ArchiveLimits:
    """Caps applied while extracting (and downloading).

    Attributes:
        max_entries: Members in the archive (files, folders and links).
        max_total_bytes: Uncompressed bytes of all files together (also caps a download).
        max_file_bytes: Uncompressed bytes of one file.
        max_ratio: Bytes written / compressed bytes read, for the whole archive and for one
            zip member (judged only past 1 MiB written).
        download_deadline_s: Seconds a URL root's whole download may take, however steadily
            the server sends (per-read timeouts alone never end a slow drip).
    """

    max_entries: int = 10_000
    max_total_bytes: int = 256 * 1024 * 1024
    max_file_bytes: int = 64 * 1024 * 1024
    max_ratio: int = 200
    download_deadline_s: float = DOWNLOAD_DEADLINE_S


@dataclass(frozen=True, slots=True)
class Materialized:
    """A root turned into a folder.

    Attributes:
        directory: The extracted tree, or None when nothing usable is available.
        diagnostics: Problems (errors) and notes (e.g. offline use of the cache).
    """

    directory: str | None
    diagnostics: tuple[Diagnostic, ...] = ()


def materialize_archive(root: str, cache_dir: Path, limits: ArchiveLimits) -> Materialized:
    """Extract an archive file root into a folder under ``cache_dir`` (reused while unchanged).

    Raises:
        ArchiveError: The file is missing, unreadable or refused.
    """
    path = os.path.abspath(os.path.expanduser(root))
    if not os.path.isfile(path):
        raise ArchiveError("root.missing", "Archive does not exist or is not a file")
    st = os.stat(path)
    key = _key(f"{os.path.realpath(path)}\0{stamp_of(st)}")
    refused = private_tree(cache_dir, "archives")
    if refused is not None:
        raise ArchiveError("cache.not_private", f"{refused}; {CACHE_FIX}")
    target = cache_dir / "archives" / key
    if not target.is_dir():
        extract_archive(path, target, limits=limits, name=root)
    return Materialized(str(target))


def _key(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def kind_of_url(url: str) -> str | None:
    """The archive suffix a URL's path ends with, if any."""
    path = url.split("?", 1)[0].split("#", 1)[0].lower()
    for suffix in ARCHIVE_SUFFIXES:
        if path.endswith(suffix):
            return suffix
    return None


# -- extraction ----------------------------------------------------------------------------


@dataclass(slots=True)
class _Member:
    name: str
    kind: str  # "file" | "dir" | "symlink" | "hardlink"
    size: int = 0
    compressed: int | None = None  # known for zip members only
    link: str = ""
    executable: bool = False


def extract_archive(
    archive: str | os.PathLike[str],
    target: str | os.PathLike[str],
    *,
    limits: ArchiveLimits | None = None,
    name: str | None = None,
    kind: str | None = None,
) -> Path:
    """Extract ``archive`` safely into the new folder ``target``.

    Everything is written into a fresh sibling folder first and renamed to ``target`` only when
    the whole archive passed, so ``target`` either does not exist or is complete.

    Args:
        archive: The archive file.
        target: The folder to create (its parent is created if needed).
        limits: Caps; the defaults when None.
        name: How to call the archive in messages (default: its path).
        kind: The archive type by suffix (``".zip"``…); guessed from content when None.

    Raises:
        ArchiveError: The archive is unsafe, over a cap, corrupt or of an unknown type.
    """
    limits = limits or ArchiveLimits()
    archive = os.fspath(archive)
    target_path = Path(target)
    target_path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    _remove_stale_staging(target_path.parent)
    staging = Path(tempfile.mkdtemp(dir=target_path.parent, prefix=".extract-"))
    try:
        _Extractor(staging, limits).run(archive, kind or _kind_of_file(archive, name))
        try:
            os.rename(staging, target_path)
        except OSError:
            if not target_path.is_dir():
                raise
            shutil.rmtree(staging, ignore_errors=True)  # another process won the race
    except BaseException:  # broad on purpose: no half-extracted tree survives, ^C too; re-raised
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return target_path


def _remove_stale_staging(parent: Path) -> None:
    """Remove staging folders a crashed extraction left (never one still being written)."""
    cutoff = time.time() - _STALE_STAGING_S
    for leftover in parent.glob(".extract-*"):
        with contextlib.suppress(OSError):
            if leftover.stat().st_mtime < cutoff:
                shutil.rmtree(leftover, ignore_errors=True)


def _kind_of_file(path: str, name: str | None) -> str:
    lowered = (name or path).lower()
    for suffix in ARCHIVE_SUFFIXES:
        if lowered.endswith(suffix):
            return suffix
    if zipfile.is_zipfile(path):
        return ".zip"
    return ".tar"


class _CountingFile(io.FileIO):
    """The archive file, counting the bytes the readers take from it (the compressed side)."""

    consumed = 0

    def read(self, size: int | None = -1, /) -> bytes:
        data = super().read(size)
        self.consumed += len(data)
        return data

    def readinto(self, buffer: Any, /) -> int | None:
        count = super().readinto(buffer)
        self.consumed += count or 0
        return count


class _Extractor:
    def __init__(self, dest: Path, limits: ArchiveLimits) -> None:
        self.dest = dest
        self.real_dest = os.path.realpath(dest)
        self.limits = limits
        self.total = 0
        self.source: _CountingFile | None = None
        self.current = ""
        self.files: set[str] = set()
        # What each path in the tree is ("dir", "file", "link"), folders implied by a
        # member's path included: one path can never be both a file and a folder.
        self.placed: dict[str, str] = {}
        self.links: list[_Member] = []

    def run(self, archive: str, kind: str) -> None:
        try:
            with _CountingFile(archive) as self.source:
                if kind in _ZIP_SUFFIXES:
                    with zipfile.ZipFile(self.source) as zf:
                        self._run_zip(zf)
                else:
                    mode = "r:gz" if kind in (".tar.gz", ".tgz") else "r:*"
                    with tarfile.open(fileobj=self.source, mode=mode) as tf:  # type: ignore[call-overload]
                        self._run_tar(tf)
            self._make_links()
        except _CORRUPT as exc:
            raise ArchiveError(
                "archive.corrupt",
                f"Cannot read the archive{self._at()}: {' '.join(str(exc).split())}",
            ) from None
        except (zipfile.LargeZipFile, NotImplementedError, RuntimeError) as exc:
            raise ArchiveError(
                "archive.unsupported", f"Cannot extract{self._at()}: {exc}"
            ) from None
        except OSError as exc:
            # A name the file system will not take (too long, …) or a read that failed.
            reason = exc.strerror or str(exc)
            raise ArchiveError(
                "archive.unreadable", f"Cannot extract{self._at()}: {reason}"
            ) from None

    def _at(self) -> str:
        return f" at {self.current!r}" if self.current else ""

    def _run_zip(self, zf: zipfile.ZipFile) -> None:
        infos = zf.infolist()
        if len(infos) > self.limits.max_entries:
            raise _too_many(self.limits)
        members = [_zip_member(info) for info in infos]
        for info, member in zip(infos, members, strict=True):
            if member.kind == "symlink":
                self.current = member.name
                member.link = zf.read(info).decode("utf-8", "replace")
        self._check_all(members)
        for info, member in zip(infos, members, strict=True):
            # zipfile stops at the declared size (then fails the CRC); lift its limit so an
            # entry that lies about its size is caught by our count, with a clear message.
            probe = copy.copy(info)
            probe.file_size = 1 << 62
            self._extract(member, functools.partial(zf.open, probe))

    def _run_tar(self, tf: tarfile.TarFile) -> None:
        # Members are read one by one so a huge member count is refused before it is all read.
        for count, info in enumerate(tf, 1):
            if count > self.limits.max_entries:
                raise _too_many(self.limits)
            member = _tar_member(info)
            self._check(member)
            self._extract(member, functools.partial(tf.extractfile, info))

    def _check_all(self, members: list[_Member]) -> None:
        declared = 0
        for member in members:
            self._check(member)
            declared += member.size
        if declared > self.limits.max_total_bytes:
            raise ArchiveError(
                "archive.too_large",
                f"Archive declares {declared:,} bytes uncompressed; the limit is "
                f"{self.limits.max_total_bytes:,}",
            )

    def _check(self, member: _Member) -> None:
        self.current = member.name
        _safe_relative(member.name)
        if member.kind == "file":
            if member.size > self.limits.max_file_bytes:
                raise ArchiveError(
                    "archive.file_too_large",
                    f"{member.name!r} is {member.size:,} bytes; the limit for one file is "
                    f"{self.limits.max_file_bytes:,}",
                )
            # Only zip records a member's compressed size; tar members are judged by what
            # the whole archive expands to while it is read (_check_expansion).
            compressed = member.compressed
            if (
                compressed is not None
                and member.size > _RATIO_FLOOR
                and member.size > max(compressed, 1) * self.limits.max_ratio
            ):
                raise ArchiveError(
                    "archive.ratio",
                    f"{member.name!r} expands {member.size // max(compressed, 1):,}x "
                    f"({compressed:,} bytes to {member.size:,}); the limit is "
                    f"{self.limits.max_ratio}x (a compression bomb?)",
                )
        elif member.kind in ("symlink", "hardlink"):
            _check_link_text(member)

    def _extract(self, member: _Member, opener: Callable[[], IO[bytes] | None]) -> None:
        self.current = member.name
        name = posixpath.normpath(member.name)
        if name == ".":
            if member.kind == "dir":
                return  # the archive's own top folder ("./")
            raise ArchiveError("archive.unsafe_path", f"Entry name {member.name!r} is not allowed")
        member.name = name
        self._place(member)
        path = self.dest / name
        if member.kind == "dir":
            self._mkdir(path)
        elif member.kind == "file":
            self._mkdir(path.parent)
            source = opener()
            if source is None:
                raise ArchiveError("archive.corrupt", f"Cannot read {name!r}")
            with source:
                self._write(member, source, path)
        elif member.kind == "hardlink":
            self._copy_hardlink(member, path)
        else:
            self.links.append(member)

    def _place(self, member: _Member) -> None:
        """Record what ``member`` makes of its path; refuse a path that is two things."""
        parts = member.name.split("/")
        for depth in range(1, len(parts)):
            parent = "/".join(parts[:depth])
            if self.placed.setdefault(parent, "folder") != "folder":
                raise ArchiveError(
                    "archive.conflict",
                    f"{member.name!r} needs {parent!r} to be a folder, but the archive has it "
                    f"as a {self.placed[parent]}",
                )
        kind = {"dir": "folder", "symlink": "link", "hardlink": "file"}.get(member.kind, "file")
        before = self.placed.get(member.name)
        if before is None or before == kind == "folder":  # the same folder twice is harmless
            self.placed[member.name] = kind
            return
        if before == kind:
            raise ArchiveError("archive.duplicate", f"{member.name!r} appears twice in the archive")
        raise ArchiveError(
            "archive.conflict", f"{member.name!r} is both a {before} and a {kind} in the archive"
        )

    def _mkdir(self, path: Path) -> None:
        # Links are made last, so a folder here is always a real folder inside the tree.
        path.mkdir(parents=True, exist_ok=True, mode=0o755)

    def _write(self, member: _Member, source: IO[bytes], path: Path) -> None:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        try:
            fd = os.open(path, flags, 0o755 if member.executable else 0o644)
        except FileExistsError:
            raise ArchiveError(
                "archive.duplicate", f"{member.name!r} appears twice in the archive"
            ) from None
        written = 0
        with os.fdopen(fd, "wb") as out:
            # Never ask for much past the declared size: the overflow is seen before the
            # stream's end (where zipfile would report a CRC error instead).
            while chunk := source.read(min(_CHUNK, member.size - written + 1)):
                written += len(chunk)
                self.total += len(chunk)
                if written > member.size:
                    raise ArchiveError(
                        "archive.size_mismatch",
                        f"{member.name!r} decompresses to more than the {member.size:,} bytes "
                        "it declares; stopped",
                    )
                if self.total > self.limits.max_total_bytes:
                    raise ArchiveError(
                        "archive.too_large",
                        f"Extraction passed {self.limits.max_total_bytes:,} bytes; stopped",
                    )
                self._check_expansion(member)
                out.write(chunk)
        self.files.add(member.name)

    def _check_expansion(self, member: _Member) -> None:
        """Refuse once the archive as a whole has expanded past the ratio limit."""
        consumed = max(self.source.consumed if self.source is not None else 0, 1)
        if self.total > _RATIO_FLOOR and self.total > consumed * self.limits.max_ratio:
            raise ArchiveError(
                "archive.ratio",
                f"The archive expands {self.total // consumed:,}x ({consumed:,} compressed "
                f"bytes read, {self.total:,} written, stopped at {member.name!r}); the limit "
                f"is {self.limits.max_ratio}x (a compression bomb?)",
            )

    def _copy_hardlink(self, member: _Member, path: Path) -> None:
        source = os.path.normpath(member.link)
        if source not in self.files:
            raise ArchiveError(
                "archive.link_escape",
                f"Hard link {member.name!r} points to {member.link!r}, which is not a file "
                "extracted earlier from this archive",
            )
        self._mkdir(path.parent)
        size = os.path.getsize(self.dest / source)
        with open(self.dest / source, "rb") as fh:
            self._write(_Member(member.name, "file", size, executable=member.executable), fh, path)

    def _make_links(self) -> None:
        for member in self.links:
            path = self.dest / member.name
            # An earlier link may have made this parent lead elsewhere: check before writing.
            if not self._inside(os.path.realpath(path.parent)):
                raise _escape(member)
            self._mkdir(path.parent)
            try:
                os.symlink(member.link, path)
            except FileExistsError:
                raise ArchiveError(
                    "archive.duplicate", f"{member.name!r} appears twice in the archive"
                ) from None
        # Resolved only once every link exists: a chain of links inside the tree can still
        # lead out of it, which no check of a single link's text can see.
        for member in self.links:
            if not self._inside(os.path.realpath(self.dest / member.name)):
                raise _escape(member)

    def _inside(self, real: str) -> bool:
        return real == self.real_dest or real.startswith(self.real_dest + os.sep)


def _escape(member: _Member) -> ArchiveError:
    return ArchiveError(
        "archive.link_escape",
        f"Symlink {member.name!r} -> {member.link!r} leads outside the archive",
    )


def _too_many(limits: ArchiveLimits) -> ArchiveError:
    return ArchiveError(
        "archive.too_many_entries",
        f"Archive has more than {limits.max_entries:,} entries; refused",
    )


def _safe_relative(name: str) -> None:
    if not name or "\0" in name or "\\" in name:
        raise ArchiveError("archive.unsafe_path", f"Entry name {name!r} is not allowed")
    if name.startswith("/") or (len(name) > 1 and name[1] == ":"):
        raise ArchiveError("archive.unsafe_path", f"Entry {name!r} has an absolute path")
    if ".." in name.split("/"):
        raise ArchiveError("archive.unsafe_path", f"Entry {name!r} climbs out with '..'")


def _check_link_text(member: _Member) -> None:
    link = member.link
    if not link or link.startswith("/") or "\0" in link:
        raise ArchiveError(
            "archive.link_escape", f"Link {member.name!r} -> {link!r} leaves the archive"
        )
    base = "" if member.kind == "hardlink" else os.path.dirname(member.name)
    resolved = os.path.normpath(os.path.join(base, link))
    if resolved == ".." or resolved.startswith("../"):
        raise ArchiveError(
            "archive.link_escape", f"Link {member.name!r} -> {link!r} leaves the archive"
        )


def _zip_member(info: zipfile.ZipInfo) -> _Member:
    if not info.filename:  # zipfile's own is_dir() fails on it
        raise ArchiveError("archive.unsafe_path", "An entry has an empty name")
    mode = info.external_attr >> 16
    name = info.filename.rstrip("/")
    if info.flag_bits & 0x1:
        raise ArchiveError(
            "archive.encrypted", f"{name!r} is encrypted; skills archives must not be"
        )
    if stat.S_ISLNK(mode):
        # A zip symlink stores its target as the member's data; refuse absurd ones unread.
        if info.file_size > 4096:
            raise ArchiveError("archive.unsafe_path", f"Symlink {name!r} has a huge target")
        return _Member(name, "symlink", info.file_size, info.compress_size, link="")
    if info.is_dir():
        return _Member(name, "dir")
    if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
        raise ArchiveError("archive.special_file", f"{name!r} is not a regular file or folder")
    return _Member(name, "file", info.file_size, info.compress_size, executable=bool(mode & 0o111))


def _tar_member(info: tarfile.TarInfo) -> _Member:
    name = info.name.rstrip("/")
    if name.startswith("./"):
        name = name[2:] or "."
    if info.isdir():
        return _Member(name, "dir")
    if info.isreg():
        return _Member(name, "file", info.size, executable=bool(info.mode & 0o111))
    if info.issym():
        return _Member(name, "symlink", link=info.linkname)
    if info.islnk():
        return _Member(name, "hardlink", link=info.linkname)
    raise ArchiveError(
        "archive.special_file",
        f"{name!r} is a device, FIFO or other special file; refused",
    )

"""Archive and URL roots: safe extraction into the cache.

A root may be a ``.zip``, ``.skill`` (a zip), ``.tar``, ``.tar.gz`` or ``.tgz`` file, or an
``http(s)://`` URL to one (downloaded by :mod:`skillshelf.skills.remote`;
:mod:`skillshelf.skills.sources` picks which). Archives are extracted into a fresh folder
which is then renamed into place, so a crash never leaves a half-extracted root.

Extraction refuses, with an :class:`ArchiveError` carrying a stable code, anything that could
write outside the target or exhaust the disk: absolute paths, ``..``, links that resolve
outside the tree, device files and FIFOs, too many entries, too much data in total or in one
file, extreme compression ratios, and entries that decompress to more than they declared.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import os
import shutil
import stat
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Final

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.errors import SkillshelfError
from skillshelf.skills.roots import ARCHIVE_SUFFIXES

__all__ = [
    "ArchiveError",
    "ArchiveLimits",
    "Materialized",
    "extract_archive",
    "kind_of_url",
    "materialize_archive",
]

_ZIP_SUFFIXES: Final = (".zip", ".skill")
_CHUNK: Final = 1 << 16
# A staging folder untouched this long belongs to an extraction that crashed.
_STALE_STAGING_S: Final = 3600
# Small members may compress extremely well (a file of spaces) without being a danger.
_RATIO_FLOOR: Final = 1024 * 1024


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
        max_ratio: Uncompressed / compressed size of one zip member.
    """

    max_entries: int = 10_000
    max_total_bytes: int = 256 * 1024 * 1024
    max_file_bytes: int = 64 * 1024 * 1024
    max_ratio: int = 200


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
    key = _key(f"{os.path.realpath(path)}\0{st.st_size}\0{st.st_mtime_ns}")
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
    compressed: int = 0
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


class _Extractor:
    def __init__(self, dest: Path, limits: ArchiveLimits) -> None:
        self.dest = dest
        self.real_dest = os.path.realpath(dest)
        self.limits = limits
        self.total = 0
        self.files: set[str] = set()
        self.links: list[_Member] = []

    def run(self, archive: str, kind: str) -> None:
        try:
            if kind in _ZIP_SUFFIXES:
                with zipfile.ZipFile(archive) as zf:
                    self._run_zip(zf)
            else:
                mode = "r:gz" if kind in (".tar.gz", ".tgz") else "r:*"
                with tarfile.open(archive, mode) as tf:  # type: ignore[call-overload]
                    self._run_tar(tf)
        except (zipfile.BadZipFile, tarfile.TarError, EOFError, ValueError) as exc:
            raise ArchiveError("archive.corrupt", f"Cannot read the archive: {exc}") from None
        except (zipfile.LargeZipFile, NotImplementedError, RuntimeError) as exc:
            raise ArchiveError("archive.unsupported", f"Cannot extract: {exc}") from None
        self._make_links()

    def _run_zip(self, zf: zipfile.ZipFile) -> None:
        infos = zf.infolist()
        if len(infos) > self.limits.max_entries:
            raise _too_many(self.limits)
        members = [_zip_member(info) for info in infos]
        for info, member in zip(infos, members, strict=True):
            if member.kind == "symlink":
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
        _safe_relative(member.name)
        if member.kind == "file":
            if member.size > self.limits.max_file_bytes:
                raise ArchiveError(
                    "archive.file_too_large",
                    f"{member.name!r} is {member.size:,} bytes; the limit for one file is "
                    f"{self.limits.max_file_bytes:,}",
                )
            if (
                member.size > _RATIO_FLOOR
                and member.size > max(member.compressed, 1) * self.limits.max_ratio
            ):
                raise ArchiveError(
                    "archive.ratio",
                    f"{member.name!r} expands {member.size // max(member.compressed, 1):,}x; "
                    f"the limit "
                    f"is {self.limits.max_ratio}x (a compression bomb?)",
                )
        elif member.kind in ("symlink", "hardlink"):
            _check_link_text(member)

    def _extract(self, member: _Member, opener: Callable[[], IO[bytes] | None]) -> None:
        path = self.dest / member.name
        if member.kind == "dir":
            self._mkdir(path)
        elif member.kind == "file":
            self._mkdir(path.parent)
            source = opener()
            if source is None:
                raise ArchiveError("archive.corrupt", f"Cannot read {member.name!r}")
            with source:
                self._write(member, source, path)
        elif member.kind == "hardlink":
            self._copy_hardlink(member, path)
        else:
            self.links.append(member)

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
                out.write(chunk)
        self.files.add(member.name)

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
    mode = info.external_attr >> 16
    name = info.filename.rstrip("/")
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

"""The rules every cache follows: whose folders and files it uses, and when a stamp is fresh.

A cache is a hint, never an input to trust. Every cache of the project — the discovery index,
the token counts, the extracted archive and URL roots, tiktoken's rank file, the in-memory
walk and digest caches — follows the same two rules, both kept here:

* **Ownership.** A cache folder or file is used only when the running user owns it, it is not
  group- or world-writable and it is not a symbolic link, the way OpenSSH and pip treat their
  own folders: a folder another local user created or linked (``0777``, or a link to their
  folder) could otherwise feed forged rows or receive our writes where they choose. Folders
  are opened with ``O_NOFOLLOW | O_DIRECTORY`` and checked on the descriptor; files are
  opened beneath that descriptor with ``O_NOFOLLOW`` and checked again. A folder refused is
  not used (the cache is a miss, and writes go nowhere), and a warning says so once.
* **Freshness.** A value derived from a file is reused while the file's :class:`Stamp`
  (modification time, size, inode number and status-change time) is what it was
  (:func:`matches`), and only when that stamp was :func:`settled` when the value was taken: a
  file changed within :data:`RACY_NS` of being read may change again within the same clock
  tick without any stamp moving. ``ctime`` is in the stamp because no system call sets it: an
  edit that keeps the size and puts the old modification time back still moves it.

Decoding problems are each cache's own (one validator per format, beside the format); any of
them is a miss, logged at debug level.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import secrets
import stat
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Final, NamedTuple

__all__ = [
    "CACHE_FIX",
    "RACY_NS",
    "Stamp",
    "default_cache_dir",
    "matches",
    "private_folder",
    "private_tree",
    "read_cache_file",
    "settled",
    "stamp_of",
    "write_cache_file",
]

logger = logging.getLogger("skillshelf.cache")

# A file changed this recently when read may change again within the same timestamp tick
# without any stamp moving, so what was derived from it is not kept.
RACY_NS: Final = 2_000_000_000
_NOFOLLOW: Final = getattr(os, "O_NOFOLLOW", 0)
_DIR_FLAGS: Final = os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | _NOFOLLOW
_READ_FLAGS: Final = os.O_RDONLY | _NOFOLLOW | getattr(os, "O_NONBLOCK", 0)
_WRITE_FLAGS: Final = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW
# What a user does about a cache folder refused.
CACHE_FIX: Final = (
    "make it your own and not writable by others (chown, chmod go-w) or set "
    "SKILLSHELF_CACHE_DIR to a folder of your own"
)
_warned: set[str] = set()
_warned_lock = threading.Lock()


def default_cache_dir() -> Path:
    """Where caches live: ``$SKILLSHELF_CACHE_DIR``, ``$XDG_CACHE_HOME/skillshelf``, or
    ``~/.cache/skillshelf``, first one set wins."""
    explicit = os.environ.get("SKILLSHELF_CACHE_DIR")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base, "skillshelf")


class Stamp(NamedTuple):
    """What a file's ``stat`` says about its content: any change of it moves one of these."""

    mtime_ns: int
    size: int
    ino: int
    ctime_ns: int


def stamp_of(st: os.stat_result) -> Stamp:
    """The :class:`Stamp` of a ``stat`` result."""
    return Stamp(st.st_mtime_ns, st.st_size, st.st_ino, st.st_ctime_ns)


def matches(stamp: Sequence[object], st: os.stat_result) -> bool:
    """Whether ``st`` has the stamp ``stamp`` (its first four items, in :class:`Stamp` order;
    an index row starts with them)."""
    return (
        stamp[0] == st.st_mtime_ns
        and stamp[1] == st.st_size
        and stamp[2] == st.st_ino
        and stamp[3] == st.st_ctime_ns
    )


def settled(stamp: Sequence[int], now_ns: int) -> bool:
    """Whether a value derived from a file with ``stamp`` at ``now_ns`` may be reused later:
    both its modification and status-change times are older than :data:`RACY_NS`."""
    trusted_before = now_ns - RACY_NS
    return stamp[0] < trusted_before and stamp[3] < trusted_before


def _refusal(st: os.stat_result) -> str | None:
    """Why a cache folder or file with this ``stat`` is not ours to use, or None."""
    if st.st_uid != os.getuid():
        return f"it belongs to uid {st.st_uid}, not to the running user (uid {os.getuid()})"
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"other users may write to it (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _warn_once(path: Path, why: str) -> None:
    key = os.fspath(path)
    with _warned_lock:
        if key in _warned:
            return
        _warned.add(key)
    logger.warning("cache folder %s is not used: %s; %s", path, why, CACHE_FIX)


@contextlib.contextmanager
def private_folder(path: Path, *, create: bool) -> Iterator[int | None]:
    """A descriptor of the cache folder ``path`` when it is ours to use, else None.

    Created (``0700``, parents too) when missing and ``create``. A link, a non-folder, a
    folder of another user or one others may write to gives None and a warning, once.
    """
    opened = _open_folder(path, create=create)
    fd = opened if isinstance(opened, int) else None
    try:
        yield fd
    finally:
        if fd is not None:
            os.close(fd)


def _open_folder(path: Path, *, create: bool) -> int | str:
    """A descriptor of ``path`` when it is ours to use, else why not."""
    try:
        fd = os.open(path, _DIR_FLAGS)
    except FileNotFoundError:
        if not create:
            return "it does not exist"
        try:
            path.mkdir(parents=True, exist_ok=True, mode=0o700)
            fd = os.open(path, _DIR_FLAGS)
        except OSError as exc:
            logger.debug("cache folder %s not created: %s", path, exc)
            return f"cannot create it ({exc.strerror or exc})"
    except OSError as exc:
        # ELOOP / ENOTDIR: a link or a file where the folder should be.
        why = f"it is not a folder of its own ({exc.strerror or exc})"
        _warn_once(path, why)
        return why
    refused = _refusal(os.fstat(fd))
    if refused is not None:
        os.close(fd)
        _warn_once(path, refused)
        return refused
    return fd


def private_tree(base: Path, *parts: str) -> str | None:
    """Why ``base`` or one of the folders ``base/parts[0]/parts[1]…`` is not ours to use as a
    cache folder, or None when every one is (each is created when missing).

    For caches used by path (extracted archive and URL roots): every folder on the way is
    the user's own, so no other user can swap what is below it.
    """
    folder = base
    for part in ("", *parts):
        folder = folder / part if part else folder
        opened = _open_folder(folder, create=True)
        if isinstance(opened, str):
            return f"the cache folder {folder} is not used: {opened}"
        os.close(opened)
    return None


def read_cache_file(folder: Path, name: str) -> bytes | None:
    """The bytes of the cache file ``name`` in ``folder``, or None (a miss).

    A miss when the folder or the file is not ours to use, the file is a link or not a
    regular file, or cannot be read.
    """
    with private_folder(folder, create=False) as dir_fd:
        if dir_fd is None:
            return None
        try:
            fd = os.open(name, _READ_FLAGS, dir_fd=dir_fd)
        except OSError as exc:
            if exc.errno != errno.ENOENT:  # simply not written yet
                logger.debug("cache file %s not opened: %s", folder / name, exc)
            return None
        with os.fdopen(fd, "rb") as fh:
            st = os.fstat(fh.fileno())
            why = "not a regular file" if not stat.S_ISREG(st.st_mode) else _refusal(st)
            if why is not None:
                logger.warning("cache file %s is not used: %s", folder / name, why)
                return None
            try:
                return fh.read()
            except OSError as exc:
                logger.debug("cache file %s not read: %s", folder / name, exc)
                return None


def write_cache_file(folder: Path, name: str, data: bytes) -> str | None:
    """Write ``data`` as the cache file ``name`` in ``folder`` atomically (``0600``).

    Returns:
        None when written, else why not: the folder is not ours to use or the write failed
        (it is only a cache; callers usually ignore it).
    """
    opened = _open_folder(folder, create=True)
    if isinstance(opened, str):
        return opened
    temporary = f".{name}.{secrets.token_hex(8)}.tmp"
    try:
        fd = os.open(temporary, _WRITE_FLAGS, 0o600, dir_fd=opened)
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            # Atomic: a concurrent reader sees the old file or the new one.
            os.replace(temporary, name, src_dir_fd=opened, dst_dir_fd=opened)
        except BaseException:  # broad on purpose: no temporary file survives; re-raised
            with contextlib.suppress(OSError):
                os.unlink(temporary, dir_fd=opened)
            raise
    except OSError as exc:
        logger.debug("cache file %s not written: %s", folder / name, exc)
        return exc.strerror or str(exc)
    finally:
        os.close(opened)
    return None

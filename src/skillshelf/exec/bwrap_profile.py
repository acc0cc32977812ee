"""What the bubblewrap sandbox contains: the mounted set, the Python shim, the environment.

The sandbox's root is an empty tmpfs. Into it go, read-only and at the same paths as on the
host, the entries of :data:`SYSTEM_MOUNTS` (programs and libraries), :data:`ETC_MOUNTS` (the
parts of ``/etc`` programs read: no ``shadow``, ``sudoers``, ``ssh`` or anything else), the
running interpreter's prefixes (:func:`python_mounts`) and any read-only paths an operator
adds by policy (``ExecPolicy(extra_ro_paths=…)``). A host entry that is a symbolic link is
made as the same link (``/bin → usr/bin``, ``/etc/localtime → /usr/share/zoneinfo/…``);
folders the sandbox creates to hold a mount are ``0711`` (enter, never list), so a prefix
under ``/root`` shows nothing else of ``/root``.

``python3`` and ``python`` in the sandbox are a shim (:data:`SHIM_DIR`, first on ``PATH``)
that execs :data:`sys.executable`: the command's interpreter *is* the harness's, with the
same ``sys.executable`` and site-packages. This module computes arguments; the runner starts
the process.
"""

from __future__ import annotations

import functools
import logging
import os
import shlex
import site
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Final

__all__ = [
    "ETC_MOUNTS",
    "RESERVED_PATHS",
    "SHIM_DIR",
    "SHM_SIZE",
    "SYSTEM_MOUNTS",
    "TMP_SIZE",
    "Mount",
    "filesystem_args",
    "python_mounts",
    "python_shim",
    "sandbox_path",
]


@dataclass(frozen=True, slots=True)
class Mount:
    """One host path made visible, read-only, at the same path in the sandbox.

    Attributes:
        path: Absolute path on the host and in the sandbox.
        why: What needs it (shown in docs/security.md's table).
        network_only: Mounted only when the command is given network access.
    """

    path: str
    why: str
    network_only: bool = False


SYSTEM_MOUNTS: Final = (
    Mount("/usr", "programs, libraries, /usr/local, the system Python and its packages"),
    Mount("/bin", "programs (on merged-/usr systems a link to usr/bin)"),
    Mount("/sbin", "system programs (often a link to usr/sbin)"),
    Mount("/lib", "libraries and the dynamic loader (often a link to usr/lib)"),
    Mount("/lib32", "32-bit libraries, where present"),
    Mount("/lib64", "the x86-64 dynamic loader (often a link to usr/lib64)"),
    Mount("/libx32", "x32 libraries, where present"),
)
ETC_MOUNTS: Final = (
    Mount("/etc/passwd", "user and home lookups (`id`, `whoami`, `~`)"),
    Mount("/etc/group", "group lookups"),
    Mount("/etc/nsswitch.conf", "how glibc resolves users, groups and hosts"),
    Mount("/etc/ld.so.cache", "the dynamic loader's library cache"),
    Mount("/etc/ld.so.conf", "the dynamic loader's search path"),
    Mount("/etc/ld.so.conf.d", "the dynamic loader's search path"),
    Mount("/etc/alternatives", "Debian's alternatives links (`awk`, `which`, `editor`)"),
    Mount("/etc/ssl/certs", "the CA bundle (HTTPS, when network is allowed)"),
    Mount("/etc/ssl/openssl.cnf", "OpenSSL's configuration"),
    Mount("/etc/ca-certificates", "CA certificates configuration"),
    Mount("/etc/ca-certificates.conf", "CA certificates configuration"),
    Mount("/etc/pki/tls/certs", "the CA bundle on Red Hat-style systems"),
    Mount("/etc/pki/ca-trust", "the CA trust store on Red Hat-style systems"),
    Mount("/etc/locale.alias", "locale names"),
    Mount("/etc/locale.conf", "the default locale"),
    Mount("/etc/default/locale", "the default locale (Debian)"),
    Mount("/etc/localtime", "the time zone (`date`)"),
    Mount("/etc/timezone", "the time zone's name"),
    Mount("/etc/os-release", "which distribution this is"),
    Mount("/etc/lsb-release", "which distribution this is"),
    Mount("/etc/debian_version", "which distribution this is"),
    Mount("/etc/mime.types", "file type by extension (Python's mimetypes)"),
    Mount("/etc/magic", "file type by content (`file`)"),
    Mount("/etc/fonts", "fontconfig (rendering text into images and PDFs)"),
    Mount("/etc/protocols", "protocol names (sockets)"),
    Mount("/etc/services", "service names (sockets)"),
    Mount("/etc/hosts", "host names (`localhost`)"),
    Mount("/etc/host.conf", "resolver configuration"),
    Mount("/etc/gai.conf", "resolver address ordering"),
    Mount("/etc/resolv.conf", "DNS servers", network_only=True),
)
# Where the python3/python shim lives; first on the sandbox's PATH.
SHIM_DIR: Final = "/run/skillshelf/bin"
SANDBOX_PATH: Final = "/usr/local/bin:/usr/bin:/bin"
# The sandbox's /tmp and /dev/shm are memory: these cap what a command can put there.
TMP_SIZE: Final = 256 << 20
SHM_SIZE: Final = 64 << 20  # POSIX shared memory and semaphores (Python's multiprocessing)
# Paths the sandbox makes itself; an extra read-only path may not be one of them or under one.
RESERVED_PATHS: Final = ("/workspace", "/proc", "/dev", "/tmp", "/run/skillshelf")
# A folder made only to hold a mount below it: enter, never list.
_HOLDER_PERMS: Final = "0711"
# An interpreter "prefix" this wide would show a home or the whole system: never mounted.
_TOO_BROAD: Final = frozenset({"/", "/root", "/home", "/etc", "/var", "/opt", "/srv", "/tmp"})

logger = logging.getLogger(__name__)


def python_mounts() -> tuple[Mount, ...]:
    """The running interpreter: its prefixes and site-packages folders outside ``/usr``."""
    why = "the interpreter skillshelf runs under and its packages"
    found: list[str] = []
    candidates = [sys.prefix, sys.base_prefix, sys.exec_prefix, sys.base_exec_prefix]
    candidates += site.getsitepackages()
    if sys.executable:
        candidates.append(os.path.dirname(os.path.realpath(sys.executable)))
    for path in candidates:
        for variant in (os.path.abspath(path), os.path.realpath(path)):
            if os.path.isdir(variant) and variant not in found:
                found.append(variant)
    kept = []
    for path in _outermost(found):
        if _too_broad(path):
            logger.warning("not mounting %s in the sandbox: it is not a Python prefix alone", path)
        elif not _under(path, "/usr"):
            kept.append(Mount(path, why))
    return tuple(kept)


def _too_broad(path: str) -> bool:
    home = os.path.expanduser("~")
    return path in _TOO_BROAD or os.path.dirname(path) == "/home" or path == home


def python_shim() -> bytes | None:
    """The ``python3`` shim's text (execs :data:`sys.executable`); None without an executable."""
    if not sys.executable:
        return None
    return f'#!/bin/sh\nexec {shlex.quote(sys.executable)} "$@"\n'.encode()


def sandbox_path() -> str:
    """``PATH`` inside the sandbox: the shim, the interpreter's ``bin``, then the system's."""
    bins = [SHIM_DIR]
    for prefix in dict.fromkeys((sys.prefix, sys.base_prefix)):
        candidate = os.path.join(prefix, "bin")
        if not _under(candidate, "/usr") and candidate not in bins:
            bins.append(candidate)
    return ":".join([*bins, SANDBOX_PATH])


def filesystem_args(
    *,
    network: bool,
    extra: Sequence[str] = (),
    shim_fd: int | None = None,
    tmp_size: bool = True,
) -> list[str]:
    """bwrap options building the sandbox's file system (everything but the workspace).

    Args:
        network: Whether the command gets network access (adds the network-only mounts).
        extra: Operator-chosen read-only paths (absolute); each must exist.
        shim_fd: A readable descriptor holding :func:`python_shim`'s text, or None.
        tmp_size: bwrap knows ``--size`` (0.8 and later): cap ``/tmp`` at :data:`TMP_SIZE`
            and ``/dev/shm`` at :data:`SHM_SIZE`.

    Raises:
        FileNotFoundError: A path in ``extra`` does not exist.
    """
    for path in extra:
        if not os.path.lexists(path):
            raise FileNotFoundError(2, "an extra read-only path does not exist", path)
    builder = _base(network).copy()
    builder.add_all([Mount(os.path.normpath(p), "operator policy") for p in extra])
    if shim_fd is not None:
        builder.hold(f"{SHIM_DIR}/python3")
        builder.args += ["--perms", "0555", "--ro-bind-data", str(shim_fd), f"{SHIM_DIR}/python3"]
        builder.args += ["--symlink", "python3", f"{SHIM_DIR}/python"]
    builder.args += ["--proc", "/proc", "--dev", "/dev"]
    for where, size in (("/tmp", TMP_SIZE), ("/dev/shm", SHM_SIZE)):
        capped = ["--size", str(size)] if tmp_size else []
        builder.args += ["--perms", "1777", *capped, "--tmpfs", where]
    return builder.args


class _Builder:
    """Accumulates bwrap options; remembers which folders exist in the sandbox so far."""

    def __init__(self) -> None:
        self.args: list[str] = []
        self.holders: set[str] = set()  # folders made empty to hold a mount
        self.mounted: set[str] = set()  # folders bound whole (their subtree exists)

    def copy(self) -> _Builder:
        other = _Builder()
        other.args = list(self.args)
        other.holders = set(self.holders)
        other.mounted = set(self.mounted)
        return other

    def hold(self, path: str) -> None:
        """Make the folders above ``path`` that do not exist yet."""
        for parent in reversed(PurePosixPath(path).parents):
            name = str(parent)
            if name == "/" or name in self.holders or any(_under(name, m) for m in self.mounted):
                continue
            perms = "0755" if _under(name, "/etc") else _HOLDER_PERMS
            self.args += ["--perms", perms, "--dir", name]
            self.holders.add(name)

    def add_all(self, mounts: Sequence[Mount]) -> None:
        dirs = [m.path for m in mounts if os.path.isdir(m.path) and not os.path.islink(m.path)]
        for mount in mounts:
            if os.path.lexists(mount.path):
                self.add(mount.path, covered=[*dirs, *self.mounted])

    def add(self, path: str, *, covered: Sequence[str]) -> None:
        self.hold(path)
        if os.path.islink(path):
            real = os.path.realpath(path)
            if any(_under(real, c) for c in covered) or not os.path.exists(real):
                self.args += ["--symlink", os.readlink(path), path]
                return
            path_source = real  # the link leads where nothing else is mounted: bind its target
        else:
            path_source = path
        self.args += ["--ro-bind", path_source, path]
        if os.path.isdir(path_source):
            self.mounted.add(path)


@functools.cache
def _base(network: bool) -> _Builder:
    builder = _Builder()
    builder.args += ["--perms", "0755", "--dir", "/etc"]
    builder.holders.add("/etc")
    mounts = [*SYSTEM_MOUNTS, *ETC_MOUNTS, *python_mounts()]
    builder.add_all([m for m in mounts if network or not m.network_only])
    return builder


def _outermost(paths: Sequence[str]) -> list[str]:
    return [p for p in paths if not any(o != p and _under(p, o) for o in paths)]


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")

"""Per-session workspaces: staged skill copies, the run environment, output collection.

A workspace is one directory per session::

    skills/<name>/   writable copy of each skill used (out/ work/ inputs/ link to the folders below)
    work/  out/  inputs/
    runs/<run-id>/   one per command

The original skill folder is never written: the copy is made on first use and made again when
the source's content digest changes. The copy is exactly the file set of the one walker
(:mod:`skillshelf.skills.walk`) — the set the lockfile digests and the scanner reads — copied in
bounded chunks and hashed as it is copied; links inside the skill become relative links in the
copy, links leading out, FIFOs and devices are not staged. With a pinned (locked) digest,
content that differs is refused rather than staged. :func:`execute` runs a command there
through an executor from :mod:`skillshelf.exec.runner` and collects output files by glob.
"""

from __future__ import annotations

import contextlib
import errno
import fnmatch
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from skillshelf.core.mime import OCTET_STREAM, guess_mime
from skillshelf.errors import SkillshelfError, ToolRetry, UsageError, clip
from skillshelf.exec.bwrap_profile import RESERVED_PATHS
from skillshelf.exec.missing import Missing, find_missing, missing_notes
from skillshelf.exec.runner import DEFAULT_OUTPUT_CAP, Executor, Limits, RunSpec
from skillshelf.skills.paths import safe_join
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import SkillWalk, combine, digest_walk, entry_digest, walk_skill

__all__ = [
    "MAX_LIVE_WORKSPACES",
    "WORKSPACE_IDLE_TTL_S",
    "CollectedFile",
    "ExecPolicy",
    "ExecResult",
    "StagingRefused",
    "Workspace",
    "WorkspaceManager",
    "check_ro_path",
    "escape_name",
    "execute",
]

Retention = Literal["delete", "keep"]
INLINE_TEXT_BYTES: Final = 16 * 1024
MAX_COLLECT_FILES: Final = 50
MAX_COLLECT_BYTES: Final = 20 << 20
# Entries a collect glob may look at, and folders it may descend: the sandbox made the tree.
MAX_COLLECT_SCAN: Final = 10_000
MAX_COLLECT_DEPTH: Final = 32
# A workspace unused this long is removed (its owner has most likely gone away).
WORKSPACE_IDLE_TTL_S: Final = 3600.0
# Workspaces kept at once per manager; the longest idle is removed to make room.
MAX_LIVE_WORKSPACES: Final = 64
_DIR_FLAGS: Final = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW
_LINKED: Final = ("out", "work", "inputs")
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]+")


class StagingRefused(SkillshelfError):
    """A skill was not staged: it differs from its pinned digest or is too big to walk whole."""


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """What commands may do, per agent or per call.

    Attributes:
        allowed_commands: Program names (``argv[0]``'s basename, e.g. ``python3``) that may be
            started; None allows any. A shell string from the model is checked by its first word
            and refused when it chains commands (``;``, ``&&``, pipes, ``$(…)``).
        default_timeout_s: Time limit when the call gives none.
        max_timeout_s: Upper bound on any call's time limit.
        allow_network: Whether a call may ask for network access.
        env_passthrough: Names of the caller's environment variables passed to the command.
        limits: Resource limits.
        output_cap: Bytes kept per output stream.
        extra_ro_paths: Host paths (absolute) a sandbox shows read-only at the same path,
            besides its own set (e.g. a runtime some skills need, ``/opt/node``); each must
            exist when a command runs. See docs/security.md for what is mounted already.

    Raises:
        UsageError: An extra read-only path is relative, ``/``, or where the sandbox puts
            something of its own (the workspace, ``/proc``, ``/dev``, ``/tmp``).
    """

    allowed_commands: tuple[str, ...] | None = None
    default_timeout_s: float = 60.0
    max_timeout_s: float = 600.0
    allow_network: bool = False
    env_passthrough: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    output_cap: int = DEFAULT_OUTPUT_CAP
    extra_ro_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in self.extra_ro_paths:
            check_ro_path(path)


def check_ro_path(path: str) -> None:
    """Refuse an extra read-only path a sandbox cannot show as asked.

    Raises:
        UsageError: ``path`` is relative, ``/``, or where the sandbox puts something of its own.
    """
    shown = clip(path)
    normal = os.path.normpath(path) if path else ""
    if not os.path.isabs(normal) or normal == "/":
        raise UsageError(f"extra read-only path {shown!r}: give an absolute path other than /")
    for reserved in RESERVED_PATHS:
        if normal == reserved or normal.startswith(reserved + "/"):
            raise UsageError(
                f"extra read-only path {shown!r}: {reserved} is the sandbox's own, not the host's"
            )


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


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of :func:`execute`."""

    exit_code: int
    timed_out: bool
    duration_s: float
    stdout: str
    stderr: str
    stdout_truncated: bool
    stderr_truncated: bool
    files: list[CollectedFile]
    run_id: str
    executor: str
    notes: list[str] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The shape of ``skillshelf exec --json``."""
        return {
            "exit_code": self.exit_code,
            "timed_out": self.timed_out,
            "stdout": self.stdout,
            "stderr": self.stderr,
            "stdout_truncated": self.stdout_truncated,
            "stderr_truncated": self.stderr_truncated,
            "files": [f.to_dict() for f in self.files],
            "missing": [m.to_dict() for m in self.missing],
        }


class Workspace:
    """One session's workspace directory (see the module docstring for its layout)."""

    def __init__(self, root: Path) -> None:
        self.root = root.resolve()
        # Staging records live beside the workspace, out of the commands' reach.
        self.state_dir = self.root.parent / f".{self.root.name}.staged"
        self.skills_dir = self.root / "skills"
        self.work_dir = self.root / "work"
        self.out_dir = self.root / "out"
        self.inputs_dir = self.root / "inputs"
        self.runs_dir = self.root / "runs"
        self.root.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(exist_ok=True)
        for directory in (
            self.skills_dir,
            self.work_dir,
            self.out_dir,
            self.inputs_dir,
            self.runs_dir,
        ):
            _real_dir(directory)

    def stage(self, skill: Skill, *, pinned: str | None = None) -> Path:
        """The writable copy of ``skill``, made again when the source's content changed.

        Args:
            skill: The skill to stage.
            pinned: The approved content digest (from the lockfile): content that differs,
                before or while copying, is refused and nothing of it is left staged.

        Raises:
            StagingRefused: The content differs from ``pinned``, or the skill is over the
                walker's caps.
        """
        _real_dir(self.skills_dir)
        target = safe_join(self.skills_dir, skill.name)
        walk = walk_skill(skill.path)
        if walk.capped is not None:
            raise StagingRefused(f"Skill {skill.name!r} is not staged: it has {walk.capped}")
        digest = digest_walk(walk).digest
        record = self.state_dir / skill.name
        try:
            _check_pin(skill.name, digest, pinned)
            if target.is_dir() and record.is_file() and record.read_text() == digest:
                return target
            if target.exists():
                shutil.rmtree(target)
            copied = _copy_walk(walk, target)
            # What was copied is what counts: a file changed after the check above is caught.
            _check_pin(skill.name, copied, pinned)
        except StagingRefused:
            # Nothing of a refused skill stays staged, not even an earlier approved copy.
            shutil.rmtree(target, ignore_errors=True)
            record.unlink(missing_ok=True)
            raise
        for name in _LINKED:
            link = target / name
            if not link.exists() and not link.is_symlink():
                link.symlink_to(Path("..", "..", name))
        record.write_text(copied)
        return target

    def add_input(self, source: Path, name: str | None = None) -> Path:
        """Copy a caller's file into ``inputs/`` (under ``name``, default its own name)."""
        _real_dir(self.inputs_dir)
        target = safe_join(self.inputs_dir, name or source.name)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target)
        return target

    def new_run(self) -> tuple[str, Path]:
        """A fresh ``runs/<run-id>/`` directory."""
        run_id = uuid.uuid4().hex[:12]
        _real_dir(self.runs_dir)
        path = self.runs_dir / run_id
        path.mkdir()
        return run_id, path

    def env(self, executor: Executor, *, run_dir: Path, skill_dir: Path | None) -> dict[str, str]:
        """The workspace variables, as the command under ``executor`` sees the paths."""

        def seen(path: Path) -> str:
            return executor.visible(self.root, path)

        env = {
            "WORKSPACE_DIR": seen(self.root),
            "SKILLS_DIR": seen(self.skills_dir),
            "WORK_DIR": seen(self.work_dir),
            "OUTPUT_DIR": seen(self.out_dir),
            "RUN_DIR": seen(run_dir),
        }
        if skill_dir is not None:
            env["SKILL_DIR"] = seen(skill_dir)
        return env

    def collect(
        self,
        globs: Sequence[str],
        *,
        max_files: int = MAX_COLLECT_FILES,
        max_bytes: int = MAX_COLLECT_BYTES,
    ) -> tuple[list[CollectedFile], list[str]]:
        """Files matching ``globs`` (relative to the workspace) and notes on what was refused.

        The sandbox made this tree and collection runs with the harness's rights, so no link
        is ever followed: the walk opens each folder relative to its parent's descriptor with
        ``O_NOFOLLOW``, stays inside the workspace's real folder, and reports a link by its
        (escaped) name without reading its target. At most ``max_files`` files and
        ``max_bytes`` bytes in total are described; paths in the result are escaped.
        """
        files: list[CollectedFile] = []
        notes: list[str] = []
        seen: set[str] = set()
        total = 0
        root_fd = os.open(self.root, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            for pattern in globs:
                for relative in self._matches(root_fd, pattern, notes):
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

    def _matches(self, root_fd: int, pattern: str, notes: list[str]) -> list[str]:
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
            sub = os.open(name, _DIR_FLAGS, dir_fd=dir_fd)
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
            sub = os.open(folder, _DIR_FLAGS, dir_fd=fd)
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


class WorkspaceManager:
    """Creates one :class:`Workspace` per owner (a session) under ``base``, and removes them.

    A workspace lives while its owner does: :meth:`close` ends it, and so do an idle time over
    ``idle_ttl_s`` and, when more than ``max_live`` exist, eviction of the longest idle one
    (never one a command is running in; see :meth:`use`). :meth:`close_all` ends them all.

    Args:
        base: Parent directory (default: ``skillshelf-ws-<uid>`` in the temp dir, refused
            when it is a link or another user's).
        retention: ``delete`` removes a workspace when it ends; ``keep`` leaves it on disk.
        idle_ttl_s: Seconds a workspace may stay unused before it is removed (checked
            whenever a workspace is opened, and by :meth:`reap`).
        max_live: Workspaces kept at once.
    """

    def __init__(
        self,
        base: Path | None = None,
        *,
        retention: Retention = "delete",
        idle_ttl_s: float = WORKSPACE_IDLE_TTL_S,
        max_live: int = MAX_LIVE_WORKSPACES,
    ) -> None:
        if idle_ttl_s <= 0 or max_live < 1:
            raise UsageError("idle_ttl_s must be positive and max_live at least 1")
        self._shared_tmp = base is None
        default = Path(tempfile.gettempdir(), f"skillshelf-ws-{os.getuid()}")
        self.base = base if base is not None else default
        self.retention: Retention = retention
        self.idle_ttl_s = idle_ttl_s
        self.max_live = max_live
        self._lock = threading.Lock()
        self._last_used: dict[str, float] = {}  # owner → monotonic time of last use
        self._busy: dict[str, int] = {}  # owner → commands running in it now

    def _dir(self, session_id: str) -> Path:
        tag = hashlib.sha256(session_id.encode()).hexdigest()[:10]
        return self.base / f"{_UNSAFE.sub('_', session_id)[:40]}-{tag}"

    @property
    def live(self) -> list[str]:
        """The owners whose workspaces exist now, longest idle first."""
        with self._lock:
            return sorted(self._last_used, key=self._last_used.__getitem__)

    def open(self, session_id: str) -> Workspace:
        """The session's workspace, created on first use; expired and surplus ones go first.

        Raises:
            SkillshelfError: The default base folder is a link or another user's, or
                ``max_live`` workspaces are all running commands.
        """
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self._shared_tmp and (self.base.is_symlink() or self.base.stat().st_uid != os.getuid()):
            # Anyone can create this name in a shared temp dir first: never use theirs.
            raise SkillshelfError(f"{self.base} is not a directory of this user; remove it")
        with self._lock:
            ended = self._expired(time.monotonic())
            if session_id not in self._last_used:
                ended += self._make_room()
            self._last_used[session_id] = time.monotonic()
        for owner in ended:
            self._remove(owner)
        return Workspace(self._dir(session_id))

    @contextlib.contextmanager
    def use(self, session_id: str) -> Iterator[Workspace]:
        """:meth:`open`, held busy (never expired or evicted) until the block ends."""
        with self._lock:
            self._busy[session_id] = self._busy.get(session_id, 0) + 1
        try:
            yield self.open(session_id)
        finally:
            with self._lock:
                left = self._busy.pop(session_id) - 1
                if left:
                    self._busy[session_id] = left
                if session_id in self._last_used:
                    self._last_used[session_id] = time.monotonic()

    def reap(self) -> list[str]:
        """Remove the workspaces idle longer than ``idle_ttl_s``; their owners."""
        with self._lock:
            ended = self._expired(time.monotonic())
        for owner in ended:
            self._remove(owner)
        return ended

    def close(self, session_id: str) -> None:
        """End the session: its workspace is deleted unless retention is ``keep``."""
        with self._lock:
            self._last_used.pop(session_id, None)
        self._remove(session_id)

    def close_all(self) -> None:
        """End every workspace this manager made (at shutdown)."""
        with self._lock:
            owners = list(self._last_used)
            self._last_used.clear()
        for owner in owners:
            self._remove(owner)

    def _expired(self, now: float) -> list[str]:
        # Called with the lock held.
        ended = [
            owner
            for owner, used in self._last_used.items()
            if now - used > self.idle_ttl_s and owner not in self._busy
        ]
        for owner in ended:
            del self._last_used[owner]
        return ended

    def _make_room(self) -> list[str]:
        # Called with the lock held: evict the longest idle until one more fits.
        ended: list[str] = []
        idle = sorted(
            (o for o in self._last_used if o not in self._busy), key=self._last_used.__getitem__
        )
        while len(self._last_used) >= self.max_live:
            if not idle:
                raise SkillshelfError(
                    f"{self.max_live} workspaces are running commands (the limit); try again later"
                )
            owner = idle.pop(0)
            del self._last_used[owner]
            ended.append(owner)
        return ended

    def _remove(self, session_id: str) -> None:
        if self.retention == "delete":
            root = self._dir(session_id)
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(root.parent / f".{root.name}.staged", ignore_errors=True)


def _real_dir(path: Path) -> None:
    # A command may have replaced a workspace folder by a link to anywhere: the harness
    # (possibly root) must not write through it, so anything but a real directory goes.
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    path.mkdir(exist_ok=True)


def _check_pin(name: str, digest: str, pinned: str | None) -> None:
    if pinned is not None and digest != pinned:
        raise StagingRefused(
            f"Skill {name!r} is not staged: its content changed since it was approved "
            "(see `skillshelf verify`)"
        )


def _copy_walk(walk: SkillWalk, target: Path) -> str:
    """Copy the walked entries under ``target``; the digest of what was actually copied."""
    target.mkdir(parents=True)
    files: dict[str, str] = {}
    for entry in walk.entries:
        destination = target.joinpath(*entry.path.split("/"))
        if entry.kind == "dir":
            destination.mkdir(exist_ok=True)
        elif entry.kind == "file":
            mode = os.lstat(walk.full_path(entry.path)).st_mode & 0o777
            fd = os.open(destination, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode | 0o600)
            with os.fdopen(fd, "wb") as out:
                value = entry_digest(walk, entry, sink=out.write)
            files[entry.path] = value or ""
        elif entry.kind == "symlink":
            files[entry.path] = entry_digest(walk, entry) or ""
            if entry.target is not None:
                # Relative, so the copy points at the staged target, never the original.
                parent = os.path.dirname(entry.path) or "."
                destination.symlink_to(os.path.relpath(entry.target or ".", parent))
        else:
            files[entry.path] = entry_digest(walk, entry) or ""  # counted, never staged
    return combine(files).digest


def shell_command(command: str) -> list[str]:
    """How a model's ``command`` string runs: ``/bin/sh -c command``, inside the sandbox."""
    return ["/bin/sh", "-c", command]


_SHELL_CONTROL: Final = re.compile(r"[;&|`\n<>]|\$\(")


def check_allowed(policy: ExecPolicy, argv: Sequence[str]) -> None:
    """Refuse a command the policy does not allow.

    Raises:
        ToolRetry: The program (or, for ``sh -c``, the first word) is not allowed.
    """
    if policy.allowed_commands is None:
        return
    program = argv[0] if argv else ""
    if list(argv[:2]) == ["/bin/sh", "-c"] and len(argv) == 3:
        if _SHELL_CONTROL.search(argv[2]):
            raise ToolRetry(
                "Refused: the command chains programs; the policy allows single commands only."
            )
        words = argv[2].split()
        program = words[0] if words else ""
    if os.path.basename(program) not in policy.allowed_commands:
        allowed = ", ".join(policy.allowed_commands) or "none"
        raise ToolRetry(
            f"Refused: {clip(program)!r} is not an allowed command (allowed: {allowed})."
        )


def execute(
    workspace: Workspace,
    executor: Executor,
    argv: Sequence[str],
    *,
    skill: Skill | None = None,
    policy: ExecPolicy | None = None,
    timeout_s: float | None = None,
    collect: Sequence[str] = (),
    stdin: str | bytes | None = None,
    network: bool = False,
    pinned: str | None = None,
) -> ExecResult:
    """Run ``argv`` in the workspace (in ``skill``'s staged copy when given).

    ``pinned`` is the skill's approved digest under a lockfile: see :meth:`Workspace.stage`.
    ``timeout_s`` None means the policy's default.

    Raises:
        ToolRetry: The policy refuses the command or network access.
        UsageError: ``argv`` is empty.
        StagingRefused: The skill's content is not the pinned one.
    """
    policy = policy or ExecPolicy()
    if not argv:
        raise UsageError("no command given")
    check_allowed(policy, argv)
    if network and not policy.allow_network:
        raise ToolRetry("Refused: network access is not allowed by this policy.")
    timeout = min(timeout_s or policy.default_timeout_s, policy.max_timeout_s)
    skill_dir = workspace.stage(skill, pinned=pinned) if skill is not None else None
    run_id, run_dir = workspace.new_run()
    env = {k: os.environ[k] for k in policy.env_passthrough if k in os.environ}
    env |= workspace.env(executor, run_dir=run_dir, skill_dir=skill_dir)
    spec = RunSpec(
        list(argv),
        root=workspace.root,
        cwd=skill_dir or workspace.work_dir,
        env=env,
        timeout_s=timeout,
        stdin=stdin.encode() if isinstance(stdin, str) else stdin,
        network=network,
        limits=policy.limits,
        output_cap=policy.output_cap,
        ro_paths=policy.extra_ro_paths,
    )
    output = executor.run(spec)
    files, notes = workspace.collect(collect)
    missing = find_missing(output.stderr, output.exit_code) if output.exit_code != 0 else []
    return ExecResult(
        exit_code=output.exit_code,
        timed_out=output.timed_out,
        duration_s=output.duration_s,
        stdout=output.stdout,
        stderr=output.stderr,
        stdout_truncated=output.stdout_truncated,
        stderr_truncated=output.stderr_truncated,
        files=files,
        run_id=run_id,
        executor=executor.name,
        notes=[*missing_notes(missing), *notes],
        missing=missing,
    )

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

import hashlib
import os
import re
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from skillshelf.core.mime import OCTET_STREAM, guess_mime
from skillshelf.errors import FileAccessError, SkillshelfError, ToolRetry, UsageError
from skillshelf.exec.runner import DEFAULT_OUTPUT_CAP, Executor, Limits, RunSpec
from skillshelf.skills.paths import safe_join
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import SkillWalk, combine, digest_walk, entry_digest, walk_skill

__all__ = [
    "CollectedFile",
    "ExecPolicy",
    "ExecResult",
    "StagingRefused",
    "Workspace",
    "WorkspaceManager",
    "execute",
]

Retention = Literal["delete", "keep"]
INLINE_TEXT_BYTES: Final = 16 * 1024
MAX_COLLECT_FILES: Final = 50
MAX_COLLECT_BYTES: Final = 20 << 20
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
    """

    allowed_commands: tuple[str, ...] | None = None
    default_timeout_s: float = 60.0
    max_timeout_s: float = 600.0
    allow_network: bool = False
    env_passthrough: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    output_cap: int = DEFAULT_OUTPUT_CAP


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

        Symbolic links and anything resolving outside the workspace are refused; at most
        ``max_files`` files and ``max_bytes`` bytes in total are described.
        """
        files: list[CollectedFile] = []
        notes: list[str] = []
        seen: set[str] = set()
        total = 0
        for pattern in globs:
            for relative in self._matches(pattern, notes):
                if relative in seen:
                    continue
                seen.add(relative)
                size = _size(self.root / relative)
                if len(files) >= max_files or total + size > max_bytes:
                    notes.append(
                        f"{relative}: not collected (limit {max_files} files/{max_bytes} B)"
                    )
                    continue
                described = self._describe(relative, notes)
                if described is None:
                    continue
                total += described.size
                files.append(described)
        return files, notes

    def _matches(self, pattern: str, notes: list[str]) -> list[str]:
        cleaned = pattern.strip().replace("\\", "/")
        if not cleaned or cleaned.startswith(("/", "~")) or ".." in cleaned.split("/"):
            notes.append(f"{pattern!r}: refused (globs are relative to the workspace, no '..')")
            return []
        found = sorted(p.relative_to(self.root).as_posix() for p in self.root.glob(cleaned))
        if not found:
            notes.append(f"{pattern!r}: no file matched")
        return found

    def _describe(self, relative: str, notes: list[str]) -> CollectedFile | None:
        lexical = self.root / relative
        if lexical.is_symlink():
            notes.append(f"{relative}: refused (symbolic link)")
            return None
        try:
            path = safe_join(self.root, relative)
        except FileAccessError:
            notes.append(f"{relative}: refused (outside the workspace)")
            return None
        if not path.is_file():
            return None
        digest = hashlib.sha256()
        head = b""
        # O_NOFOLLOW: a link swapped in after the check above is refused, not followed.
        with open(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            while chunk := handle.read(1 << 20):
                digest.update(chunk)
                if len(head) <= INLINE_TEXT_BYTES:
                    head += chunk[: INLINE_TEXT_BYTES + 1 - len(head)]
        mime = guess_mime(path.name, head)
        text = _inline_text(head) if size <= INLINE_TEXT_BYTES else None
        if text is not None and mime == OCTET_STREAM:
            mime = "text/plain"  # a NUL-free head that still decodes as UTF-8 past the sniff
        return CollectedFile(relative, size, mime, digest.hexdigest(), text)


def _inline_text(data: bytes) -> str | None:
    if b"\0" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


class WorkspaceManager:
    """Creates one :class:`Workspace` per session under ``base`` and removes it with the session.

    Args:
        base: Parent directory (default: ``skillshelf-ws-<uid>`` in the temp dir, refused
            when it is a link or another user's).
        retention: ``delete`` removes a workspace on :meth:`close`; ``keep`` leaves it.
    """

    def __init__(self, base: Path | None = None, *, retention: Retention = "delete") -> None:
        self._shared_tmp = base is None
        default = Path(tempfile.gettempdir(), f"skillshelf-ws-{os.getuid()}")
        self.base = base if base is not None else default
        self.retention: Retention = retention

    def _dir(self, session_id: str) -> Path:
        tag = hashlib.sha256(session_id.encode()).hexdigest()[:10]
        return self.base / f"{_UNSAFE.sub('_', session_id)[:40]}-{tag}"

    def open(self, session_id: str) -> Workspace:
        """The session's workspace, created on first use.

        Raises:
            SkillshelfError: The default base folder is a link or another user's.
        """
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self._shared_tmp and (self.base.is_symlink() or self.base.stat().st_uid != os.getuid()):
            # Anyone can create this name in a shared temp dir first: never use theirs.
            raise SkillshelfError(f"{self.base} is not a directory of this user; remove it")
        return Workspace(self._dir(session_id))

    def close(self, session_id: str) -> None:
        """End the session: its workspace is deleted unless retention is ``keep``."""
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


def _size(path: Path) -> int:
    try:
        return path.lstat().st_size
    except OSError:
        return 0


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
            f"Refused: {_clip(program)!r} is not an allowed command (allowed: {allowed})."
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
    )
    output = executor.run(spec)
    files, notes = workspace.collect(collect)
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
        notes=notes,
    )


def _clip(text: str, limit: int = 200) -> str:
    """A model-supplied word, bounded for the message that echoes it."""
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"

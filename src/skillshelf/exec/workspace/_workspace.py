"""One session's workspace directory and the staging of skill copies into it.

The original skill folder is never written: the copy is made on first use and made again when
the source's content digest changes. The copy is exactly the file set of the one walker
(:mod:`skillshelf.skills.walk`) — the set the lockfile digests and the scanner reads — copied in
bounded chunks and hashed as it is copied; links inside the skill become relative links in the
copy, links leading out, FIFOs and devices are not staged. With a pinned (locked) digest,
content that differs is refused rather than staged.
"""

from __future__ import annotations

import os
import shutil
import uuid
from collections.abc import Sequence
from pathlib import Path
from typing import Final

from skillshelf.core.markup import one_line
from skillshelf.errors import SkillshelfError
from skillshelf.exec.runner import Executor
from skillshelf.exec.workspace._collect import (
    MAX_COLLECT_BYTES,
    MAX_COLLECT_FILES,
    CollectedFile,
    collect_files,
)
from skillshelf.skills.paths import safe_join
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import SkillWalk, combine, digest_walk, entry_digest, walk_skill

__all__ = ["StagingRefused", "Workspace"]

_LINKED: Final = ("out", "work", "inputs")


class StagingRefused(SkillshelfError):
    """A skill was not staged: it differs from its pinned digest or is too big to walk whole."""


class Workspace:
    """One session's workspace directory (see :mod:`skillshelf.exec.workspace` for its layout)."""

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
            copied = _copy_walk(walk, target, skill.name, one_name=skill.untrusted)
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
        return collect_files(self.root, globs, max_files=max_files, max_bytes=max_bytes)


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


def _copy_walk(walk: SkillWalk, target: Path, name: str, *, one_name: bool) -> str:
    """Copy the walked entries under ``target``; the digest of what was actually copied.

    With ``one_name`` (an untrusted root) a file with more than one name is refused, as every
    read refuses it: a hard link planted to a file outside would be copied for the sandbox.
    """
    target.mkdir(parents=True)
    files: dict[str, str] = {}
    for entry in walk.entries:
        destination = target.joinpath(*entry.path.split("/"))
        if entry.kind == "dir":
            destination.mkdir(exist_ok=True)
        elif entry.kind == "file":
            info = os.lstat(walk.full_path(entry.path))
            if one_name and info.st_nlink > 1:
                raise StagingRefused(
                    f"Skill {name!r} is not staged: {one_line(entry.path)} is a hard link "
                    f"(the file has {info.st_nlink} names), refused from an untrusted root"
                )
            mode = info.st_mode & 0o777
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

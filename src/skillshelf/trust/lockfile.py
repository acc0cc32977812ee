"""The integrity lockfile: exactly which skill contents are approved.

``skills.lock`` (JSON) records, per skill: its name, source (root, URL, path inside the root),
version, a content digest and one digest per file. The content digest is stable across
machines and is the one :mod:`skillshelf.skills.walk` computes over the one walk of a skill
folder: every entry (dotfiles, ``.git/``, ``__pycache__/`` included), each as its
``/``-separated relative path, a NUL, and the SHA-256 of its bytes exactly as they are (no
line-ending normalisation), marked ``+x`` when an execute bit is set (a mode change is a
change); symlinks count by their link text, FIFOs and devices by their kind.
A skill too big to walk whole (see the walker's caps) can never match its entry.

With a lockfile configured, a skill whose digest differs from the recorded one (or that is not
recorded) is not loaded until approved, and the reason carries a summary of the files added,
removed and changed.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Final

from skillshelf.errors import SkillshelfError
from skillshelf.skills.walk import SkillDigest, digest_skill

if TYPE_CHECKING:
    from skillshelf.skills.skill import Skill

__all__ = [
    "DEFAULT_LOCKFILE",
    "Drift",
    "LockEntry",
    "Lockfile",
    "LockfileError",
    "SkillDigest",
    "digest_skill",
]

DEFAULT_LOCKFILE: Final = "skills.lock"
_FORMAT: Final = 1


class LockfileError(SkillshelfError):
    """The lockfile cannot be read or is not a skillshelf lockfile."""


@dataclass(frozen=True, slots=True)
class LockEntry:
    """One approved skill.

    Attributes:
        name: The skill name.
        digest: Its content digest.
        files: Per-file digests (for the diff summary).
        root: The root it came from, as given.
        url: The URL, for URL roots.
        path: The skill folder relative to its root's folder.
        version: The skill's version, if it declares one.
    """

    name: str
    digest: str
    files: Mapping[str, str]
    root: str = ""
    url: str | None = None
    path: str = ""
    version: str | None = None

    @classmethod
    def of(cls, skill: Skill, root_directory: str | None = None) -> LockEntry:
        """Record ``skill`` as it is on disk now."""
        content = digest_skill(skill.directory)
        base = root_directory or skill.root
        try:
            relative = os.path.relpath(skill.directory, base).replace(os.sep, "/")
        except ValueError:
            relative = skill.directory
        url = skill.root if skill.root.startswith(("http://", "https://")) else None
        return cls(
            skill.name,
            content.digest,
            content.files,
            skill.root,
            url,
            relative,
            skill.version,
        )

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "digest": self.digest,
            "source": {"root": self.root, "url": self.url, "path": self.path},
            "version": self.version,
            "files": dict(self.files),
        }


@dataclass(frozen=True, slots=True)
class Drift:
    """How a skill differs from its approved entry.

    Attributes:
        name: The skill.
        kind: ``"changed"``, ``"unlisted"`` (not in the lockfile), ``"missing"`` (locked
            but not found) or ``"capped"`` (too big to walk whole, so it cannot be verified).
        added: Files present now but not approved.
        removed: Approved files that are gone.
        changed: Files whose bytes differ.
    """

    name: str
    kind: str
    added: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    reason: str = ""

    def summary(self) -> str:
        """One line for people: what drifted."""
        if self.kind == "unlisted":
            return "not in the lockfile; approve it by locking it (updating the lockfile)"
        if self.kind == "missing":
            return "in the lockfile but not found"
        if self.kind == "capped":
            return f"cannot be verified whole: {self.reason} (over the walker's limits)"
        parts = [
            f"{label} {len(items)} ({_names(items)})"
            for label, items in (
                ("added", self.added),
                ("removed", self.removed),
                ("changed", self.changed),
            )
            if items
        ]
        return "content changed since approved: " + (", ".join(parts) or "digest differs")

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "name": self.name,
            "kind": self.kind,
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "summary": self.summary(),
        }


def _names(items: tuple[str, ...], limit: int = 3) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f", +{len(items) - limit} more" if len(items) > limit else "")


@dataclass(slots=True)
class Lockfile:
    """Approved skill contents by name.

    Attributes:
        entries: Approved entries by skill name.
        path: Where it was loaded from / is saved to.
    """

    entries: dict[str, LockEntry] = field(default_factory=dict)
    path: Path | None = None

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Lockfile:
        """Read a lockfile.

        Raises:
            LockfileError: Missing, unreadable or not a skillshelf lockfile.
        """
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise LockfileError(f"Cannot read lockfile {os.fspath(path)!r}: {exc}") from None
        if not isinstance(data, dict) or data.get("lockfile") != _FORMAT:
            raise LockfileError(f"{os.fspath(path)!r} is not a skillshelf lockfile (version 1)")
        entries = {}
        for name, raw in dict(data.get("skills") or {}).items():
            source = raw.get("source") or {}
            entries[name] = LockEntry(
                name,
                str(raw["digest"]),
                {str(k): str(v) for k, v in (raw.get("files") or {}).items()},
                str(source.get("root") or ""),
                source.get("url"),
                str(source.get("path") or ""),
                raw.get("version"),
            )
        return cls(entries, Path(path))

    def save(self, path: str | os.PathLike[str] | None = None) -> Path:
        """Write the lockfile atomically (sorted, stable bytes) and return its path."""
        target = Path(path) if path is not None else self.path
        if target is None:
            raise LockfileError("No path to save the lockfile to")
        payload = {
            "lockfile": _FORMAT,
            "skills": {n: self.entries[n].to_dict() for n in sorted(self.entries)},
        }
        text = json.dumps(payload, indent=2, sort_keys=True, ensure_ascii=False) + "\n"
        directory = target.parent if str(target.parent) else Path(".")
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".skills-lock-")
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(text)
        os.replace(tmp, target)
        self.path = target
        return target

    def approve(self, skills: Iterable[Skill]) -> None:
        """Record the current content of ``skills`` as approved."""
        for skill in skills:
            self.entries[skill.name] = LockEntry.of(skill)

    def check(self, skill: Skill, content: SkillDigest | None = None) -> Drift | None:
        """Compare ``skill`` on disk with its approved entry; None when it matches."""
        entry = self.entries.get(skill.name)
        if entry is None:
            return Drift(skill.name, "unlisted")
        content = content or digest_skill(skill.directory)
        if content.capped is not None:
            return Drift(skill.name, "capped", reason=content.capped)
        if content.digest == entry.digest:
            return None
        return diff(skill.name, entry.files, content.files)

    def verify(self, skills: Iterable[Skill]) -> list[Drift]:
        """Every drift between ``skills`` and this lockfile, sorted by name."""
        drifts: list[Drift] = []
        seen: set[str] = set()
        for skill in skills:
            seen.add(skill.name)
            drift = self.check(skill)
            if drift is not None:
                drifts.append(drift)
        drifts.extend(Drift(name, "missing") for name in self.entries if name not in seen)
        return sorted(drifts, key=lambda d: d.name)


def diff(name: str, approved: Mapping[str, str], current: Mapping[str, str]) -> Drift:
    """The files added, removed and changed between two per-file digest maps."""
    return Drift(
        name,
        "changed",
        tuple(sorted(p for p in current if p not in approved)),
        tuple(sorted(p for p in approved if p not in current)),
        tuple(sorted(p for p in current if p in approved and approved[p] != current[p])),
    )

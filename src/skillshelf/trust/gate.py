"""What a repository holds back: skills that drifted from the lockfile or that the scanner blocks.

Used by :class:`~skillshelf.repository.Repository` only when a lockfile is configured or a root
is untrusted (archive and URL roots always are), so plain folder roots never pay for it.
Each review walks every skill folder once with the one walker (:mod:`skillshelf.skills.walk`);
digests and scans are cached per skill folder by that walk's fingerprint (paths, kinds, sizes,
modification times, link texts, hard-link counts, execute bits), so a refresh re-reads only
skills that changed, and the digest and the scan see exactly the walked file set.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.errors import SkillNotFoundError
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk import Fingerprint, SkillDigest, SkillWalk, digest_walk, walk_skill
from skillshelf.trust.lockfile import LockEntry, Lockfile, LockfileError
from skillshelf.trust.scanner import Finding, ScanPolicy, scan_walk

__all__ = ["Review", "TrustGate"]

_ALWAYS_HELD = frozenset({"scan.hard_link"})


@dataclass(frozen=True, slots=True)
class Review:
    """What the gate decided about one scan's winning skills.

    Attributes:
        held: Skills held back, by name, with the diagnostics that say why (problems first).
        notes: Skills served, by name, with non-blocking findings to attach to them.
        diagnostics: Repository-level problems (an unreadable lockfile).
    """

    held: dict[str, tuple[Diagnostic, ...]]
    notes: dict[str, tuple[Diagnostic, ...]]
    diagnostics: tuple[Diagnostic, ...]


@dataclass(slots=True)
class TrustGate:
    """The lockfile and scanner checks applied after each scan.

    Attributes:
        lockfile: The approved contents, or None for no lockfile.
        policy: The scanner policy.
        untrusted: Roots (as given) whose skills are scanned.
        held: Skills held back by the last check, by name.
    """

    lockfile: Lockfile | None
    policy: ScanPolicy
    untrusted: frozenset[str]
    lock_problem: Diagnostic | None = None
    held: dict[str, Skill] = field(default_factory=dict)
    _digests: dict[str, tuple[Fingerprint, SkillDigest]] = field(default_factory=dict)
    _scans: dict[str, tuple[Fingerprint, list[Finding]]] = field(default_factory=dict)

    @classmethod
    def create(
        cls,
        lockfile: str | os.PathLike[str] | Lockfile | None,
        policy: ScanPolicy | None,
        untrusted: frozenset[str],
    ) -> TrustGate:
        """Load the lockfile (a missing or bad one holds every skill back, with a diagnostic)."""
        problem = None
        lock: Lockfile | None
        if lockfile is None or isinstance(lockfile, Lockfile):
            lock = lockfile
        else:
            try:
                lock = Lockfile.load(lockfile)
            except LockfileError as exc:
                lock = Lockfile({}, None)
                problem = Diagnostic(
                    "lock.unreadable",
                    "error",
                    f"{exc}; every skill is held back until it is approved",
                    None,
                    os.fspath(lockfile),
                )
        return cls(lock, policy or ScanPolicy(), untrusted, problem)

    def review(self, winners: Mapping[str, Skill]) -> Review:
        """Decide, for each winning skill, whether it is held back or served with notes.

        The repository applies the decision; the gate never edits its state.
        """
        self.held = {}
        held: dict[str, tuple[Diagnostic, ...]] = {}
        notes_by_name: dict[str, tuple[Diagnostic, ...]] = {}
        for name, skill in winners.items():
            walk = walk_skill(skill.directory)
            problems: list[Diagnostic] = []
            notes: list[Diagnostic] = []
            if skill.root in self.untrusted:
                for finding in self._scan(skill.directory, walk):
                    # A hard link from an untrusted source is never served, whatever the
                    # policy: the bytes may be any file of this machine.
                    blocking = self.policy.action == "block" or finding.code in _ALWAYS_HELD
                    diag = finding.to_diagnostic(skill.directory, quarantined=blocking)
                    (problems if diag.severity == "error" else notes).append(diag)
            if self.lockfile is not None:
                drift = self.lockfile.check(skill, self._digest(skill.directory, walk))
                if drift is not None:
                    code = "lock.unlisted" if drift.kind == "unlisted" else "lock.drift"
                    message = f"Skill {name!r}: {drift.summary()}"
                    problems.append(Diagnostic(code, "error", message, None, skill.directory))
            if problems:
                self.held[name] = skill
                held[name] = (*problems, *notes)
            elif notes:
                notes_by_name[name] = tuple(notes)
        extra = (self.lock_problem,) if self.lock_problem is not None else ()
        return Review(held, notes_by_name, extra)

    def approve(
        self, names: Iterable[str], visible: dict[str, Skill], root_dirs: dict[str, str]
    ) -> None:
        """Record the current content of ``names`` in the lockfile (and save it, if it has a path).

        Raises:
            SkillNotFoundError: A name is neither held back nor visible.
        """
        assert self.lockfile is not None
        for name in names:
            skill = self.held.get(name) or visible.get(name)
            if skill is None:
                raise SkillNotFoundError(name, sorted(self.held))
            self.lockfile.entries[name] = LockEntry.of(skill, root_dirs.get(skill.root))
            self._digests.pop(skill.directory, None)
        self.lock_problem = None
        if self.lockfile.path is not None:
            self.lockfile.save()

    def _scan(self, directory: str, walk: SkillWalk) -> list[Finding]:
        fingerprint = walk.fingerprint()
        cached = self._scans.get(directory)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        findings = scan_walk(walk)
        self._scans[directory] = (fingerprint, findings)
        return findings

    def _digest(self, directory: str, walk: SkillWalk) -> SkillDigest:
        fingerprint = walk.fingerprint()
        cached = self._digests.get(directory)
        if cached is not None and cached[0] == fingerprint:
            return cached[1]
        content = digest_walk(walk)
        self._digests[directory] = (fingerprint, content)
        return content

"""What a scan reports besides the usable skills, and what a refresh changed."""

from __future__ import annotations

from dataclasses import dataclass

from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.skills.skill import Skill

__all__ = ["Changes", "Ignored", "Shadowed", "Skipped"]


@dataclass(frozen=True, slots=True)
class Shadowed:
    """A skill hidden by an earlier skill of the same name.

    Attributes:
        skill: The hidden copy.
        winner: The directory of the copy that is used.
    """

    skill: Skill
    winner: str


@dataclass(frozen=True, slots=True)
class Skipped:
    """A SKILL.md that could not be made into a usable skill.

    Attributes:
        path: The SKILL.md file.
        root: The root it was found under.
        diagnostics: Why (at least one error).
        name: The name of a skill the trust gate holds back; None for a SKILL.md that is
            not valid (its name may be what made it invalid, so it is not echoed).
        held: True for a valid skill held back by the trust gate (quarantined by the scanner
            or drifted from the lockfile).
    """

    path: str
    root: str
    diagnostics: tuple[Diagnostic, ...]
    name: str | None = None
    held: bool = False

    @property
    def reason(self) -> str:
        """The first error's message."""
        errors = [d for d in self.diagnostics if d.severity == "error"] or list(self.diagnostics)
        return errors[0].message if errors else "unusable"


@dataclass(frozen=True, slots=True)
class Ignored:
    """A candidate discovery did not make a skill of, and why (not an error of a skill).

    Attributes:
        path: The file concerned (a ``SKILL.MD``, a dangling link, a nested SKILL.md, the
            SKILL.md of a folder reached a second time).
        root: The root it was found under.
        code: ``discovery.wrong_case``, ``discovery.dangling``, ``discovery.same_folder`` or
            ``discovery.nested``.
        reason: Why, for people.
        severity: ``warning`` for what its author surely meant as a skill (a wrong-case name,
            a dangling link), ``info`` otherwise.
    """

    path: str
    root: str
    code: str
    reason: str
    severity: Severity = "info"

    def diagnostic(self) -> Diagnostic:
        """The same, as a diagnostic of the file."""
        return Diagnostic(self.code, self.severity, self.reason, None, self.path)


@dataclass(frozen=True, slots=True)
class Changes:
    """What a :meth:`Repository.refresh` changed, by skill name."""

    added: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added or self.changed or self.removed)

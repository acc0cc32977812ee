"""Diagnostics: findings about a skill, each with a stable code.

Codes are dotted, ``<subject>.<problem>`` (``name.case``, ``description.too_long``), and never
change meaning once released: tests, CI gates and editors key on them. Messages are for people.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

__all__ = ["Diagnostic", "Severity", "has_errors"]

Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One finding about a skill or a root.

    Attributes:
        code: Stable machine-readable code, e.g. ``"name.case"``.
        severity: ``"error"`` makes a skill invalid; ``"warning"`` and ``"info"`` do not.
        message: Human-readable explanation (in strict mode it carries skills-ref's wording).
        field: The frontmatter key concerned, if any.
        path: The file or directory concerned, if any.
        line: 1-based line in ``path`` where the problem is, if known.
    """

    code: str
    severity: Severity
    message: str
    field: str | None = None
    path: str | None = None
    line: int | None = None

    def to_dict(self) -> dict[str, object]:
        """Return a JSON-ready mapping (``None`` members included, for a stable shape)."""
        return {
            "code": self.code,
            "severity": self.severity,
            "field": self.field,
            "message": self.message,
            "path": self.path,
            "line": self.line,
        }

    def __str__(self) -> str:
        where = ""
        if self.path:
            where = f"{self.path}:{self.line}: " if self.line else f"{self.path}: "
        return f"{where}{self.severity} [{self.code}] {self.message}"


def has_errors(diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]) -> bool:
    """Return True when any diagnostic is an error."""
    return any(d.severity == "error" for d in diagnostics)

"""Validating skill folders and roots: one report per SKILL.md found."""

from __future__ import annotations

import os
from dataclasses import dataclass

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Mode
from skillshelf.skills.discovery import DEFAULT_MAX_DEPTH, DEFAULT_MAX_DIRS, WalkOptions, walk_root
from skillshelf.skills.skill import SKILL_MD_NAMES

__all__ = ["ValidationReport", "validate_path"]


@dataclass(frozen=True, slots=True)
class ValidationReport:
    """The verdict on one skill folder (or on a path that holds no skill).

    Attributes:
        path: The skill folder (or the path given, when it holds no skill).
        name: The skill's name, when the frontmatter has a usable one.
        diagnostics: Everything found, errors first.
        valid: The verdict of :func:`~skillshelf.core.verdict.is_valid` for a skill folder
            (the one every face applies); for a path that holds no skill, False; for the
            walk's own findings about a root, whether none is an error.
    """

    path: str
    name: str | None
    diagnostics: tuple[Diagnostic, ...]
    valid: bool

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``skillshelf validate --json``."""
        return {
            "path": self.path,
            "name": self.name,
            "valid": self.valid,
            "diagnostics": [d.to_dict() for d in self.diagnostics],
        }


def validate_path(
    path: str | os.PathLike[str],
    *,
    mode: Mode = "lenient",
    include_hidden: bool = False,
    max_depth: int = DEFAULT_MAX_DEPTH,
    max_dirs: int = DEFAULT_MAX_DIRS,
) -> list[ValidationReport]:
    """Validate a skill folder, a SKILL.md file, or every skill under a root.

    Returns:
        One report per SKILL.md found, in walk order; a single failing report when the path
        does not exist or holds no skill.
    """
    given = os.fspath(path)
    target = os.path.abspath(given)
    if os.path.isfile(target) and os.path.basename(target).lower() == "skill.md":
        target = os.path.dirname(target)
    if not os.path.exists(target):
        return [_fail(given, "path.missing", f"Path does not exist: {given}")]
    if not os.path.isdir(target):
        return [_fail(given, "path.not_dir", f"Not a directory: {given}")]
    options = WalkOptions(
        mode=mode,
        include_hidden=include_hidden,
        max_depth=max_depth,
        max_dirs=max_dirs,
        full_read=True,
    )
    result = walk_root(target, options)
    # Without an index every SKILL.md is parsed on this walk, so ``parsed`` is always set.
    reports = [
        ValidationReport(
            os.path.dirname(found.skill_md),
            found.parsed.manifest.name if found.parsed.manifest else None,
            found.parsed.diagnostics,
            found.parsed.valid,
        )
        for found in result.found
        if found.parsed is not None
    ]
    reports = _mark_duplicates(reports)
    if not reports:
        has_md = any(os.path.exists(os.path.join(target, n)) for n in SKILL_MD_NAMES)
        message = "Missing required file: SKILL.md"
        if not has_md:
            message += " (and no skill folders below it)"
        reports.append(_fail(given, "file.missing", message, extra=result.diagnostics))
    elif result.diagnostics:
        root_ok = all(d.severity != "error" for d in result.diagnostics)
        reports.append(ValidationReport(given, None, tuple(result.diagnostics), root_ok))
    return reports


def _fail(
    path: str, code: str, message: str, *, extra: list[Diagnostic] | None = None
) -> ValidationReport:
    diag = Diagnostic(code, "error", message, None, path)
    return ValidationReport(path, None, (diag, *(extra or [])), False)


def _mark_duplicates(reports: list[ValidationReport]) -> list[ValidationReport]:
    first: dict[str, str] = {}
    out: list[ValidationReport] = []
    for report in reports:
        if report.name is not None and report.name in first:
            diag = Diagnostic(
                "name.duplicate",
                "warning",
                f"Skill name {report.name!r} is also used by {first[report.name]}; "
                "the first one found wins",
                "name",
                report.path,
            )
            report = ValidationReport(
                report.path, report.name, (*report.diagnostics, diag), report.valid
            )
        elif report.name is not None:
            first[report.name] = report.path
        out.append(report)
    return out

"""The lint data model: rules (code, severity, summary), subjects, findings, reports."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from skillshelf.core.diagnostics import Severity

__all__ = [
    "RULES",
    "LintFinding",
    "LintReport",
    "LintSubject",
    "Rule",
    "ScriptImport",
    "finding",
    "sort_key",
]


@dataclass(frozen=True, slots=True)
class Rule:
    """One lint check.

    Attributes:
        code: Stable dotted code, e.g. ``"description.no_trigger"``.
        severity: ``"error"`` fails ``skillshelf lint``; ``"warning"`` fails it with ``--strict``.
        summary: What the check looks for, in one line (shown by ``--list-rules``).
    """

    code: str
    severity: Severity
    summary: str


_RULE_LIST: Final = (
    Rule("skill.invalid", "error", "SKILL.md does not load (see `skillshelf validate`)"),
    Rule("description.no_trigger", "warning", "description never says when to use the skill"),
    Rule("description.too_short", "warning", "description too short to say what and when"),
    Rule("description.too_long", "warning", "description long enough to crowd the catalog"),
    Rule("description.person", "info", "description written in first or second person"),
    Rule(
        "description.duplicate",
        "warning",
        "descriptions nearly the same (one finding per group, naming what varies)",
    ),
    Rule("name.abstract", "warning", "name is a generic noun, not an action and an object"),
    Rule("name.similar", "info", "names a typo apart (one finding per group)"),
    Rule("body.too_many_lines", "warning", "SKILL.md body over the recommended line count"),
    Rule("body.too_many_tokens", "warning", "SKILL.md body over the recommended token count"),
    Rule("references.too_deep", "warning", "a referenced document links to yet another one"),
    Rule("link.broken", "error", "relative Markdown link to a file the skill does not have"),
    Rule("link.outside", "error", "relative link leading outside the skill folder"),
    Rule("script.missing", "error", "script the body runs as a skill file, but the skill lacks"),
    Rule(
        "script.unverified",
        "info",
        "script the body runs that the skill lacks, maybe from elsewhere (./tool.sh, a clone)",
    ),
    Rule(
        "script.import_unavailable",
        "warning",
        "a Python script imports a module neither in the standard library nor installed here",
    ),
    Rule(
        "script.unparsable",
        "warning",
        "a Python script nested too deeply for Python's parser (it cannot run)",
    ),
    Rule("file.missing", "warning", "resource path mentioned in the body but not in the skill"),
    Rule("tools.not_granted", "warning", "body needs a tool that allowed-tools does not grant"),
    Rule("tools.not_a_tool", "warning", "allowed-tools/tools entry that is not a tool (an agent)"),
)
RULES: Final[Mapping[str, Rule]] = {rule.code: rule for rule in _RULE_LIST}


@dataclass(frozen=True, slots=True)
class ScriptImport:
    """A top-level module a script of the skill imports.

    Attributes:
        file: The script, relative to the skill folder.
        line: The line of the import.
        module: The top-level module name (``PIL`` for ``from PIL import Image``).
    """

    file: str
    line: int
    module: str


@dataclass(frozen=True, slots=True)
class LintSubject:
    """What the checks read about one skill; build it with :func:`subject_from_skill`.

    Only ``name`` and ``description`` are required: checks whose input is missing (``None``)
    are skipped, so a catalog of names and descriptions can be linted without a filesystem.

    Attributes:
        name: The skill's name.
        description: Its description.
        directory: The skill folder, used to build finding paths ("" keeps them relative).
        skill_md: The SKILL.md file name within ``directory``.
        body: The Markdown body, or None to skip the body checks.
        body_line: The SKILL.md line the body starts on (for line numbers in findings).
        description_line: The SKILL.md line of the ``description`` key, if known.
        allowed_tools: The ``allowed-tools`` entries, or None when the key is not declared
            (or declares only entries that are not tools).
        not_tools: Entries of ``allowed-tools`` (or its aliases) that are not in the tool
            grammar, e.g. agent names under ``tools:``.
        when_to_use: The ``when_to_use`` extension, read with the description.
        files: Every file and folder in the skill as POSIX paths relative to it, or None
            to skip the checks that need the file list.
        docs: Text of the skill's Markdown documents by relative path (SKILL.md excluded).
        escaping: Relative paths that are symbolic links leading outside the skill.
        unavailable_imports: Top-level modules the skill's Python scripts import that are
            neither in the standard library nor importable where lint runs (modules the skill
            ships itself are filtered out by the check, from ``files``).
        unparsable_scripts: Python scripts (relative paths) nested too deeply for Python's
            parser.
    """

    name: str
    description: str
    directory: str = ""
    skill_md: str = "SKILL.md"
    body: str | None = None
    body_line: int = 1
    description_line: int | None = None
    allowed_tools: tuple[str, ...] | None = None
    not_tools: tuple[str, ...] = ()
    when_to_use: str | None = None
    files: frozenset[str] | None = None
    docs: Mapping[str, str] = field(default_factory=dict)
    escaping: frozenset[str] = frozenset()
    unavailable_imports: tuple[ScriptImport, ...] = ()
    unparsable_scripts: tuple[str, ...] = ()

    def path_of(self, relative: str) -> str:
        """The path a finding shows for a file of this skill."""
        return os.path.join(self.directory, relative) if self.directory else relative


@dataclass(frozen=True, slots=True)
class LintFinding:
    """One lint finding.

    Attributes:
        code: The rule's code (a key of :data:`RULES`).
        severity: The rule's severity.
        skill: The skill's name (for an unloadable skill: its folder's name).
        message: What is wrong, for people.
        hint: How to fix it.
        path: The file concerned (absolute when the subject had a directory).
        line: 1-based line in ``path``, if known.
        related: Other skills involved (the other half of a duplicate pair).
    """

    code: str
    severity: Severity
    skill: str
    message: str
    hint: str
    path: str | None = None
    line: int | None = None
    related: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping with a stable shape."""
        return {
            "code": self.code,
            "severity": self.severity,
            "skill": self.skill,
            "path": self.path,
            "line": self.line,
            "message": self.message,
            "hint": self.hint,
            "related": list(self.related),
        }


def finding(
    code: str,
    subject: LintSubject,
    message: str,
    hint: str,
    *,
    file: str | None = None,
    line: int | None = None,
    related: tuple[str, ...] = (),
) -> LintFinding:
    """A finding of rule ``code`` about ``subject`` (``file`` defaults to its SKILL.md)."""
    path = subject.path_of(file or subject.skill_md)
    return LintFinding(code, RULES[code].severity, subject.name, message, hint, path, line, related)


# Findings about a group of skills: ``related`` holds the other members.
_GROUP_CODES: Final = frozenset({"description.duplicate", "name.similar"})
_SEVERITY_ORDER: Final = {"error": 0, "warning": 1, "info": 2}


@dataclass(frozen=True, slots=True)
class LintReport:
    """The outcome of linting a set of skills.

    Attributes:
        findings: Sorted by skill, then file, line and code.
        skills_checked: How many skills were linted.
        notes: Remarks about the run itself (e.g. a comparison budget that ran out).
    """

    findings: tuple[LintFinding, ...]
    skills_checked: int
    notes: tuple[str, ...] = ()

    def count(self, severity: Severity) -> int:
        """Number of findings of one severity."""
        return sum(1 for f in self.findings if f.severity == severity)

    def failed(self, *, strict: bool = False) -> bool:
        """True when an error was found (or, with ``strict``, a warning)."""
        failing = ("error", "warning") if strict else ("error",)
        return any(f.severity in failing for f in self.findings)

    def summary(self) -> dict[str, int]:
        """Counts: skills checked, skills with findings, and findings per severity.

        A member of a group finding (near-duplicate descriptions, look-alike names) counts
        as a skill with a finding, though the group is reported once.
        """
        involved = {f.skill for f in self.findings}
        involved.update(n for f in self.findings if f.code in _GROUP_CODES for n in f.related)
        return {
            "skills": self.skills_checked,
            "skills_with_findings": len(involved),
            "error": self.count("error"),
            "warning": self.count("warning"),
            "info": self.count("info"),
        }

    def to_dict(self) -> dict[str, object]:
        """The JSON shape of ``skillshelf lint --json``."""
        return {
            "findings": [f.to_dict() for f in self.findings],
            "summary": self.summary(),
            "notes": list(self.notes),
        }


def sort_key(finding: LintFinding) -> tuple[object, ...]:
    """Order findings by skill, SKILL.md before other files, line, severity, code."""
    path = finding.path or ""
    not_skill_md = os.path.basename(path).lower() != "skill.md"
    return (
        finding.skill,
        not_skill_md,
        path,
        finding.line or 0,
        _SEVERITY_ORDER[finding.severity],
        finding.code,
        finding.related,
    )

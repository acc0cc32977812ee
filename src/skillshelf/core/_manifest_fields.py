"""The frontmatter fields a manifest reads — names, aliases, limits — and the collector their
checks report diagnostics into."""

from __future__ import annotations

from typing import Final

from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.core.frontmatter import Frontmatter, Mode
from skillshelf.core.verdict import rule_severity

__all__ = [
    "ALIASES",
    "DESCRIPTION_STAND_INS",
    "EXTENSION_FIELDS",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "SPEC_FIELDS",
    "FieldCollector",
]

MAX_NAME_LENGTH: Final = 64
MAX_DESCRIPTION_LENGTH: Final = 1024
MAX_COMPATIBILITY_LENGTH: Final = 500

SPEC_FIELDS: Final = frozenset(
    {"name", "description", "license", "allowed-tools", "metadata", "compatibility"}
)
# Claude Code's and Agent Zero's keys, understood in lenient mode.
EXTENSION_FIELDS: Final = frozenset(
    {
        "disable-model-invocation",
        "user-invocable",
        "argument-hint",
        "when_to_use",
        "version",
        "tags",
        "triggers",
        "trigger",
        "trigger_patterns",
        "allowed_tools",
        "tools",
        "summary",
        "context",
        "agent",
    }
)
# Lenient mode reads these, in this order, as the description when it is missing or empty.
DESCRIPTION_STAND_INS: Final = ("when_to_use", "summary")
# alias → canonical key
ALIASES: Final = {
    "trigger": "triggers",
    "trigger_patterns": "triggers",
    "allowed_tools": "allowed-tools",
    "tools": "allowed-tools",
}


class FieldCollector:
    """The diagnostics of one frontmatter's fields, each at the line of its field."""

    def __init__(self, fm: Frontmatter, mode: Mode, path: str | None) -> None:
        self.fm = fm
        self.mode = mode
        self.path = path
        self.items: list[Diagnostic] = []

    def add(self, code: str, severity: Severity, message: str, field: str | None = None) -> None:
        line = self.fm.lines.get(field) if field else None
        self.items.append(Diagnostic(code, severity, message, field, self.path, line))

    def rule(self, code: str, message: str, field: str | None = None) -> None:
        """A skills-ref rule broken: its severity depends on the mode."""
        self.add(code, rule_severity(code, mode=self.mode), message, field)

"""The one validity verdict: whether a skill is valid (and so usable) in a mode.

Every face asks this module — ``skillshelf validate``, discovery and the repository (and so
``list``, ``prompt``, ``serve`` and the model's tools) — so a skill that one face accepts is
never one another rejects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from skillshelf.core.diagnostics import Diagnostic, Severity

if TYPE_CHECKING:
    from skillshelf.core.frontmatter import Mode

__all__ = ["LENIENT_WARNINGS", "is_valid", "rule_severity"]

# skills-ref's rules that real collections break while their skills still work: errors in
# strict mode, warnings in lenient mode (a plugin skill named "Agent Development" in a folder
# called agent-development, a 1,500-character description, Claude Code's extra keys).
LENIENT_WARNINGS: Final = frozenset(
    {
        "field.unknown",
        "name.case",
        "name.chars",
        "name.hyphen_edge",
        "name.consecutive_hyphens",
        "name.too_long",
        "name.dir_mismatch",
        "description.too_long",
        "compatibility.type",
        "compatibility.too_long",
    }
)


def rule_severity(code: str, *, mode: Mode) -> Severity:
    """The severity of breaking a skills-ref rule, by its diagnostic code, in ``mode``."""
    return "warning" if mode == "lenient" and code in LENIENT_WARNINGS else "error"


def is_valid(manifest: object | None, diagnostics: Sequence[Diagnostic], *, mode: Mode) -> bool:
    """Whether a skill is valid in ``mode``: the one rule every face applies.

    * **strict** — exactly skills-ref's rules: the frontmatter parses, and no diagnostic is an
      error (a malformed or over-long name, a name that differs from its folder, an over-long
      description or compatibility, any key outside the specification).
    * **lenient** (the runtime default) — what a model can use: SKILL.md is readable text under
      the size cap, its frontmatter parses as YAML (safe loader) into a mapping, ``name`` is a
      non-empty string that is safe as a path segment and a command word (no control
      characters, no ``/`` or ``\\``, not only dots), and ``description`` is a non-empty string.
      Everything else — the :data:`LENIENT_WARNINGS` rules above, unknown keys, odd metadata
      values, an empty body — is at most a warning, never a failure.

    Args:
        manifest: The :class:`~skillshelf.core.manifest.Manifest` built from the frontmatter
            (None when it could not be built; only its presence matters here).
        diagnostics: Everything found about the skill, in any mode: a strict-mode error that
            lenient mode tolerates does not fail a lenient verdict.
        mode: Whose rules to apply.
    """
    if manifest is None:
        return False
    return not any(
        d.severity == "error" and rule_severity(d.code, mode=mode) == "error" for d in diagnostics
    )

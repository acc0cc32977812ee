"""skills-ref 0.1.1's public API, implemented on skillshelf's core.

A drop-in for code written against the reference library: the same names, signatures, exception
classes, return values and error messages, in the same order. skills-ref spreads its API over
``skills_ref.errors``, ``.models``, ``.parser``, ``.validator`` and ``.prompt``; here every name
lives in this one module, and :data:`SKILLS_REF_MODULES` lists which names each of those
modules has, so a shim package can re-export them module by module::

    # skills_ref/parser.py
    from skillshelf.compat.skills_ref import find_skill_md, parse_frontmatter, read_properties

Frontmatter is parsed by :func:`skillshelf.core.frontmatter.parse_frontmatter` in strict mode and
checked by :func:`skillshelf.core.manifest.build_manifest` in strict mode; neither strictyaml nor
skills-ref is imported.

The one intended difference: a SKILL.md that is not valid UTF-8 makes skills-ref crash with
``UnicodeDecodeError``; here :func:`read_properties` and :func:`to_prompt` raise
:class:`ParseError` and :func:`validate` returns the message.

Differences in wording only (the same files are refused):

* After ``"Invalid YAML in frontmatter: "`` skills-ref quotes strictyaml's multi-line parser
  report; here the explanation is skillshelf's.
* A frontmatter that is nothing but a ``|``/``>`` block scalar with unindented lines is "not a
  mapping" for skills-ref (strictyaml reads it as a YAML 1.2 top-level scalar) and invalid YAML
  here.

A plain ``<<`` value, which strictyaml returns as an object rather than a string, comes back
from :func:`parse_frontmatter` as an empty list; it fails the same string checks.
"""

from __future__ import annotations

import html
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

from skillshelf.core.frontmatter import Frontmatter, FrontmatterError, decode_skill_md
from skillshelf.core.frontmatter import parse_frontmatter as _parse_frontmatter
from skillshelf.core.manifest import (
    MAX_COMPATIBILITY_LENGTH,
    SPEC_FIELDS,
    build_manifest,
)
from skillshelf.core.manifest import MAX_DESCRIPTION_LENGTH as _MAX_DESCRIPTION_LENGTH
from skillshelf.core.manifest import MAX_NAME_LENGTH as _MAX_NAME_LENGTH
from skillshelf.errors import SkillshelfError
from skillshelf.skills.skill import SKILL_MD_NAMES, read_skill_md

__all__ = [
    "ALLOWED_FIELDS",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_SKILL_NAME_LENGTH",
    "SKILLS_REF_MODULES",
    "SKILLS_REF_VERSION",
    "ParseError",
    "SkillError",
    "SkillProperties",
    "ValidationError",
    "find_skill_md",
    "parse_frontmatter",
    "read_properties",
    "to_prompt",
    "validate",
    "validate_metadata",
]

SKILLS_REF_VERSION: Final = "0.1.1"
MAX_SKILL_NAME_LENGTH: Final = _MAX_NAME_LENGTH
MAX_DESCRIPTION_LENGTH: Final = _MAX_DESCRIPTION_LENGTH
ALLOWED_FIELDS: Final[set[str]] = set(SPEC_FIELDS)

# skills-ref's module → the names it defines or imports (what `from skills_ref.<module> import X`
# finds there). "__init__" is the package itself.
SKILLS_REF_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "__init__": (
        "SkillError",
        "ParseError",
        "ValidationError",
        "SkillProperties",
        "find_skill_md",
        "validate",
        "read_properties",
        "to_prompt",
    ),
    "errors": ("SkillError", "ParseError", "ValidationError"),
    "models": ("SkillProperties",),
    "parser": (
        "ParseError",
        "ValidationError",
        "SkillProperties",
        "find_skill_md",
        "parse_frontmatter",
        "read_properties",
    ),
    "validator": (
        "MAX_SKILL_NAME_LENGTH",
        "MAX_DESCRIPTION_LENGTH",
        "MAX_COMPATIBILITY_LENGTH",
        "ALLOWED_FIELDS",
        "ParseError",
        "find_skill_md",
        "parse_frontmatter",
        "validate_metadata",
        "validate",
    ),
    "prompt": ("find_skill_md", "read_properties", "to_prompt"),
}


class SkillError(SkillshelfError):
    """Base exception for all skill-related errors."""


class ParseError(SkillError):
    """Raised when SKILL.md parsing fails."""


class ValidationError(SkillError):
    """Raised when skill properties are invalid.

    Attributes:
        errors: List of validation error messages (may contain just one).
    """

    def __init__(self, message: str, errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.errors = errors if errors is not None else [message]


@dataclass
class SkillProperties:
    """Properties parsed from a skill's SKILL.md frontmatter.

    As in skills-ref, the optional members hold whatever the frontmatter had (``metadata`` may
    be None or a string when the SKILL.md says so); use skillshelf's own API for typed values.

    Attributes:
        name: Skill name in kebab-case (required).
        description: What the skill does and when the model should use it (required).
        license: License for the skill (optional).
        compatibility: Compatibility information for the skill (optional).
        allowed_tools: Tool patterns the skill requires (optional, experimental).
        metadata: Key-value pairs for client-specific properties (defaults to an empty dict;
            omitted from ``to_dict()`` output when empty).
    """

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    allowed_tools: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        """Convert to a dictionary, leaving out None values (and empty metadata)."""
        result: dict[str, Any] = {"name": self.name, "description": self.description}
        if self.license is not None:
            result["license"] = self.license
        if self.compatibility is not None:
            result["compatibility"] = self.compatibility
        if self.allowed_tools is not None:
            result["allowed-tools"] = self.allowed_tools
        if self.metadata:
            result["metadata"] = self.metadata
        return result


def find_skill_md(skill_dir: Path) -> Path | None:
    """Return the skill directory's ``SKILL.md`` (preferred) or ``skill.md``, else None."""
    for name in SKILL_MD_NAMES:
        path = skill_dir / name
        if path.exists():
            return path
    return None


def parse_frontmatter(content: str) -> tuple[dict[str, Any], str]:
    """Parse the YAML frontmatter of SKILL.md content.

    Returns:
        ``(metadata, body)``: the frontmatter mapping (scalars are strings; the values of a
        ``metadata`` mapping are ``str()``-ed) and the stripped Markdown body.

    Raises:
        ParseError: The frontmatter is missing, unclosed, invalid YAML or not a mapping.
    """
    try:
        fm = _parse_frontmatter(content, mode="strict")
    except FrontmatterError as exc:
        raise ParseError(exc.message) from None
    metadata: dict[str, Any] = dict(fm.data)
    extra = metadata.get("metadata")
    if isinstance(extra, dict):
        metadata["metadata"] = {str(k): str(v) for k, v in extra.items()}
    return metadata, fm.body


def read_properties(skill_dir: Path) -> SkillProperties:
    """Read skill properties from SKILL.md frontmatter, without full validation.

    Raises:
        ParseError: SKILL.md is missing, not UTF-8, or its frontmatter cannot be parsed.
        ValidationError: ``name`` or ``description`` is missing or empty.
    """
    skill_dir = Path(skill_dir)
    skill_md = find_skill_md(skill_dir)
    if skill_md is None:
        raise ParseError(f"SKILL.md not found in {skill_dir}")
    metadata, _ = parse_frontmatter(_read_text(skill_md))
    if "name" not in metadata:
        raise ValidationError("Missing required field in frontmatter: name")
    if "description" not in metadata:
        raise ValidationError("Missing required field in frontmatter: description")
    name = metadata["name"]
    description = metadata["description"]
    if not isinstance(name, str) or not name.strip():
        raise ValidationError("Field 'name' must be a non-empty string")
    if not isinstance(description, str) or not description.strip():
        raise ValidationError("Field 'description' must be a non-empty string")
    return SkillProperties(
        name=name.strip(),
        description=description.strip(),
        license=metadata.get("license"),
        compatibility=metadata.get("compatibility"),
        allowed_tools=metadata.get("allowed-tools"),
        # skills-ref passes this through unchecked (None when absent); so does the drop-in.
        metadata=metadata.get("metadata"),  # type: ignore[arg-type]
    )


def validate_metadata(metadata: dict[str, Any], skill_dir: Path | None = None) -> list[str]:
    """Validate an already-parsed frontmatter mapping.

    Args:
        metadata: The frontmatter mapping, as :func:`parse_frontmatter` returns it.
        skill_dir: The skill directory, for the name/directory check (None skips it).

    Returns:
        Validation error messages; an empty list means valid.
    """
    dir_name = skill_dir.name if skill_dir else None
    _, diagnostics = build_manifest(
        Frontmatter(data=metadata, body=""), dir_name=dir_name, mode="strict"
    )
    return [d.message for d in diagnostics if d.severity == "error"]


def validate(skill_dir: Path) -> list[str]:
    """Validate a skill directory.

    Returns:
        Validation error messages; an empty list means valid.
    """
    skill_dir = Path(skill_dir)
    if not skill_dir.exists():
        return [f"Path does not exist: {skill_dir}"]
    if not skill_dir.is_dir():
        return [f"Not a directory: {skill_dir}"]
    skill_md = find_skill_md(skill_dir)
    if skill_md is None:
        return ["Missing required file: SKILL.md"]
    try:
        metadata, _ = parse_frontmatter(_read_text(skill_md))
    except ParseError as exc:
        return [str(exc)]
    return validate_metadata(metadata, skill_dir)


def to_prompt(skill_dirs: list[Path]) -> str:
    """Render the ``<available_skills>`` XML block for an agent's system prompt.

    Raises:
        ParseError: A skill's SKILL.md is missing or cannot be parsed.
        ValidationError: A skill's name or description is missing or empty.
    """
    if not skill_dirs:
        return "<available_skills>\n</available_skills>"
    lines = ["<available_skills>"]
    for given in skill_dirs:
        skill_dir = Path(given).resolve()
        props = read_properties(skill_dir)
        lines += ["<skill>", "<name>", html.escape(props.name), "</name>"]
        lines += ["<description>", html.escape(props.description), "</description>"]
        lines += ["<location>", str(find_skill_md(skill_dir)), "</location>", "</skill>"]
    lines.append("</available_skills>")
    return "\n".join(lines)


def _read_text(path: Path) -> str:
    """Read like skills-ref's ``read_text(encoding="utf-8")``, but refuse invalid UTF-8."""
    try:
        # The one SKILL.md reader: never blocks on a FIFO, never follows a link out.
        text, _ = decode_skill_md(read_skill_md(path, full=True)[0], mode="strict")
    except FrontmatterError as exc:
        raise ParseError(exc.message) from None
    return text

"""The skills-ref rules for the spec's fields: unknown keys, the name, the description and
compatibility (lenient mode's stand-in description and unsafe-name error included)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Mapping
from typing import Final

from skillshelf.core._manifest_fields import (
    DESCRIPTION_STAND_INS,
    EXTENSION_FIELDS,
    MAX_COMPATIBILITY_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_NAME_LENGTH,
    SPEC_FIELDS,
    FieldCollector,
)
from skillshelf.core.frontmatter import YamlValue

__all__ = [
    "MAX_COMBINING_RUN",
    "check_compatibility",
    "check_description",
    "check_fields",
    "check_name",
    "is_name_shaped",
    "is_plain_name",
]

_PLAIN_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
# Control, format (bidi overrides, zero-width), private-use, surrogate and unassigned characters
# and line/paragraph separators: they break a path, a URI or a command line, or make a name
# read as something it is not.
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_COMBINING: Final = frozenset({"Mn", "Me"})
# Real scripts stack at most a few marks on a letter after NFKC; "Zalgo" text stacks dozens.
MAX_COMBINING_RUN: Final = 3
_LENIENT_FIELDS: Final = SPEC_FIELDS | EXTENSION_FIELDS


def check_fields(data: Mapping[str, YamlValue], out: FieldCollector) -> None:
    allowed = SPEC_FIELDS if out.mode == "strict" else _LENIENT_FIELDS
    if data.keys() <= allowed:
        return
    extra = set(data) - allowed
    if extra:
        out.rule(
            "field.unknown",
            f"Unexpected fields in frontmatter: {', '.join(sorted(extra))}. "
            f"Only {sorted(SPEC_FIELDS)} are allowed.",
            sorted(extra)[0],
        )


def check_name(
    data: Mapping[str, YamlValue], dir_name: str | None, out: FieldCollector
) -> str | None:
    if "name" not in data:
        out.add("name.missing", "error", "Missing required field in frontmatter: name", "name")
        return None
    raw = data["name"]
    if not isinstance(raw, str) or not raw.strip():
        out.add("name.empty", "error", "Field 'name' must be a non-empty string", "name")
        return None
    if raw == dir_name and is_plain_name(raw):
        return raw  # the common case: an ASCII kebab-case name equal to its folder's
    name = unicodedata.normalize("NFKC", raw.strip())
    if len(name) > MAX_NAME_LENGTH:
        out.rule(
            "name.too_long",
            f"Skill name '{name}' exceeds {MAX_NAME_LENGTH} character limit ({len(name)} chars)",
            "name",
        )
    if name != name.lower():
        out.rule("name.case", f"Skill name '{name}' must be lowercase", "name")
    if name.startswith("-") or name.endswith("-"):
        out.rule("name.hyphen_edge", "Skill name cannot start or end with a hyphen", "name")
    if "--" in name:
        out.rule(
            "name.consecutive_hyphens",
            "Skill name cannot contain consecutive hyphens",
            "name",
        )
    if name.strip("-") and not is_name_shaped(name):
        out.rule(
            "name.chars",
            f"Skill name '{name}' contains invalid characters. "
            "Only letters, digits, and hyphens are allowed.",
            "name",
        )
        if out.mode == "lenient" and _unsafe_name(name):
            out.add(
                "name.unsafe",
                "error",
                f"Skill name {name!r} cannot name a folder or a command: it has a control or "
                "format character (bidi override, zero-width), a path separator or stacked "
                f"combining marks (more than {MAX_COMBINING_RUN} in a row), or is only dots",
                "name",
            )
    if dir_name is not None and unicodedata.normalize("NFKC", dir_name) != name:
        out.rule(
            "name.dir_mismatch",
            f"Directory name '{dir_name}' must match skill name '{name}'",
            "name",
        )
    return name


def is_plain_name(name: str) -> bool:
    """Whether ``name`` is an ASCII kebab-case name within the length limit: the common case,
    valid in every mode once it equals its folder's name."""
    return len(name) <= MAX_NAME_LENGTH and _PLAIN_NAME.fullmatch(name) is not None


def is_name_shaped(text: str) -> bool:
    """Whether ``text`` has only the characters of a conformant skill name: letters and digits
    of any script and hyphens (case, hyphen placement and length are other rules)."""
    letters = text.replace("-", "")
    return bool(letters) and letters.isalnum()


def _unsafe_name(name: str) -> bool:
    # The name becomes a workspace folder, a skill:// URI segment and a /command word.
    if not name.strip("."):
        return True
    run = 0
    for index, c in enumerate(name):
        category = unicodedata.category(c)
        if c in "/\\" or category in _UNSAFE_CATEGORIES:
            return True
        run = run + 1 if category in _COMBINING else 0
        if run > MAX_COMBINING_RUN or (run and index == 0):
            return True
    return False


def check_description(data: Mapping[str, YamlValue], out: FieldCollector) -> str | None:
    raw = data.get("description")
    if not (isinstance(raw, str) and raw.strip()) and out.mode == "lenient":
        stand_in = _description_stand_in(data, out)
        if stand_in is not None:
            return stand_in
    if "description" not in data:
        out.add(
            "description.missing",
            "error",
            "Missing required field in frontmatter: description",
            "description",
        )
        return None
    raw = data["description"]
    if not isinstance(raw, str) or not raw.strip():
        out.add(
            "description.empty",
            "error",
            "Field 'description' must be a non-empty string",
            "description",
        )
        return None
    if len(raw) > MAX_DESCRIPTION_LENGTH:
        out.rule(
            "description.too_long",
            f"Description exceeds {MAX_DESCRIPTION_LENGTH} character limit ({len(raw)} chars)",
            "description",
        )
    return raw.strip()


def _description_stand_in(data: Mapping[str, YamlValue], out: FieldCollector) -> str | None:
    for key in DESCRIPTION_STAND_INS:
        value = data.get(key)
        if isinstance(value, str) and value.strip():
            out.add(
                "description.stand_in",
                "warning",
                f"No description; using {key!r} as the description (strict mode refuses this)",
                key,
            )
            if len(value) > MAX_DESCRIPTION_LENGTH:
                out.rule(
                    "description.too_long",
                    f"Description exceeds {MAX_DESCRIPTION_LENGTH} character limit "
                    f"({len(value)} chars)",
                    key,
                )
            return value.strip()
    return None


def check_compatibility(data: Mapping[str, YamlValue], out: FieldCollector) -> str | None:
    if "compatibility" not in data:
        return None
    raw = data["compatibility"]
    if not isinstance(raw, str):
        out.rule("compatibility.type", "Field 'compatibility' must be a string", "compatibility")
        return None
    if len(raw) > MAX_COMPATIBILITY_LENGTH:
        out.rule(
            "compatibility.too_long",
            f"Compatibility exceeds {MAX_COMPATIBILITY_LENGTH} character limit ({len(raw)} chars)",
            "compatibility",
        )
    return raw

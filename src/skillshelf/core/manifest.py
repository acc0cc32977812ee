"""Frontmatter mapping → typed :class:`Manifest` plus diagnostics.

Two modes:

* ``strict`` reproduces skills-ref 0.1.1: the same inputs are errors, with the same key phrases
  in the messages, in the same order. Anything else worth saying is at most a warning, so the
  accept/reject decision never differs from the reference.
* ``lenient`` (the runtime default) understands the extensions real skills use and turns the
  skills-ref rules real collections break (name format, name/directory mismatch, lengths,
  unknown keys) into warnings. A name that is unsafe as a path segment or command word is an
  error. :func:`skillshelf.core.verdict.is_valid` is the rule that decides validity.

The manifest is None only without a usable name or description.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Final

from skillshelf.core.allowed_tools import is_tool_pattern
from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.core.frontmatter import Frontmatter, Mode, YamlValue
from skillshelf.core.verdict import rule_severity
from skillshelf.errors import clip

__all__ = [
    "ALIASES",
    "EXTENSION_FIELDS",
    "MAX_COMPATIBILITY_LENGTH",
    "MAX_DESCRIPTION_LENGTH",
    "MAX_NAME_LENGTH",
    "SPEC_FIELDS",
    "Manifest",
    "build_manifest",
    "is_name_shaped",
    "parse_allowed_tools",
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
_PLAIN_NAME: Final = re.compile(r"[a-z0-9]+(?:-[a-z0-9]+)*")
_PLAIN_FIELDS: Final = SPEC_FIELDS - {"allowed-tools"}
# Control, format (bidi overrides, zero-width), private-use, surrogate and unassigned characters
# and line/paragraph separators: they break a path, a URI or a command line, or make a name
# read as something it is not.
_UNSAFE_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Cn", "Zl", "Zp"})
_COMBINING: Final = frozenset({"Mn", "Me"})
# Real scripts stack at most a few marks on a letter after NFKC; "Zalgo" text stacks dozens.
MAX_COMBINING_RUN: Final = 3
# Characters shown as escapes in the text fields a model or a terminal reads.
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
_SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A version, a tag, a trigger or an argument hint is a phrase; the YAML size cap is not enough
# for fields skill_list prints whole for every skill.
MAX_PHRASE_CHARS: Final = 200
# Tags and triggers per skill: skill_list prints every tag of every skill.
MAX_PHRASES: Final = 64
_TRUE: Final = frozenset({"true", "yes", "on", "y"})
_FALSE: Final = frozenset({"false", "no", "off", "n"})


@dataclass(frozen=True, slots=True)
class Manifest:
    """The typed frontmatter of one skill.

    Attributes:
        name: The skill's name (NFKC-normalised, stripped).
        description: What the skill does and when to use it (stripped).
        license: Licence name or file, if given.
        compatibility: Environment requirements, if given.
        metadata: Client-specific key/value pairs; values are always strings.
        allowed_tools: Tool patterns the skill expects, e.g. ``("Bash(git:*)", "Read")``.
        allowed_tools_raw: ``allowed-tools`` exactly as written, when it was a string.
        not_tools: Entries under ``allowed-tools`` (or ``tools``…) that are not in the tool
            grammar, e.g. agent names; they restrict nothing.
        context: Claude Code's ``context``; ``fork`` runs the skill in a sub-agent when it
            is loaded.
        agent: Claude Code's ``agent``: which sub-agent runs a ``context: fork`` skill.
        disable_model_invocation: Only the user may invoke it (kept out of the catalog).
        user_invocable: The user may invoke it as ``/name``.
        argument_hint: Hint shown for ``/name`` arguments.
        when_to_use: Extra guidance on when the skill applies.
        version: The skill's version string.
        tags: Free-form tags.
        triggers: Phrases that should make the skill load.
        extra: Unknown keys, kept verbatim so nothing the author wrote is lost.
    """

    name: str
    description: str
    license: str | None = None
    compatibility: str | None = None
    metadata: dict[str, str] = field(default_factory=dict)
    allowed_tools: tuple[str, ...] = ()
    allowed_tools_raw: str | None = None
    not_tools: tuple[str, ...] = ()
    context: str | None = None
    agent: str | None = None
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str | None = None
    when_to_use: str | None = None
    version: str | None = None
    tags: tuple[str, ...] = ()
    triggers: tuple[str, ...] = ()
    extra: dict[str, YamlValue] = field(default_factory=dict)

    @property
    def author(self) -> str | None:
        """Who wrote the skill: ``metadata.author``, else a top-level ``author`` string (an
        unknown key, kept in :attr:`extra`); shown as the other phrases are (control and
        format characters as escapes, cut to ``MAX_PHRASE_CHARS``). None when neither is
        given."""
        raw = self.metadata.get("author") or self.extra.get("author")
        if not isinstance(raw, str) or not raw.strip():
            return None
        # Derived, not stored: the index cache keeps the manifest's fields as they are.
        return _cut_phrase(_escaped(raw.strip(), lines=False))


def parse_allowed_tools(value: str) -> tuple[str, ...]:
    """Split an ``allowed-tools`` string on spaces and commas outside parentheses.

    ``"Bash(git status:*) Read, Grep"`` → ``("Bash(git status:*)", "Read", "Grep")``.
    """
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        items.append("".join(current))
    return tuple(items)


class _Collector:
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


def build_manifest(
    fm: Frontmatter, *, dir_name: str | None, mode: Mode = "lenient", path: str | None = None
) -> tuple[Manifest | None, list[Diagnostic]]:
    """Validate a frontmatter mapping and build the manifest.

    Args:
        fm: The parsed frontmatter.
        dir_name: The skill directory's name, for the name/directory check (None skips it).
        mode: ``"strict"`` (skills-ref's rules) or ``"lenient"``.
        path: Path recorded in the diagnostics.

    Returns:
        The manifest (None when the skill has no usable name or description) and the
        diagnostics, skills-ref's errors first and in its order.
    """
    out = _Collector(fm, mode, path)
    data = fm.data
    _check_fields(data, out)
    name = _check_name(data, dir_name, out)
    description = _check_description(data, out)
    compatibility = _check_compatibility(data, out)
    for key, line in fm.requoted:
        message = (
            f"The value of {clip(key, 64, quoted=True)} holds an unquoted ': ', which is not "
            "valid YAML; it was read as if quoted. Quote it: strict mode and other tools "
            "refuse it"
        )
        out.items.append(Diagnostic("frontmatter.requoted", "warning", message, key, path, line))
    for key in fm.duplicate_keys:
        out.add(
            "frontmatter.duplicate_key",
            "warning",
            f"Key {key!r} is given twice; the last value is used",
            key,
        )
    if name is None or description is None:
        return None, out.items
    license_ = _optional_str(data, "license", out) if "license" in data else None
    metadata = _metadata(data, out) if "metadata" in data else {}
    # The C check every ordinary value passes, before any call.
    if not description.isprintable():
        description = _shown(description, "description", out, lines=True)
    if license_ is not None and not license_.isprintable():
        license_ = _shown(license_, "license", out, lines=False)
    if compatibility is not None and not compatibility.isprintable():
        compatibility = _shown(compatibility, "compatibility", out, lines=True)
    if data.keys() <= _PLAIN_FIELDS:
        # The common case: nothing beyond the spec's keys, so no extension to interpret.
        return Manifest(name, description, license_, compatibility, metadata), out.items
    manifest = Manifest(
        name=name,
        description=description,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        **_extensions(data, out),  # type: ignore[arg-type]
    )
    return _shown_extensions(manifest, out), out.items


def _escape_char(c: str) -> str:
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def _shown(value: str, key: str, out: _Collector, *, lines: bool) -> str:
    """``value`` with control and format characters shown as escapes (a warning says so).

    A line break in a one-line field, a bidi override or a zero-width character would let a
    field forge or hide structure in every list and catalog that prints it.
    """
    if value.isprintable():
        return value  # the C check every ordinary value passes
    shown = _escaped(value, lines=lines)
    if shown != value:
        out.add(
            "field.unsafe_chars",
            "warning",
            f"Field {key!r} has control or format characters (line breaks, bidi overrides, "
            "zero-width); they are shown as escapes",
            key,
        )
    return shown


def _escaped(value: str, *, lines: bool) -> str:
    """``value`` with control and format characters as escapes (line breaks and tabs kept
    when ``lines``)."""
    if value.isprintable():
        return value
    kept = "\n\t" if lines else ""
    return "".join(
        _escape_char(c)
        if c not in kept and not c.isprintable() and unicodedata.category(c) in _HIDDEN_CATEGORIES
        else c
        for c in value
    )


def _cut_phrase(value: str) -> str:
    return value if len(value) <= MAX_PHRASE_CHARS else value[: MAX_PHRASE_CHARS - 1] + "…"


def _shown_optional(value: str | None, key: str, out: _Collector, *, lines: bool) -> str | None:
    return None if value is None else _shown(value, key, out, lines=lines)


def _shown_phrase(value: str | None, key: str, out: _Collector) -> str | None:
    shown = _shown_optional(value, key, out, lines=False)
    if shown is None or len(shown) <= MAX_PHRASE_CHARS:
        return shown
    out.add(
        "field.too_long",
        "warning",
        f"Field {key!r} is {len(shown):,} characters; cut to {MAX_PHRASE_CHARS}",
        key,
    )
    return _cut_phrase(shown)


def _shown_phrases(values: tuple[str, ...], key: str, out: _Collector) -> tuple[str, ...]:
    if len(values) > MAX_PHRASES:
        out.add(
            "field.too_many",
            "warning",
            f"Field {key!r} has {len(values):,} entries; the first {MAX_PHRASES} are kept",
            key,
        )
        values = values[:MAX_PHRASES]
    return tuple(_shown_phrase(v, key, out) or "" for v in values)


def _shown_extensions(manifest: Manifest, out: _Collector) -> Manifest:
    return replace(
        manifest,
        argument_hint=_shown_phrase(manifest.argument_hint, "argument-hint", out),
        when_to_use=_shown_optional(manifest.when_to_use, "when_to_use", out, lines=True),
        agent=_shown_phrase(manifest.agent, "agent", out),
        version=_shown_phrase(manifest.version, "version", out),
        tags=_shown_phrases(manifest.tags, "tags", out),
        triggers=_shown_phrases(manifest.triggers, "triggers", out),
    )


_LENIENT_FIELDS: Final = SPEC_FIELDS | EXTENSION_FIELDS


def _check_fields(data: Mapping[str, YamlValue], out: _Collector) -> None:
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


def _check_name(data: Mapping[str, YamlValue], dir_name: str | None, out: _Collector) -> str | None:
    if "name" not in data:
        out.add("name.missing", "error", "Missing required field in frontmatter: name", "name")
        return None
    raw = data["name"]
    if not isinstance(raw, str) or not raw.strip():
        out.add("name.empty", "error", "Field 'name' must be a non-empty string", "name")
        return None
    if raw == dir_name and len(raw) <= MAX_NAME_LENGTH and _PLAIN_NAME.fullmatch(raw):
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


def _check_description(data: Mapping[str, YamlValue], out: _Collector) -> str | None:
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


def _description_stand_in(data: Mapping[str, YamlValue], out: _Collector) -> str | None:
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


def _check_compatibility(data: Mapping[str, YamlValue], out: _Collector) -> str | None:
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


def _optional_str(data: Mapping[str, YamlValue], key: str, out: _Collector) -> str | None:
    raw = data.get(key)
    if raw is None:
        return None
    if isinstance(raw, str):
        return raw
    out.add(
        f"{key.replace('-', '_')}.type",
        "warning",
        f"Field '{key}' should be a string; ignored",
        key,
    )
    return None


def _as_text(value: YamlValue) -> str:
    # default=str: callers of the skills-ref drop-in may hand over any Python values.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def _metadata(data: Mapping[str, YamlValue], out: _Collector) -> dict[str, str]:
    raw = data.get("metadata")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        out.add(
            "metadata.type", "warning", "Field 'metadata' should be a mapping; ignored", "metadata"
        )
        return {}
    bad = [k for k, v in raw.items() if not isinstance(v, str)]
    if not bad:
        return dict(raw)  # type: ignore[arg-type]
    out.add(
        "metadata.non_string",
        "warning",
        f"Metadata values should be strings; converted to text: {', '.join(bad)}",
        "metadata",
    )
    return {k: _as_text(v) for k, v in raw.items()}


def _str_list(data: Mapping[str, YamlValue], key: str, out: _Collector) -> tuple[str, ...]:
    raw = data.get(key)
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(p.strip() for p in raw.split(",") if p.strip())
    if isinstance(raw, list):
        return tuple(_as_text(v).strip() for v in raw if _as_text(v).strip())
    out.add("extension.type", "warning", f"Field '{key}' should be a list of strings; ignored", key)
    return ()


def _bool(data: Mapping[str, YamlValue], key: str, default: bool, out: _Collector) -> bool:
    raw = data.get(key)
    if raw is None:
        return default
    if isinstance(raw, str) and raw.strip().lower() in _TRUE:
        return True
    if isinstance(raw, str) and raw.strip().lower() in _FALSE:
        return False
    out.add(
        "extension.type", "warning", f"Field '{key}' should be true or false; using {default}", key
    )
    return default


def _alias_values(data: Mapping[str, YamlValue], canonical: str) -> list[YamlValue]:
    """Values of ``canonical`` and its aliases, in the order the author wrote them."""
    return [v for k, v in data.items() if ALIASES.get(k, k) == canonical]


def _phrases(data: Mapping[str, YamlValue], canonical: str, out: _Collector) -> tuple[str, ...]:
    phrases: list[str] = []
    for value in _alias_values(data, canonical):
        if isinstance(value, str):
            phrases.append(value.strip())  # a trigger phrase may itself contain commas
        elif isinstance(value, list):
            phrases.extend(_as_text(v).strip() for v in value)
        else:
            out.add(
                "extension.type",
                "warning",
                f"Field {canonical!r} should be a list; ignored",
                canonical,
            )
    return tuple(p for p in phrases if p)


def _tools(
    data: Mapping[str, YamlValue], out: _Collector
) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
    """The tool patterns, the string as written, and the entries that are not tools."""
    tools: list[str] = []
    raw: str | None = None
    for value in _alias_values(data, "allowed-tools"):
        if isinstance(value, str):
            raw = value if raw is None else raw
            tools.extend(parse_allowed_tools(value))
        elif isinstance(value, list):
            tools.extend(_as_text(v).strip() for v in value if _as_text(v).strip())
        else:
            out.add(
                "allowed_tools.type",
                "warning",
                "Field 'allowed-tools' should be a string or a list; ignored",
                "allowed-tools",
            )
    entries = list(dict.fromkeys(tools))
    not_tools = tuple(t for t in entries if not is_tool_pattern(t))
    if not_tools:
        key = next(k for k in data if ALIASES.get(k, k) == "allowed-tools")
        out.add(
            "allowed_tools.not_a_tool",
            "warning",
            f"Not tool patterns, so they restrict nothing: {_listed(not_tools)} "
            "(agents a skill works with belong in 'compatibility')",
            key,
        )
    return tuple(t for t in entries if t not in not_tools), raw, not_tools


def _listed(values: tuple[str, ...]) -> str:
    return ", ".join(clip(v, 80, quoted=True) for v in values)


def _extensions(data: Mapping[str, YamlValue], out: _Collector) -> dict[str, object]:
    tools, tools_raw, not_tools = _tools(data, out)
    known = SPEC_FIELDS | EXTENSION_FIELDS
    return {
        "allowed_tools": tools,
        "allowed_tools_raw": tools_raw,
        "not_tools": not_tools,
        "disable_model_invocation": _bool(data, "disable-model-invocation", False, out),
        "user_invocable": _bool(data, "user-invocable", True, out),
        "argument_hint": _optional_str(data, "argument-hint", out),
        "when_to_use": _optional_str(data, "when_to_use", out),
        "context": _optional_str(data, "context", out),
        "agent": _optional_str(data, "agent", out),
        "version": _optional_str(data, "version", out),
        "tags": _str_list(data, "tags", out),
        "triggers": _phrases(data, "triggers", out),
        "extra": {k: v for k, v in data.items() if k not in known},
    }

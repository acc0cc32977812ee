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

from dataclasses import dataclass, field, replace
from typing import Final

from skillshelf.core._field_text import (
    MAX_PHRASE_CHARS,
    MAX_PHRASES,
    cut_phrase,
    escaped,
    shown,
    shown_optional,
    shown_phrase,
    shown_phrases,
)
from skillshelf.core._manifest_checks import (
    check_compatibility,
    check_description,
    check_fields,
    check_name,
    is_name_shaped,
    is_plain_name,
)
from skillshelf.core._manifest_extensions import (
    extensions,
    metadata_field,
    optional_str,
    parse_allowed_tools,
)
from skillshelf.core._manifest_fields import (
    ALIASES,
    EXTENSION_FIELDS,
    MAX_COMPATIBILITY_LENGTH,
    MAX_DESCRIPTION_LENGTH,
    MAX_NAME_LENGTH,
    SPEC_FIELDS,
    FieldCollector,
)
from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Frontmatter, Mode, YamlValue
from skillshelf.core.verdict import is_valid
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
    "sound_manifest",
    "sound_name",
]

_PLAIN_FIELDS: Final = SPEC_FIELDS - {"allowed-tools"}


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
        return cut_phrase(escaped(raw.strip(), lines=False))


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
    out = FieldCollector(fm, mode, path)
    data = fm.data
    check_fields(data, out)
    name = check_name(data, dir_name, out)
    description = check_description(data, out)
    compatibility = check_compatibility(data, out)
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
    license_ = optional_str(data, "license", out) if "license" in data else None
    metadata = metadata_field(data, out) if "metadata" in data else {}
    # The C check every ordinary value passes, before any call.
    if not description.isprintable():
        description = shown(description, "description", out, lines=True)
    if license_ is not None and not license_.isprintable():
        license_ = shown(license_, "license", out, lines=False)
    if compatibility is not None and not compatibility.isprintable():
        compatibility = shown(compatibility, "compatibility", out, lines=True)
    if data.keys() <= _PLAIN_FIELDS:
        # The common case: nothing beyond the spec's keys, so no extension to interpret.
        return Manifest(name, description, license_, compatibility, metadata), out.items
    manifest = Manifest(
        name=name,
        description=description,
        license=license_,
        compatibility=compatibility,
        metadata=metadata,
        **extensions(data, out),  # type: ignore[arg-type]
    )
    return _shown_extensions(manifest, out), out.items


def _shown_extensions(manifest: Manifest, out: FieldCollector) -> Manifest:
    return replace(
        manifest,
        argument_hint=shown_phrase(manifest.argument_hint, "argument-hint", out),
        when_to_use=shown_optional(manifest.when_to_use, "when_to_use", out, lines=True),
        agent=shown_phrase(manifest.agent, "agent", out),
        version=shown_phrase(manifest.version, "version", out),
        tags=shown_phrases(manifest.tags, "tags", out),
        triggers=shown_phrases(manifest.triggers, "triggers", out),
    )


def sound_manifest(manifest: Manifest, *, dir_name: str | None, mode: Mode) -> bool:
    """Whether ``manifest`` (read back from a cache) is one :func:`build_manifest` could have
    built for a valid SKILL.md in the folder ``dir_name``.

    Values read from a cache pass the checks values read from SKILL.md pass: the name and
    description are checked by the same rules (so a name with a line break is ``name.unsafe``
    here too), and every field that is shown escaped and cut is escaped and cut. A cached
    manifest that is not sound is a cache miss: the SKILL.md is read again.
    """
    if not sound_name(manifest.name, manifest.description, dir_name=dir_name, mode=mode):
        return False
    lines = (manifest.compatibility, manifest.when_to_use)
    phrases = (manifest.argument_hint, manifest.agent, manifest.version)
    license_ = manifest.license
    return (
        all(v is None or escaped(v, lines=True) == v for v in lines)
        and (license_ is None or escaped(license_, lines=False) == license_)
        and all(v is None or _is_phrase(v) for v in phrases)
        and all(
            len(values) <= MAX_PHRASES and all(_is_phrase(v) for v in values)
            for values in (manifest.tags, manifest.triggers)
        )
    )


def sound_name(name: str, description: str, *, dir_name: str | None, mode: Mode) -> bool:
    """Whether ``name`` and ``description`` (read back from a cache) are what
    :func:`build_manifest` gives for a valid SKILL.md in ``dir_name`` holding them: the part
    of :func:`sound_manifest` the catalog needs."""
    if (
        name == dir_name
        and is_plain_name(name)
        and description.isprintable()
        and 0 < len(description) <= MAX_DESCRIPTION_LENGTH
        and description == description.strip()
    ):
        return True  # the common case, which every mode accepts as it is
    fm = Frontmatter({"name": name, "description": description}, "")
    built, diagnostics = build_manifest(fm, dir_name=dir_name, mode=mode)
    return (
        built is not None
        and (built.name, built.description) == (name, description)
        and is_valid(built, diagnostics, mode=mode)
    )


def _is_phrase(value: str) -> bool:
    return len(value) <= MAX_PHRASE_CHARS and escaped(value, lines=False) == value

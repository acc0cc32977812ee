"""How the text fields of a manifest are shown: control and format characters as escapes,
phrases cut to a length (a warning says so each time)."""

from __future__ import annotations

import unicodedata
from typing import Final

from skillshelf.core._manifest_fields import FieldCollector

__all__ = [
    "MAX_PHRASES",
    "MAX_PHRASE_CHARS",
    "cut_phrase",
    "escaped",
    "shown",
    "shown_optional",
    "shown_phrase",
    "shown_phrases",
]

# Characters shown as escapes in the text fields a model or a terminal reads.
_HIDDEN_CATEGORIES: Final = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})
_SHORT_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
# A version, a tag, a trigger or an argument hint is a phrase; the YAML size cap is not enough
# for fields skill_list prints whole for every skill.
MAX_PHRASE_CHARS: Final = 200
# Tags and triggers per skill: skill_list prints every tag of every skill.
MAX_PHRASES: Final = 64


def _escape_char(c: str) -> str:
    if c in _SHORT_ESCAPES:
        return _SHORT_ESCAPES[c]
    code = ord(c)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def shown(value: str, key: str, out: FieldCollector, *, lines: bool) -> str:
    """``value`` with control and format characters shown as escapes (a warning says so).

    A line break in a one-line field, a bidi override or a zero-width character would let a
    field forge or hide structure in every list and catalog that prints it.
    """
    if value.isprintable():
        return value  # the C check every ordinary value passes
    text = escaped(value, lines=lines)
    if text != value:
        out.add(
            "field.unsafe_chars",
            "warning",
            f"Field {key!r} has control or format characters (line breaks, bidi overrides, "
            "zero-width); they are shown as escapes",
            key,
        )
    return text


def escaped(value: str, *, lines: bool) -> str:
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


def cut_phrase(value: str) -> str:
    return value if len(value) <= MAX_PHRASE_CHARS else value[: MAX_PHRASE_CHARS - 1] + "…"


def shown_optional(value: str | None, key: str, out: FieldCollector, *, lines: bool) -> str | None:
    return None if value is None else shown(value, key, out, lines=lines)


def shown_phrase(value: str | None, key: str, out: FieldCollector) -> str | None:
    text = shown_optional(value, key, out, lines=False)
    if text is None or len(text) <= MAX_PHRASE_CHARS:
        return text
    out.add(
        "field.too_long",
        "warning",
        f"Field {key!r} is {len(text):,} characters; cut to {MAX_PHRASE_CHARS}",
        key,
    )
    return cut_phrase(text)


def shown_phrases(values: tuple[str, ...], key: str, out: FieldCollector) -> tuple[str, ...]:
    if len(values) > MAX_PHRASES:
        out.add(
            "field.too_many",
            "warning",
            f"Field {key!r} has {len(values):,} entries; the first {MAX_PHRASES} are kept",
            key,
        )
        values = values[:MAX_PHRASES]
    return tuple(shown_phrase(v, key, out) or "" for v in values)

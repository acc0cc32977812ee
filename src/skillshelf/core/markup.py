"""Escaping for every value from a skill, a path or a sandbox in the text a model reads.

Three positions, three rules:

- An XML attribute or element of a catalog (:func:`escape_xml`): full XML escaping.
- Free text inside the ``<skill_content>``, ``<skill_resources>`` and ``<skill_doc>`` elements
  and a ``<system-reminder>`` message (:func:`neutralize_tags`): bodies and documents are
  Markdown a model must read as written, so only something that would open or close one of
  those elements is defused.
- One-line values such as a path or a name (:func:`one_line`): a line break or other control
  character would start a line the value does not own, so it is shown as an escape.

Every rule leaves ordinary text untouched, so escaping never moves the bytes of a prompt built
from ordinary skills.
"""

from __future__ import annotations

import html
import re
import unicodedata
from typing import Final

__all__ = ["escape_xml", "neutralize_tags", "one_line"]

# Our tags, case and spaces ignored: a model would read `< /Skill_Doc >` as a closing tag too.
_TAG_NAME: Final = r"\s*/?\s*(?:skill_(?:content|resources|doc)|system-reminder)\b"
_OUR_TAG: Final = re.compile(f"<(?={_TAG_NAME})", re.IGNORECASE)
# Outside ASCII, also what a model reads the same once look-alikes are folded (:func:`_folded`):
# invisible characters inside, full-width or small brackets and letters (＜／ｓ…, ﹤).
_OUR_TAG_AT: Final = re.compile(_TAG_NAME, re.IGNORECASE)
_OUR_FOLDED_TAG: Final = re.compile(_TAG_NAME)
_BRACKET: Final = re.compile("[<\uff1c\ufe64]")  # "<" and what NFKC folds to it
_LOOK_AHEAD: Final = 48  # characters after a bracket read to decide (a tag name is shorter)
_CONTROL_ESCAPES: Final = {
    **{code: f"\\x{code:02x}" for code in (*range(0x20), 0x7F, 0x85)},
    ord("\t"): "\\t",
    ord("\n"): "\\n",
    ord("\r"): "\\r",
    0x2028: "\\u2028",
    0x2029: "\\u2029",
}


def escape_xml(text: str) -> str:
    """Escape ``& < > " '`` as :func:`html.escape` does (what skills-ref uses)."""
    # html.escape makes five passes; most text needs none.
    if "&" in text or "<" in text or ">" in text or '"' in text or "'" in text:
        return html.escape(text)
    return text


def neutralize_tags(text: str) -> str:
    """Defuse what would open or close one of our elements; keep everything else.

    The bracket of ``</skill_content>`` becomes ``&lt;``, and so does one a model would read
    the same: ``< /Skill_Doc >``, a zero-width space (U+200B) or soft hyphen inside,
    full-width or small brackets and letters (U+FF1C ``/system-reminder``).
    """
    if text.isascii():  # one C-speed pass: the common case
        return _OUR_TAG.sub("&lt;", text) if "<" in text else text
    return _BRACKET.sub(lambda m: _defused(text, m), text)


def _defused(text: str, bracket: re.Match[str]) -> str:
    after = text[bracket.end() : bracket.end() + _LOOK_AHEAD]
    ours = _OUR_TAG_AT.match(after) if after.isascii() else _OUR_FOLDED_TAG.match(_folded(after))
    return "&lt;" if ours else bracket.group()


def _folded(text: str) -> str:
    """``text`` as a model reads it: compatibility forms folded (NFKC: full-width and small
    forms), invisible (format) characters dropped, case folded."""
    folded = unicodedata.normalize("NFKC", text)
    return "".join(c for c in folded if unicodedata.category(c) != "Cf").casefold()


def one_line(text: str) -> str:
    """Show line breaks and other control characters as escapes, so the value stays one line."""
    # isprintable() is false for every character escaped here, and a fast C check; most
    # values pass it, and translate() costs more than the whole of a catalog line.
    return text if text.isprintable() else text.translate(_CONTROL_ESCAPES)

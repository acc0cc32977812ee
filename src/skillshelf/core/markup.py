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
from typing import Final

__all__ = ["escape_xml", "neutralize_tags", "one_line"]

# Case and spaces are ignored: a model would read `< /Skill_Doc >` as a closing tag too.
_OUR_TAG: Final = re.compile(
    r"<(?=\s*/?\s*(?:skill_(?:content|resources|doc)|system-reminder)\b)", re.IGNORECASE
)
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
    """Defuse what would open or close one of our elements; keep everything else."""
    return _OUR_TAG.sub("&lt;", text) if "<" in text else text


def one_line(text: str) -> str:
    """Show line breaks and other control characters as escapes, so the value stays one line."""
    # isprintable() is false for every character escaped here, and a fast C check; most
    # values pass it, and translate() costs more than the whole of a catalog line.
    return text if text.isprintable() else text.translate(_CONTROL_ESCAPES)

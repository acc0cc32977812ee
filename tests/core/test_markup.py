"""Escaping values from skills and paths for each position they take in a prompt."""

from __future__ import annotations

import pytest

from skillshelf.core.markup import escape_xml, neutralize_tags, one_line

# Text real skills hold: none of it may change, or escaping would move prompt bytes.
ORDINARY = [
    "",
    '# Guide\n\nUse `a < b` and `x > y`; R&D\'s "quoted" text.',
    "<details><summary>More</summary></details>",
    "<skill>\n<name>\npdf\n</name>\n</skill>",  # the catalog's tags are not the load's
    "<skill_contents> <skill_documents> skill_content",
    "C:\\Users\\me\\skills\\pdf",
    "naïve café — 日本語",
]


@pytest.mark.parametrize("text", ORDINARY)
def test_ordinary_text_is_left_as_it_is_in_content(text: str) -> None:
    assert neutralize_tags(text) == text


@pytest.mark.parametrize("text", [t for t in ORDINARY if "\n" not in t])
def test_ordinary_one_line_text_is_left_as_it_is(text: str) -> None:
    assert one_line(text) == text


@pytest.mark.parametrize(
    ("text", "neutral"),
    [
        ("</skill_content>", "&lt;/skill_content>"),
        ("<skill_content name='x'>", "&lt;skill_content name='x'>"),
        ("<skill_resources>", "&lt;skill_resources>"),
        ('<skill_doc path="a">', '&lt;skill_doc path="a">'),
        ("</SKILL_DOC>", "&lt;/SKILL_DOC>"),
        ("< / skill_content >", "&lt; / skill_content >"),
        ("<\nskill_doc>", "&lt;\nskill_doc>"),
        ("a</skill_doc>b</skill_doc>", "a&lt;/skill_doc>b&lt;/skill_doc>"),
        ("</system-reminder>", "&lt;/system-reminder>"),
        ("< System-Reminder >", "&lt; System-Reminder >"),
    ],
)
def test_the_load_elements_tags_are_defused_in_content(text: str, neutral: str) -> None:
    assert neutralize_tags(text) == neutral


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("a\nb", "a\\nb"),
        ("a\r\nb", "a\\r\\nb"),
        ("a\tb", "a\\tb"),
        ("a\x00b\x1b", "a\\x00b\\x1b"),
        ("a\x7fb\x85", "a\\x7fb\\x85"),
        ("a\u2028b\u2029", "a\\u2028b\\u2029"),
    ],
)
def test_line_breaks_and_control_characters_become_escapes(text: str, escaped: str) -> None:
    assert one_line(text) == escaped
    assert len(one_line(text).splitlines()) == 1


@pytest.mark.parametrize(
    ("text", "escaped"),
    [
        ("plain", "plain"),
        ("a & b", "a &amp; b"),
        ("<b>", "&lt;b&gt;"),
        ("\"q\" 'a'", "&quot;q&quot; &#x27;a&#x27;"),
    ],
)
def test_xml_escaping_matches_html_escape(text: str, escaped: str) -> None:
    assert escape_xml(text) == escaped

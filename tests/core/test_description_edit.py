"""Replacing a SKILL.md's description changes that value and no other byte."""

from __future__ import annotations

import pytest

from skillshelf.core.description_edit import (
    DescriptionEditError,
    quote_yaml,
    replace_description,
)
from skillshelf.core.frontmatter import YamlValue, decode_skill_md, parse_frontmatter
from skillshelf.core.yaml_loader import load

HAND_WRITTEN = (
    "---\n"
    "name: pdf  # the folder's name\n"
    "description: Old text.   # keep me\n"
    "license: 'Apache-2.0'\n"
    "metadata:\n"
    '  version: "1.0"\n'
    "---\n"
    "# Body\n\ndescription: not frontmatter\n"
)


def data(text: str) -> dict[str, YamlValue]:
    decoded, _ = decode_skill_md(text.encode("utf-8"))
    return parse_frontmatter(decoded).data


def test_plain_description_is_replaced_in_place_keeping_comments_and_quoting() -> None:
    result = replace_description(HAND_WRITTEN, "Fills PDF forms. Use when asked to fill a form.")
    assert result == HAND_WRITTEN.replace(
        "Old text.", "Fills PDF forms. Use when asked to fill a form."
    )


@pytest.mark.parametrize(
    "value",
    [
        "Automate X tasks via Rube MCP (Composio): manage records",
        'Says "hello" and \\ back slashes',
        "Starts - no, ends with a colon:",
        "- looks like a list",
        "# looks like a comment",
        "Line\nbreak and\ttab and \u2028 separator and \x85 NEL",
        "yes",
        "中文描述：处理 PDF 表单。",
        "'quoted' start",
        "emoji 🧾 and a BOM \ufeff inside",
    ],
)
def test_any_value_reads_back_exactly(value: str) -> None:
    result = replace_description(HAND_WRITTEN, value)
    assert data(result) == {**data(HAND_WRITTEN), "description": value}
    assert result.endswith("---\n# Body\n\ndescription: not frontmatter\n")


def test_a_value_that_needs_quotes_is_double_quoted() -> None:
    result = replace_description(HAND_WRITTEN, "Manage records: create, update")
    assert 'description: "Manage records: create, update"   # keep me\n' in result


def test_block_scalar_is_replaced_and_the_next_key_kept() -> None:
    text = "---\nname: pdf\ndescription: >\n  Folded\n  old text.\n\nlicense: MIT\n---\nbody\n"
    result = replace_description(text, "New text.")
    assert result == '---\nname: pdf\ndescription: "New text."\n\nlicense: MIT\n---\nbody\n'


def test_crlf_line_ends_and_a_bom_are_kept() -> None:
    text = "\ufeff---\r\nname: pdf\r\ndescription: Old.\r\n---\r\nbody\r\n"
    result = replace_description(text, "New.")
    assert result == "\ufeff---\r\nname: pdf\r\ndescription: New.\r\n---\r\nbody\r\n"


def test_quote_yaml_escapes_what_yaml_would_fold_or_end_on() -> None:
    for value in ['a "b" \\ c', "x\ny", "\x00\x7f\u2029", "😀"]:
        assert load(f"k: {quote_yaml(value)}", flavour="strings") == {"k": value}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: pdf\n---\nbody\n", "has no description"),
        ("---\nname: pdf\ndescription: a\ndescription: b\n---\n", "more than once"),
        ("---\nname: pdf\ndescription: [a, b]\n---\n", "not a plain string"),
        ("no frontmatter\n", "cannot read the frontmatter"),
        ("---\r\nname: pdf\ndescription: a\n---\n", "mixes line ends"),
        ("---\nname: pdf\ndescription: caf\udce9\n---\n", "not valid UTF-8"),
    ],
)
def test_files_it_cannot_edit_safely_are_refused(text: str, problem: str) -> None:
    with pytest.raises(DescriptionEditError, match=problem):
        replace_description(text, "New.")

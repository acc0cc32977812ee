"""Frontmatter splitting and YAML loading, lenient and strict."""

from __future__ import annotations

import pytest

from skillshelf.core.frontmatter import (
    FrontmatterError,
    decode_skill_md,
    parse_frontmatter,
)
from skillshelf.core.yaml_loader import MAX_YAML_NODES


def _error(text: str, mode: str = "lenient") -> FrontmatterError:
    with pytest.raises(FrontmatterError) as info:
        parse_frontmatter(text, mode=mode)  # type: ignore[arg-type]
    return info.value


def test_simple_frontmatter_gives_strings_and_body() -> None:
    fm = parse_frontmatter("---\nname: a\ndescription: b\n---\n# Body\n")
    assert fm.data == {"name": "a", "description": "b"}
    assert fm.body == "# Body\n"
    assert fm.lines == {"name": 2, "description": 3}


def test_scalars_stay_strings_without_implicit_typing() -> None:
    fm = parse_frontmatter("---\nversion: 1.10\nflag: yes\nnothing: null\nn: 007\n---\n")
    assert fm.data == {"version": "1.10", "flag": "yes", "nothing": "null", "n": "007"}


def test_block_scalars_and_inline_lists_load_in_lenient_mode() -> None:
    text = "---\nname: a\ndescription: |\n  line one\n  line two\ntags: [x, y]\n---\nbody"
    fm = parse_frontmatter(text)
    assert fm.data["description"] == "line one\nline two\n"
    assert fm.data["tags"] == ["x", "y"]


def test_only_the_first_fenced_block_is_frontmatter() -> None:
    text = "---\nname: a\ndescription: b\n---\nExample:\n---\nname: other\n---\n"
    fm = parse_frontmatter(text)
    assert fm.data["name"] == "a"
    assert "name: other" in fm.body


def test_missing_fence_reports_frontmatter_missing() -> None:
    err = _error("# Title\nno frontmatter\n")
    assert err.code == "frontmatter.missing"
    assert "must start with YAML frontmatter" in err.message
    assert err.line == 1


def test_unclosed_fence_reports_frontmatter_unclosed() -> None:
    err = _error("---\nname: a\ndescription: b\n")
    assert err.code == "frontmatter.unclosed"
    assert "not properly closed" in err.message


def test_malformed_yaml_reports_line_number() -> None:
    err = _error("---\nname: a\ndescription: [broken\nother: x\n---\n")
    assert err.code == "frontmatter.yaml"
    assert "Invalid YAML" in err.message
    assert err.line is not None and err.line >= 3


@pytest.mark.parametrize("body", ["- a\n- b\n", "just a scalar\n", "", "# only a comment\n"])
def test_non_mapping_frontmatter_is_refused(body: str) -> None:
    err = _error(f"---\n{body}---\n")
    assert err.code == "frontmatter.not_mapping"
    assert "must be a YAML mapping" in err.message


@pytest.mark.parametrize(
    "value",
    [
        "!!python/object/apply:os.system ['echo pwned']",
        "!!python/name:os.system",
        "!!python/object:collections.OrderedDict {}",
        "!custom thing",
    ],
)
def test_object_building_tags_are_refused(value: str) -> None:
    err = _error(f"---\nname: a\ndescription: {value}\n---\n")
    assert err.code in {"frontmatter.tag", "frontmatter.yaml"}
    assert err.line == 3


def test_alias_expansion_bomb_is_stopped() -> None:
    lines = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    for i, name in enumerate("bcdefg"):
        prev = "abcdefg"[i]
        lines.append(f"{name}: &{name} [" + ", ".join([f"*{prev}"] * 10) + "]")
    lines += ["name: s", "description: d", "---", ""]
    err = _error("\n".join(lines))
    assert err.code == "frontmatter.too_complex"
    assert f"{MAX_YAML_NODES:,}" in err.message


def test_small_aliases_are_accepted_in_lenient_mode() -> None:
    fm = parse_frontmatter("---\nbase: &b hello\nname: *b\ndescription: d\n---\n")
    assert fm.data["name"] == "hello"


def test_duplicate_keys_keep_last_value_and_are_reported() -> None:
    fm = parse_frontmatter("---\nname: a\nname: b\ndescription: d\n---\n")
    assert fm.data["name"] == "b"
    assert fm.duplicate_keys == ("name",)


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("---\nname: a\ntags: [x]\n---\n", "flow style"),
        ("---\nname: &n a\n---\n", "anchors"),
        ("---\nname: !!str a\n---\n", "tags"),
        ("---\nname: a\nname: b\n---\n", "duplicate key"),
    ],
)
def test_strict_mode_refuses_what_strictyaml_refuses(text: str, problem: str) -> None:
    err = _error(text, mode="strict")
    assert err.code == "frontmatter.yaml"
    assert "Invalid YAML" in err.message
    assert problem in err.message


def test_strict_mode_splits_on_any_triple_dash_like_skills_ref() -> None:
    fm = parse_frontmatter("---\nname: a\ndescription: x---y\n---\nbody\n", mode="strict")
    assert fm.data["description"] == "x"


def test_strict_mode_strips_the_body() -> None:
    fm = parse_frontmatter("---\nname: a\n---\n\n  body  \n\n", mode="strict")
    assert fm.body == "body"


def test_bom_and_crlf_are_accepted_in_lenient_mode() -> None:
    text, problem = decode_skill_md(b"\xef\xbb\xbf---\r\nname: a\r\ndescription: b\r\n---\r\nx\r\n")
    assert problem is None
    fm = parse_frontmatter(text)
    assert fm.data == {"name": "a", "description": "b"}
    assert fm.body == "x\n"


def test_bom_fails_in_strict_mode_like_skills_ref() -> None:
    text, _ = decode_skill_md(b"\xef\xbb\xbf---\nname: a\n---\n", mode="strict")
    assert _error(text, mode="strict").code == "frontmatter.missing"


def test_invalid_utf8_is_replaced_and_reported_in_lenient_mode() -> None:
    text, problem = decode_skill_md(b"---\nname: a\ndescription: caf\xe9\n---\n")
    assert problem is not None and problem.code == "file.encoding"
    assert problem.line == 3
    assert "\ufffd" in text


def test_invalid_utf8_is_an_error_in_strict_mode() -> None:
    with pytest.raises(FrontmatterError) as info:
        decode_skill_md(b"---\nname: \xff\n---\n", mode="strict")
    assert info.value.code == "file.encoding"


def test_binary_content_is_refused() -> None:
    with pytest.raises(FrontmatterError) as info:
        decode_skill_md(b"\x89PNG\r\n\x1a\n\x00\x00\x00")
    assert info.value.code == "file.binary"


def test_fast_path_and_yaml_path_agree_on_nested_metadata() -> None:
    simple = '---\nname: a\ndescription: b\nmetadata:\n  author: me\n  version: "1.0"\n---\n'
    tricky = simple.replace("author: me", "author: me  # comment")
    assert parse_frontmatter(simple).data == parse_frontmatter(tricky).data


# -- the quote fallback (lenient mode) ---------------------------------------------------------

COLON_DESCRIPTION = (
    "---\nname: gmail-automation\n"
    "description: Automate Gmail tasks via Rube MCP (Composio): manage labels and drafts.\n"
    "metadata:\n  note: version 2: faster\n---\nBody\n"
)


def test_unquoted_colon_value_is_read_quoted_in_lenient_mode() -> None:
    fm = parse_frontmatter(COLON_DESCRIPTION)
    assert fm.data["description"] == (
        "Automate Gmail tasks via Rube MCP (Composio): manage labels and drafts."
    )
    assert fm.data["metadata"] == {"note": "version 2: faster"}
    assert fm.requoted == (("description", 3), ("note", 5))
    assert fm.text.startswith("name: gmail-automation\ndescription: Automate")


def test_unquoted_colon_value_is_still_refused_in_strict_mode() -> None:
    assert _error(COLON_DESCRIPTION, "strict").code == "frontmatter.yaml"


def test_quote_fallback_keeps_quotes_and_backslashes_verbatim() -> None:
    fm = parse_frontmatter('---\nname: a\ndescription: Say "hi": then C:\\temp\\x\n---\n')
    assert fm.data["description"] == 'Say "hi": then C:\\temp\\x'


def test_quote_fallback_drops_a_trailing_comment_as_yaml_would() -> None:
    fm = parse_frontmatter("---\nname: a\ndescription: Does x: y # why\n---\n")
    assert fm.data["description"] == "Does x: y"


@pytest.mark.parametrize(
    "text",
    [
        "---\nname: a\ndescription: [x: y\n---\n",  # a broken flow value is not a plain one
        "---\nname: a\ndescription: x\n  bad: indent: here\n---\n",  # fails after quoting too
        "---\nname: a\n  description: b\n---\n",  # nothing to quote
    ],
)
def test_quote_fallback_reports_the_original_error_when_it_cannot_help(text: str) -> None:
    assert _error(text).code == "frontmatter.yaml"


def test_valid_yaml_is_never_requoted() -> None:
    fm = parse_frontmatter("---\nname: a\ndescription: 'x: y'\nkey: a:b\n---\n")
    assert fm.requoted == ()
    assert fm.data["description"] == "x: y"

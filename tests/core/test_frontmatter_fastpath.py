"""The hand-written fast path for simple frontmatter gives exactly what the YAML loaders give."""

from __future__ import annotations

from typing import Final

from hypothesis import example, given, settings
from hypothesis import strategies as st

from skillshelf.core import frontmatter

# Mostly what the fast path takes, seasoned with what it must hand to the YAML loader.
_KEYS: Final = ["name", "description", "metadata", "license", "a", "b-c", "x_y", "key1", "null"]
_ODD_KEYS: Final = ["1", "-k", "k ", "é", "? k", "'q'", "<<", "a b", "a:b"]
_VALUES: Final = [
    "x",
    "my-skill",
    "A test skill.",
    "1.0",
    "yes",
    "~",
    "'single'",
    '"double"',
    "a:b",
    "a#b",
    "-x",
    "trailing ",
    "é",
    "",
]
_ODD_VALUES: Final = [
    "'it''s'",
    '"with \\" escape"',
    '"back\\slash"',
    "'unterminated",
    "a: b",
    "a # comment",
    "# comment",
    "- item",
    "[a, b]",
    "{a: b}",
    "&anchor x",
    "*alias",
    "!tag x",
    "|",
    ">",
    "%x",
    "@x",
    "`x",
    "?x",
    ":x",
    "x:",
    "tab\there",
    "nbsp\xa0here",
    "\x85",
    "x\u2028y",
    "<<",
    "'a' b",
    '"a" # c',
]
_ODD_INDENTS: Final = [" ", "   ", "    ", "\t", "  \t"]


def _pick(draw: st.DrawFn, usual: list[str], odd: list[str]) -> str:
    # One part in ten is odd, so many texts stay simple enough for the fast path.
    return draw(st.sampled_from(odd if draw(st.integers(0, 9)) == 0 else usual))


def _pair(draw: st.DrawFn, indent: str) -> str:
    key = _pick(draw, _KEYS, _ODD_KEYS)
    sep = _pick(draw, [": "], [":  ", ":", " : ", ":\t"])
    return f"{_pick(draw, [indent], _ODD_INDENTS)}{key}{sep}{_pick(draw, _VALUES, _ODD_VALUES)}"


@st.composite
def _simple_looking(draw: st.DrawFn) -> str:
    lines = []
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["pair", "pair", "map", "comment", "blank"]))
        if kind == "pair":
            lines.append(_pair(draw, ""))
        elif kind == "map":
            lines.append(_pick(draw, _KEYS, _ODD_KEYS) + _pick(draw, [":"], [": ", ":  "]))
            lines += [_pair(draw, "  ") for _ in range(draw(st.integers(0, 3)))]
        elif kind == "comment":
            lines.append(_pick(draw, [""], ["  ", "\t"]) + "# note")
        else:
            lines.append(_pick(draw, [""], [" ", "  "]))
    return "\n".join(lines) + draw(st.sampled_from(["", "\n"]))


@settings(max_examples=500, deadline=None)
@given(text=_simple_looking())
@example(text="")
@example(text="# only a comment\n")
@example(text="name: a\nmetadata:\n  author: me\n  version: '1.0'\n")
def test_fast_path_matches_the_yaml_loader(text: str) -> None:
    fast = frontmatter._parse_simple(text)
    if fast is None:
        return  # the fast path declined; the YAML loader decides alone
    data, rows = fast
    slow = frontmatter._parse_yaml(text, "", first_line=2, strict=False)
    assert data == slow.data
    assert {key: row + 2 for key, row in rows.items()} == slow.lines
    # Strict mode takes the fast path too, so its YAML reading must agree as well.
    assert data == frontmatter._parse_yaml(text, "", first_line=1, strict=True).data

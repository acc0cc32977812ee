"""Fuzzing frontmatter, manifest, verdict and catalog: only documented errors escape.

Arbitrary text assembled from YAML building blocks (fences, anchors, aliases, tags, flow and
block collections, deep nesting, control and format characters) goes through
``parse_frontmatter`` (only :class:`FrontmatterError` may escape), ``build_manifest`` and
``is_valid`` (nothing escapes), and every skill lenient mode accepts renders as exactly one
catalog entry in both formats. The profile is fixed (``adversarial-fuzz``).
"""

from __future__ import annotations

import xml.etree.ElementTree as ET

from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial.conftest import FUZZ_PROFILE
from skillshelf.core.catalog import CatalogEntry, render_catalog
from skillshelf.core.frontmatter import FrontmatterError, Mode, parse_frontmatter
from skillshelf.core.manifest import build_manifest
from skillshelf.core.verdict import is_valid

FUZZ = settings.get_profile(FUZZ_PROFILE)

_BLOCKS = [
    "---\n",
    "---",
    "\n",
    "name: ",
    "description: ",
    "version: ",
    "tags: ",
    "metadata:\n  ",
    "triggers:\n  - ",
    "allowed-tools: ",
    "argument-hint: ",
    "  ",
    "- ",
    "[",
    "]",
    "{",
    "}",
    ", ",
    ": ",
    "&a ",
    "*a",
    "&b [*a, *a]",
    "*b",
    "!!python/object:os.system ",
    "!!str ",
    "!!binary ",
    "<<: *a",
    "|\n  ",
    ">-\n  ",
    '"',
    "'",
    "\\u202e",
    "\u202e",
    "\u200b",
    "\u0301",
    "\x00",
    "\x1b",
    "\t",
    "\r\n",
    "\u2028",
    "# ",
    "...",
    "%YAML 1.2\n",
    "my-skill",
    "a<b>&",
    "</name></skill>",
    "[" * 70,
    "- " * 70,
]
_pieces = st.one_of(st.sampled_from(_BLOCKS), st.text(max_size=12))
_texts = st.builds(
    lambda head, parts: head + "".join(parts),
    st.sampled_from(["---\n", "---\nname: fz\ndescription: ", "", "---\nname: "]),
    st.lists(_pieces, max_size=30),
)


def _one_entry(name: str, description: str) -> None:
    entry = [CatalogEntry(name, description, "/skills/x/SKILL.md")]
    root = ET.fromstring(render_catalog(entry, format="xml"))
    assert [child.tag for child in root] == ["skill"]
    assert root.findtext("skill/name", "").strip() == name.strip()
    markdown = render_catalog(entry, format="markdown")
    assert sum(line.startswith("- ") for line in markdown.splitlines()) == 1


@FUZZ
@given(text=_texts, mode=st.sampled_from(["lenient", "strict"]))
def test_frontmatter_manifest_and_verdict_raise_only_documented_errors(
    text: str, mode: Mode
) -> None:
    try:
        fm = parse_frontmatter(text, mode=mode)
    except FrontmatterError as exc:
        assert exc.code.startswith(("frontmatter.", "file."))
        return
    manifest, diagnostics = build_manifest(fm, dir_name="fz", mode=mode)
    valid = is_valid(manifest, diagnostics, mode=mode)
    assert isinstance(valid, bool)
    if valid and manifest is not None and mode == "lenient":
        assert "\n" not in manifest.name
        for tag in manifest.tags:
            assert tag.isprintable() or all(c not in tag for c in "\n\r\u2028\u202e")
        _one_entry(manifest.name, manifest.description)


@FUZZ
@given(name=st.text(min_size=1, max_size=40), description=st.text(min_size=1, max_size=80))
def test_any_usable_name_and_description_render_as_one_catalog_entry(
    name: str, description: str
) -> None:
    # Double-quoted YAML with every character escaped carries any text through unchanged.
    fm = parse_frontmatter(
        f'---\nname: "{_quoted(name)}"\ndescription: "{_quoted(description)}"\n---\n'
    )
    manifest, diagnostics = build_manifest(fm, dir_name=None)
    if not is_valid(manifest, diagnostics, mode="lenient") or manifest is None:
        assert (
            "name.unsafe" in {d.code for d in diagnostics}
            or not name.strip()
            or (not description.strip())
        )
        return
    _one_entry(manifest.name, manifest.description)


def _quoted(text: str) -> str:
    return "".join(f"\\U{ord(c):08x}" for c in text)

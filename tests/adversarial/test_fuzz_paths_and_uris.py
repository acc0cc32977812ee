"""Fuzzing ``safe_join`` and ``skill://`` URI parsing: contained results or documented errors.

``safe_join`` over arbitrary relative paths (traversal, backslashes, drive letters, ``~``, NUL,
symbolic links inside and out of the skill) either raises :class:`FileAccessError` with
``reason="refused"`` or returns a path inside the resolved skill folder. ``parse_uri`` either
raises :class:`UriError` or returns a name and path with no empty, ``.`` or ``..`` segment and
no separator, and ``file_uri`` of that result parses back to it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial.conftest import FUZZ_PROFILE
from skillshelf.errors import FileAccessError
from skillshelf.mcpserver.files import UriError, file_uri, parse_uri
from skillshelf.skills.paths import safe_join

FUZZ = settings.get_profile(FUZZ_PROFILE)

_SEGMENTS = [
    "..",
    ".",
    "",
    "a",
    "b",
    "SKILL.md",
    "scripts",
    "in",
    "out",
    "loop",
    "~",
    "~root",
    "C:",
    "c:",
    "\\",
    "..\\..",
    "\x00",
    "%2e%2e",
    "é",
    "\u202e",
    " ",
    "n" * 300,
]
_relative = st.one_of(
    st.builds(
        lambda lead, parts, sep: lead + sep.join(parts),
        st.sampled_from(["", "", "/", "\\", "./", "~/", "C:\\", "//"]),
        st.lists(st.sampled_from(_SEGMENTS), max_size=8),
        st.sampled_from(["/", "\\", "//"]),
    ),
    st.text(max_size=40),
)


@pytest.fixture(scope="module")
def skill_dir(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    root = tmp_path_factory.mktemp("join")
    skill = root / "skill"
    (skill / "scripts").mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: skill\ndescription: d\n---\n")
    (root / "secret").write_text("outside")
    os.symlink("scripts", skill / "in")
    os.symlink("../secret", skill / "out")
    os.symlink("loop", skill / "loop")
    yield skill


@FUZZ
@given(relative=_relative)
def test_safe_join_returns_a_contained_path_or_refuses(skill_dir: Path, relative: str) -> None:
    try:
        joined = safe_join(skill_dir, relative)
    except FileAccessError as exc:
        assert exc.reason == "refused"
        assert len(str(exc)) < 1_000  # the echoed path is clipped
        return
    assert joined.is_relative_to(skill_dir.resolve())


_URI_SEGMENTS = [
    "demo",
    "SKILL.md",
    "a b",
    "%2F",
    "%2f",
    "%2e%2e",
    "%2E",
    "..",
    ".",
    "",
    "%00",
    "%5C",
    "\\",
    "?x",
    "#f",
    "%",
    "%zz",
    "é",
    "%C3%A9",
    "\u202e",
    "x" * 300,
]
_uris = st.one_of(
    st.builds(
        lambda scheme, parts: scheme + "/".join(parts),
        st.sampled_from(["skill://", "skill://", "skill:/", "SKILL://", "file://", ""]),
        st.lists(st.sampled_from(_URI_SEGMENTS), max_size=6),
    ),
    st.text(max_size=40).map(lambda t: "skill://" + t),
)


@FUZZ
@given(uri=_uris)
def test_parse_uri_returns_clean_segments_or_refuses(uri: str) -> None:
    try:
        parsed = parse_uri(uri)
    except UriError as exc:
        assert len(str(exc)) < 1_000
        return
    segments = [parsed.name, *(parsed.path.split("/") if parsed.path else [])]
    for segment in segments:
        assert segment not in ("", ".", "..")
        assert not any(c in segment for c in "/\\\x00")
    assert parse_uri(file_uri(parsed.name, parsed.path)) == parsed


@FUZZ
@given(
    name=st.text(min_size=1, max_size=20),
    parts=st.lists(st.text(min_size=1, max_size=12), max_size=4),
)
def test_file_uri_round_trips_through_parse_uri(name: str, parts: list[str]) -> None:
    segments = [name, *parts]
    if any(s in (".", "..") or any(c in s for c in "/\\\x00") for s in segments):
        return
    relative = "/".join(parts)
    parsed = parse_uri(file_uri(name, relative))
    assert (parsed.name, parsed.path) == (name, relative)

"""Fuzzing cache decoding: every cache format's validator says yes or no, never raises.

Arbitrary marshal values (nested tuples, lists, dicts, sets, numbers, bytes, text with control
characters) and real rows with fields swapped for them go through the discovery index's
loader and row validator, the token-count cache's validator and a URL root's ``meta.json``
reader. What a validator accepts decodes into a skill whose name and shown fields pass the
checks SKILL.md values pass; what a real parse of a valid SKILL.md writes is always accepted
(a cache that missed on its own rows would cost a re-read of every skill). Bounded (200
examples each, no deadline, derandomized) so it runs in CI.
"""

from __future__ import annotations

import json
import marshal
import os
import tempfile
import unicodedata
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial.conftest import FUZZ_PROFILE
from adversarial.hostile_cache_rows import OTHER_VALUES
from skillshelf.core.manifest import sound_manifest
from skillshelf.reports import tokens
from skillshelf.skills import index_cache, remote
from skillshelf.skills.cache_files import write_cache_file
from skillshelf.skills.index_cache import encode_row, load_index, valid_row
from skillshelf.skills.skill import Skill, decode_blob, parse_skill_md

# The fixed adversarial profile, bounded: cache decoding runs in CI on every change.
FUZZ = settings(settings.get_profile(FUZZ_PROFILE), max_examples=200)

_SKILL_MD = os.sep.join(("", "root", "demo", "SKILL.md"))
_KEY = "fuzz-key"
_FORMAT = "skillshelf-index-8"

_text = st.text(
    st.characters(codec="utf-8", categories=("L", "N", "P", "Z", "Cc", "Cf", "Mn")), max_size=12
)
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True),
    _text,
    st.binary(max_size=24),
    st.sampled_from(["demo", "error", "warning", "info", "A demo skill."]),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4),
        st.lists(inner, max_size=4).map(tuple),
        st.dictionaries(st.one_of(_text, st.integers()), inner, max_size=4),
        st.frozensets(st.one_of(_text, st.integers()), max_size=3),
    ),
    max_leaves=24,
)


def _real_row() -> tuple[Any, ...]:
    data = b"---\nname: demo\ndescription: A demo skill.\nversion: '1'\ntags: [a, b]\n---\nBody\n"
    parsed = parse_skill_md(_SKILL_MD, dir_name="demo", preread=(data, 1, len(data)))
    return encode_row(parsed, os.stat(__file__))


_REAL = _real_row()
_HIDDEN = frozenset({"Cc", "Cf", "Co", "Cs", "Zl", "Zp"})


def _swapped(value: object, index: int, blob: bool) -> tuple[Any, ...]:
    if not blob:
        return (*_REAL[:index], value, *_REAL[index + 1 :])
    tail, diags = marshal.loads(_REAL[7])
    tail = (*tail[: index % len(tail)], value, *tail[index % len(tail) + 1 :])
    return (*_REAL[:7], marshal.dumps((tail, diags)))


def _check_accepted(row: tuple[Any, ...]) -> None:
    manifest, diagnostics = decode_blob(row)
    if manifest is None:
        assert row[4] is None
        return
    assert sound_manifest(manifest, dir_name="demo", mode="lenient")
    assert not any(unicodedata.category(c) in _HIDDEN for c in manifest.name)
    skill = Skill.from_row(row, "/root/demo", "SKILL.md", "/root")
    assert skill.manifest == manifest
    assert skill.diagnostics == diagnostics


@FUZZ
@given(_values)
def test_any_value_as_a_row_is_valid_or_a_miss(row: object) -> None:
    if valid_row(_SKILL_MD, row, mode="lenient"):
        _check_accepted(row)  # type: ignore[arg-type]


@FUZZ
@given(st.one_of(_values, st.sampled_from(OTHER_VALUES)), st.integers(0, 15), st.booleans())
def test_a_real_row_with_any_field_swapped_is_valid_or_a_miss(
    value: object, index: int, blob: bool
) -> None:
    row = _swapped(value, index % 8 if not blob else index, blob)
    if valid_row(_SKILL_MD, row, mode="lenient"):
        _check_accepted(row)


@FUZZ
@given(st.one_of(_values, st.binary(max_size=64)))
def test_any_index_file_loads_as_valid_rows_or_nothing(payload: object) -> None:
    if isinstance(payload, bytes):
        data = payload
    else:
        data = marshal.dumps((_FORMAT, _KEY, {_SKILL_MD: payload, "x": _REAL}))
    with tempfile.TemporaryDirectory() as folder:
        name = index_cache._cache_name(_KEY)
        assert write_cache_file(Path(folder), name, data) is None
        for path, row in load_index(Path(folder), _KEY, mode="lenient").items():
            assert valid_row(path, row, mode="lenient")


_names = st.text(st.sampled_from("abcz09-é"), min_size=1, max_size=20)
_phrases = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "Zs")), max_size=30)


@FUZZ
@given(
    _names,
    _phrases,
    st.lists(_phrases, max_size=5),
    _phrases,
    st.sampled_from(["strict", "lenient"]),
)
def test_a_valid_skills_own_row_is_always_valid(
    name: str, description: str, tags: list[str], version: str, mode: str
) -> None:
    frontmatter = {"name": name, "description": description, "tags": tags, "version": version}
    data = ("---\n" + json.dumps(frontmatter) + "\n---\nBody\n").encode()
    path = os.sep.join(("", "root", name, "SKILL.md"))
    parsed = parse_skill_md(path, mode=mode, dir_name=name, preread=(data, 1, len(data)))  # type: ignore[arg-type]
    row = encode_row(parsed, os.stat(__file__))
    if parsed.valid:
        assert valid_row(path, row, mode=mode)  # type: ignore[arg-type]


@FUZZ
@given(_values)
def test_any_token_cache_payload_is_counts_or_a_miss(payload: object) -> None:
    if tokens._well_formed(payload):
        counts = payload[1]  # type: ignore[index]
        assert all(type(v) is int and v >= 0 for v in counts.values())


@FUZZ
@given(
    st.one_of(
        st.binary(max_size=64),
        st.recursive(
            st.one_of(st.none(), st.booleans(), st.integers(), _text),
            lambda inner: st.one_of(
                st.lists(inner, max_size=3), st.dictionaries(_text, inner, max_size=3)
            ),
            max_leaves=12,
        ).map(lambda v: json.dumps(v).encode()),
    )
)
def test_any_url_root_meta_is_validators_or_a_miss(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as folder:
        assert write_cache_file(Path(folder), "meta.json", data) is None
        meta = remote._read_meta(Path(folder))
    assert all(type(k) is str and type(v) is str for k, v in meta.items())
    tree = meta.get("tree")
    assert tree is None or remote._TREE_NAME.fullmatch(tree)

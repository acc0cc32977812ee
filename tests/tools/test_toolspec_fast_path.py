"""parse_arguments' fast path for well-formed arguments: the same answer as the forgiving path,
for every input, taken for the common calls."""

from __future__ import annotations

import json
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from skillshelf.tools import (
    ALL_TOOLS,
    ArgumentProblem,
    ParsedArgs,
    _parse,
    _repair,
    _spec,
    parse_arguments,
)

NAMES = frozenset({"pdf", "docx", "pdf-tools", "my_skill", "/odd", "Ünï"})

# For each field a model may send: values as they should be, and every kind of slip.
_TEXT: list[Any] = ["pdf", " pdf ", "", "  ", None, 5, True, "x" * 2000, ["pdf"], "`pdf`", "*"]
CANDIDATES: dict[str, list[Any]] = {
    "skill": [
        "pdf",
        "pdf-tools",
        "my_skill",
        "Ünï",
        "/odd",
        " pdf",
        "PDF",
        "My-Skill",
        "/pdf",
        "/",
        "`pdf`",
        "**pdf**",
        "'pdf'",
        "*",
        "",
        "  ",
        None,
        5,
        "unknown",
        "x" * 300,
        ["pdf"],
    ],
    "docs": [
        [],
        ["a.md"],
        ["a.md", "b/c.md"],
        "a.md",
        [" a.md"],
        ["`a.md`"],
        [""],
        [1],
        None,
        ["a.md"] * 51,
        ("a.md",),
        {"a.md": 1},
    ],
    "include_all_docs": [True, False, "true", "no", 1, 0, None, "maybe"],
    "limit": [5, 50, 5.0, 5.5, "5", " 7 ", True, 0, 100, None, "x"],
    "timeout_s": [60, 1.5, "60", 0, -1, 3601, None, True, "fast"],
    "mode": ["add", "replace", "clear", "Add", " clear ", "re-place", "x", "", None, 1],
    "path": ["a.md", "references/guide.md", " a.md", "`a.md`", "", None, 5, "x" * 20_000],
    "query": _TEXT,
    "cursor": _TEXT,
    "args": _TEXT,
    "conversation": [*_TEXT, "c1.abc", "c" * 300],
    "command": _TEXT,
    "stdin": _TEXT,
    "collect": [[], ["*.txt"], "*.txt", [1], None, [" *.txt "], ["x"] * 51],
}
ODD_KEYS: dict[str, Any] = {
    "skill_name": "pdf",
    "name": "docx",
    "skillName": "pdf",
    "Skill": "pdf",
    "foo": 1,
    "includeAllDocs": True,
    "file_path": "a.md",
    "q": "x",
}


def _slow(
    monkeypatch: pytest.MonkeyPatch, tool: str, raw: Any, names: frozenset[str] | None
) -> ParsedArgs | ArgumentProblem:
    with monkeypatch.context() as m:
        m.setattr(_parse, "as_sent", lambda *_a: None)
        return parse_arguments(tool, raw, skill_names=names)


def _same(a: ParsedArgs | ArgumentProblem, b: ParsedArgs | ArgumentProblem) -> None:
    assert a == b
    # repr tells True from 1 and 1.0 from 1; the set of fields sent is part of the result too.
    assert repr(a) == repr(b)
    if isinstance(a, ParsedArgs) and isinstance(b, ParsedArgs):
        assert a.args.model_fields_set == b.args.model_fields_set


def _inputs(seed: int, count: int) -> Iterator[tuple[str, dict[str, Any]]]:
    rng = random.Random(seed)
    for _ in range(count):
        tool = rng.choice(ALL_TOOLS)
        fields = _spec.ARG_MODELS[tool].model_fields
        raw = {f: rng.choice(CANDIDATES[f]) for f in fields if rng.random() < 0.7}
        if rng.random() < 0.15:
            key = rng.choice(list(ODD_KEYS))
            raw[key] = ODD_KEYS[key]
        yield tool, raw


@pytest.mark.parametrize("names", [NAMES, None])
def test_fast_path_answers_as_the_forgiving_path_on_mixed_inputs(
    monkeypatch: pytest.MonkeyPatch, names: frozenset[str] | None
) -> None:
    for tool, raw in _inputs(seed=19, count=3000):
        _same(parse_arguments(tool, raw, skill_names=names), _slow(monkeypatch, tool, raw, names))


def test_fast_path_answers_as_the_forgiving_path_on_every_single_value(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each candidate alone beside the required arguments sent well.
    for tool in ALL_TOOLS:
        fields = _spec.ARG_MODELS[tool].model_fields
        base = {f: CANDIDATES[f][0] for f, info in fields.items() if info.is_required()}
        for field in fields:
            for value in CANDIDATES[field]:
                raw = {**base, field: value}
                for sent in (raw, json.dumps(raw), json.dumps(json.dumps(raw))):
                    _same(
                        parse_arguments(tool, sent, skill_names=NAMES),
                        _slow(monkeypatch, tool, sent, NAMES),
                    )


@settings(max_examples=300, deadline=None)
@given(
    tool=st.sampled_from(ALL_TOOLS),
    raw=st.dictionaries(
        st.sampled_from([*CANDIDATES, *ODD_KEYS]),
        st.none()
        | st.booleans()
        | st.integers(-5, 5000)
        | st.floats(allow_nan=False)
        | st.text(max_size=12)
        | st.sampled_from(sorted(NAMES))
        | st.lists(st.text(max_size=6) | st.integers(), max_size=4),
        max_size=5,
    ),
)
def test_fast_path_answers_as_the_forgiving_path_on_generated_inputs(
    tool: str, raw: dict[str, Any]
) -> None:
    with pytest.MonkeyPatch.context() as m:
        fast = parse_arguments(tool, raw, skill_names=NAMES)
        m.setattr(_parse, "as_sent", lambda *_a: None)
        slow = parse_arguments(tool, raw, skill_names=NAMES)
    _same(fast, slow)


@pytest.mark.parametrize(
    ("tool", "raw"),
    [
        ("skill_load", {"skill": "pdf"}),
        ("skill_load", {"skill": "pdf", "docs": ["a.md"], "include_all_docs": False}),
        ("skill_load", {"skill": "pdf", "args": "report.pdf", "conversation": "c1.abc"}),
        ("skill_read_file", {"skill": "pdf", "path": "references/guide.md"}),
        ("skill_search", {"query": "fill a form", "limit": 5}),
        ("skill_list", {}),
        ("skill_select_docs", {"skill": "pdf", "docs": ["a.md"], "mode": "replace"}),
        ("workspace_exec", {"command": "ls", "timeout_s": 1.5, "collect": ["*.txt"]}),
    ],
)
def test_well_formed_arguments_take_the_fast_path(tool: str, raw: dict[str, Any]) -> None:
    assert _repair.as_sent(_spec.ARG_MODELS[tool], raw, NAMES) is not None
    result = parse_arguments(tool, json.dumps(raw), skill_names=NAMES)
    assert isinstance(result, ParsedArgs)
    assert result.notes == result.ignored == ()


@pytest.mark.parametrize(
    "raw",
    [{"skill": "PDF"}, {"skill": " pdf"}, {"skill": "unknown"}, {"name": "pdf"}, {"skill": None}],
)
def test_slipped_arguments_leave_the_fast_path(raw: dict[str, Any]) -> None:
    assert _repair.as_sent(_spec.ARG_MODELS["skill_load"], raw, NAMES) is None

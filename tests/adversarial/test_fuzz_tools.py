"""Fuzzing every model-facing tool's arguments: ``SkillTools.call`` always returns a result.

Each tool gets random JSON-ish arguments — its own keys with values of every type (huge
strings, nested objects, lists, numbers, booleans, null), unknown keys, JSON text, invalid
JSON, ``None`` — and whatever arrives, ``call`` returns a :class:`ToolResult` whose text is
bounded; nothing escapes as an exception. Only a Python caller handing over something that is
not a mapping, a string or None gets :class:`UsageError` (developer misuse, documented).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from adversarial.conftest import FUZZ_PROFILE
from skillshelf.errors import UsageError
from skillshelf.repository import Repository
from skillshelf.stores.memory import MemoryStore
from skillshelf.tools import ALL_TOOLS, SkillTools, ToolResult

FUZZ = settings.get_profile(FUZZ_PROFILE)
EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
# The longest text a tool result may carry back here: the file cap plus the harness's framing.
MAX_RESULT_CHARS = 200_000

_KEYS = [
    "query",
    "limit",
    "skill",
    "docs",
    "include_all_docs",
    "mode",
    "path",
    "command",
    "timeout_s",
    "collect",
    "stdin",
    "extra",
    "",
]
_NAMES = ["release-notes", "csv-insights", "nope", "", "../release-notes", "release_notes"]
_PATHS = [
    "SKILL.md",
    "references/templates/standard.md",
    "../../etc/passwd",
    "/etc/passwd",
    "scripts",
    "",
    ".",
    "a\x00b",
]
_scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from(_NAMES + _PATHS + ["add", "replace", "clear", "x" * 100_000]),
    st.text(max_size=30),
)
_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(
        st.lists(inner, max_size=5), st.dictionaries(st.text(max_size=8), inner, max_size=5)
    ),
    max_leaves=12,
)
_arguments = st.one_of(
    st.dictionaries(st.sampled_from(_KEYS), _values, max_size=5),
    st.dictionaries(st.sampled_from(_KEYS), _values, max_size=5).map(json.dumps),
    _values.map(json.dumps),  # what a model sends: JSON text, of any shape
    st.text(max_size=30),
    st.none(),
)


@pytest.fixture(scope="module")
def tools(tmp_path_factory: pytest.TempPathFactory) -> SkillTools:
    root = tmp_path_factory.mktemp("tools") / "skills"
    shutil.copytree(EXAMPLES, root)
    return SkillTools(Repository([root], cache_dir=False), store=MemoryStore())


@FUZZ
@given(tool=st.sampled_from([*ALL_TOOLS, "no_such_tool", ""]), arguments=_arguments)
def test_every_tool_returns_a_bounded_result_for_any_arguments(
    tools: SkillTools, tool: str, arguments: Any
) -> None:
    result = tools.call(tool, arguments)
    assert isinstance(result, ToolResult)
    assert result.status in ("ok", "recoverable", "fatal")
    assert isinstance(result.content, str)
    assert len(result.content) <= MAX_RESULT_CHARS


@pytest.mark.parametrize("arguments", [[1, 2], 5, b"{}", 1.5, ("skill",)])
def test_arguments_of_a_non_json_type_are_developer_misuse(
    tools: SkillTools, arguments: Any
) -> None:
    with pytest.raises(UsageError):
        tools.call("skill_load", arguments)

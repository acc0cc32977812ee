"""Tool specs: JSON Schemas in three shapes, argument validation, slip normalisation."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable, Iterator, Sequence
from typing import Annotated, Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, Field, StringConstraints

from skillshelf.core.tooldef import ToolDef, to_anthropic, to_mcp, to_openai
from skillshelf.errors import UsageError
from skillshelf.tools import (
    ALL_TOOLS,
    ENUM_LIMIT,
    SKILL_TOOLS,
    ArgumentProblem,
    ParsedArgs,
    SkillLoadArgs,
    SkillSearchArgs,
    SkillSelectDocsArgs,
    WorkspaceExecArgs,
    failure_signature,
    parse_arguments,
    parse_model_arguments,
    tool_definitions,
)

NAMES = ["pdf", "docx", "pdf-tools", "xlsx"]

REQUIRED = {
    "skill_search": ["query"],
    "skill_list": [],
    "skill_load": ["skill"],
    "skill_list_docs": ["skill"],
    "skill_select_docs": ["skill"],
    "skill_read_file": ["skill", "path"],
    "skill_unload": ["skill"],
    "workspace_exec": ["command"],
}
VALID: dict[str, dict[str, Any]] = {
    "skill_search": {"query": "merge pdfs"},
    "skill_list": {},
    "skill_load": {"skill": "pdf"},
    "skill_list_docs": {"skill": "pdf"},
    "skill_select_docs": {"skill": "pdf"},
    "skill_read_file": {"skill": "pdf", "path": "references/forms.md"},
    "skill_unload": {"skill": "pdf"},
    "workspace_exec": {"command": "ls"},
}
# A value of the wrong JSON type for every argument of every tool.
WRONG_TYPES = [
    ("skill_search", "query", 42),
    ("skill_search", "limit", "ten"),
    ("skill_search", "limit", [3]),
    ("skill_load", "skill", ["pdf"]),
    ("skill_load", "docs", {"a": 1}),
    ("skill_load", "include_all_docs", "maybe"),
    ("skill_list_docs", "skill", 3),
    ("skill_select_docs", "skill", {"name": "pdf"}),
    ("skill_select_docs", "docs", 7),
    ("skill_select_docs", "include_all_docs", 2),
    ("skill_select_docs", "mode", 1),
    ("skill_read_file", "skill", True),
    ("skill_read_file", "path", ["a.md"]),
    ("skill_unload", "skill", 1.5),
    ("workspace_exec", "command", ["ls"]),
    ("workspace_exec", "skill", 3),
    ("workspace_exec", "timeout_s", "soon"),
    ("workspace_exec", "collect", 9),
    ("workspace_exec", "stdin", {"x": 1}),
]
# Every string-valued argument, with a builder placing a 10,000-character string in it.
LONG = "x" * 10_000
LONG_STRINGS = [
    ("skill_search", {"query": LONG}, "query"),
    ("skill_load", {"skill": LONG}, "skill"),
    ("skill_load", {"skill": "pdf", "docs": [LONG + "y"]}, "docs"),
    ("skill_list_docs", {"skill": LONG}, "skill"),
    ("skill_select_docs", {"skill": "pdf", "docs": ["a.md", LONG + "y"]}, "docs"),
    ("skill_select_docs", {"skill": "pdf", "mode": LONG}, "mode"),
    ("skill_read_file", {"skill": "pdf", "path": LONG + "y"}, "path"),
    ("skill_unload", {"skill": LONG}, "skill"),
    ("workspace_exec", {"command": LONG + "y"}, "command"),
    ("workspace_exec", {"command": "ls", "skill": LONG}, "skill"),
    ("workspace_exec", {"command": "ls", "collect": [LONG + "y"]}, "collect"),
]
_Exporter = Callable[[Sequence[ToolDef]], list[dict[str, Any]]]
_SchemaOf = Callable[[dict[str, Any]], dict[str, Any]]
EXPORTERS: dict[str, tuple[_Exporter, _SchemaOf]] = {
    "openai": (to_openai, lambda e: e["function"]["parameters"]),
    "anthropic": (to_anthropic, lambda e: e["input_schema"]),
    "mcp": (to_mcp, lambda e: e["inputSchema"]),
}


def _parsed(tool: str, raw: Any, names: list[str] | None = NAMES) -> ParsedArgs:
    result = parse_arguments(tool, raw, skill_names=names)
    assert isinstance(result, ParsedArgs), result
    return result


def _problem(tool: str, raw: Any, names: list[str] | None = NAMES) -> ArgumentProblem:
    result = parse_arguments(tool, raw, skill_names=names)
    assert isinstance(result, ArgumentProblem), result
    return result


def _definition(name: str, **kwargs: Any) -> ToolDef:
    kwargs.setdefault("skill_names", NAMES)
    (found,) = [d for d in tool_definitions(tools=ALL_TOOLS, **kwargs) if d.name == name]
    return found


def _names(count: int) -> list[str]:
    return [f"s{i}" for i in range(count)]


def _walk(node: Any) -> Iterator[tuple[str, Any]]:
    if isinstance(node, dict):
        for key, value in node.items():
            yield key, value
            yield from _walk(value)
    elif isinstance(node, list):
        for value in node:
            yield from _walk(value)


# ---- definitions and schemas ------------------------------------------------------------


def test_default_tool_set_is_the_seven_skill_tools_without_workspace_exec() -> None:
    names = [d.name for d in tool_definitions(skill_names=NAMES)]
    assert names == list(SKILL_TOOLS)
    assert "workspace_exec" not in names and len(names) == 7


def test_workspace_exec_is_defined_when_asked_for_in_the_given_order() -> None:
    defs = tool_definitions(skill_names=None, tools=["workspace_exec", "skill_load"])
    assert [d.name for d in defs] == ["workspace_exec", "skill_load"]


def test_unknown_tool_in_definitions_is_a_usage_error() -> None:
    with pytest.raises(UsageError, match="skill_search"):
        tool_definitions(skill_names=None, tools=["skill_explode"])


def test_negative_enum_limit_and_a_bare_string_of_names_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        tool_definitions(skill_names=NAMES, enum_limit=-1)
    with pytest.raises(UsageError):
        tool_definitions(skill_names="pdf")


@pytest.mark.parametrize("shape", sorted(EXPORTERS))
@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_each_tool_exports_a_clean_object_schema_in_each_shape(tool: str, shape: str) -> None:
    export, schema_of = EXPORTERS[shape]
    (entry,) = export([_definition(tool)])
    if shape == "openai":
        assert entry["type"] == "function"
        assert set(entry["function"]) == {"name", "description", "parameters"}
        named = entry["function"]
    else:
        assert set(entry) == {
            "name",
            "description",
            "input_schema" if shape == "anthropic" else "inputSchema",
        }
        named = entry
    assert named["name"] == tool and named["description"]
    schema = schema_of(entry)
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == REQUIRED[tool]
    assert set(schema["required"]) <= set(schema["properties"])
    for prop in schema["properties"].values():
        assert prop["description"] and "type" in prop


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_schemas_have_no_refs_titles_defaults_or_null_unions(tool: str) -> None:
    keys = {key for key, _ in _walk(_definition(tool).parameters)}
    assert not keys & {"$ref", "$defs", "definitions", "title", "default", "anyOf", "oneOf"}
    assert "null" not in json.dumps(_definition(tool).parameters)


def test_only_skill_load_lists_the_names_sorted_and_distinct_up_to_the_limit() -> None:
    for tool in ALL_TOOLS:
        props = _definition(tool, skill_names=["b", "a", "b"], enum_limit=2).parameters
        skill = props["properties"].get("skill")
        if skill is None:
            continue
        if tool == "skill_load":
            assert skill["enum"] == ["a", "b"]
        else:  # the names are listed once, not in every tool
            assert "enum" not in skill and skill["type"] == "string"


@pytest.mark.parametrize(
    ("names", "limit"), [(["a", "b", "c"], 2), (None, 1000), ([], 1000), (["a"], 0)]
)
def test_skill_is_a_plain_string_above_the_limit_or_without_names(
    names: list[str] | None, limit: int
) -> None:
    for tool in ("skill_load", "skill_read_file", "workspace_exec"):
        skill = _definition(tool, skill_names=names, enum_limit=limit).parameters["properties"]
        assert skill["skill"]["type"] == "string" and "enum" not in skill["skill"]


def test_the_schemas_stop_growing_with_the_catalog_above_the_default_limit() -> None:
    many = [f"skill-{i}" for i in range(ENUM_LIMIT + 1)]
    load = _definition("skill_load", skill_names=many).parameters["properties"]["skill"]
    assert "enum" not in load
    at_limit = _definition("skill_load", skill_names=many[:ENUM_LIMIT]).parameters
    assert len(at_limit["properties"]["skill"]["enum"]) == ENUM_LIMIT
    sizes = {
        n: len(json.dumps([t.parameters for t in tool_definitions(skill_names=_names(n))]))
        for n in (ENUM_LIMIT + 1, 1_000, 10_000)
    }
    assert len(set(sizes.values())) == 1, sizes


def test_workspace_exec_skill_is_optional_and_not_nullable() -> None:
    params = _definition("workspace_exec").parameters
    assert params["properties"]["skill"]["type"] == "string"
    assert params["properties"]["skill"]["description"] == "Run inside this skill's copy."
    assert "skill" not in params["required"]


def test_defaults_and_bounds_are_shown_to_the_model() -> None:
    props = _definition("skill_search").parameters["properties"]
    assert "Default: 10." in props["limit"]["description"]
    assert (props["limit"]["minimum"], props["limit"]["maximum"]) == (1, 50)
    mode = _definition("skill_select_docs").parameters["properties"]["mode"]
    assert mode["enum"] == ["add", "replace", "clear"] and 'Default: "add".' in mode["description"]
    assert _definition("skill_load").parameters["properties"]["docs"]["maxItems"] == 50


def test_descriptions_are_short_and_skill_load_says_when_to_load() -> None:
    for definition in tool_definitions(skill_names=None, tools=ALL_TOOLS):
        assert 1 <= definition.description.count(". ") + 1 <= 3, definition.name
    load = _definition("skill_load").description
    assert "description in the catalog matches the task" in load and "before following" in load


def test_exports_are_copies_that_callers_may_mutate() -> None:
    (entry,) = to_anthropic([_definition("skill_load")])
    entry["input_schema"]["properties"].clear()
    assert _definition("skill_load").parameters["properties"]


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_schemas_are_valid_json_schema_and_accept_valid_arguments(tool: str) -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = _definition(tool).parameters
    validator = jsonschema.validators.validator_for(schema)
    validator.check_schema(schema)
    assert validator(schema).is_valid(VALID[tool])
    assert not validator(schema).is_valid({**VALID[tool], "unexpected": 1})
    if "skill" in REQUIRED[tool] and tool == "skill_load":  # the one tool with the enum
        assert not validator(schema).is_valid({**VALID[tool], "skill": "no-such-skill"})


# ---- every tool x bad input ---------------------------------------------------------------


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_minimal_valid_arguments_parse_without_notes(tool: str) -> None:
    parsed = _parsed(tool, VALID[tool])
    assert parsed.tool == tool and parsed.notes == () and parsed.ignored == ()


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_missing_required_argument_tells_the_model_to_ask_the_user(tool: str) -> None:
    for field in REQUIRED[tool]:
        raw = {k: v for k, v in VALID[tool].items() if k != field}
        problem = _problem(tool, raw)
        assert (problem.kind, problem.field) == ("missing", field)
        assert f"Missing required argument '{field}' for {tool}." in problem.message
        assert "Ask the user" in problem.message


def test_missing_skill_message_offers_list_and_search() -> None:
    assert _problem("skill_load", {}).message == (
        "Missing required argument 'skill' for skill_load. Ask the user which skill they mean, "
        "or call skill_list/skill_search."
    )


@pytest.mark.parametrize("raw", [None, "", "   ", "{}", "null", {}])
def test_no_arguments_are_fine_for_skill_list(raw: Any) -> None:
    assert _parsed("skill_list", raw).args == _parsed("skill_list", {}).args


@pytest.mark.parametrize(("tool", "field", "value"), WRONG_TYPES)
def test_wrong_type_is_invalid_and_names_the_field(tool: str, field: str, value: Any) -> None:
    problem = _problem(tool, {**VALID[tool], field: value})
    assert (problem.kind, problem.field) == ("invalid", field)
    assert problem.message.startswith(f"Invalid argument '{field}")
    assert f"call {tool} again" in problem.message


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_extra_unknown_arguments_are_accepted_and_reported(tool: str) -> None:
    parsed = _parsed(tool, {**VALID[tool], "verbose": True, "colour": "red"})
    assert parsed.ignored == ("verbose", "colour")


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_empty_strings_for_required_arguments_count_as_missing(tool: str) -> None:
    for field in REQUIRED[tool]:
        for blank in ("", "   "):
            problem = _problem(tool, {**VALID[tool], field: blank})
            assert (problem.kind, problem.field) == ("missing", field)


@pytest.mark.parametrize(
    ("tool", "field"),
    [("skill_load", "docs"), ("skill_select_docs", "docs"), ("workspace_exec", "collect")],
)
def test_empty_string_entries_in_lists_are_invalid(tool: str, field: str) -> None:
    problem = _problem(tool, {**VALID[tool], field: ["a.md", ""]})
    assert (problem.kind, problem.field) == ("invalid", field)
    assert f"Invalid argument '{field}[1]': must not be empty" in problem.message


class _Lengths(BaseModel):
    code: Annotated[str, StringConstraints(min_length=3)] = "abc"
    tag: Annotated[str, StringConstraints(min_length=1)] = "a"
    pair: Annotated[list[str], Field(min_length=2)] = ["a", "b"]
    some: Annotated[list[str], Field(min_length=1)] = ["a"]


@pytest.mark.parametrize(
    ("arguments", "reason"),
    [
        ({"code": "ab"}, "'code': must be at least 3 characters (got \"ab\")"),
        ({"tag": ""}, "'tag': must not be empty"),
        ({"pair": ["a"]}, "'pair': must have at least 2 entries (got [\"a\"])"),
        ({"some": []}, "'some': must not be empty"),
    ],
)
def test_too_short_values_say_the_minimum_length(arguments: dict[str, Any], reason: str) -> None:
    problem = parse_model_arguments("tagger", _Lengths, arguments)
    assert isinstance(problem, ArgumentProblem) and problem.kind == "invalid"
    assert f"Invalid argument {reason}" in problem.message


def test_empty_mode_is_invalid_and_empty_optional_skill_means_none() -> None:
    assert _problem("skill_select_docs", {"skill": "pdf", "mode": ""}).field == "mode"
    args = _parsed("workspace_exec", {"command": "ls", "skill": ""}).args
    assert isinstance(args, WorkspaceExecArgs) and args.skill is None


@pytest.mark.parametrize(("tool", "raw", "field"), LONG_STRINGS)
def test_ten_thousand_character_strings_are_invalid_not_a_crash(
    tool: str, raw: dict[str, Any], field: str
) -> None:
    problem = _problem(tool, {**VALID[tool], **raw})
    assert (problem.kind, problem.field) == ("invalid", field)
    assert len(problem.message) < 400  # the value itself is not echoed back


def test_long_string_message_gives_the_cap_and_the_length() -> None:
    problem = _problem("skill_search", {"query": LONG})
    assert problem.message.startswith(
        "Invalid argument 'query': must have at most 1000 characters (got 10000 characters)."
    )


def test_stdin_may_be_long_but_is_capped() -> None:
    assert _parsed("workspace_exec", {"command": "cat", "stdin": LONG})
    assert _problem("workspace_exec", {"command": "cat", "stdin": "x" * 1_000_001}).field == "stdin"


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_malformed_json_is_invalid_with_the_error_position(tool: str) -> None:
    problem = _problem(tool, '{"skill": "pdf",')
    assert (problem.kind, problem.field) == ("invalid", None)
    assert "not valid JSON" in problem.message and "line 1, column 17" in problem.message


@pytest.mark.parametrize("tool", ALL_TOOLS)
def test_json_string_arguments_parse_like_a_mapping(tool: str) -> None:
    assert _parsed(tool, json.dumps(VALID[tool])).args == _parsed(tool, VALID[tool]).args


@pytest.mark.parametrize("raw", ["[1, 2]", "42", '"just text"', "true"])
def test_json_that_is_not_an_object_is_invalid(raw: str) -> None:
    problem = _problem("skill_load", raw)
    assert problem.kind == "invalid" and "must be a JSON object" in problem.message


def test_doubly_encoded_json_is_decoded_with_a_note() -> None:
    parsed = _parsed("skill_load", json.dumps(json.dumps({"skill": "pdf"})))
    assert parsed.args == SkillLoadArgs(skill="pdf")
    assert any("twice" in note for note in parsed.notes)


def test_raw_of_a_type_no_model_sends_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        parse_arguments("skill_load", ["pdf"])  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        parse_arguments("skill_load", {"skill": "pdf"}, skill_names="pdf")


# ---- slips ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("tool", "alias", "field", "value"),
    [
        ("skill_load", "skill_name", "skill", "pdf"),
        ("skill_load", "name", "skill", "pdf"),
        ("skill_load", "skillName", "skill", "pdf"),
        ("skill_unload", "SkillName", "skill", "pdf"),
        ("skill_read_file", "file_path", "path", "a.md"),
        ("skill_read_file", "filepath", "path", "a.md"),
        ("skill_read_file", "file", "path", "a.md"),
        ("skill_read_file", "filename", "path", "a.md"),
        ("skill_read_file", "filePath", "path", "a.md"),
        ("skill_search", "q", "query", "pdf"),
        ("skill_search", "search", "query", "pdf"),
        ("skill_search", "text", "query", "pdf"),
        ("skill_load", "doc", "docs", ["a.md"]),
        ("skill_select_docs", "documents", "docs", ["a.md"]),
        ("skill_select_docs", "includeAllDocs", "include_all_docs", True),
        ("workspace_exec", "cmd", "command", "ls"),
        ("workspace_exec", "timeout", "timeout_s", 5.0),
    ],
)
def test_aliased_argument_names_are_renamed_with_a_note(
    tool: str, alias: str, field: str, value: Any
) -> None:
    raw = {k: v for k, v in VALID[tool].items() if k != field} | {alias: value}
    parsed = _parsed(tool, raw)
    assert getattr(parsed.args, field) == value
    assert f"Read argument '{alias}' as '{field}'." in parsed.notes


def test_canonical_name_wins_over_an_alias_which_is_reported_ignored() -> None:
    parsed = _parsed("skill_load", {"skill": "pdf", "skill_name": "docx", "name": "xlsx"})
    assert parsed.args == SkillLoadArgs(skill="pdf")
    assert parsed.ignored == ("skill_name", "name")


def test_an_alias_for_an_argument_the_tool_lacks_is_ignored() -> None:
    assert _parsed("skill_search", {"query": "x", "file_path": "a.md"}).ignored == ("file_path",)


@pytest.mark.parametrize("field", ["doc", "docs", "documents"])
def test_a_single_doc_string_becomes_a_one_item_list(field: str) -> None:
    parsed = _parsed("skill_select_docs", {"skill": "pdf", field: "references/a.md"})
    assert isinstance(parsed.args, SkillSelectDocsArgs)
    assert parsed.args.docs == ["references/a.md"]
    assert any('as ["references/a.md"]' in note for note in parsed.notes)


@pytest.mark.parametrize(
    "written",
    [
        "**pdf**",
        "`pdf`",
        "``pdf``",
        '"pdf"',
        "'pdf'",
        "“pdf”",
        "  pdf\n",
        "/pdf",
        "`**/pdf**`",
        "*pdf*",
    ],
)
def test_wrapped_skill_names_are_unwrapped_with_a_note(written: str) -> None:
    for tool in ("skill_load", "skill_unload", "skill_list_docs"):
        parsed = _parsed(tool, {"skill": written})
        assert parsed.args.model_dump()["skill"] == "pdf"
        assert parsed.notes == (f'Read skill {json.dumps(written, ensure_ascii=False)} as "pdf".',)


def test_wrapped_skill_names_are_unwrapped_without_a_name_list_too() -> None:
    assert (
        _parsed("skill_load", {"skill": "**/pdf-tools**"}, None).args.model_dump()["skill"]
        == "pdf-tools"
    )


def test_wrapped_paths_and_docs_are_unwrapped() -> None:
    parsed = _parsed("skill_read_file", {"skill": "pdf", "path": " `references/a.md` "})
    assert parsed.args.model_dump()["path"] == "references/a.md"
    parsed = _parsed("skill_load", {"skill": "pdf", "docs": ['"a.md"', "b.md"]})
    assert parsed.args.model_dump()["docs"] == ["a.md", "b.md"]


def test_skill_case_and_separator_slips_match_a_unique_known_name() -> None:
    parsed = _parsed("skill_load", {"skill": "PDF_Tools"})
    assert parsed.args.model_dump()["skill"] == "pdf-tools"
    assert parsed.notes == ('Read skill "PDF_Tools" as "pdf-tools".',)


@pytest.mark.parametrize(
    ("written", "mode"),
    [
        ("Replace", "replace"),
        ("ADD", "add"),
        (" clear ", "clear"),
        ("--replace", "replace"),
        ("_add_", "add"),
        ("re-place", "replace"),
        ("Clear", "clear"),
    ],
)
def test_mode_case_and_separators_are_normalised(written: str, mode: str) -> None:
    parsed = _parsed("skill_select_docs", {"skill": "pdf", "mode": written})
    assert parsed.args.model_dump()["mode"] == mode
    assert parsed.notes == (f'Read mode {json.dumps(written)} as "{mode}".',)


def test_unknown_mode_is_invalid_listing_the_choices() -> None:
    problem = _problem("skill_select_docs", {"skill": "pdf", "mode": "merge"})
    assert problem.message.startswith(
        "Invalid argument 'mode': must be one of 'add', 'replace' or 'clear' (got \"merge\")."
    )


@pytest.mark.parametrize(("written", "value"), [("true", True), ("False", False), (" TRUE ", True)])
def test_boolean_strings_become_booleans_with_a_note(written: str, value: bool) -> None:
    parsed = _parsed("skill_load", {"skill": "pdf", "include_all_docs": written})
    assert parsed.args.model_dump()["include_all_docs"] is value
    assert len(parsed.notes) == 1


@pytest.mark.parametrize(("written", "value"), [("5", 5), (" 20 ", 20), (7.0, 7)])
def test_numeric_limit_strings_and_whole_floats_become_ints(written: Any, value: int) -> None:
    parsed = _parsed("skill_search", {"query": "x", "limit": written})
    assert parsed.args == SkillSearchArgs(query="x", limit=value)
    assert parsed.notes == (f"Read limit {json.dumps(written)} as {value}.",)


@pytest.mark.parametrize("written", ["5.5", 5.5, "five", True, None])
def test_non_integer_limits_are_invalid_or_default(written: Any) -> None:
    result = parse_arguments("skill_search", {"query": "x", "limit": written})
    if written is None:  # null for an optional argument means its default
        assert isinstance(result, ParsedArgs) and result.args.model_dump()["limit"] == 10
    else:
        assert isinstance(result, ArgumentProblem) and result.field == "limit"


def test_out_of_range_limit_says_the_bounds_and_the_value() -> None:
    problem = _problem("skill_search", {"query": "x", "limit": 500})
    assert problem.message == (
        "Invalid argument 'limit': must be between 1 and 50 (got 500). "
        "Fix it and call skill_search again."
    )
    assert _problem("skill_search", {"query": "x", "limit": 0}).field == "limit"


@pytest.mark.parametrize("timeout", [0, -1, 3600.5, "0"])
def test_timeout_must_be_positive_and_at_most_an_hour(timeout: Any) -> None:
    problem = _problem("workspace_exec", {"command": "ls", "timeout_s": timeout})
    assert "must be more than 0 and at most 3600" in problem.message


def test_timeout_accepts_ints_and_numeric_strings() -> None:
    assert (
        _parsed("workspace_exec", {"command": "ls", "timeout_s": 5}).args.model_dump()["timeout_s"]
        == 5.0
    )
    assert (
        _parsed("workspace_exec", {"command": "ls", "timeout_s": "2.5"}).args.model_dump()[
            "timeout_s"
        ]
        == 2.5
    )


def test_more_than_fifty_docs_is_invalid() -> None:
    problem = _problem("skill_load", {"skill": "pdf", "docs": [f"d{i}.md" for i in range(51)]})
    assert problem.message.startswith(
        "Invalid argument 'docs': must have at most 50 entries (got 51 entries)."
    )


def test_defaults_fill_absent_optional_arguments() -> None:
    args = _parsed("workspace_exec", {"command": "ls"}).args
    assert args == WorkspaceExecArgs(command="ls", skill=None, timeout_s=60, collect=[], stdin=None)
    assert _parsed("skill_select_docs", {"skill": "pdf"}).args == SkillSelectDocsArgs(
        skill="pdf", docs=[], include_all_docs=False, mode="add"
    )


def test_collect_single_glob_becomes_a_list() -> None:
    parsed = _parsed("workspace_exec", {"command": "ls", "collect": "out/*.png"})
    assert parsed.args.model_dump()["collect"] == ["out/*.png"]


def test_query_is_stripped() -> None:
    assert (
        _parsed("skill_search", {"query": "  merge pdfs "}).args.model_dump()["query"]
        == "merge pdfs"
    )


# ---- unknown skills and tools ----------------------------------------------------------------


def test_unknown_skill_is_reported_with_the_closest_names() -> None:
    problem = _problem("skill_load", {"skill": "pdff"})
    assert (problem.kind, problem.field) == ("unknown_skill", "skill")
    assert problem.suggestions[0] == "pdf" and len(problem.suggestions) <= 3
    assert "Did you mean: pdf" in problem.message and "skill_list" in problem.message


def test_unknown_skill_without_close_names_still_guides_the_model() -> None:
    problem = _problem("skill_unload", {"skill": "weather"})
    assert problem.suggestions == () and "Did you mean" not in problem.message
    assert "ask the user" in problem.message


@pytest.mark.parametrize(
    "tool", [t for t in ALL_TOOLS if "skill" in VALID[t] or t == "workspace_exec"]
)
def test_every_skill_argument_is_checked_against_visible_names(tool: str) -> None:
    problem = _problem(tool, {**VALID[tool], "skill": "hidden-skill"})
    assert problem.kind == "unknown_skill"


def test_skill_names_are_not_checked_when_none_are_given() -> None:
    assert (
        _parsed("skill_load", {"skill": "anything"}, None).args.model_dump()["skill"] == "anything"
    )


def test_an_empty_visible_set_rejects_every_skill() -> None:
    assert _problem("skill_load", {"skill": "pdf"}, []).kind == "unknown_skill"


def test_unknown_tool_lists_the_valid_tools() -> None:
    problem = _problem("skill_explode", {})
    assert (problem.kind, problem.field, problem.tool) == ("unknown_tool", None, "skill_explode")
    assert all(name in problem.message for name in ALL_TOOLS)


@pytest.mark.parametrize(
    "written", ["Skill_Load", "skill-load", " SKILL_LOAD ", "functions.skill_load"]
)
def test_tool_name_case_and_dashes_are_forgiven_with_a_note(written: str) -> None:
    parsed = _parsed(written, {"skill": "pdf"})
    assert parsed.tool == "skill_load"
    assert parsed.notes == (f"Read tool name {json.dumps(written)} as 'skill_load'.",)


def test_results_are_frozen() -> None:
    parsed = _parsed("skill_load", {"skill": "pdf"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        parsed.tool = "x"  # type: ignore[misc]
    with pytest.raises(ValueError, match="frozen"):
        parsed.args.skill = "docx"  # type: ignore[attr-defined]


_JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=30),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=10), inner, max_size=4)
    ),
    max_leaves=10,
)
_KEYS = st.sampled_from(
    [
        "skill",
        "skill_name",
        "path",
        "file",
        "query",
        "q",
        "limit",
        "docs",
        "doc",
        "mode",
        "include_all_docs",
        "command",
        "timeout_s",
        "collect",
        "stdin",
        "other",
    ]
)


@settings(max_examples=300, deadline=None)
@given(st.sampled_from(ALL_TOOLS), st.dictionaries(_KEYS, _JSON, max_size=6))
def test_any_json_arguments_give_a_result_never_an_exception(
    tool: str, raw: dict[str, Any]
) -> None:
    result = parse_arguments(tool, raw, skill_names=NAMES)
    assert isinstance(result, ParsedArgs | ArgumentProblem)
    assert isinstance(parse_arguments(tool, json.dumps(raw)), ParsedArgs | ArgumentProblem)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=40))
def test_any_argument_text_gives_a_result_never_an_exception(raw: str) -> None:
    assert isinstance(parse_arguments("skill_load", raw), ParsedArgs | ArgumentProblem)


@pytest.mark.parametrize(
    ("tool", "same", "other"),
    [
        (
            "skill_read_file",
            [
                {"skill": "pdf", "path": "a.md"},
                '{ "path" : "a.md", "skill" : "pdf" }',
                {"Skill": "PDF", "file": "**a.md**"},
                '"{\\"skill\\": \\"pdf\\", \\"path\\": \\"a.md\\"}"',  # JSON-encoded twice
            ],
            {"skill": "pdf", "path": "b.md"},
        ),
        (
            "workspace_exec",
            [
                {"command": "ls", "timeout_s": 60},
                {"cmd": "ls", "TIMEOUT": "60"},
                '{"command":"ls","timeout":60.0}',
            ],
            {"command": "ls"},  # without timeout_s the skill's own limit applies: another call
        ),
        ("mystery", [{"A": 1}, '{"a":1}'], {"a": 2}),
    ],
)
def test_failure_signature_reads_a_respelt_call_as_the_same_call(
    tool: str, same: list[dict[str, Any] | str], other: dict[str, Any]
) -> None:
    keys = {failure_signature(tool, raw, skill_names=NAMES) for raw in same}
    assert len(keys) == 1
    assert failure_signature(tool, other, skill_names=NAMES) not in keys


def test_failure_signature_of_a_caller_tool_reads_its_model() -> None:
    class Args(BaseModel):
        city: str
        days: int = 1

    same: list[dict[str, Any] | str] = [
        {"city": "Oslo", "days": 1},
        '{"City": "Oslo", "days": "1"}',
        {"city": "Oslo", "Days": 1.0},
    ]
    assert len({failure_signature("weather", raw, model=Args) for raw in same}) == 1
    assert failure_signature("weather", {"city": "Bergen"}, model=Args) != failure_signature(
        "weather", same[0], model=Args
    )


def test_failure_signature_of_malformed_json_is_the_text() -> None:
    assert failure_signature("skill_load", '{"skill": ') == failure_signature(
        "skill_load", '{"skill": '
    )
    assert failure_signature("skill_load", '{"skill": ') != failure_signature("skill_load", "{")

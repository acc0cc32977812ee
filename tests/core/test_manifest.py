"""Manifest building: diagnostic codes in strict and lenient mode, extensions, coercions."""

from __future__ import annotations

import pytest

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Mode, parse_frontmatter
from skillshelf.core.manifest import Manifest, build_manifest, parse_allowed_tools


def _build(
    yaml_text: str, *, dir_name: str | None = "my-skill", mode: Mode = "lenient"
) -> tuple[Manifest | None, list[Diagnostic]]:
    fm = parse_frontmatter(f"---\n{yaml_text}\n---\nbody\n", mode=mode)
    return build_manifest(fm, dir_name=dir_name, mode=mode)


def _codes(diags: list[Diagnostic]) -> dict[str, str]:
    return {d.code: d.severity for d in diags}


def test_valid_skill_has_no_diagnostics() -> None:
    manifest, diags = _build("name: my-skill\ndescription: Does things. Use when asked.")
    assert diags == []
    assert manifest is not None
    assert manifest.name == "my-skill"
    assert manifest.metadata == {}


@pytest.mark.parametrize(
    ("name", "code"),
    [
        ("MySkill", "name.case"),
        ("-my-skill", "name.hyphen_edge"),
        ("my-skill-", "name.hyphen_edge"),
        ("my--skill", "name.consecutive_hyphens"),
        ("my_skill", "name.chars"),
        ("a" * 65, "name.too_long"),
    ],
)
def test_bad_names_are_errors_in_strict_and_warnings_in_lenient(name: str, code: str) -> None:
    manifest, lenient = _build(f"name: {name}\ndescription: d", dir_name=name)
    _, strict = _build(f"name: {name}\ndescription: d", dir_name=name, mode="strict")
    assert _codes(strict)[code] == "error"
    assert _codes(lenient)[code] == "warning"
    assert manifest is not None


@pytest.mark.parametrize("name", ["a/b", "..", "a\\b", '"line\\nbreak"', '"tab\\there"'])
def test_names_unsafe_as_a_folder_or_command_are_lenient_errors(name: str) -> None:
    _, lenient = _build(f"name: {name}\ndescription: d", dir_name=None)
    assert _codes(lenient)["name.unsafe"] == "error"


def test_strict_mode_reports_unsafe_names_as_skills_ref_does() -> None:
    _, strict = _build("name: a/b\ndescription: d", dir_name=None, mode="strict")
    assert _codes(strict) == {"name.chars": "error"}


def test_uppercase_name_reports_name_case_with_line() -> None:
    _, diags = _build("description: d\nname: MySkill", dir_name="MySkill")
    case = next(d for d in diags if d.code == "name.case")
    assert case.line == 3
    assert "lowercase" in case.message


@pytest.mark.parametrize("name", ["技能", "мой-навык", "café"])
def test_unicode_letters_are_allowed_in_names(name: str) -> None:
    _, diags = _build(f"name: {name}\ndescription: d", dir_name=name)
    assert diags == []


def test_nfkc_normalised_name_matches_composed_directory() -> None:
    _, diags = _build("name: cafe\u0301\ndescription: d", dir_name="café")
    assert diags == []


def test_missing_name_makes_skill_unusable() -> None:
    manifest, diags = _build("description: d")
    assert manifest is None
    assert _codes(diags) == {"name.missing": "error"}


@pytest.mark.parametrize("desc", ['""', "''", "   ''", "\n  - a\n  - b"])
def test_empty_or_non_string_description_makes_skill_unusable(desc: str) -> None:
    manifest, diags = _build(f"name: my-skill\ndescription: {desc}")
    assert manifest is None
    assert _codes(diags) == {"description.empty": "error"}


def test_dir_mismatch_is_warning_in_lenient_and_error_in_strict() -> None:
    _, lenient = _build("name: other\ndescription: d")
    _, strict = _build("name: other\ndescription: d", mode="strict")
    assert _codes(lenient)["name.dir_mismatch"] == "warning"
    assert _codes(strict)["name.dir_mismatch"] == "error"
    assert "must match skill name" in strict[0].message


def test_long_description_is_warning_in_lenient_and_error_in_strict() -> None:
    text = f"name: my-skill\ndescription: {'x' * 1025}"
    manifest, lenient = _build(text)
    _, strict = _build(text, mode="strict")
    assert _codes(lenient) == {"description.too_long": "warning"}
    assert _codes(strict) == {"description.too_long": "error"}
    assert manifest is not None and len(manifest.description) == 1025


def test_unknown_keys_warn_in_lenient_and_fail_in_strict() -> None:
    _, lenient = _build("name: my-skill\ndescription: d\nfoo: 1")
    _, strict = _build("name: my-skill\ndescription: d\nfoo: 1", mode="strict")
    assert _codes(lenient) == {"field.unknown": "warning"}
    assert _codes(strict) == {"field.unknown": "error"}
    assert "Unexpected fields in frontmatter: foo" in strict[0].message


def test_extension_keys_are_understood_in_lenient_mode() -> None:
    manifest, diags = _build(
        "name: my-skill\ndescription: d\ndisable-model-invocation: true\nuser-invocable: no\n"
        "argument-hint: '[file]'\nwhen_to_use: when x\nversion: 2.0\ntags: [a, b]\n"
        "trigger: run it\ntrigger_patterns:\n  - go now\ntools: Read, Grep"
    )
    assert diags == []
    assert manifest is not None
    assert manifest.disable_model_invocation is True
    assert manifest.user_invocable is False
    assert manifest.argument_hint == "[file]"
    assert manifest.when_to_use == "when x"
    assert manifest.version == "2.0"
    assert manifest.tags == ("a", "b")
    assert manifest.triggers == ("run it", "go now")
    assert manifest.allowed_tools == ("Read", "Grep")


def test_extension_keys_are_unexpected_in_strict_mode() -> None:
    _, diags = _build("name: my-skill\ndescription: d\nversion: 1", mode="strict")
    assert _codes(diags) == {"field.unknown": "error"}


def test_bad_boolean_extension_warns_and_keeps_default() -> None:
    manifest, diags = _build("name: my-skill\ndescription: d\nuser-invocable: maybe")
    assert _codes(diags) == {"extension.type": "warning"}
    assert manifest is not None and manifest.user_invocable is True


def test_non_string_metadata_values_are_converted_and_reported() -> None:
    manifest, diags = _build(
        "name: my-skill\ndescription: d\nmetadata:\n  a: x\n  b:\n    c: d\n  e: [1, 2]"
    )
    assert _codes(diags) == {"metadata.non_string": "warning"}
    assert manifest is not None
    assert manifest.metadata == {"a": "x", "b": '{"c": "d"}', "e": '["1", "2"]'}


def test_non_mapping_metadata_is_reported_not_fatal() -> None:
    manifest, diags = _build("name: my-skill\ndescription: d\nmetadata: hello")
    assert _codes(diags) == {"metadata.type": "warning"}
    assert manifest is not None and manifest.metadata == {}


def test_compatibility_too_long_is_an_error_in_strict_and_a_warning_in_lenient() -> None:
    text = f"name: my-skill\ndescription: d\ncompatibility: {'x' * 501}"
    assert _codes(_build(text, mode="strict")[1]) == {"compatibility.too_long": "error"}
    assert _codes(_build(text)[1]) == {"compatibility.too_long": "warning"}


def test_unknown_keys_are_kept_verbatim_in_extra() -> None:
    manifest, _ = _build("name: my-skill\ndescription: d\nowner:\n  team: infra")
    assert manifest is not None
    assert manifest.extra == {"owner": {"team": "infra"}}


@pytest.mark.parametrize(
    ("yaml_text", "author"),
    [
        ("metadata:\n  author: Ada Lovelace", "Ada Lovelace"),
        ("author: Grace Hopper", "Grace Hopper"),
        ("author: Grace\nmetadata:\n  author: Ada", "Ada"),  # the spec's place first
        ("author: [a, b]", None),  # not a string: no author
        ("metadata:\n  author: '  '", None),
        ('author: "Eve \\u202e\\u200b"', "Eve \\u202e\\u200b"),  # bidi, zero-width as escapes
        (f"author: {'x' * 300}", "x" * 199 + "…"),
    ],
)
def test_author_comes_from_metadata_or_a_top_level_key_escaped_and_cut(
    yaml_text: str, author: str | None
) -> None:
    manifest, _ = _build(f"name: my-skill\ndescription: d\n{yaml_text}")
    assert manifest is not None and manifest.author == author


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("Bash(git:*) Read", ("Bash(git:*)", "Read")),
        ("Bash(git status:*) Read, Grep", ("Bash(git status:*)", "Read", "Grep")),
        ("  ", ()),
        ("Bash(python3 scripts/run.py:*)", ("Bash(python3 scripts/run.py:*)",)),
    ],
)
def test_allowed_tools_split_outside_parentheses(raw: str, expected: tuple[str, ...]) -> None:
    assert parse_allowed_tools(raw) == expected


def test_allowed_tools_string_is_kept_raw_for_skills_ref() -> None:
    manifest, diags = _build("name: my-skill\ndescription: d\nallowed-tools: Bash(jq:*) Read")
    assert diags == []
    assert manifest is not None
    assert manifest.allowed_tools_raw == "Bash(jq:*) Read"
    assert manifest.allowed_tools == ("Bash(jq:*)", "Read")

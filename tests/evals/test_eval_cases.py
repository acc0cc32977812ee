"""Cases files: every format parses to the same cases; every bad case is reported with where
it is and which field."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillshelf.evals.cases import CasesError, EvalCase, check_cases, load_cases, parse_cases

GOOD = [
    {"query": "summarise data.csv", "expected_skill": "csv-insights", "id": "csv"},
    {"query": "write a poem", "expected_skill": None, "note": "no skill"},
    {
        "query": "why 503?",
        "expected_skill": "api-error-triage",
        "expected_docs": ["./references/http-status.md"],
        "expected_params": {"skill_load": {"skill": "api-error-triage"}},
    },
]

YAML_GOOD = """\
cases:
  - query: summarise data.csv
    expected_skill: csv-insights
    id: csv
  - query: write a poem
    expected_skill: null
    note: no skill
  - query: why 503?
    expected_skill: api-error-triage
    expected_docs: [./references/http-status.md]
    expected_params: {skill_load: {skill: api-error-triage}}
"""


def problems(exc: pytest.ExceptionInfo[CasesError]) -> list[str]:
    return [str(p) for p in exc.value.problems]


def test_json_yaml_and_jsonl_give_the_same_cases(tmp_path: Path) -> None:
    (tmp_path / "c.json").write_text(json.dumps(GOOD))
    (tmp_path / "wrapped.json").write_text(json.dumps({"cases": GOOD}))
    (tmp_path / "c.jsonl").write_text("\n".join(json.dumps(c) for c in GOOD) + "\n\n")
    (tmp_path / "c.yaml").write_text(YAML_GOOD)
    loaded = [load_cases(tmp_path / n) for n in ("c.json", "wrapped.json", "c.jsonl", "c.yaml")]
    assert all(cases == loaded[0] for cases in loaded)
    first, second, third = loaded[0]
    assert first == EvalCase("csv", "summarise data.csv", "csv-insights")
    assert (second.id, second.expected_skill, second.note) == ("case-002", None, "no skill")
    assert third.expected_docs == ("references/http-status.md",)  # normalised
    assert third.expected_params == {"skill_load": {"skill": "api-error-triage"}}


def test_every_bad_json_case_is_reported_with_its_number_and_field() -> None:
    text = json.dumps(
        [
            {"query": "ok", "expected_skill": "a"},
            {"query": "no expectation"},
            {"query": "", "expected_skill": "a"},
            {"query": "typo", "expected_skil": "a", "expected_skill": "a"},
            "just a string",
            {"query": 3, "expected_skill": "a"},
        ]
    )
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "json", source="cases.json")
    assert problems(exc) == [
        "case 2, field 'expected_skill': missing: give the skill's name, or null for a query "
        "that must load no skill",
        "case 3, field 'query': must not be empty",
        "case 4, field 'expected_skil': unknown key; a case has query (or user), "
        "expected_skill, expected_docs, expected_params, expected_answer, tool, tools, note "
        "and id",
        "case 5: a case must be an object (a mapping)",
        "case 6, field 'query': Input should be a valid string",
    ]
    assert str(exc.value).startswith("cases.json: 5 problems\n  case 2, field")


def test_yaml_problems_carry_the_line_of_the_case() -> None:
    text = "- query: fine\n  expected_skill: a\n- query: yes\n  expected_skill: a\n"
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "yaml")
    # YAML reads a bare `yes` as a boolean: the message says a string is needed.
    assert problems(exc) == ["case 2 (line 3), field 'query': Input should be a valid string"]


def test_jsonl_reports_the_line_of_malformed_json_and_of_bad_cases() -> None:
    text = '{"query": "a", "expected_skill": null}\n{oops\n\n{"query": "b"}\n'
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "jsonl")
    first, second = problems(exc)
    assert first.startswith("line 2: not valid JSON: Expecting property name")
    assert second.startswith("case 2 (line 4), field 'expected_skill': missing")


@pytest.mark.parametrize(
    ("text", "fmt", "message"),
    [
        ("[1, 2", "json", "file: not valid JSON: Expecting ',' delimiter"),
        ("- query: [unclosed\n", "yaml", "file: not valid YAML:"),
        ('{"query": "x"}', "json", 'file: the file must hold a list of cases, or {"cases": [...]}'),
        ("[]", "json", "file: no cases: the file holds an empty list"),
        ("", "yaml", 'file: the file must hold a list of cases, or {"cases": [...]}'),
        ("cases: []\n", "yaml", "file: no cases"),
    ],
)
def test_malformed_or_empty_files_say_what_is_wrong(text: str, fmt: str, message: str) -> None:
    with pytest.raises(CasesError) as exc:
        parse_cases(text, fmt)  # type: ignore[arg-type]
    assert problems(exc)[0].startswith(message)


def test_yaml_tags_that_build_objects_are_refused() -> None:
    text = "- query: !!python/object/apply:os.system ['true']\n  expected_skill: a\n"
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "yaml")
    assert "not valid YAML" in problems(exc)[0]


def test_duplicate_and_unusable_ids_are_errors() -> None:
    text = json.dumps(
        [
            {"query": "a", "expected_skill": None, "id": "same"},
            {"query": "b", "expected_skill": None, "id": "same"},
            {"query": "c", "expected_skill": None, "id": "../escape"},
        ]
    )
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "json")
    assert problems(exc)[0] == "case 2, field 'id': duplicate id 'same' (case 1)"
    assert problems(exc)[1].startswith("case 3, field 'id': must be 1-100 letters")


def test_docs_must_stay_inside_the_skill_and_need_an_expected_skill() -> None:
    text = json.dumps(
        [
            {"query": "a", "expected_skill": "x", "expected_docs": ["../../etc/passwd"]},
            {"query": "b", "expected_skill": None, "expected_docs": ["a.md"]},
        ]
    )
    with pytest.raises(CasesError) as exc:
        parse_cases(text, "json")
    assert problems(exc) == [
        "case 1, field 'expected_docs': '../../etc/passwd' must be a file path relative to "
        "the skill's folder",
        "case 2, field 'expected_docs': needs an expected_skill: the docs are paths inside "
        "that skill",
    ]


def test_unknown_suffix_and_unreadable_file(tmp_path: Path) -> None:
    with pytest.raises(CasesError, match=r"use a \.json, \.jsonl, \.yaml or \.yml file"):
        load_cases(tmp_path / "cases.txt")
    with pytest.raises(CasesError, match="cannot read it"):
        load_cases(tmp_path / "missing.json")


def test_unknown_expected_skill_names_the_closest_ones(tmp_path: Path) -> None:
    (tmp_path / "csv-insights" / "references").mkdir(parents=True)
    (tmp_path / "csv-insights" / "references" / "a.md").write_text("x")
    skills = {"csv-insights": tmp_path / "csv-insights", "hidden": None, "pdf": tmp_path}
    cases = [
        EvalCase("one", "q", "csv-insight"),
        EvalCase("two", "q", "hidden"),
        EvalCase("three", "q", "csv-insights", expected_docs=("references/a.md", "b.md")),
        EvalCase("four", "q", None, expected_params={"skill_laod": {"skill": "x"}}),
        EvalCase("five", "q", "csv-insights", expected_docs=("references",)),
    ]
    with pytest.raises(CasesError) as exc:
        check_cases(cases, skills)
    assert problems(exc) == [
        "case 1 (one), field 'expected_skill': Unknown skill \"csv-insight\". Did you mean: "
        "csv-insights?",
        "case 2 (two), field 'expected_skill': 'hidden' sets disable-model-invocation: true, "
        "so no model can load it",
        "case 3 (three), field 'expected_docs': 'b.md' is not a file of the skill 'csv-insights'",
        "case 4 (four), field 'expected_params.skill_laod': unknown tool 'skill_laod'; did "
        "you mean skill_load, skill_unload, skill_list?",
        "case 5 (five), field 'expected_docs': 'references' is not a file of the skill "
        "'csv-insights'",
    ]


def test_the_bundled_example_cases_fit_the_bundled_skills() -> None:
    from skillshelf.repository import Repository

    examples = Path(__file__).resolve().parents[2] / "examples"
    repo = Repository([examples / "skills"], cache_dir=False)
    cases = load_cases(examples / "evals" / "cases.yaml")
    check_cases(cases, {s.name: Path(s.directory) for s in repo.skills})
    assert {c.expected_skill for c in cases} == {*repo.names(), None}

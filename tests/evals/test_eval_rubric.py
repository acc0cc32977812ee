"""Answer rubrics: a case checks the final answer (contains, regex, JSON Schema), reported per
case beside the skill decision."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from skillshelf.errors import MissingExtraError
from skillshelf.evals.cases import CasesError, parse_cases
from skillshelf.evals.render import render_text, report_sections
from skillshelf.evals.report import build_report
from skillshelf.evals.rubric import AnswerRubric
from skillshelf.evals.runner import run_cases
from skillshelf.repository import Repository
from skillshelf.testing import make_skill, reply, scripted_by_query

TOTAL_SCHEMA = {
    "type": "object",
    "properties": {"total": {"type": "number"}, "rows": {"type": "integer", "minimum": 1}},
    "required": ["total", "rows"],
}


def test_contains_takes_a_string_or_all_of_a_list() -> None:
    assert AnswerRubric(contains=("42",)).check("The total is 42.") == ()
    assert AnswerRubric(contains=("42", "rows")).check("The total is 42.") == (
        "does not contain 'rows'",
    )
    assert AnswerRubric(contains=("TOTAL",), ignore_case=True).check("the total") == ()


def test_regex_matches_anywhere() -> None:
    rubric = AnswerRubric(regex=r"total: \d+")
    assert rubric.check("... total: 17 ...") == ()
    assert rubric.check("total: many") == (r"does not match /total: \d+/",)


def test_json_schema_reads_the_whole_answer_or_its_first_fenced_block() -> None:
    rubric = AnswerRubric(json_schema=TOTAL_SCHEMA)
    assert rubric.check('{"total": 12.5, "rows": 3}') == ()
    assert rubric.check('Here:\n```json\n{"total": 1, "rows": 2}\n```\nDone.') == ()
    assert rubric.check("twelve") == (
        "is not JSON (neither the whole answer nor its first fenced code block)",
    )
    assert rubric.check('{"total": "12", "rows": 0}') == (
        "JSON at /rows: 0 is less than the minimum of 1",
        "JSON at /total: '12' is not of type 'number'",
    )
    assert rubric.check("[1]") == ("JSON at the top: [1] is not of type 'object'",)


def test_a_case_file_with_rubrics_is_checked_when_read() -> None:
    cases = [
        {"query": "a", "expected_skill": None, "expected_answer": {"contains": "x"}},
        {"query": "b", "expected_skill": None, "expected_answer": {"regex": "("}},
        {"query": "c", "expected_skill": None, "expected_answer": {"json_schema": {"type": 3}}},
        {"query": "d", "expected_skill": None, "expected_answer": {}},
        {"query": "e", "expected_skill": None, "expected_answer": {"contain": "x"}},
        {"query": "f", "expected_skill": None, "expected_answer": {"contains": ["a", ""]}},
    ]
    with pytest.raises(CasesError) as caught:
        parse_cases(json.dumps(cases), "json")
    problems = [str(p) for p in caught.value.problems]
    assert problems[0].startswith(
        "case 2, field 'expected_answer.regex': not a valid regular expression: "
    )
    assert problems[1].startswith(
        "case 3, field 'expected_answer.json_schema': not a valid JSON Schema: type: 3 is not "
    )
    assert problems[2:] == [
        "case 4, field 'expected_answer': give contains, regex or json_schema (or leave "
        "expected_answer out)",
        "case 5, field 'expected_answer.contain': unknown key; expected_answer has contains, "
        "regex, json_schema and ignore_case",
        "case 6, field 'expected_answer.contains': an empty string is in every answer: give "
        "words to look for",
    ]


def test_without_jsonschema_a_schema_rubric_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    with pytest.raises(MissingExtraError, match="'evals' extra"):
        AnswerRubric(json_schema={"type": "object"}).check("{}")
    case: dict[str, Any] = {
        "query": "q",
        "expected_skill": None,
        "expected_answer": {"json_schema": {}},
    }
    with pytest.raises(CasesError, match="needs the 'jsonschema' package, from the 'evals'"):
        parse_cases(json.dumps([case]), "json")


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "csv-sum", "Sums CSV columns. Use to total a CSV file.")
    return Repository([tmp_path / "skills"], cache_dir=False)


def test_the_report_shows_each_cases_answer_check_beside_its_skill_decision(
    repo: Repository,
) -> None:
    load = reply(tools=[("skill_load", {"skill": "csv-sum"})])
    scripts: dict[str, Any] = {
        "total good": [load, reply('```json\n{"total": 12, "rows": 3}\n```')],
        "total bad": [load, reply("It is about twelve.")],
    }
    rubric = {"json_schema": TOTAL_SCHEMA, "contains": "12"}
    written = [
        {
            "id": case,
            "query": f"total {case}",
            "expected_skill": "csv-sum",
            "expected_answer": rubric,
        }
        for case in ("good", "bad")
    ]
    cases = parse_cases(json.dumps(written), "json")
    outcomes = anyio.run(lambda: run_cases(cases, repo, scripted_by_query(scripts)))
    assert outcomes[1].answer == "It is about twelve."
    report = build_report(cases, outcomes, model="m", runs_per_case=1)
    good, bad = report.cases
    assert (good.predicted, good.answers_ok, good.status) == (("csv-sum",), 1, "pass")
    assert (bad.predicted, bad.answers_ok, bad.status) == (("csv-sum",), 0, "fail")
    assert report.skills[0].recall == 1.0  # the skill was loaded both times: the answer failed
    assert report.summary.answer_accuracy.to_json() == {"value": 0.5, "hits": 1, "total": 2}
    text = render_text(report_sections(report))
    assert "answer accuracy\t0.50 (1/2)" in text
    assert "bad\tcsv-sum\tcsv-sum\tfull (catalog)\t–\t0/1\t0/1\tfail" in text
    assert (
        "bad\tdoes not contain '12'; is not JSON (neither the whole answer nor its first "
        "fenced code block)" in text
    )
    document = report.to_json()
    assert document["cases"][1]["answer_problems"][0] == "does not contain '12'"
    assert document["runs"][0]["answer"] == '```json\n{"total": 12, "rows": 3}\n```'

"""Precision of ``script.missing`` on a labelled sample of real findings.

``data/script_findings.json`` holds 46 findings an earlier ``script.missing`` (then always an
error) reported on three public collections (trailofbits/skills, sickn33/antigravity-awesome-
skills, K-Dense-AI/claude-scientific-skills; licences and commits in ``data/SOURCE.md``): the
SKILL.md excerpt up to the finding, the skill's file list, and a person's verdict — ``true``
when the skill really lacks a file it tells the model to run, ``false`` for the kinds that
misled it (external tools run from the working folder, scripts of a cloned repository, files
the body writes first, the user's project, globs cut short, other trees' root variables).

Error severity must be right at least 90% of the time, and still catch most true findings.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from skillshelf.lint import LintSubject, lint_subjects

DATA = Path(__file__).with_name("data") / "script_findings.json"
CASES: list[dict[str, Any]] = json.loads(DATA.read_text(encoding="utf-8"))
MIN_PRECISION = 0.9
MIN_RECALL = 0.7


def _code(case: dict[str, Any]) -> str | None:
    subject = LintSubject(
        "sample",
        "A sample skill. Use when testing.",
        body=str(case["excerpt"]),
        body_line=int(case["excerpt_line"]),
        files=frozenset(case["files"]),
    )
    report = lint_subjects([subject], select=["script", "file.missing"])
    codes = [f.code for f in report.findings if f"{case['path']}'" in f.message]
    return codes[0] if codes else None


def test_the_sample_is_large_and_holds_both_verdicts() -> None:
    verdicts = Counter(str(c["verdict"]) for c in CASES)
    assert len(CASES) >= 30 and verdicts["true"] >= 10 and verdicts["false"] >= 20


def test_error_severity_is_precise_on_real_findings() -> None:
    errors = [c for c in CASES if _code(c) == "script.missing"]
    true = [c for c in errors if c["verdict"] == "true"]
    assert errors
    wrong = [f"{c['file']}:{c['line']} {c['path']} ({c['why']})" for c in errors if c not in true]
    assert len(true) / len(errors) >= MIN_PRECISION, wrong


def test_error_severity_still_catches_most_true_findings() -> None:
    true = [c for c in CASES if c["verdict"] == "true"]
    caught = [c for c in true if _code(c) == "script.missing"]
    assert len(caught) / len(true) >= MIN_RECALL


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['file']}:{c['line']}")
def test_every_false_finding_is_at_most_info(case: dict[str, Any]) -> None:
    if case["verdict"] == "false":
        assert _code(case) in (None, "script.unverified", "file.missing")

"""Lint reads Chinese, Japanese and Korean descriptions: word counts and "when" wording."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.lint import LintReport, LintSubject, lint_repository, lint_subjects
from skillshelf.repository import Repository

EXAMPLES_ZH = Path(__file__).resolve().parents[2] / "examples" / "skills-zh"


def codes(report: LintReport) -> list[str]:
    return [f.code for f in report.findings]


def lint_description(description: str) -> list[str]:
    return codes(lint_subjects([LintSubject("minutes", description)]))


@pytest.mark.parametrize(
    "description",
    [
        "把会议录音整理成会议纪要，列出决议和待办事项。当用户提供会议记录并要求整理纪要时使用。",
        "核对发票的抬头、税号和金额是否符合报销要求，适用于差旅和日常费用报销。",
        "根据工作记录撰写周报，用于向领导汇报本周完成的工作和下周计划。",
        "会議の録音を議事録にまとめ、決定事項と宿題を整理する。会議メモを渡されたときに使用する。",
        "회의 녹음을 회의록으로 정리하고 결정 사항과 할 일을 목록으로 만듭니다. "
        "회의록 정리를 요청할 때 사용합니다.",
    ],
)
def test_a_cjk_description_with_when_wording_has_no_findings(description: str) -> None:
    assert lint_description(description) == []


def test_a_cjk_description_without_when_wording_reports_no_trigger() -> None:
    assert lint_description(
        "把会议录音的文字稿整理成结构化的会议纪要，包括参会人、议题、讨论要点、决议和待办。"
    ) == ["description.no_trigger"]


def test_a_short_chinese_description_counts_characters_as_words() -> None:
    report = lint_subjects([LintSubject("minutes", "整理会议纪要时使用")])
    assert codes(report) == ["description.too_short"]
    assert "5 words" in report.findings[0].message  # 9 characters, about 2 each


def test_the_chinese_examples_lint_clean() -> None:
    report = lint_repository(Repository([EXAMPLES_ZH], cache_dir=False))
    assert codes(report) == []

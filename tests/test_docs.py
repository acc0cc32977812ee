"""The README's tour and the docs stay true: their example commands print what they show."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.cli import main

REPO = Path(__file__).resolve().parents[1]


def _quoted_console(page: str, command: str) -> list[str]:
    """The lines a page shows after ``$ <command>``, up to the closing fence."""
    text = (REPO / page).read_text(encoding="utf-8")
    after = text.split(f"$ {command}\n", 1)[1]
    return after.split("```", 1)[0].splitlines()


def test_readme_tour_chat_prints_what_the_readme_shows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path))
    command = (
        "skillshelf chat --root examples/skills --model scripted:docs/tour-replies.json "
        '-m "Summarise sales.csv for me"'
    )
    status, answer = _quoted_console("README.md", command)
    args = [
        "chat",
        "--root",
        "examples/skills",
        "--model",
        "scripted:docs/tour-replies.json",
        "-m",
        "Summarise sales.csv for me",
    ]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert result.stdout.strip() == answer
    assert result.stderr.strip() == status


def test_readme_tour_validate_prints_what_the_readme_shows(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(REPO)
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path))
    shown = _quoted_console("README.md", "skillshelf validate --strict examples/skills")[:5]
    result = CliRunner().invoke(main, ["validate", "--strict", "examples/skills"])
    assert result.exit_code == 0, result.output
    printed = result.stdout.splitlines() + result.stderr.splitlines()  # the summary: stderr
    assert len(printed) == len(shown)
    for line, expected in zip(printed, shown, strict=True):
        assert line.replace(str(REPO), "…") == expected

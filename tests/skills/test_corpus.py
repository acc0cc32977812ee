"""Real skills from public repositories (tests/corpus) load and validate as skills-ref does."""

from __future__ import annotations

from pathlib import Path

from corpus_paths import ANTHROPIC, COLLECTION_ROOTS, OBRA, OPENAI
from skillshelf.repository import Repository
from skillshelf.skills.validate import validate_path


def _roots() -> list[Path]:
    return list(COLLECTION_ROOTS)


def test_every_corpus_skill_loads_in_lenient_mode() -> None:
    repo = Repository(_roots(), include_hidden=True, cache_dir=False)
    assert repo.skipped == []
    assert len(repo) + len(repo.shadowed) == 36
    assert [s.skill.name for s in repo.shadowed] == ["skill-creator"]


def test_openai_skills_need_include_hidden() -> None:
    root = OPENAI
    assert len(Repository([root], cache_dir=False)) == 0
    assert len(Repository([root], include_hidden=True, cache_dir=False)) == 10


def test_example_frontmatter_in_a_body_is_not_the_frontmatter() -> None:
    repo = Repository([OBRA], cache_dir=False)
    skill = repo.get("writing-skills")
    assert skill.description.startswith("Use when creating new skills")
    assert "name:" in skill.body()


def test_claude_api_long_description_is_error_in_strict_and_warning_in_lenient() -> None:
    path = ANTHROPIC / "claude-api"
    [strict] = validate_path(path, mode="strict")
    [lenient] = validate_path(path)
    assert not strict.valid
    assert [d.code for d in strict.diagnostics] == ["description.too_long"]
    assert lenient.valid
    assert [(d.code, d.severity) for d in lenient.diagnostics] == [
        ("description.too_long", "warning")
    ]


def test_strict_validation_of_the_whole_corpus_fails_only_claude_api() -> None:
    reports = [
        r for root in _roots() for r in validate_path(root, mode="strict", include_hidden=True)
    ]
    assert len(reports) == 36
    assert sorted(r.name or "" for r in reports if not r.valid) == ["claude-api"]

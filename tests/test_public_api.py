"""The public surface is a decision: ``__all__`` is curated and importing stays light."""

from __future__ import annotations

import subprocess
import sys

import skillshelf

EXPECTED = {
    "HistoryError",
    "HistoryLimit",
    "Usage",
    "CacheReport",
    "CasesError",
    "EvalCase",
    "EvalReport",
    "LintFinding",
    "LintReport",
    "TokenCounter",
    "TokenReport",
    "build_report",
    "cache_report",
    "get_counter",
    "lint_repository",
    "load_cases",
    "run_cases",
    "SkillTools",
    "ToolResult",
    "open_store",
    "Lockfile",
    "ScanPolicy",
    "Watcher",
    "materialize",
    "Activation",
    "Agent",
    "Tool",
    "CatalogEntry",
    "Changes",
    "Diagnostic",
    "FileAccessError",
    "FileContent",
    "Manifest",
    "Repository",
    "SearchHit",
    "SkillNotFoundError",
    "Shadowed",
    "Skill",
    "SkillshelfError",
    "Skipped",
    "ToolError",
    "ToolFailed",
    "ToolRetry",
    "ConfigError",
    "MissingExtraError",
    "UsageError",
    "__version__",
    "parse_skill_md",
    "read_skill_file",
    "render_catalog",
    "safe_join",
    "validate_path",
}


def test_all_lists_exactly_the_public_names() -> None:
    assert set(skillshelf.__all__) == EXPECTED


def test_every_public_name_resolves() -> None:
    for name in skillshelf.__all__:
        assert getattr(skillshelf, name) is not None


def test_public_classes_say_they_belong_to_skillshelf() -> None:
    for name in skillshelf.__all__:
        value = getattr(skillshelf, name)
        if isinstance(value, type):
            assert value.__module__.startswith("skillshelf."), name


def test_import_skillshelf_stays_light() -> None:
    code = (
        "import sys, skillshelf; "
        "heavy = [m for m in ('yaml', 'rich', 'click', 'pydantic', 'httpx') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""

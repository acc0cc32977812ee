"""Lint on the real skills in tests/corpus: no crash, and findings equal to a snapshot.

Each collection is linted as its own root (with hidden folders, where the openai skills live),
so no skill is hidden by another of the same name. The findings — code, skill, path relative
to the corpus, line — must equal ``corpus_findings.json`` next to this file. After a deliberate
change to a rule, regenerate the snapshot and review its diff::

    SKILLSHELF_UPDATE_LINT_SNAPSHOT=1 python -m pytest tests/lint/test_lint_corpus.py
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
from pathlib import Path

from corpus_paths import COLLECTIONS, CORPUS
from skillshelf.lint import LintFinding, lint_repository
from skillshelf.repository import Repository

SNAPSHOT = Path(__file__).with_name("corpus_findings.json")
UPDATE_ENV = "SKILLSHELF_UPDATE_LINT_SNAPSHOT"


def _row(finding: LintFinding) -> dict[str, object]:
    path = Path(finding.path) if finding.path else None
    return {
        "code": finding.code,
        "skill": finding.skill,
        "path": path.relative_to(CORPUS).as_posix() if path else None,
        "line": finding.line,
    }


# What it reports depends on the packages installed where the tests run: checked on its own.
ENVIRONMENT_RULES = ("script.import_unavailable",)


def _corpus_findings(
    select: tuple[str, ...] | None = None,
) -> tuple[list[dict[str, object]], int]:
    rows: list[dict[str, object]] = []
    checked = 0
    ignore = () if select else ENVIRONMENT_RULES
    for collection in COLLECTIONS:
        repo = Repository([CORPUS / collection / "skills"], include_hidden=True, cache_dir=False)
        report = lint_repository(repo, select=select, ignore=ignore)
        checked += report.skills_checked
        rows += [_row(f) for f in report.findings]
    return rows, checked


def test_corpus_findings_match_the_snapshot() -> None:
    rows, checked = _corpus_findings()
    if os.environ.get(UPDATE_ENV):
        SNAPSHOT.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    assert checked == 36
    assert rows == json.loads(SNAPSHOT.read_text(encoding="utf-8"))


def test_corpus_has_no_lint_errors_beyond_links_leaving_the_skill() -> None:
    rows, _ = _corpus_findings()
    errors = {(r["code"], r["skill"]) for r in rows if r["code"] == "link.outside"}
    # obra-superpowers links sibling skills with ../: it works only when installed together.
    assert errors == {
        ("link.outside", "subagent-driven-development"),
        ("link.outside", "writing-skills"),
    }


def test_corpus_imports_reported_are_only_modules_this_environment_lacks() -> None:
    rows, _ = _corpus_findings(select=ENVIRONMENT_RULES)
    reported = {(r["skill"], _module(r)) for r in rows}
    for _skill, module in reported:
        assert module not in sys.stdlib_module_names
        assert importlib.util.find_spec(module) is None
    # Modules the skills ship (scripts/, core/, a sibling file) and installed ones never are.
    shipped_or_installed = {"scripts", "core", "connections", "github_utils", "quick_validate"}
    assert not {m for _, m in reported} & (shipped_or_installed | {"yaml"})
    # playwright is imported by webapp-testing's examples; the test environment lacks it.
    if importlib.util.find_spec("playwright") is None:
        assert ("webapp-testing", "playwright") in reported


def _module(row: dict[str, object]) -> str:
    path = CORPUS / str(row["path"])
    line = path.read_text(encoding="utf-8").splitlines()[int(str(row["line"])) - 1]
    words = line.replace(",", " ").split()
    return words[1].split(".")[0]

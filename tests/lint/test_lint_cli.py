"""``skillshelf lint``: output lines, JSON shape, exit codes, options and their errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from skillshelf.cli import main
from skillshelf.lint import DEFAULT_SIMILARITY, RULES
from skillshelf.testing import make_skill

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
# Generous: a cold interpreter start plus a scan of a handful of skills.
SUBPROCESS_TIMEOUT_S = 60
GOOD = (
    "Extracts tables and text from PDF files into CSV or Markdown. Use when the user shares a "
    "PDF and asks for its tables, text or figures."
)
TWIN = (
    "Extracts tables and text from PDF files into CSV or Markdown. Use when the user shares a "
    "PDF and asks for its tables or text."
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """One clean skill, one with a broken link, a near-duplicate pair, one generic name."""
    skills = tmp_path / "skills"
    make_skill(skills, "extracting-pdfs", GOOD)
    make_skill(
        skills,
        "linking-docs",
        "Links documents together into a guide. Use when the user asks for a linked guide.",
        body="Read [a](references/a.md).\n",
        files={"references/a.md": "# A\n\n[gone](gone.md)\n"},
    )
    make_skill(skills, "pdf-tables", TWIN)
    make_skill(skills, "helper", "Tidies up a repository. Use when the user asks for housekeeping.")
    return skills


@pytest.fixture
def warnings_only(tmp_path: Path) -> Path:
    skills = tmp_path / "warn"
    make_skill(skills, "helper", GOOD)
    return skills


def run(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["lint", *(os.fspath(a) for a in args)])


def test_findings_are_tab_separated_lines_grouped_by_skill(root: Path) -> None:
    result = run("--root", root)

    assert result.exit_code == 1
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    assert [(r[0], r[1], r[2]) for r in rows] == [
        ("warning", "description.duplicate", "extracting-pdfs:3"),
        ("warning", "name.abstract", "helper"),
        ("error", "link.broken", "linking-docs/references/a.md:3"),
    ]
    assert all(" — " in r[3] for r in rows)
    assert "1 error, 2 warnings, 0 info in 4 of 4 skills" in result.stderr


def test_json_lists_findings_with_related_and_a_summary(root: Path) -> None:
    result = run("--root", root, "--json")

    assert result.exit_code == 1
    data = json.loads(result.stdout)
    assert set(data) == {"findings", "summary", "notes"}
    assert data["summary"] == {
        "skills": 4,
        "skills_with_findings": 4,
        "error": 1,
        "warning": 2,
        "info": 0,
    }
    first = data["findings"][0]
    assert set(first) == {"code", "severity", "skill", "path", "line", "message", "hint", "related"}
    assert (first["code"], first["skill"], first["related"]) == (
        "description.duplicate",
        "extracting-pdfs",
        ["pdf-tables"],
    )
    assert first["path"] == str(root / "extracting-pdfs" / "SKILL.md")


def test_warnings_exit_zero_and_strict_makes_them_fail(warnings_only: Path) -> None:
    assert run("--root", warnings_only).exit_code == 0
    assert run("--root", warnings_only, "--strict").exit_code == 1


def test_clean_root_exits_zero_with_a_short_summary(tmp_path: Path) -> None:
    make_skill(tmp_path / "ok", "extracting-pdfs", GOOD)
    result = run("--root", tmp_path / "ok")
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.strip() == "no findings in 1 skill"


def test_select_and_ignore_accept_commas_and_groups(root: Path) -> None:
    selected = run("--root", root, "--select", "name,link.broken", "--json")
    ignored = run("--root", root, "--ignore", "description", "--ignore", "link", "--json")

    assert [f["code"] for f in json.loads(selected.stdout)["findings"]] == [
        "name.abstract",
        "link.broken",
    ]
    assert [f["code"] for f in json.loads(ignored.stdout)["findings"]] == ["name.abstract"]
    assert ignored.exit_code == 0


def test_similarity_option_moves_the_duplicate_threshold(root: Path) -> None:
    strict_pair = run("--root", root, "--select", "description.duplicate", "--similarity", "0.99")
    assert strict_pair.stdout == ""


@pytest.mark.parametrize("value", ["0", "1.5", "-1", "high"])
def test_bad_similarity_is_a_usage_error(root: Path, value: str) -> None:
    result = run("--root", root, "--similarity", value)
    assert result.exit_code == 2
    assert "--similarity" in result.stderr
    assert "Traceback" not in result.output


def test_unknown_rule_is_a_usage_error_naming_the_known_ones(root: Path) -> None:
    result = run("--root", root, "--select", "description.dupe")
    assert result.exit_code == 2
    assert "Unknown lint rule 'description.dupe'" in result.stderr
    assert "description.duplicate" in result.stderr


def test_named_skills_limit_the_report(root: Path) -> None:
    result = run("--root", root, "pdf-tables", "--json")
    findings = json.loads(result.stdout)["findings"]
    assert [(f["skill"], f["related"]) for f in findings] == [("pdf-tables", ["extracting-pdfs"])]
    assert result.exit_code == 0


def test_unknown_named_skill_fails_with_a_message(root: Path) -> None:
    result = run("--root", root, "pdf-tabels")
    assert result.exit_code == 1
    assert "pdf-tabels" in result.stderr
    assert "Traceback" not in result.output


def test_missing_root_fails(tmp_path: Path) -> None:
    assert run("--root", tmp_path / "nowhere").exit_code == 1


def test_list_rules_prints_every_rule(tmp_path: Path) -> None:
    result = run("--list-rules")
    assert result.exit_code == 0
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == list(RULES)
    as_json = json.loads(run("--list-rules", "--json").stdout)
    assert as_json[0] == {
        "code": "skill.invalid",
        "severity": "error",
        "summary": RULES["skill.invalid"].summary,
    }


def test_help_explains_every_option() -> None:
    result = CliRunner().invoke(main, ["lint", "--help"])
    for option in ("--json", "--select", "--ignore", "--similarity", "--strict", "--list-rules"):
        assert option in result.stdout
    assert f"default: {DEFAULT_SIMILARITY}" in result.stdout


def test_terminal_output_groups_findings_under_skill_headers(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("skillshelf.cli.lint.is_tty", lambda: True)
    result = run("--root", root)
    lines = result.stdout.splitlines()
    assert any(line.startswith("helper  ") for line in lines)
    assert any("  warning name.abstract helper " in line for line in lines)


def test_examples_are_clean() -> None:
    result = run("--root", EXAMPLES)
    assert (result.exit_code, result.stdout) == (0, "")
    assert result.stderr.strip() == "no findings in 4 skills"


def test_subprocess_lint_keeps_exit_codes_and_plain_output(tmp_path: Path, root: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKILLSHELF_ROOTS"}
    env["SKILLSHELF_CACHE_DIR"] = str(tmp_path / "subprocess-cache")

    def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "skillshelf.cli", "lint", *(os.fspath(a) for a in args)],
            capture_output=True,
            text=True,
            encoding="utf-8",
            env=env,
            timeout=SUBPROCESS_TIMEOUT_S,
            check=False,
        )

    failing, usage = cli("--root", root), cli("--similarity", "2")

    assert failing.returncode == 1
    assert "\x1b[" not in failing.stdout
    assert failing.stdout.splitlines()[2].startswith("error\tlink.broken\tlinking-docs/")
    assert usage.returncode == 2
    assert "Traceback" not in usage.stderr

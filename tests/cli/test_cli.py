"""The ``skillshelf`` command: exit codes, streams, JSON shapes, and what each command prints.

Most tests drive the click group in-process through ``CliRunner``; a few run the installed
entry point in a real subprocess to prove it works, keeps its exit codes and prints plain text
when piped. Every test points the index cache at a temporary folder.
"""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from corpus_paths import ANTHROPIC, OBRA, OPENAI
from skillshelf import __version__
from skillshelf.cli import main
from skillshelf.testing import make_skill

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
EXAMPLE_NAMES = ["api-error-triage", "commit-message", "csv-insights", "release-notes"]
OMITTED_LINE = "more skills are not listed here; call skill_search to find them."
# Generous: a cold start of the interpreter plus a scan of a handful of skills.
SUBPROCESS_TIMEOUT_S = 60


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Keep the index cache in a temporary folder and ignore the user's roots."""
    cache = tmp_path / "cache"
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(cache))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)
    return cache


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with a clean skill, one with files, one user-only, and one with an unknown key."""
    skills = tmp_path / "skills"
    make_skill(skills, "alpha", "Alpha does the first thing. Use when starting.")
    make_skill(
        skills,
        "files-demo",
        "Shows files of several kinds. Use when reading files.",
        body="# Files demo\n\nRead references/guide.md first.\n",
        files={
            "references/guide.md": "# Guide\n\nStep one.\n",
            "scripts/run.py": "print('hi')\n",
            "assets/logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64),
            "long.txt": "x" * 500,
        },
    )
    make_skill(
        skills,
        "manual-only",
        "Only the user invokes this. Use when asked by name.",
        frontmatter={"disable-model-invocation": True},
    )
    make_skill(
        skills,
        "colourful",
        "Has a key skills-ref does not know. Use when testing keys.",
        frontmatter={"colour": "red"},
    )
    return skills


def invoke(runner: CliRunner, *args: str | os.PathLike[str]) -> Result:
    return runner.invoke(main, [os.fspath(a) for a in args])


def parse(result: Result) -> Any:
    return json.loads(result.stdout)


def codes(report: dict[str, Any]) -> list[str]:
    return [d["code"] for d in report["diagnostics"]]


# -- usage errors, help, version ---------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        pytest.param(["frobnicate"], id="unknown-command"),
        pytest.param(["list", "--bogus"], id="unknown-option"),
        pytest.param(["show"], id="missing-name"),
        pytest.param(["read", "alpha"], id="missing-path"),
        pytest.param(["validate"], id="missing-validate-path"),
        pytest.param(["prompt", "--format", "yaml"], id="bad-format-choice"),
        pytest.param(["prompt", "--budget-chars", "-1"], id="negative-budget"),
        pytest.param(["search", "x", "--limit", "0"], id="zero-limit"),
        pytest.param(["read", "alpha", "x", "--max-chars", "zero"], id="non-integer"),
    ],
)
def test_usage_errors_exit_2_with_message_on_stderr(runner: CliRunner, args: list[str]) -> None:
    result = invoke(runner, *args)

    assert result.exit_code == 2
    assert result.stdout == ""
    assert "Error" in result.stderr


@pytest.mark.parametrize(
    ("command", "options"),
    [
        ("validate", ["--strict", "--json", "--include-hidden"]),
        ("list", ["--root", "--json", "--all", "--include-hidden", "--no-cache", "--max-depth"]),
        ("show", ["--root", "--json"]),
        ("read", ["--root", "--max-chars"]),
        ("prompt", ["--root", "--format", "--budget-chars"]),
        ("search", ["--root", "--limit", "--json"]),
    ],
)
def test_command_help_exits_0_and_lists_its_options(
    runner: CliRunner, command: str, options: list[str]
) -> None:
    result = invoke(runner, command, "--help")

    assert result.exit_code == 0
    for option in options:
        assert option in result.stdout


def test_group_help_lists_every_command(runner: CliRunner) -> None:
    result = invoke(runner, "--help")

    assert result.exit_code == 0
    for command in ("validate", "list", "show", "read", "prompt", "search"):
        assert command in result.stdout


def test_version_prints_package_version(runner: CliRunner) -> None:
    result = invoke(runner, "--version")

    assert result.exit_code == 0
    assert result.stdout.strip() == f"skillshelf, version {__version__}"


# -- validate ----------------------------------------------------------------------------------


def test_validate_valid_skill_exits_0_with_verdict_on_stdout(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "validate", root / "alpha")

    assert result.exit_code == 0
    assert result.stdout.startswith("valid")
    assert "alpha" in result.stdout
    assert "1 of 1 valid (lenient mode)" in result.stderr


def test_validate_lenient_reports_unknown_key_as_warning_and_exits_0(
    runner: CliRunner, root: Path
) -> None:
    result = invoke(runner, "validate", "--json", root / "colourful")

    assert result.exit_code == 0
    [report] = parse(result)
    assert report["valid"] is True
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"], diag["field"]) == ("field.unknown", "warning", "colour")


def test_validate_strict_reports_unknown_key_and_exits_1(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "validate", "--strict", "--json", root / "colourful")

    assert result.exit_code == 1
    [report] = parse(result)
    assert report["valid"] is False
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"]) == ("field.unknown", "error")
    assert "Unexpected fields" in diag["message"]


def test_validate_lenient_accepts_name_dir_mismatch_with_warning(
    runner: CliRunner, tmp_path: Path
) -> None:
    skill = make_skill(tmp_path, "beta", dir_name="not-beta")

    result = invoke(runner, "validate", "--json", skill)

    assert result.exit_code == 0
    [report] = parse(result)
    assert report["name"] == "beta"
    assert [(d["code"], d["severity"]) for d in report["diagnostics"]] == [
        ("name.dir_mismatch", "warning")
    ]


def test_validate_strict_rejects_name_dir_mismatch_and_exits_1(
    runner: CliRunner, tmp_path: Path
) -> None:
    skill = make_skill(tmp_path, "beta", dir_name="not-beta")

    result = invoke(runner, "validate", "--strict", "--json", skill)

    assert result.exit_code == 1
    [report] = parse(result)
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"], diag["field"]) == ("name.dir_mismatch", "error", "name")
    assert "must match skill name" in diag["message"]


def test_validate_json_has_exact_report_shape(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "validate", "--json", root / "colourful")

    [report] = parse(result)
    assert set(report) == {"path", "name", "valid", "diagnostics"}
    assert report["path"] == str(root / "colourful")
    assert report["name"] == "colourful"
    for diag in report["diagnostics"]:
        assert {"code", "severity", "field", "message"} <= set(diag)
    assert result.stderr == ""


def test_validate_root_gives_one_report_per_skill(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "validate", "--json", root)

    assert result.exit_code == 0
    reports = parse(result)
    assert sorted(r["name"] for r in reports) == [
        "alpha",
        "colourful",
        "files-demo",
        "manual-only",
    ]
    assert all(r["valid"] for r in reports)


def test_validate_root_with_one_invalid_skill_exits_1_and_reports_all(
    runner: CliRunner, root: Path
) -> None:
    make_skill(root, "broken", raw="no frontmatter here\n")

    result = invoke(runner, "validate", "--json", root)

    assert result.exit_code == 1
    by_path = {Path(r["path"]).name: r for r in parse(result)}
    assert len(by_path) == 5
    assert by_path["broken"]["valid"] is False
    assert "frontmatter.missing" in codes(by_path["broken"])
    assert by_path["alpha"]["valid"] is True


def test_validate_missing_path_exits_1_with_path_missing(runner: CliRunner, tmp_path: Path) -> None:
    missing = tmp_path / "nope"

    result = invoke(runner, "validate", "--json", missing)

    assert result.exit_code == 1
    [report] = parse(result)
    assert report == {
        "path": str(missing),
        "name": None,
        "valid": False,
        "diagnostics": [
            {
                "code": "path.missing",
                "severity": "error",
                "field": None,
                "message": f"Path does not exist: {missing}",
                "path": str(missing),
                "line": None,
            }
        ],
    }


def test_validate_several_paths_exits_1_when_any_fails(
    runner: CliRunner, root: Path, tmp_path: Path
) -> None:
    result = invoke(runner, "validate", "--json", root / "alpha", tmp_path / "nope")

    assert result.exit_code == 1
    assert [r["valid"] for r in parse(result)] == [True, False]


def test_validate_text_mode_sends_diagnostics_to_stderr_and_verdicts_to_stdout(
    runner: CliRunner, root: Path
) -> None:
    result = invoke(runner, "validate", "--strict", root / "colourful")

    assert result.exit_code == 1
    assert result.stdout.startswith("INVALID")
    assert "field.unknown" not in result.stdout
    assert "error: [field.unknown]" in result.stderr
    assert "0 of 1 valid (strict mode)" in result.stderr


def test_validate_skips_hidden_folders_unless_include_hidden(
    runner: CliRunner, tmp_path: Path
) -> None:
    make_skill(tmp_path / ".hidden", "secret")

    without = invoke(runner, "validate", "--json", tmp_path)
    with_hidden = invoke(runner, "validate", "--json", "--include-hidden", tmp_path)

    assert without.exit_code == 1
    assert codes(parse(without)[0]) == ["file.missing"]
    assert with_hidden.exit_code == 0
    assert [r["name"] for r in parse(with_hidden)] == ["secret"]


# -- list --------------------------------------------------------------------------------------


def test_list_prints_names_sorted_as_plain_text(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "list", "--root", root, "--no-cache")

    assert result.exit_code == 0
    names = [line.split("\t")[0] for line in result.stdout.splitlines()]
    assert names == ["alpha", "colourful", "files-demo", "manual-only"]
    assert all(line.split("\t")[1] == "ok" for line in result.stdout.splitlines())


def test_list_json_rows_are_sorted_with_status_and_description(
    runner: CliRunner, root: Path
) -> None:
    result = invoke(runner, "list", "--root", root, "--json")

    assert result.exit_code == 0
    rows = parse(result)
    assert [r["name"] for r in rows] == ["alpha", "colourful", "files-demo", "manual-only"]
    alpha = rows[0]
    assert alpha["status"] == "ok"
    assert alpha["description"] == "Alpha does the first thing. Use when starting."
    assert alpha["path"] == str(root / "alpha")
    assert alpha["warnings"] == []


def test_list_marks_disabled_model_invocation_as_not_model_invocable(
    runner: CliRunner, root: Path
) -> None:
    rows = {r["name"]: r for r in parse(invoke(runner, "list", "--root", root, "--json"))}

    assert rows["manual-only"]["model_invocable"] is False
    assert rows["manual-only"]["user_invocable"] is True
    assert rows["alpha"]["model_invocable"] is True


def test_list_all_shows_shadowed_duplicate_with_winner(runner: CliRunner, tmp_path: Path) -> None:
    first = make_skill(tmp_path / "first", "dup", "The first copy. Use when first.")
    second = make_skill(tmp_path / "second", "dup", "The second copy. Use when second.")

    result = invoke(
        runner,
        "list",
        "--root",
        tmp_path / "first",
        "--root",
        tmp_path / "second",
        "--json",
        "--all",
    )

    assert result.exit_code == 0
    ok, shadowed = parse(result)
    assert (ok["name"], ok["status"], ok["path"]) == ("dup", "ok", str(first))
    assert ok["description"] == "The first copy. Use when first."
    assert (shadowed["name"], shadowed["status"], shadowed["path"]) == (
        "dup",
        "shadowed",
        str(second),
    )
    assert shadowed["reason"] == f"shadowed by {first}"


def test_list_without_all_hides_shadowed_and_skipped(runner: CliRunner, tmp_path: Path) -> None:
    make_skill(tmp_path / "first", "dup")
    make_skill(tmp_path / "second", "dup")
    make_skill(tmp_path / "second", "broken", raw="no frontmatter\n")

    result = invoke(
        runner, "list", "--root", tmp_path / "first", "--root", tmp_path / "second", "--json"
    )

    assert [(r["name"], r["status"]) for r in parse(result)] == [("dup", "ok")]


def test_list_all_shows_skipped_skill_with_reason(runner: CliRunner, root: Path) -> None:
    make_skill(root, "broken", raw="no frontmatter here\n")

    result = invoke(runner, "list", "--root", root, "--json", "--all")

    assert result.exit_code == 0
    [skipped] = [r for r in parse(result) if r["status"] == "skipped"]
    assert skipped["name"] is None
    assert skipped["path"] == str(root / "broken" / "SKILL.md")
    assert "must start with YAML frontmatter" in skipped["reason"]
    assert [d["code"] for d in skipped["diagnostics"]] == ["frontmatter.missing"]
    # The broken skill does not stop the others from loading.
    assert sum(r["status"] == "ok" for r in parse(result)) == 4


def test_list_all_text_mode_shows_status_and_reason(runner: CliRunner, root: Path) -> None:
    make_skill(root, "broken", raw="no frontmatter here\n")

    result = invoke(runner, "list", "--root", root, "--all")

    [line] = [line for line in result.stdout.splitlines() if "\tskipped\t" in line]
    assert line.startswith("-\tskipped\t")
    assert "must start with YAML frontmatter" in line


def test_list_needs_include_hidden_for_skill_under_hidden_folder(
    runner: CliRunner, tmp_path: Path
) -> None:
    make_skill(tmp_path / ".hidden", "secret")

    without = invoke(runner, "list", "--root", tmp_path, "--json")
    with_hidden = invoke(runner, "list", "--root", tmp_path, "--json", "--include-hidden")

    assert parse(without) == []
    assert [r["name"] for r in parse(with_hidden)] == ["secret"]


def test_list_missing_root_exits_1_with_stderr_report_and_json_stdout(
    runner: CliRunner, tmp_path: Path
) -> None:
    result = invoke(runner, "list", "--root", tmp_path / "absent", "--json")

    assert result.exit_code == 1
    assert json.loads(result.stdout) == []
    assert "root.missing" in result.stderr


def test_list_empty_root_says_so_on_stderr(runner: CliRunner, tmp_path: Path) -> None:
    result = invoke(runner, "list", "--root", tmp_path)

    assert result.exit_code == 0
    assert result.stdout == ""
    assert "no skills found" in result.stderr


def test_list_writes_index_cache_only_under_cache_dir(
    runner: CliRunner, root: Path, cache_dir: Path
) -> None:
    invoke(runner, "list", "--root", root, "--no-cache")
    assert not cache_dir.exists()

    invoke(runner, "list", "--root", root)
    assert any(cache_dir.iterdir())


# -- show --------------------------------------------------------------------------------------


def test_show_prints_metadata_body_and_file_tree(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "show", "files-demo", "--root", root)

    assert result.exit_code == 0
    out = result.stdout
    assert out.startswith("name: files-demo\n")
    assert "description: Shows files of several kinds. Use when reading files." in out
    assert f"path: {root / 'files-demo'}" in out
    body = out.split("--- body ---\n", 1)[1].split("--- files ---", 1)[0]
    assert "# Files demo" in body
    assert "Read references/guide.md first." in body
    assert "name: files-demo" not in body  # the frontmatter is not part of the body
    tree = out.split("--- files ---\n", 1)[1]
    for entry in ("references/", "guide.md", "scripts/", "run.py", "SKILL.md", "logo.png"):
        assert entry in tree


def test_show_json_has_body_and_files(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "show", "files-demo", "--root", root, "--json")

    assert result.exit_code == 0
    shown = parse(result)
    assert shown["name"] == "files-demo"
    assert shown["body"].startswith("# Files demo")
    files = {f["path"]: f for f in shown["files"]}
    assert files["references"]["is_dir"] is True
    assert files["references/guide.md"]["is_dir"] is False
    assert files["long.txt"]["size"] == 500


def test_show_unknown_name_exits_1_with_did_you_mean(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "show", "alpah", "--root", root)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert 'Unknown skill "alpah"' in result.stderr
    assert "Did you mean: alpha" in result.stderr


def test_show_sends_skill_warnings_to_stderr(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "show", "colourful", "--root", root)

    assert result.exit_code == 0
    assert "field.unknown" in result.stderr
    assert "field.unknown" not in result.stdout


# -- read --------------------------------------------------------------------------------------


def test_read_prints_text_file(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "read", "files-demo", "references/guide.md", "--root", root)

    assert result.exit_code == 0
    assert result.stdout == "# Guide\n\nStep one.\n\n"
    assert result.stderr == ""


@pytest.mark.parametrize(
    ("path", "why"),
    [
        ("../../etc/passwd", "leads outside the skill directory"),
        ("/etc/passwd", "it is absolute"),
        ("references/../../alpha/SKILL.md", "leads outside the skill directory"),
    ],
)
def test_read_refuses_paths_outside_the_skill_and_exits_1(
    runner: CliRunner, root: Path, path: str, why: str
) -> None:
    result = invoke(runner, "read", "files-demo", path, "--root", root)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("error: Refused path")
    assert why in result.stderr


def test_read_refuses_symlink_leading_outside_the_skill(
    runner: CliRunner, root: Path, tmp_path: Path
) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("do not show\n", encoding="utf-8")
    (root / "files-demo" / "leak.txt").symlink_to(secret)

    result = invoke(runner, "read", "files-demo", "leak.txt", "--root", root)

    assert result.exit_code == 1
    assert "do not show" not in result.output
    assert "symbolic link" in result.stderr


def test_read_missing_file_exits_1(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "read", "files-demo", "references/nope.md", "--root", root)

    assert result.exit_code == 1
    assert result.stdout == ""
    assert "references/nope.md" in result.stderr


def test_read_unknown_skill_exits_1(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "read", "files-dem", "SKILL.md", "--root", root)

    assert result.exit_code == 1
    assert "Did you mean: files-demo" in result.stderr


def test_read_binary_file_is_described_not_dumped(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "read", "files-demo", "assets/logo.png", "--root", root)

    assert result.exit_code == 0
    assert result.stdout == "[binary file: assets/logo.png, 80 bytes, image/png — not shown]\n"


def test_read_max_chars_truncates_with_marker(runner: CliRunner, root: Path) -> None:
    result = invoke(runner, "read", "files-demo", "long.txt", "--max-chars", "20", "--root", root)

    assert result.exit_code == 0
    assert result.stdout == "x" * 20 + "\n[truncated: showed 20 of 500 characters]\n"


# -- prompt ------------------------------------------------------------------------------------


def test_prompt_xml_matches_skills_ref_to_prompt_byte_for_byte(runner: CliRunner) -> None:
    skills_ref = pytest.importorskip("skills_ref")
    dirs = sorted((p for p in EXAMPLES.resolve().iterdir() if p.is_dir()), key=lambda p: p.name)
    expected: str = skills_ref.to_prompt(dirs)

    result = invoke(runner, "prompt", "--root", EXAMPLES.resolve())

    assert result.exit_code == 0
    assert result.stdout == expected + "\n"


def test_prompt_xml_escapes_like_skills_ref(runner: CliRunner, tmp_path: Path) -> None:
    skills_ref = pytest.importorskip("skills_ref")
    root = tmp_path.resolve() / "skills"
    make_skill(root, "tags", 'Handles <xml> & "quotes". Use when escaping.')
    make_skill(root, "amp", "Fish & chips. Use when hungry.")
    expected: str = skills_ref.to_prompt([root / "amp", root / "tags"])

    result = invoke(runner, "prompt", "--root", root)

    assert result.stdout == expected + "\n"


def test_prompt_lists_examples_sorted_by_name(runner: CliRunner) -> None:
    result = invoke(runner, "prompt", "--root", EXAMPLES)

    names = [line for line in result.stdout.splitlines() if line in EXAMPLE_NAMES]
    assert names == EXAMPLE_NAMES


def test_prompt_leaves_out_disabled_model_invocation(runner: CliRunner, root: Path) -> None:
    for fmt in ("xml", "markdown"):
        result = invoke(runner, "prompt", "--root", root, "--format", fmt)

        assert result.exit_code == 0
        assert "alpha" in result.stdout
        assert "manual-only" not in result.stdout


def test_prompt_markdown_lists_each_skill_with_description(runner: CliRunner) -> None:
    result = invoke(runner, "prompt", "--root", EXAMPLES, "--format", "markdown")

    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[:2] == ["## Available skills", ""]
    assert [line.split("**")[1] for line in lines[2:]] == EXAMPLE_NAMES
    assert "<available_skills>" not in result.stdout


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_prompt_small_budget_lists_names_only(runner: CliRunner, fmt: str) -> None:
    budget = 250 if fmt == "xml" else 120

    result = invoke(
        runner, "prompt", "--root", EXAMPLES, "--format", fmt, "--budget-chars", str(budget)
    )

    assert result.exit_code == 0
    text = result.stdout.removesuffix("\n")
    assert len(text) <= budget
    for name in EXAMPLE_NAMES:
        assert name in text
    assert "Diagnoses" not in text
    assert OMITTED_LINE not in text


@pytest.mark.parametrize(("budget", "listed"), [(200, 1), (150, 0)])
def test_prompt_tiny_budget_counts_left_out_skills(
    runner: CliRunner, budget: int, listed: int
) -> None:
    result = invoke(runner, "prompt", "--root", EXAMPLES, "--budget-chars", str(budget))

    assert result.exit_code == 0
    text = result.stdout.removesuffix("\n")
    assert len(text) <= budget
    assert [name for name in EXAMPLE_NAMES if name in text] == EXAMPLE_NAMES[:listed]
    omitted = len(EXAMPLE_NAMES) - listed
    assert f'<omitted count="{omitted}">{omitted} {OMITTED_LINE}</omitted>' in text


def test_prompt_markdown_tiny_budget_lists_a_prefix_and_counts_the_rest(
    runner: CliRunner, tmp_path: Path
) -> None:
    names = [f"generated-skill-{i:02}" for i in range(12)]
    for name in names:
        make_skill(tmp_path, name)

    result = invoke(
        runner, "prompt", "--root", tmp_path, "--format", "markdown", "--budget-chars", "200"
    )

    assert result.exit_code == 0
    text = result.stdout.removesuffix("\n")
    assert len(text) <= 200
    listed = [name for name in names if f"`{name}`" in text]
    assert listed == names[: len(listed)]
    assert 0 < len(listed) < len(names)
    assert text.endswith(f"{len(names) - len(listed)} {OMITTED_LINE}")


def test_prompt_large_budget_changes_nothing(runner: CliRunner) -> None:
    full = invoke(runner, "prompt", "--root", EXAMPLES).stdout

    budgeted = invoke(runner, "prompt", "--root", EXAMPLES, "--budget-chars", "100000").stdout

    assert budgeted == full


# -- search ------------------------------------------------------------------------------------


def test_search_json_shape_and_exact_name_first(runner: CliRunner) -> None:
    result = invoke(runner, "search", "commit-message", "--root", EXAMPLES, "--json")

    assert result.exit_code == 0
    hits = parse(result)
    assert hits
    for hit in hits:
        assert set(hit) == {"name", "score", "description"}
        assert isinstance(hit["score"], float | int)
    assert hits[0]["name"] == "commit-message"
    assert hits[0]["description"].startswith("Writes a clear Conventional Commits message")
    scores = [h["score"] for h in hits]
    assert scores == sorted(scores, reverse=True)


def test_search_exact_name_beats_description_match(runner: CliRunner, tmp_path: Path) -> None:
    make_skill(tmp_path, "deploy", "Ships the service. Use when shipping.")
    make_skill(tmp_path, "rollback", "Undo a deploy, deploy again, deploy safely. Use on failure.")

    hits = parse(invoke(runner, "search", "deploy", "--root", tmp_path, "--json"))

    assert [h["name"] for h in hits][:2] == ["deploy", "rollback"]


def test_search_limit_caps_hits(runner: CliRunner) -> None:
    unlimited = parse(invoke(runner, "search", "user", "--root", EXAMPLES, "--json"))
    limited = parse(invoke(runner, "search", "user", "--root", EXAMPLES, "--json", "--limit", "1"))

    assert len(unlimited) > 1
    assert limited == unlimited[:1]


def test_search_text_mode_prints_rows_and_no_match_goes_to_stderr(runner: CliRunner) -> None:
    hit = invoke(runner, "search", "csv", "--root", EXAMPLES)
    miss = invoke(runner, "search", "zzzqqq", "--root", EXAMPLES)

    assert hit.exit_code == 0
    assert hit.stdout.splitlines()[0].split("\t")[0] == "csv-insights"
    assert miss.exit_code == 0
    assert miss.stdout == ""
    assert "no skill matches 'zzzqqq'" in miss.stderr


# -- the real corpus ---------------------------------------------------------------------------


def corpus_list(runner: CliRunner, *extra: str) -> list[dict[str, Any]]:
    result = invoke(
        runner, "list", "--root", ANTHROPIC, "--root", OBRA, "--root", OPENAI, "--json", *extra
    )
    assert result.exit_code == 0
    rows: list[dict[str, Any]] = parse(result)
    return rows


def test_corpus_lists_35_usable_skills_and_one_shadowed(runner: CliRunner) -> None:
    usable = corpus_list(runner, "--include-hidden")
    everything = corpus_list(runner, "--include-hidden", "--all")

    assert len(usable) == 35
    assert all(r["status"] == "ok" for r in usable)
    assert len(everything) == 36
    [shadowed] = [r for r in everything if r["status"] == "shadowed"]
    assert shadowed["name"] == "skill-creator"
    assert shadowed["reason"] == f"shadowed by {(ANTHROPIC / 'skill-creator').resolve()}"
    assert ".system" in shadowed["path"]


def test_corpus_openai_skills_need_include_hidden(runner: CliRunner) -> None:
    without = parse(invoke(runner, "list", "--root", OPENAI, "--json"))
    with_hidden = parse(invoke(runner, "list", "--root", OPENAI, "--json", "--include-hidden"))

    assert without == []
    assert len(with_hidden) == 10


def test_corpus_claude_api_fails_strict_for_long_description(runner: CliRunner) -> None:
    result = invoke(runner, "validate", "--strict", "--json", ANTHROPIC / "claude-api")

    assert result.exit_code == 1
    [report] = parse(result)
    [diag] = report["diagnostics"]
    assert (diag["code"], diag["severity"]) == ("description.too_long", "error")
    assert "1068" in diag["message"]


def test_corpus_claude_api_passes_lenient_with_warning(runner: CliRunner) -> None:
    result = invoke(runner, "validate", ANTHROPIC / "claude-api")

    assert result.exit_code == 0
    assert result.stdout.startswith("valid")
    assert "warning: [description.too_long]" in result.stderr


def test_corpus_writing_skills_uses_only_the_first_frontmatter_block(
    runner: CliRunner,
) -> None:
    result = invoke(runner, "show", "writing-skills", "--root", OBRA, "--json")

    assert result.exit_code == 0
    shown = parse(result)
    assert shown["name"] == "writing-skills"
    assert shown["description"].startswith("Use when creating new skills")
    # The example frontmatter stays in the body, where the model reads it as an example.
    assert "name: Skill-Name-With-Hyphens" in shown["body"]
    names = {r["name"] for r in corpus_list(runner, "--include-hidden")}
    assert "Skill-Name-With-Hyphens" not in names


# -- the installed entry point -----------------------------------------------------------------


def run_cli(tmp_path: Path, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "SKILLSHELF_ROOTS"}
    env["SKILLSHELF_CACHE_DIR"] = str(tmp_path / "subprocess-cache")
    return subprocess.run(
        [sys.executable, "-m", "skillshelf.cli", *(os.fspath(a) for a in args)],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )


def test_subprocess_list_prints_plain_text_when_piped(tmp_path: Path) -> None:
    result = run_cli(tmp_path, "list", "--root", EXAMPLES)

    assert result.returncode == 0
    assert "\x1b[" not in result.stdout
    assert not any(ch in result.stdout for ch in "│┃━─┏")
    assert [line.split("\t")[0] for line in result.stdout.splitlines()] == EXAMPLE_NAMES


def test_subprocess_exit_codes_hold(tmp_path: Path, root: Path) -> None:
    refused = run_cli(tmp_path, "read", "files-demo", "../../etc/passwd", "--root", root)
    usage = run_cli(tmp_path, "list", "--bogus")
    invalid = run_cli(tmp_path, "validate", "--strict", root / "colourful")

    assert (refused.returncode, refused.stdout) == (1, "")
    assert "Refused path" in refused.stderr
    assert usage.returncode == 2
    assert invalid.returncode == 1


def test_console_script_prints_version() -> None:
    script = shutil.which("skillshelf", path=str(Path(sys.executable).parent)) or shutil.which(
        "skillshelf"
    )
    if script is None:
        pytest.skip("skillshelf console script not installed")

    result = subprocess.run(
        [script, "--version"],
        capture_output=True,
        text=True,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )

    assert result.returncode == 0
    assert result.stdout.strip() == f"skillshelf, version {__version__}"


@pytest.mark.parametrize("module", ["skillshelf", "skillshelf.cli"])
def test_python_dash_m_offers_the_commands_of_every_command_module(
    tmp_path: Path, module: str
) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SKILLSHELF_ROOTS"}
    done = subprocess.run(
        [sys.executable, "-m", module, "--help"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    for command in ("serve", "chat", "exec", "lint", "tokens", "eval"):
        assert f"  {command} " in done.stdout


class _FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_bar_draws_on_a_terminal_stderr_only(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillshelf.cli._common import progress_bar

    terminal, stdout = _FakeTerminal(), io.StringIO()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.setattr(sys, "stdout", stdout)
    with progress_bar(3, "reading skills") as advance:
        for _ in range(3):
            advance("one")
    assert "reading skills" in terminal.getvalue()
    assert stdout.getvalue() == ""


def test_progress_bar_is_silent_when_stderr_is_not_a_terminal(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from skillshelf.cli._common import progress_bar

    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    with progress_bar(2, "eval runs") as advance:
        advance()
    with progress_bar(2, "eval runs", enabled=False) as advance:
        advance()
    assert piped.getvalue() == ""

"""``skillshelf tokens``: the report as a table, TSV and JSON; --cache; bad input exits cleanly."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from corpus_paths import ANTHROPIC
from skillshelf.cli import main
from skillshelf.harness import SkillSettings
from skillshelf.reports.requestcost import request_cost
from skillshelf.reports.tokenreport import report_for_repository
from skillshelf.reports.tokens import BACKEND_ENV, get_counter
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples" / "skills"
# Generous: a cold interpreter, a scan, two encoders and two runs of the agent loop.
SUBPROCESS_TIMEOUT_S = 120
ENTRY_POINT = "from skillshelf.cli import main; main()"  # what the console script runs


@pytest.fixture(autouse=True)
def isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "index-cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)
    monkeypatch.delenv(BACKEND_ENV, raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    make_skill(skills, "alpha", "Alpha does one thing. Use when alpha.", body="Say hi.\n")
    make_skill(
        skills,
        "beta",
        "Beta has a guide. Use when beta.",
        body="# Beta\n\nRead references/guide.md.\n",
        files={"references/guide.md": "# Guide\n\nStep 1.\n", "logo.png": b"\x89PNG\r\n\x1a\n"},
    )
    return skills


def invoke(*args: str | os.PathLike[str], env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(main, ["tokens", *(os.fspath(a) for a in args)], env=env)


def test_piped_output_is_tab_separated_rows_then_a_summary(root: Path) -> None:
    result = invoke("--root", root)

    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split("\t")[:3] == ["alpha", lines[0].split("\t")[1], "full"]
    assert lines[1].split("\t")[-2:] == ["1", "1"]  # beta: one document, one binary file
    summary = dict(line.split("\t", 1) for line in lines[2:])
    assert summary["encoding"] == "o200k_base (counted with tiktoken)"
    assert summary["catalog budget"] == "12,000 chars, xml"
    assert summary["budget effect"] == "2 full, 0 trimmed, 0 names only, 0 left out"
    assert summary["ratio everything/progressive"].endswith("x")


def test_json_has_every_number_of_the_library_report(root: Path) -> None:
    result = invoke("--root", root, "--json", "--encoding", "cl100k_base", "--format", "markdown")

    assert result.exit_code == 0, result.output
    data = json.loads(result.stdout)
    expected = report_for_repository(
        Repository([root], cache_dir=False),
        counter=get_counter("cl100k_base"),
        format="markdown",
        budget_chars=12_000,
    ).to_dict()
    request = data.pop("request")
    assert data == expected
    assert "cache" not in data
    assert (
        request
        == request_cost(
            Repository([root], cache_dir=False),
            get_counter("cl100k_base"),
            settings=SkillSettings(catalog_format="markdown"),
        ).to_dict()
    )


def test_names_limit_the_rows_but_not_the_totals(root: Path) -> None:
    everything = json.loads(invoke("--root", root, "--json").stdout)

    only_beta = json.loads(invoke("--root", root, "--json", "beta").stdout)

    assert [s["name"] for s in only_beta["skills"]] == ["beta"]
    assert only_beta["everything"] == everything["everything"]


def test_a_small_budget_shows_its_effect(root: Path) -> None:
    data = json.loads(invoke("--root", root, "--json", "--budget-chars", "0").stdout)

    assert data["budget"]["omitted"] == 2
    assert data["budget"]["tokens"] < data["budget"]["tokens_unbudgeted"]
    assert [s["catalog_fate"] for s in data["skills"]] == ["omitted", "omitted"]


def test_cache_reports_both_placements(root: Path) -> None:
    result = invoke("--root", root, "--cache", "--json")

    assert result.exit_code == 0, result.output
    cache: dict[str, Any] = json.loads(result.stdout)["cache"]
    assert cache["skill"] == "beta"
    shares = {p["placement"]: p["overall_share"] for p in cache["placements"]}
    assert shares["system"] < shares["tool_result"]


def test_cache_as_text_lists_each_step(root: Path) -> None:
    result = invoke("--root", root, "--cache", "--skill", "beta")

    assert result.exit_code == 0, result.output
    rows = [line.split("\t") for line in result.stdout.splitlines()]
    steps = [r for r in rows if r[0] in ("tool_result", "system") and len(r) == 5]
    assert [(r[0], r[1]) for r in steps] == [
        ("tool_result", "2"),
        ("tool_result", "3"),
        ("tool_result", "4"),
        ("system", "2"),
        ("system", "3"),
        ("system", "4"),
    ]
    assert any(r[0] == "cache share tool_result" for r in rows)


def test_the_estimate_is_labelled_everywhere(root: Path) -> None:
    text = invoke("--root", root, env={BACKEND_ENV: "estimate"})
    data = json.loads(invoke("--root", root, "--json", env={BACKEND_ENV: "estimate"}).stdout)

    assert text.exit_code == 0
    assert "ESTIMATE, not exact" in text.stdout
    assert "note: token counts are estimates" in text.stderr
    assert (data["backend"], data["exact"]) == ("estimate", False)


@pytest.mark.parametrize(
    ("args", "env", "message"),
    [
        pytest.param(["--encoding", "p50k_base"], None, "Invalid value for '--encoding'", id="enc"),
        pytest.param(["--format", "yaml"], None, "Invalid value for '--format'", id="format"),
        pytest.param(["--budget-chars", "-5"], None, "Invalid value", id="budget"),
        pytest.param(["--skill", "beta"], None, "add --cache", id="skill-without-cache"),
        pytest.param([], {BACKEND_ENV: "magic"}, "Unknown token counting backend", id="env"),
    ],
)
def test_usage_errors_exit_2_with_a_message(
    root: Path, args: list[str], env: dict[str, str] | None, message: str
) -> None:
    result = invoke("--root", root, *args, env=env)

    assert result.exit_code == 2
    assert message in result.stderr
    assert isinstance(result.exception, SystemExit)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        pytest.param(["gamma"], "gamma", id="unknown-name"),
        pytest.param(["--cache", "--skill", "gamma"], "gamma", id="unknown-cache-skill"),
        pytest.param(["--cache", "--skill", "alpha"], "'alpha' has no documents", id="no-docs"),
    ],
)
def test_bad_subjects_exit_1_with_a_message(root: Path, args: list[str], message: str) -> None:
    result = invoke("--root", root, *args)

    assert result.exit_code == 1
    assert result.stderr.startswith("error: ")
    assert message in result.stderr
    assert "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit)


def test_a_missing_root_exits_1_and_says_so(tmp_path: Path) -> None:
    result = invoke("--root", tmp_path / "nowhere")

    assert result.exit_code == 1
    assert "nowhere" in result.stderr
    assert "Traceback" not in result.output


def test_help_explains_every_option() -> None:
    result = CliRunner().invoke(main, ["tokens", "--help"])

    for option in ("--encoding", "--format", "--budget-chars", "--json", "--cache", "--skill"):
        assert option in result.stdout
    assert "offline" in result.stdout
    assert "unchanged prefix" in result.stdout


def test_the_anthropic_corpus_ratio_in_both_encodings() -> None:
    for encoding in ("o200k_base", "cl100k_base"):
        data = json.loads(invoke("--root", ANTHROPIC, "--json", "--encoding", encoding).stdout)

        assert data["exact"] is True
        assert data["budget"]["full"] == 12
        assert data["ratio"] > 50


def test_the_installed_command_runs_in_a_subprocess(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("SKILLSHELF_ROOTS", BACKEND_ENV)}
    env["SKILLSHELF_CACHE_DIR"] = str(tmp_path / "subprocess-cache")

    done = subprocess.run(
        # Not "-m skillshelf.cli.main": run as __main__, command modules register on another copy.
        [sys.executable, "-c", ENTRY_POINT, "tokens", "--root", str(EXAMPLES), "--cache"],
        capture_output=True,
        text=True,
        encoding="utf-8",
        env=env,
        timeout=SUBPROCESS_TIMEOUT_S,
        check=False,
    )

    assert done.returncode == 0, done.stderr
    assert "\nratio everything/progressive\t" in done.stdout
    assert "\ncache share system\t" in done.stdout
    assert "\x1b[" not in done.stdout  # piped: no terminal styling


def test_exact_counts_are_kept_in_the_cache_folder_unless_no_cache(
    root: Path, tmp_path: Path
) -> None:
    cache = tmp_path / "index-cache"  # $SKILLSHELF_CACHE_DIR (the isolated fixture)
    first = invoke("--root", root, "--json", "--no-cache")
    assert not list(cache.glob("tokens-*.bin"))

    second = invoke("--root", root, "--json")
    third = invoke("--root", root, "--json")

    assert [p.name for p in cache.glob("tokens-*.bin")] == ["tokens-o200k_base.bin"]
    assert json.loads(first.output) == json.loads(second.output) == json.loads(third.output)


def test_the_fixed_part_of_a_request_is_reported_per_model_family(root: Path) -> None:
    result = invoke("--root", root, "--json")
    assert result.exit_code == 0, result.output
    request = json.loads(result.stdout)["request"]
    families = {f["family"]: f for f in request["families"]}
    assert set(families) == {"openai", "anthropic"}
    for family in families.values():
        assert family["chars"] == family["system_chars"] + family["schema_chars"]
        assert family["tokens"] == family["system_tokens"] + family["schema_tokens"] > 0
        assert 0 < family["share"] < 0.05
    assert "skill_load" in request["tools"]
    assert request["warnings"] == []
    text = invoke("--root", root).stdout
    assert "fixed per request (openai)\t" in text and "tool schemas" in text


def test_a_fixed_part_over_its_share_of_the_window_is_a_warning(root: Path) -> None:
    result = invoke("--root", root, "--context-window", "2000")
    assert result.exit_code == 0
    assert "warning: the fixed part of every openai request is" in result.stderr
    assert "of a 2,000-token context window" in result.stderr


def test_tool_schemas_stop_growing_with_the_catalog(tmp_path: Path) -> None:
    counter = get_counter("o200k_base")
    costs = []
    for n in (100, 300):  # both above the enum limit (32 names)
        skills = tmp_path / f"n{n}"
        for i in range(n):
            make_skill(skills, f"skill-{i:03d}", f"Does chore {i}. Use when asked for it.")
        costs.append(request_cost(Repository([skills], cache_dir=False), counter))
    small, large = costs
    for a, b in zip(small.families, large.families, strict=True):
        assert a.schema_chars == b.schema_chars  # no name enums, no names repeated
        assert b.chars <= 32_000  # default budget: the catalog is bounded too

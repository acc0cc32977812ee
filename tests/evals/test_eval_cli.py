"""``skillshelf eval`` from the command line: against the fake OpenAI-compatible server as a
real subprocess (traces and report on disk), and in process for exit codes and messages."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result
from eval_fakes import Fail, FakeOpenAI, Scripted

from skillshelf.cli import main
from skillshelf.testing import make_skill, reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
# An eval through the CLI starts Python, imports the SDK and makes a few local requests.
_CLI_TIMEOUT_S = 120


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for server in started:
        server.stop()


def by_query(scripts: dict[str, list[Scripted]]) -> Any:
    """A fake-server script: the reply follows the request's first user message."""

    def answer(body: dict[str, Any]) -> Scripted:
        messages = body["messages"]
        query = next(m["content"] for m in messages if m["role"] == "user")
        done = sum(1 for m in messages if m["role"] == "assistant")
        replies = scripts[query]
        return replies[min(done, len(replies) - 1)]

    return answer


def write_cases(path: Path, cases: list[dict[str, Any]]) -> Path:
    path.write_text(json.dumps(cases), encoding="utf-8")
    return path


def invoke(*args: str | Path) -> Result:
    return CliRunner().invoke(main, ["eval", *(str(a) for a in args)])


# -- end to end against the fake OpenAI-compatible server -------------------------------------

SERVER_CASES: list[dict[str, Any]] = [
    {"id": "csv", "query": "profile sales.csv", "expected_skill": "csv-insights"},
    {
        "id": "notes",
        "query": "release notes for v2",
        "expected_skill": "release-notes",
        "expected_docs": ["references/templates/standard.md"],
    },
    {"id": "joke", "query": "tell me a joke", "expected_skill": None},
]
SERVER_SCRIPTS: dict[str, list[Scripted]] = {
    "profile sales.csv": [
        reply(tools=[("skill_load", {"skill": "csv-insights"})], usage=(1000, 20)),
        reply("Here is the profile.", usage=(1400, 30)),
    ],
    "release notes for v2": [
        reply(tools=[("skill_load", {"skill": "commit-message"})], usage=(1000, 20)),
        reply(tools=[("skill_load", {"skill": "release-notes"})], usage=(1300, 20)),
        reply(
            tools=[
                (
                    "skill_read_file",
                    {"skill": "release-notes", "path": "references/templates/standard.md"},
                )
            ],
            usage=(1600, 20),
        ),
        reply("Notes drafted.", usage=(1900, 40)),
    ],
    "tell me a joke": [reply("Why did the skill cross the road?", usage=(900, 10))],
}


def test_eval_against_the_fake_server_writes_traces_and_report(
    servers: list[FakeOpenAI], tmp_path: Path
) -> None:
    server = FakeOpenAI(by_query(SERVER_SCRIPTS)).start()
    servers.append(server)
    cases = write_cases(tmp_path / "cases.json", SERVER_CASES)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [sys.executable, "-c", "from skillshelf.cli import main; main()", "eval"]
    options = ["--root", str(EXAMPLES), "--no-cache", "--model", "openai:fake"]
    completed = subprocess.run(
        [*command, str(cases), *options, "--base-url", f"{server.url}/v1", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=_CLI_TIMEOUT_S,
    )
    assert completed.returncode == 0, completed.stderr
    assert completed.stderr == ""  # no progress bar when stderr is not a terminal
    assert sorted(p.name for p in (out / "traces").iterdir()) == [
        "csv-run1.jsonl",
        "joke-run1.jsonl",
        "notes-run1.jsonl",
    ]
    trace = [json.loads(x) for x in (out / "traces" / "notes-run1.jsonl").read_text().splitlines()]
    assert [r["tool"] for r in trace if r["type"] == "tool"] == [
        "skill_load",
        "skill_load",
        "skill_read_file",
    ]
    report = json.loads((out / "report.json").read_text())
    assert report["model"] == "openai:fake"
    summary = report["summary"]
    # csv hit; notes first loaded commit-message (a miss for release-notes and a false
    # positive for commit-message) but read the expected doc; the joke loaded nothing.
    assert summary["macro_recall"] == 0.5
    assert summary["false_trigger_rate"] == 0.0
    assert summary["param_accuracy"] == {"value": 1.0, "hits": 1, "total": 1}
    assert summary["avg_steps"] == pytest.approx((2 + 4 + 1) / 3)
    assert summary["avg_input_tokens"] == pytest.approx((2400 + 5800 + 900) / 3)
    assert summary["avg_output_tokens"] == pytest.approx((50 + 100 + 10) / 3)
    notes_run = next(r for r in report["runs"] if r["case_id"] == "notes")
    assert notes_run["loads"] == [
        {"skill": "commit-message", "step": 1},
        {"skill": "release-notes", "step": 2},
    ]
    assert {c["id"]: c["status"] for c in report["cases"]} == {
        "csv": "pass",
        "notes": "fail",
        "joke": "pass",
    }
    markdown = (out / "report.md").read_text()
    assert "| commit-message | 0 | 0.00 | – | 0.00 |" in markdown
    assert "# Summary" in completed.stdout and "notes\trelease-notes\tcommit-message" in (
        completed.stdout
    )


def test_auth_rejection_is_a_clear_message_and_exit_1(
    servers: list[FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    server = FakeOpenAI(lambda body: Fail(401, "bad key")).start()
    servers.append(server)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = write_cases(tmp_path / "c.json", SERVER_CASES)
    # One at a time: no other request is in flight when the eval stops.
    result = invoke(
        cases, "--root", EXAMPLES, "--no-cache", "--model", "openai:x", "--base-url",
        f"{server.url}/v1", "--concurrency", "1",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "rejected the API key (HTTP 401)" in result.stderr
    assert "Traceback" not in result.stderr
    assert len(server.requests) == 1


def test_a_server_error_in_one_run_is_reported_not_fatal(
    servers: list[FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scripts: dict[str, list[Scripted]] = {
        **SERVER_SCRIPTS,
        "tell me a joke": [Fail(400, "context too long")],
    }
    server = FakeOpenAI(by_query(scripts)).start()
    servers.append(server)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    cases = write_cases(tmp_path / "c.json", SERVER_CASES)
    result = invoke(
        cases, "--root", EXAMPLES, "--no-cache", "--model", "openai:x", "--base-url",
        f"{server.url}/v1", "--json",
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["summary"]["errored_runs"] == 1
    joke = next(r for r in report["runs"] if r["case_id"] == "joke")
    assert joke["error"].startswith("ModelError: HTTP 400")
    assert report["summary"]["false_trigger_rate"] is None
    assert "note: 1 of 3 runs failed" in result.stderr


# -- bad input ---------------------------------------------------------------------------------


def baseline_args(*extra: str | Path) -> list[str | Path]:
    return ["--root", EXAMPLES, "--no-cache", "--model", "baseline:search", *extra]


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("c.json", '[{"query": "x", "expected_skill": "csv-insights"},', "not valid JSON"),
        ("c.yaml", "- query: [\n", "not valid YAML"),
        ("c.jsonl", '{"query": "x", "expected_skill": null}\n{"query": 1}\n', "line 2"),
        ("c.json", "[]", "no cases"),
        ("c.txt", "[]", "use a .json, .jsonl, .yaml or .yml file"),
    ],
)
def test_bad_cases_files_exit_2_with_a_message(
    tmp_path: Path, name: str, text: str, message: str
) -> None:
    (tmp_path / name).write_text(text)
    result = invoke(tmp_path / name, *baseline_args())
    assert result.exit_code == 2
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_expected_skill_suggests_close_names(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": "csv-insight"}])
    result = invoke(cases, *baseline_args())
    assert result.exit_code == 2
    assert 'Unknown skill "csv-insight". Did you mean: csv-insights?' in result.stderr


def test_missing_cases_file_exits_2(tmp_path: Path) -> None:
    result = invoke(tmp_path / "nope.json", *baseline_args())
    assert result.exit_code == 2 and "cannot read it" in result.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--min-recall", "1.5"), "--min-recall"),
        (("--max-false-trigger", "-0.1"), "--max-false-trigger"),
        (("--runs", "0"), "--runs"),
        (("--concurrency", "0"), "--concurrency"),
    ],
)
def test_bad_options_are_usage_errors(tmp_path: Path, args: tuple[str, ...], message: str) -> None:
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": None}])
    result = invoke(cases, *baseline_args(*args))
    assert result.exit_code == 2 and message in result.stderr


def test_thresholds_the_cases_cannot_measure_are_usage_errors(tmp_path: Path) -> None:
    only_skills = write_cases(
        tmp_path / "s.json", [{"query": "x", "expected_skill": "csv-insights"}]
    )
    result = invoke(only_skills, *baseline_args("--max-false-trigger", "0.1"))
    assert result.exit_code == 2
    assert "--max-false-trigger needs at least one case with expected_skill: null" in (
        result.stderr
    )
    only_null = write_cases(tmp_path / "n.json", [{"query": "x", "expected_skill": None}])
    result = invoke(only_null, *baseline_args("--min-recall", "0.5"))
    assert result.exit_code == 2 and "--min-recall needs" in result.stderr


def test_unknown_model_provider_is_a_usage_error_and_a_missing_key_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": None}])
    result = invoke(cases, "--root", EXAMPLES, "--model", "nope:x")
    assert result.exit_code == 2 and "Unknown model provider 'nope'" in result.stderr
    result = invoke(cases, "--root", EXAMPLES, "--model", "baseline:search?min_score=abc")
    assert result.exit_code == 2 and "min_score must be a number" in result.stderr
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = invoke(cases, "--root", EXAMPLES, "--model", "openai:gpt-x")
    assert result.exit_code == 1 and "No API key" in result.stderr


def test_out_refuses_a_non_empty_folder_that_is_not_an_eval(tmp_path: Path) -> None:
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": None}])
    out = tmp_path / "out"
    out.mkdir()
    (out / "thesis.tex").write_text("precious")
    (out / "report.json").write_text('{"something": "else"}')
    result = invoke(cases, *baseline_args("--out", out))
    assert result.exit_code == 2
    assert "is not empty and holds no report.json from an earlier skillshelf eval" in (
        result.stderr
    )
    assert sorted(p.name for p in out.iterdir()) == ["report.json", "thesis.tex"]
    assert (out / "report.json").read_text() == '{"something": "else"}'


def test_out_replaces_only_a_previous_evals_own_files(tmp_path: Path) -> None:
    out = tmp_path / "out"
    first = write_cases(
        tmp_path / "a.json",
        [{"id": "old", "query": "x", "expected_skill": None}],
    )
    assert invoke(first, *baseline_args("--out", out)).exit_code == 0
    (out / "notes.txt").write_text("mine")
    (out / "traces" / "keep.txt").write_text("mine too")
    second = write_cases(
        tmp_path / "b.json",
        [{"id": "new", "query": "y", "expected_skill": None}],
    )
    assert invoke(second, *baseline_args("--out", out, "--runs", "2")).exit_code == 0
    assert sorted(p.name for p in (out / "traces").iterdir()) == [
        "keep.txt",
        "new-run1.jsonl",
        "new-run2.jsonl",
    ]
    assert (out / "notes.txt").read_text() == "mine"
    assert [c["id"] for c in json.loads((out / "report.json").read_text())["cases"]] == ["new"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the baseline"),
        ("{not json", "cannot read the baseline"),
        ('{"version": 1}', "is not a skillshelf eval report.json"),
    ],
)
def test_unusable_baseline_exits_2(tmp_path: Path, content: str | None, message: str) -> None:
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": None}])
    baseline = tmp_path / "previous.json"
    if content is not None:
        baseline.write_text(content)
    result = invoke(cases, *baseline_args("--baseline", baseline))
    assert result.exit_code == 2 and message in result.stderr


# -- thresholds and baselines with the lexical baseline model ---------------------------------

GATE_CASES: list[dict[str, Any]] = [
    {"id": "pdf", "query": "merge these two pdf files", "expected_skill": "pdf-merge"},
    {"id": "chart", "query": "plot a bar chart of monthly revenue", "expected_skill": "charts"},
    {"id": "joke", "query": "tell me a joke", "expected_skill": None},
    {"id": "convert", "query": "convert this pdf file to a word document", "expected_skill": None},
]


def gate_skills(root: Path, *, charts: str) -> Path:
    make_skill(root, "pdf-merge", "Merges and splits pdf files. Use to combine pdf documents.")
    make_skill(root, "charts", charts)
    return root


def run_gate(tmp_path: Path, charts: str, *extra: str | Path) -> Result:
    root = gate_skills(tmp_path / "skills", charts=charts)
    cases = write_cases(tmp_path / "gate.json", GATE_CASES)
    return invoke(cases, "--root", root, "--no-cache", "--model", "baseline:search", *extra)


GOOD_CHARTS = "Draws a bar chart or line chart from monthly revenue figures. Use to plot data."
VAGUE_CHARTS = "Visual helper. Use for pictures."


def test_thresholds_gate_the_exit_code(tmp_path: Path) -> None:
    passing = run_gate(tmp_path, GOOD_CHARTS, "--min-recall", "1", "--max-false-trigger", "0.5")
    assert passing.exit_code == 0, passing.stderr
    failing = run_gate(tmp_path, VAGUE_CHARTS, "--min-recall", "0.9")
    assert failing.exit_code == 1
    assert "threshold failed: macro recall 0.500 is below min_recall 0.9 (short by 0.400)" in (
        failing.stderr
    )
    triggers = run_gate(tmp_path, GOOD_CHARTS, "--max-false-trigger", "0.25")
    assert triggers.exit_code == 1
    assert "false-trigger rate 0.500 is above max_false_trigger 0.25 (over by 0.250)" in (
        triggers.stderr
    )


def test_baseline_shows_regressions_and_improvements(tmp_path: Path) -> None:
    good = tmp_path / "good.json"
    vague = tmp_path / "vague.json"
    assert run_gate(tmp_path, GOOD_CHARTS, "--json").exit_code == 0
    good.write_text(run_gate(tmp_path, GOOD_CHARTS, "--json").stdout)
    worse = run_gate(tmp_path, VAGUE_CHARTS, "--baseline", good)
    assert worse.exit_code == 0
    assert "# Compared with the baseline" in worse.stdout
    assert "macro recall\t1.00\t0.50\t-0.50" in worse.stdout
    assert "charts recall\t1.00\t0.00\t-1.00" in worse.stdout
    assert "worse: chart (pass → fail)" in worse.stdout
    vague.write_text(run_gate(tmp_path, VAGUE_CHARTS, "--json").stdout)
    better = run_gate(tmp_path, GOOD_CHARTS, "--baseline", vague, "--json")
    diff = json.loads(better.stdout)["baseline_diff"]
    assert diff["better"] == [{"id": "chart", "before": "fail", "after": "pass"}]
    assert diff["worse"] == []
    assert diff["macro_recall"] == {"before": 0.5, "after": 1.0, "delta": 0.5}
    charts = next(s for s in diff["skills"] if s["skill"] == "charts")
    assert charts["recall"] == {"before": 0.0, "after": 1.0, "delta": 1.0}


def test_every_run_failing_exits_1_with_the_first_error(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text(json.dumps([{"tool_calls": [{"name": "skill_list"}]}]))
    cases = write_cases(tmp_path / "c.json", [{"query": "x", "expected_skill": None}])
    result = invoke(cases, "--root", EXAMPLES, "--no-cache", "--model", f"scripted:{script}")
    assert result.exit_code == 1
    assert "error: every run failed; the first: UsageError: The scripted model has no reply" in (
        result.stderr
    )
    assert "# Errored runs" in result.stdout


def test_help_explains_every_option() -> None:
    text = CliRunner().invoke(main, ["eval", "--help"]).output
    for option in (
        "--model", "--base-url", "--runs", "--concurrency", "--out", "--json", "--baseline",
        "--min-recall", "--max-false-trigger", "--max-steps", "--root", "baseline:search",
    ):  # fmt: skip
        assert option in text
    assert "lexical baseline" in text


def test_a_model_failing_its_first_five_runs_stops_the_eval(tmp_path: Path) -> None:
    script = tmp_path / "replies.json"
    script.write_text("[]")  # a server that never answers
    cases = write_cases(
        tmp_path / "c.json", [{"query": f"q{i}", "expected_skill": None} for i in range(12)]
    )
    result = invoke(
        cases, "--root", EXAMPLES, "--no-cache", "--model", f"scripted:{script}",
        "--concurrency", "1",
    )  # fmt: skip
    assert result.exit_code == 1
    assert "error: stopped: the first 5 runs all failed, none succeeded; the first:" in (
        result.stderr
    )
    assert result.stdout == ""

"""The real scripts shipped by the corpus skills run to completion in the bwrap sandbox.

Every script in tests/corpus that needs only the standard library, the harness's own
dependencies (PyYAML) and programs of a Debian base system (sh, bash, find, npm from CI's
packages) is run here on real input, in the skill's staged workspace copy, exactly as a model
would run it through ``workspace_exec``. :data:`EXCLUDED` names every other script and why it
cannot run in a sandbox without network or extra runtimes; a test checks that the two lists
cover every script in the corpus.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass

import pytest

from corpus_paths import COLLECTION_ROOTS, CORPUS
from skillshelf.exec.runner import BwrapExecutor
from skillshelf.exec.workspace import ExecResult, Workspace, execute, shell_command
from skillshelf.repository import Repository

SCRIPT_SUFFIXES = (".py", ".sh", ".js", ".cjs", ".mjs", ".ts")


@dataclass(frozen=True)
class Case:
    """One run: the skill, the scripts it exercises, a shell command, what proves it worked."""

    skill: str
    scripts: tuple[str, ...]  # paths relative to the corpus
    command: str
    stdout: str  # must appear in stdout
    collect: tuple[str, ...] = ()
    exit_code: int = 0


_AC = "anthropic-skills/skills/skill-creator"
_OC = "openai-skills/skills/.system/skill-creator"
_GRADING = json.dumps(
    {
        "summary": {"pass_rate": 1.0, "passed": 2, "failed": 0, "total": 2},
        "timing": {"total_duration_seconds": 3.5},
        "expectations": [{"text": "makes a file", "passed": True, "evidence": "out.txt"}],
    }
)
_LOOP = json.dumps(
    {
        "history": [
            {
                "iteration": 1,
                "description": "Validates skills.",
                "train_results": [{"query": "check my skill", "should_trigger": True}],
            }
        ],
        "holdout": 0,
    }
)

CASES: dict[str, Case] = {
    "anthropic-quick-validate": Case(
        "skill-creator",
        (f"{_AC}/scripts/quick_validate.py",),
        "python3 scripts/quick_validate.py .",
        "Skill is valid!",
    ),
    "anthropic-package-skill": Case(
        "skill-creator",
        (f"{_AC}/scripts/package_skill.py", f"{_AC}/scripts/__init__.py"),
        "python3 -m scripts.package_skill . $OUTPUT_DIR",
        "Successfully packaged skill",
        collect=("out/skill-creator.skill",),
    ),
    "anthropic-utils": Case(
        "skill-creator",
        (f"{_AC}/scripts/utils.py",),
        "python3 -c 'from pathlib import Path; from scripts.utils import parse_skill_md; "
        'print(parse_skill_md(Path("."))[0])\'',
        "skill-creator",
    ),
    "anthropic-aggregate-benchmark": Case(
        "skill-creator",
        (f"{_AC}/scripts/aggregate_benchmark.py",),
        "for c in with_skill without_skill; do d=$WORK_DIR/bench/eval-1/$c/run-1; "
        f"mkdir -p $d; echo '{_GRADING}' > $d/grading.json; done; "
        "python3 scripts/aggregate_benchmark.py $WORK_DIR/bench --skill-name demo "
        "-o $OUTPUT_DIR/benchmark.json",
        "Generated:",
        collect=("out/benchmark.json", "out/benchmark.md"),
    ),
    "anthropic-generate-report": Case(
        "skill-creator",
        (f"{_AC}/scripts/generate_report.py",),
        f"echo '{_LOOP}' | python3 scripts/generate_report.py - -o $OUTPUT_DIR/report.html "
        "&& head -c 15 $OUTPUT_DIR/report.html",
        "<!DOCTYPE html>",
        collect=("out/report.html",),
    ),
    "anthropic-generate-review": Case(
        "skill-creator",
        (f"{_AC}/eval-viewer/generate_review.py",),
        "d=$WORK_DIR/demo-workspace/eval-1/with_skill; mkdir -p $d/outputs; "
        'echo hello > $d/outputs/result.txt; echo \'{"prompt": "say hello"}\' > '
        "$WORK_DIR/demo-workspace/eval-1/eval_metadata.json; "
        "python3 eval-viewer/generate_review.py $WORK_DIR/demo-workspace "
        "--static $OUTPUT_DIR/review.html && grep -c result.txt $OUTPUT_DIR/review.html",
        "1",
        collect=("out/review.html",),
    ),
    "openai-init-validate-package": Case(
        "skill-creator",
        (
            f"{_OC}/scripts/init_skill.py",
            f"{_OC}/scripts/quick_validate.py",
            f"{_OC}/scripts/package_skill.py",
        ),
        # The skill's own workflow: create from the template, fill in the description (the
        # template's is a [TODO] list, which the validator rightly refuses), validate, package.
        "python3 scripts/init_skill.py demo-skill --path $WORK_DIR --resources scripts "
        "&& sed -i 's/^description: .*/description: Says hello. Use when greeting./' "
        "$WORK_DIR/demo-skill/SKILL.md "
        "&& python3 scripts/quick_validate.py $WORK_DIR/demo-skill "
        "&& python3 scripts/package_skill.py $WORK_DIR/demo-skill $OUTPUT_DIR",
        "Skill is valid!",
        collect=("out/demo-skill.skill",),
    ),
    "webapp-with-server": Case(
        "webapp-testing",
        ("anthropic-skills/skills/webapp-testing/scripts/with_server.py",),
        "python3 scripts/with_server.py --server 'python3 -m http.server 18765' --port 18765 "
        "-- python3 -c 'import urllib.request as u; "
        'print("status", u.urlopen("http://localhost:18765/").status)\'',
        "status 200",
    ),
    "slack-gif-easing": Case(
        "slack-gif-creator",
        ("anthropic-skills/skills/slack-gif-creator/core/easing.py",),
        "python3 -c 'from core.easing import ease_out_bounce, ease_in_out_cubic; "
        "print(ease_out_bounce(1.0), ease_in_out_cubic(0.5))'",
        "1.0 0.5",
    ),
    "obra-find-polluter": Case(
        "systematic-debugging",
        ("obra-superpowers/skills/systematic-debugging/find-polluter.sh",),
        'cd $WORK_DIR && echo \'{"scripts": {"test": "sh"}}\' > package.json && '
        "mkdir -p t && echo true > t/a.test.sh && echo 'touch polluted' > t/b.test.sh && "
        "bash $SKILL_DIR/find-polluter.sh polluted 't/*.test.sh'",
        "FOUND POLLUTER!",
        exit_code=1,
    ),
}

_SC_NEEDS_CLAUDE = "runs the `claude` CLI or the Anthropic API (a model, network)"
EXCLUDED: dict[str, str] = {
    f"{_AC}/scripts/run_eval.py": _SC_NEEDS_CLAUDE,
    f"{_AC}/scripts/run_loop.py": _SC_NEEDS_CLAUDE,
    f"{_AC}/scripts/improve_description.py": _SC_NEEDS_CLAUDE,
    "anthropic-skills/skills/mcp-builder/scripts/evaluation.py": (
        "the anthropic package and an API key, and MCP servers to evaluate"
    ),
    "anthropic-skills/skills/mcp-builder/scripts/connections.py": (
        "a library for evaluation.py: connects to live MCP servers"
    ),
    "anthropic-skills/skills/slack-gif-creator/core/frame_composer.py": "Pillow and numpy",
    "anthropic-skills/skills/slack-gif-creator/core/gif_builder.py": "Pillow, numpy, imageio",
    "anthropic-skills/skills/slack-gif-creator/core/validators.py": "Pillow",
    "anthropic-skills/skills/webapp-testing/examples/element_discovery.py": "playwright + browser",
    "anthropic-skills/skills/webapp-testing/examples/console_logging.py": "playwright + browser",
    "anthropic-skills/skills/webapp-testing/examples/static_html_automation.py": (
        "playwright + browser"
    ),
    "anthropic-skills/skills/web-artifacts-builder/scripts/init-artifact.sh": (
        "installs packages from the npm registry (network)"
    ),
    "anthropic-skills/skills/web-artifacts-builder/scripts/bundle-artifact.sh": (
        "installs packages from the npm registry (network)"
    ),
    "anthropic-skills/skills/algorithmic-art/templates/generator_template.js": (
        "a p5.js template that runs in a browser"
    ),
    "obra-superpowers/skills/brainstorming/scripts/start-server.sh": (
        "starts a long-lived server for a person's browser"
    ),
    "obra-superpowers/skills/brainstorming/scripts/stop-server.sh": "stops that server",
    "obra-superpowers/skills/brainstorming/scripts/helper.js": "runs in the browser page",
    "obra-superpowers/skills/brainstorming/scripts/server.cjs": (
        "the long-lived server start-server.sh runs for a person's browser"
    ),
    "obra-superpowers/skills/writing-skills/render-graphs.js": "graphviz (`dot`)",
    "obra-superpowers/skills/systematic-debugging/condition-based-waiting-example.ts": (
        "a TypeScript example to read; it needs a TypeScript toolchain and a test framework"
    ),
    "openai-skills/skills/.system/skill-installer/scripts/install-skill-from-github.py": (
        "downloads from GitHub (network)"
    ),
    "openai-skills/skills/.system/skill-installer/scripts/github_utils.py": (
        "a library for the GitHub downloads (network)"
    ),
    "openai-skills/skills/.system/skill-installer/scripts/list-curated-skills.py": (
        "lists skills from GitHub (network)"
    ),
    "openai-skills/skills/.curated/gh-address-comments/scripts/fetch_comments.py": (
        "the `gh` CLI, signed in to GitHub (network)"
    ),
    "openai-skills/skills/.curated/gh-fix-ci/scripts/inspect_pr_checks.py": (
        "the `gh` CLI, signed in to GitHub (network)"
    ),
}


def _corpus_scripts() -> set[str]:
    return {
        p.relative_to(CORPUS).as_posix()
        for root in COLLECTION_ROOTS
        for p in root.rglob("*")
        if p.suffix in SCRIPT_SUFFIXES and p.is_file() and "node_modules" not in p.parts
    }


def test_every_corpus_script_is_either_run_or_excluded_with_a_reason() -> None:
    run = {script for case in CASES.values() for script in case.scripts}
    assert not run & set(EXCLUDED)
    assert run | set(EXCLUDED) == _corpus_scripts()


def _repository(case: Case) -> Repository:
    collection = case.scripts[0].split("/", 1)[0]
    return Repository([CORPUS / collection / "skills"], include_hidden=True, cache_dir=False)


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_corpus_script_runs_to_completion_in_the_sandbox(
    bwrap: BwrapExecutor, workspace: Workspace, name: str
) -> None:
    case = CASES[name]
    if "find-polluter" in case.command and shutil.which("npm") is None:
        if os.environ.get("CI"):
            pytest.fail("CI installs npm: find-polluter.sh runs `npm test`")
        pytest.skip("npm is not installed (CI installs it)")
    skill = _repository(case).get(case.skill)
    result: ExecResult = execute(
        workspace,
        bwrap,
        shell_command(case.command),
        skill=skill,
        collect=case.collect,
        timeout_s=120,
    )
    assert (result.exit_code, result.timed_out) == (case.exit_code, False), result.stderr
    assert case.stdout in result.stdout, result.stdout + result.stderr
    assert sorted(f.path for f in result.files) == sorted(case.collect)
    assert result.missing == []

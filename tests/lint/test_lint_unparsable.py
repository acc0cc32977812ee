"""script.unparsable: a Python script too deeply nested for Python's parser is one finding.

``ast.parse`` raises RecursionError on a 40 KB ``1+1+…`` chain and MemoryError (the C parser's
"too deep") on a long run of unary operators; either used to end ``lint`` for the whole root.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.lint import lint_repository
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

RULE = "script.unparsable"
ABSENT = "skillshelf_surely_absent_module"
PATHOLOGICAL = {
    "recursion-40k": "x = " + "1+" * 20_000 + "1\n",
    "memory-200k": "x = " + "-" * 200_000 + "1\n",
}


@pytest.fixture(params=sorted(PATHOLOGICAL))
def root(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "deep-script",
        files={"scripts/deep.py": PATHOLOGICAL[request.param], "scripts/fine.py": "import os\n"},
    )
    make_skill(skills, "other-skill", files={"scripts/run.py": f"import {ABSENT}\n"})
    return skills


def test_a_script_too_deep_to_parse_is_one_finding_and_the_rest_is_linted(root: Path) -> None:
    report = lint_repository(Repository([root], cache_dir=False))
    [deep] = [f for f in report.findings if f.code == RULE]
    assert (deep.skill, deep.severity) == ("deep-script", "warning")
    assert deep.path is not None and deep.path.endswith("scripts/deep.py")
    assert "nests too deeply" in deep.message
    unavailable = [f for f in report.findings if f.code == "script.import_unavailable"]
    assert [(f.skill, ABSENT in f.message) for f in unavailable] == [("other-skill", True)]


def test_cli_lint_reports_it_without_a_traceback(root: Path) -> None:
    result = CliRunner().invoke(main, ["lint", "--root", str(root), "--no-cache"])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert RULE in result.output and "scripts/deep.py" in result.output
    assert "Traceback" not in result.output

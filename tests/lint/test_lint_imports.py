"""script.import_unavailable: a skill's Python scripts import modules this environment lacks."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from skillshelf.lint import LintReport, LintSubject, ScriptImport, lint_repository, lint_subjects
from skillshelf.lint._imports import script_imports
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

RULE = "script.import_unavailable"
ABSENT = "skillshelf_surely_absent_module"


def _lint(root: Path, files: dict[str, str]) -> LintReport:
    make_skill(root, "filling-forms", files=files)
    return lint_repository(Repository([root], cache_dir=False), select=[RULE])


def test_a_module_neither_stdlib_nor_installed_is_reported_with_its_line(tmp_path: Path) -> None:
    script = f"import json\nimport yaml\n\nfrom {ABSENT}.sub import thing\n"
    report = _lint(tmp_path, {"scripts/fill.py": script})
    [found] = report.findings
    assert (found.code, found.severity, found.line) == (RULE, "warning", 4)
    assert found.path is not None and found.path.endswith("scripts/fill.py")
    assert repr(ABSENT) in found.message


def test_the_hint_names_the_package_to_install() -> None:
    subject = LintSubject(
        "drawing",
        "Draws. Use when asked to draw things on images.",
        files=frozenset({"scripts/draw.py"}),
        unavailable_imports=(ScriptImport("scripts/draw.py", 1, "PIL"),),
    )
    [found] = lint_subjects([subject], select=[RULE]).findings
    assert "'Pillow'" in found.hint


@pytest.mark.parametrize(
    "script",
    [
        "import os, sys, json\nfrom collections import abc\n",
        "import yaml\n",  # a dependency of skillshelf: installed wherever lint runs
        f"try:\n    import {ABSENT}\nexcept ImportError:\n    {ABSENT} = None\n",
        f"try:\n    from {ABSENT} import x\nexcept (ModuleNotFoundError, OSError):\n    x = 1\n",
        f"from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import {ABSENT}\n",
        f"from . import {ABSENT}\nfrom .{ABSENT} import y\n",
        "import helpers\nfrom scripts.helpers import z\n",  # shipped by the skill
        f"def broken(:\n    import {ABSENT}\n",  # does not parse: nothing to say
    ],
)
def test_available_guarded_relative_and_shipped_imports_are_not_reported(
    tmp_path: Path, script: str
) -> None:
    files = {"scripts/run.py": script, "scripts/helpers.py": "z = 1\n"}
    assert _lint(tmp_path, files).findings == ()


def test_an_import_inside_a_function_is_still_required() -> None:
    source = f"def main():\n    import {ABSENT}\n"
    assert script_imports("a.py", source) == [ScriptImport("a.py", 2, ABSENT)]


def test_modules_are_looked_up_without_being_imported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    marker = tmp_path / "imported"
    (site / "loud_module_xyz.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    monkeypatch.syspath_prepend(str(site))
    report = _lint(tmp_path / "skills", {"scripts/run.py": "import loud_module_xyz\n"})
    assert report.findings == ()
    assert not marker.exists()
    assert "loud_module_xyz" not in sys.modules


def test_only_python_files_are_read(tmp_path: Path) -> None:
    files = {"scripts/run.sh": f"python3 -c 'import {ABSENT}'\n", "notes.txt": f"import {ABSENT}"}
    assert _lint(tmp_path, files).findings == ()

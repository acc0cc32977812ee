"""A failed command's missing module or program is named, and the operator asked to provide it."""

from __future__ import annotations

from pathlib import Path

import pytest

from skillshelf.exec.missing import MAX_NOTES, Missing, find_missing
from skillshelf.exec.runner import BwrapExecutor
from skillshelf.exec.workspace import Workspace, WorkspaceManager, execute, shell_command
from skillshelf.repository import Repository
from skillshelf.tools import SkillTools

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"


@pytest.mark.parametrize(
    ("stderr", "exit_code", "expected"),
    [
        (
            'Traceback (most recent call last):\n  File "x.py", line 1\n'
            "ModuleNotFoundError: No module named 'pypdf'\n",
            1,
            [Missing("python-module", "pypdf")],
        ),
        (
            "ModuleNotFoundError: No module named 'PIL._imaging'\n",
            1,
            [Missing("python-module", "PIL._imaging")],
        ),
        ("sh: 1: gh: not found\n", 127, [Missing("program", "gh")]),
        ("/bin/sh: 3: jq: not found\n", 127, [Missing("program", "jq")]),
        ("bash: line 1: rg: command not found\n", 127, [Missing("program", "rg")]),
        ("/usr/bin/env: ‘node’: No such file or directory\n", 127, [Missing("program", "node")]),
        ("env: 'deno': No such file or directory\n", 127, [Missing("program", "deno")]),
        (
            "bash: ./x.sh: /usr/bin/perl: bad interpreter: No such file or directory\n",
            126,
            [Missing("program", "/usr/bin/perl")],
        ),
        (
            "Error: Cannot find module 'express'\nRequire stack:\n- /workspace/a.js\n",
            1,
            [Missing("node-module", "express")],
        ),
        ("Error: Cannot find module './local'\n", 1, []),
        ("", 127, [Missing("unknown", "")]),
        ("Traceback ...\nValueError: bad input\n", 1, []),
    ],
)
def test_missing_modules_and_programs_are_recognised(
    stderr: str, exit_code: int, expected: list[Missing]
) -> None:
    assert find_missing(stderr, exit_code) == expected


def test_each_name_is_reported_once_in_stderr_order() -> None:
    stderr = (
        "sh: 1: gh: not found\nModuleNotFoundError: No module named 'yaml'\nsh: 2: gh: not found\n"
    )
    assert find_missing(stderr, 127) == [Missing("program", "gh"), Missing("python-module", "yaml")]


def test_a_flood_of_names_is_capped() -> None:
    stderr = "".join(f"sh: 1: tool{i}: not found\n" for i in range(100))
    assert len(find_missing(stderr, 127)) == MAX_NOTES


@pytest.mark.parametrize(
    "name",
    ["evil\u202emod", "a<b>c", "x\nFAKE", "zero\u200bwidth", "q'uote"],
)
def test_names_with_hostile_characters_never_reach_the_note(name: str) -> None:
    stderr = f"ModuleNotFoundError: No module named '{name}'\nsh: 1: {name}: not found\n"
    notes = [m.note() for m in find_missing(stderr, 1)]
    for note in notes:
        assert note.isprintable()
        assert "<" not in note and "\u202e" not in note


def test_a_long_name_is_clipped() -> None:
    missing = find_missing("ModuleNotFoundError: No module named '" + "a" * 190 + "'", 1)
    assert len(missing) == 1 and len(missing[0].note()) < 800


def test_the_note_names_the_package_to_install_and_who_provides_it() -> None:
    note = Missing("python-module", "PIL.Image").note()
    assert "'PIL.Image'" in note and "'Pillow'" in note and "operator" in note


def test_a_missing_module_in_the_sandbox_comes_back_in_the_result(
    bwrap: BwrapExecutor, workspace: Workspace
) -> None:
    command = "python3 -c 'import skillshelf_no_such_module'; no-such-program-xyz"
    result = execute(workspace, bwrap, shell_command(command))
    assert result.exit_code == 127
    assert result.missing == [
        Missing("python-module", "skillshelf_no_such_module"),
        Missing("program", "no-such-program-xyz"),
    ]
    assert result.notes[0].startswith("Missing runtime: the Python module")
    assert result.to_json()["missing"][1] == {"kind": "program", "name": "no-such-program-xyz"}


def test_a_successful_command_has_no_missing_notes(
    bwrap: BwrapExecutor, workspace: Workspace
) -> None:
    command = "echo \"ModuleNotFoundError: No module named 'x'\" >&2"
    result = execute(workspace, bwrap, shell_command(command))
    assert result.exit_code == 0 and result.missing == [] and result.notes == []


def test_workspace_exec_tells_the_model_what_the_operator_must_provide(
    bwrap: BwrapExecutor, tmp_path: Path
) -> None:
    repo = Repository([EXAMPLES])
    manager = WorkspaceManager(tmp_path / "workspaces")
    tools = SkillTools(repo, workspace=manager, executor=bwrap, session_id="s1")
    result = tools.call("workspace_exec", {"command": "python3 -c 'import pypdf_not_here'"})
    assert result.data is not None
    assert result.data["missing"] == [{"kind": "python-module", "name": "pypdf_not_here"}]
    assert "Note: Missing runtime: the Python module &#x27;pypdf_not_here&#x27;" in result.content
    assert "operator must provide it" in result.content

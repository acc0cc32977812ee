"""The model-facing tool names are listed once, in tools/_spec.py, and every face offers them."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from skillshelf.repository import Repository
from skillshelf.testing import make_skill
from skillshelf.tools import ALL_TOOLS, SKILL_TOOLS, SkillTools

SRC = Path(__file__).resolve().parents[2] / "src" / "skillshelf"
# A literal naming a few tools is a script or a filter (``("skill_load", "skill_read_file")``);
# one naming this many is a second copy of the list.
_A_COPY = 4


def _tool_name_collections(path: Path) -> list[int]:
    """Lines of tuple/list/set literals in ``path`` that spell out the tool list."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            names = [
                e.value for e in node.elts if isinstance(e, ast.Constant) and e.value in ALL_TOOLS
            ]
            if len(set(names)) >= _A_COPY:
                found.append(node.lineno)
    return found


def test_no_module_but_spec_spells_out_the_tool_names() -> None:
    offenders = {
        str(path.relative_to(SRC)): lines
        for path in sorted(SRC.rglob("*.py"))
        if path.name != "_spec.py" and (lines := _tool_name_collections(path))
    }
    assert offenders == {}


def test_skill_tools_are_every_tool_but_workspace_exec() -> None:
    assert (*SKILL_TOOLS, "workspace_exec") == ALL_TOOLS


@pytest.mark.parametrize(("with_exec", "expected"), [(False, SKILL_TOOLS), (True, ALL_TOOLS)])
def test_skill_tools_offer_the_spec_list(tmp_path: Path, with_exec: bool, expected: object) -> None:
    make_skill(tmp_path / "skills", "pdf")
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    workspace = None
    if with_exec:
        from skillshelf.exec.workspace import WorkspaceManager

        workspace = WorkspaceManager(tmp_path / "ws")
    assert SkillTools(repo, workspace=workspace).tool_names == expected

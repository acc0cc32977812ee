"""``skillshelf.tools`` is the one import point of the tools: its ``__all__`` is pinned, and no
module outside the package imports one of its private modules."""

from __future__ import annotations

import ast
from pathlib import Path

import skillshelf.tools as tools

ROOT = Path(__file__).resolve().parents[2]


def test_the_tools_package_face_is_pinned() -> None:
    assert sorted(tools.__all__) == [
        "ALL_TOOLS",
        "Activation",
        "ActivationLifetime",
        "ActivationMode",
        "ArgumentProblem",
        "DeclaredLoadError",
        "ENUM_LIMIT",
        "ErrorKind",
        "FATAL_INTERNAL_MESSAGE",
        "FATAL_STORE_MESSAGE",
        "LIST_CHARS",
        "LIST_PAGE",
        "ParsedArgs",
        "ParsedModelArgs",
        "SKILL_TOOLS",
        "STATEFUL_TOOLS",
        "SchemaFormat",
        "SkillListArgs",
        "SkillListDocsArgs",
        "SkillLoadArgs",
        "SkillReadFileArgs",
        "SkillSearchArgs",
        "SkillSelectDocsArgs",
        "SkillTools",
        "SkillUnloadArgs",
        "Tool",
        "ToolArgs",
        "ToolResult",
        "ToolStatus",
        "WorkspaceExecArgs",
        "activated_tools",
        "check_names",
        "failure_signature",
        "import_tools",
        "inactive_tool_message",
        "normalise_tool_name",
        "parse_arguments",
        "parse_model_arguments",
        "result_text",
        "run_tool",
        "skill_uri",
        "stub_tool",
        "tool_definitions",
        "tool_set",
    ]
    for name in tools.__all__:
        assert getattr(tools, name) is not None


def _private_tools_imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
        elif isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        else:
            continue
        found += [n for n in names if n.startswith("skillshelf.tools._")]
    return found


def test_no_source_outside_the_package_imports_a_private_tools_module() -> None:
    # import-linter holds this for src too; this also covers bench and examples.
    package = ROOT / "src" / "skillshelf" / "tools"
    offenders = {
        str(path.relative_to(ROOT)): found
        for folder in ("src", "bench", "examples")
        for path in sorted((ROOT / folder).rglob("*.py"))
        if package not in path.parents and (found := _private_tools_imports(path))
    }
    assert offenders == {}

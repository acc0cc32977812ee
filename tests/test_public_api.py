"""The public surface is a decision: ``__all__`` is curated and importing stays light."""

from __future__ import annotations

import importlib
import re
import subprocess
import sys
from pathlib import Path

import skillshelf

EXPECTED = {
    "__version__",
    # skills on disk
    "Repository",
    "Skill",
    "Diagnostic",
    "Watcher",
    "validate_path",
    "parse_skill_md",
    "safe_join",
    "read_skill_file",
    # the catalog
    "CatalogEntry",
    "render_catalog",
    # trust
    "Lockfile",
    "ScanPolicy",
    # tools and running scripts
    "SkillTools",
    "ToolResult",
    "Tool",
    "Activation",
    "WorkspaceManager",
    "ExecPolicy",
    # the agent
    "Agent",
    "Conversation",
    "RunResult",
    "RetryPolicy",
    "HistoryLimit",
    "Trace",
    "SkillSettings",
    # models and stores
    "open_model",
    "Usage",
    "open_store",
    # the error tree
    "SkillshelfError",
    "ConfigError",
    "MissingExtraError",
    "UsageError",
    "SkillNotFoundError",
    "FileAccessError",
    "ToolError",
    "ToolRetry",
    "ToolFailed",
    "AgentError",
    "MaxStepsError",
    "RepeatedToolFailureError",
    "EmptyResponseError",
    "ModelError",
    "StoreError",
    "HistoryError",
}
# The namespaces that hold the rest of the public surface, each with its own curated __all__.
NAMESPACES = {
    "skillshelf.reports": {
        "CacheReport",
        "TokenCounter",
        "TokenReport",
        "cache_report",
        "get_counter",
    },
    "skillshelf.evals": None,
    "skillshelf.lint": None,
    "skillshelf.testing": {"ScriptedModel", "make_skill", "reply", "scripted_by_query"},
    "skillshelf.errors": None,
    # the shared harness, for framework adapters (its __all__ is pinned in tests/harness)
    "skillshelf.harness": None,
    "skillshelf.integrations.openai_agents": {
        "SkillContext",
        "SkillKit",
        "conversation_of",
        "skill_tools",
    },
    "skillshelf.integrations.langchain": {"SkillsMiddleware", "SkillsState"},
    "skillshelf.integrations.pydantic_ai": {
        "ConversationKey",
        "SkillsToolset",
        "conversation_key",
        "history_conversation_key",
    },
}


def test_all_lists_exactly_the_public_names() -> None:
    assert set(skillshelf.__all__) == EXPECTED


def test_every_public_name_resolves() -> None:
    for name in skillshelf.__all__:
        assert getattr(skillshelf, name) is not None


def test_public_classes_say_they_belong_to_skillshelf() -> None:
    for name in skillshelf.__all__:
        value = getattr(skillshelf, name)
        if isinstance(value, type):
            assert value.__module__.startswith("skillshelf."), name


def test_import_skillshelf_stays_light() -> None:
    code = (
        "import sys, skillshelf; "
        "heavy = [m for m in ('yaml', 'rich', 'click', 'pydantic', 'httpx') if m in sys.modules]; "
        "print(','.join(heavy))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_the_namespaces_export_exactly_their_names() -> None:
    for module_name, expected in NAMESPACES.items():
        module = importlib.import_module(module_name)
        names = set(module.__all__)
        if expected is not None:
            assert names == expected, module_name
        for name in names:
            assert getattr(module, name) is not None, (module_name, name)


def test_every_error_the_agent_raises_is_public() -> None:
    from skillshelf.agent import results

    raised = {
        name
        for name in dir(results)
        if isinstance(getattr(results, name), type)
        and issubclass(getattr(results, name), Exception)
        and getattr(results, name).__module__ == results.__name__
    }
    assert raised <= set(skillshelf.__all__)


def test_readme_and_docs_import_only_public_names() -> None:
    root = Path(__file__).resolve().parents[1]
    texts = [
        root / "README.md",
        *sorted((root / "docs").rglob("*.md")),
        *sorted((root / "examples").rglob("*.py")),
    ]
    public_modules = {"skillshelf", *NAMESPACES, "skillshelf.compat.skills_ref"}
    for path in texts:
        for line in path.read_text(encoding="utf-8").splitlines():
            match = re.match(r"\s*from (skillshelf[\w.]*) import (.+)", line)
            if match is None:
                continue
            assert match.group(1) in public_modules, f"{path.name}: {line.strip()}"
            if match.group(1) == "skillshelf":
                for name in re.split(r"[,()\s]+", match.group(2)):
                    assert not name or name in skillshelf.__all__, f"{path.name}: {name}"

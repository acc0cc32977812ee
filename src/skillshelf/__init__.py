"""skillshelf — Agent Skills for LLM agents: discover, validate, catalog, search and read skills.

The public surface is exactly ``__all__``; everything else is private. Names are imported
lazily so that ``import skillshelf`` stays cheap (YAML and the rest load on first use).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

__all__ = [
    "Activation",
    "Agent",
    "CacheReport",
    "CasesError",
    "CatalogEntry",
    "Changes",
    "Diagnostic",
    "EvalCase",
    "EvalReport",
    "FileAccessError",
    "FileContent",
    "HistoryError",
    "HistoryLimit",
    "LintFinding",
    "LintReport",
    "Lockfile",
    "Manifest",
    "Repository",
    "ScanPolicy",
    "SearchHit",
    "Shadowed",
    "Skill",
    "SkillNotFoundError",
    "SkillTools",
    "SkillshelfError",
    "Skipped",
    "TokenCounter",
    "TokenReport",
    "Tool",
    "ToolError",
    "ToolResult",
    "Usage",
    "UsageError",
    "Watcher",
    "__version__",
    "build_report",
    "cache_report",
    "get_counter",
    "lint_repository",
    "load_cases",
    "materialize",
    "open_store",
    "parse_skill_md",
    "read_skill_file",
    "render_catalog",
    "run_cases",
    "safe_join",
    "validate_path",
]

_LAZY = {
    "Agent": "skillshelf.agent",
    "Activation": "skillshelf.agent_tools",
    "Tool": "skillshelf.agent_tools",
    "CatalogEntry": "skillshelf.catalog",
    "render_catalog": "skillshelf.catalog",
    "Diagnostic": "skillshelf.diagnostics",
    "FileAccessError": "skillshelf.errors",
    "SkillNotFoundError": "skillshelf.errors",
    "SkillshelfError": "skillshelf.errors",
    "ToolError": "skillshelf.errors",
    "UsageError": "skillshelf.errors",
    "Manifest": "skillshelf.manifest",
    "FileContent": "skillshelf.paths",
    "read_skill_file": "skillshelf.paths",
    "safe_join": "skillshelf.paths",
    "Changes": "skillshelf.repository",
    "Repository": "skillshelf.repository",
    "Shadowed": "skillshelf.repository",
    "Skipped": "skillshelf.repository",
    "SearchHit": "skillshelf.search",
    "Skill": "skillshelf.skill",
    "parse_skill_md": "skillshelf.skill",
    "validate_path": "skillshelf.validate",
    "SkillTools": "skillshelf.tools",
    "ToolResult": "skillshelf.tools",
    "open_store": "skillshelf.stores",
    "Lockfile": "skillshelf.lockfile",
    "ScanPolicy": "skillshelf.scanner",
    "Watcher": "skillshelf.watch",
    "materialize": "skillshelf.materialize",
    "CacheReport": "skillshelf.cachereport",
    "cache_report": "skillshelf.cachereport",
    "CasesError": "skillshelf.evals",
    "EvalCase": "skillshelf.evals",
    "EvalReport": "skillshelf.evals",
    "build_report": "skillshelf.evals",
    "load_cases": "skillshelf.evals",
    "run_cases": "skillshelf.evals",
    "LintFinding": "skillshelf.lint",
    "LintReport": "skillshelf.lint",
    "lint_repository": "skillshelf.lint",
    "TokenCounter": "skillshelf.tokens",
    "get_counter": "skillshelf.tokens",
    "TokenReport": "skillshelf.tokenreport",
    "Usage": "skillshelf.models",
    "HistoryError": "skillshelf.history",
    "HistoryLimit": "skillshelf.history",
}

if TYPE_CHECKING:
    from skillshelf.agent import Agent
    from skillshelf.agent_tools import Activation, Tool
    from skillshelf.cachereport import CacheReport, cache_report
    from skillshelf.catalog import CatalogEntry, render_catalog
    from skillshelf.diagnostics import Diagnostic
    from skillshelf.errors import (
        FileAccessError,
        SkillNotFoundError,
        SkillshelfError,
        ToolError,
        UsageError,
    )
    from skillshelf.evals import (
        CasesError,
        EvalCase,
        EvalReport,
        build_report,
        load_cases,
        run_cases,
    )
    from skillshelf.history import HistoryError, HistoryLimit
    from skillshelf.lint import LintFinding, LintReport, lint_repository
    from skillshelf.lockfile import Lockfile
    from skillshelf.manifest import Manifest
    from skillshelf.materialize import materialize
    from skillshelf.models import Usage
    from skillshelf.paths import FileContent, read_skill_file, safe_join
    from skillshelf.repository import Changes, Repository, Shadowed, Skipped
    from skillshelf.scanner import ScanPolicy
    from skillshelf.search import SearchHit
    from skillshelf.skill import Skill, parse_skill_md
    from skillshelf.stores import open_store
    from skillshelf.tokenreport import TokenReport
    from skillshelf.tokens import TokenCounter, get_counter
    from skillshelf.tools import SkillTools, ToolResult
    from skillshelf.validate import validate_path
    from skillshelf.watch import Watcher


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillshelf' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

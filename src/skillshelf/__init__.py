"""skillshelf — Agent Skills for LLM agents: discover, validate, catalog, search and read skills.

The public surface is exactly ``__all__``; everything else is private. Names are imported
lazily so that ``import skillshelf`` stays cheap (YAML and the rest load on first use).
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from skillshelf._version import __version__

__all__ = [
    "Activation",
    "Agent",
    "CacheReport",
    "CasesError",
    "CatalogEntry",
    "Changes",
    "ConfigError",
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
    "MissingExtraError",
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
    "ToolFailed",
    "ToolResult",
    "ToolRetry",
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
    "Agent": "skillshelf.agent.loop",
    "Activation": "skillshelf.tools.user_tools",
    "Tool": "skillshelf.tools.user_tools",
    "CatalogEntry": "skillshelf.core.catalog",
    "render_catalog": "skillshelf.core.catalog",
    "Diagnostic": "skillshelf.core.diagnostics",
    "ConfigError": "skillshelf.errors",
    "FileAccessError": "skillshelf.errors",
    "MissingExtraError": "skillshelf.errors",
    "SkillNotFoundError": "skillshelf.errors",
    "SkillshelfError": "skillshelf.errors",
    "ToolError": "skillshelf.errors",
    "ToolFailed": "skillshelf.errors",
    "ToolRetry": "skillshelf.errors",
    "UsageError": "skillshelf.errors",
    "Manifest": "skillshelf.core.manifest",
    "FileContent": "skillshelf.skills.paths",
    "read_skill_file": "skillshelf.skills.paths",
    "safe_join": "skillshelf.skills.paths",
    "Changes": "skillshelf.repository.repository",
    "Repository": "skillshelf.repository.repository",
    "Shadowed": "skillshelf.repository.repository",
    "Skipped": "skillshelf.repository.repository",
    "SearchHit": "skillshelf.core.search",
    "Skill": "skillshelf.skills.skill",
    "parse_skill_md": "skillshelf.skills.skill",
    "validate_path": "skillshelf.skills.validate",
    "SkillTools": "skillshelf.tools.skill_tools",
    "ToolResult": "skillshelf.tools.skill_tools",
    "open_store": "skillshelf.stores",
    "Lockfile": "skillshelf.trust.lockfile",
    "ScanPolicy": "skillshelf.trust.scanner",
    "Watcher": "skillshelf.repository.watch",
    "materialize": "skillshelf.agent.materialize",
    "CacheReport": "skillshelf.reports.cachereport",
    "cache_report": "skillshelf.reports.cachereport",
    "CasesError": "skillshelf.evals",
    "EvalCase": "skillshelf.evals",
    "EvalReport": "skillshelf.evals",
    "build_report": "skillshelf.evals",
    "load_cases": "skillshelf.evals",
    "run_cases": "skillshelf.evals",
    "LintFinding": "skillshelf.lint",
    "LintReport": "skillshelf.lint",
    "lint_repository": "skillshelf.lint",
    "TokenCounter": "skillshelf.reports.tokens",
    "get_counter": "skillshelf.reports.tokens",
    "TokenReport": "skillshelf.reports.tokenreport",
    "Usage": "skillshelf.models",
    "HistoryError": "skillshelf.agent.history",
    "HistoryLimit": "skillshelf.agent.history",
}

if TYPE_CHECKING:
    from skillshelf.agent.history import HistoryError, HistoryLimit
    from skillshelf.agent.loop import Agent
    from skillshelf.agent.materialize import materialize
    from skillshelf.core.catalog import CatalogEntry, render_catalog
    from skillshelf.core.diagnostics import Diagnostic
    from skillshelf.core.manifest import Manifest
    from skillshelf.core.search import SearchHit
    from skillshelf.errors import (
        ConfigError,
        FileAccessError,
        MissingExtraError,
        SkillNotFoundError,
        SkillshelfError,
        ToolError,
        ToolFailed,
        ToolRetry,
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
    from skillshelf.lint import LintFinding, LintReport, lint_repository
    from skillshelf.models import Usage
    from skillshelf.reports.cachereport import CacheReport, cache_report
    from skillshelf.reports.tokenreport import TokenReport
    from skillshelf.reports.tokens import TokenCounter, get_counter
    from skillshelf.repository import Changes, Repository, Shadowed, Skipped
    from skillshelf.repository.watch import Watcher
    from skillshelf.skills.paths import FileContent, read_skill_file, safe_join
    from skillshelf.skills.skill import Skill, parse_skill_md
    from skillshelf.skills.validate import validate_path
    from skillshelf.stores import open_store
    from skillshelf.tools.skill_tools import SkillTools, ToolResult
    from skillshelf.tools.user_tools import Activation, Tool
    from skillshelf.trust.lockfile import Lockfile
    from skillshelf.trust.scanner import ScanPolicy


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillshelf' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

"""skillshelf — Agent Skills for LLM agents: discover, validate, catalog, serve and run skills.

The public surface is exactly ``__all__`` (pinned by ``tests/test_public_api.py``): the names an
application needs, grouped below. Reports, evals and lint are namespaces of their own
(:mod:`skillshelf.reports`, :mod:`skillshelf.evals`, :mod:`skillshelf.lint`), the shared harness
for framework adapters is :mod:`skillshelf.harness`, and test doubles
are in :mod:`skillshelf.testing`; every other module is an implementation detail. Names are
imported lazily so that ``import skillshelf`` stays cheap (YAML and the rest load on first use).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from skillshelf._lazy import lazy_attributes
from skillshelf._version import __version__

__all__ = [  # noqa: RUF022 - grouped by topic, not sorted
    "__version__",
    # Skills on disk
    "Repository",
    "Skill",
    "Diagnostic",
    "Watcher",
    "validate_path",
    "parse_skill_md",
    "safe_join",
    "read_skill_file",
    # The catalog
    "CatalogEntry",
    "render_catalog",
    # Trust
    "Lockfile",
    "ScanPolicy",
    # Model-facing tools and running scripts
    "SkillTools",
    "ToolResult",
    "Tool",
    "Activation",
    "WorkspaceManager",
    "ExecPolicy",
    # The agent
    "Agent",
    "Conversation",
    "RunResult",
    "RetryPolicy",
    "HistoryLimit",
    "Trace",
    "SkillSettings",
    # Models and stores
    "open_model",
    "Usage",
    "open_store",
    # The error tree (see skillshelf.errors)
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
]

_LAZY: Final = {
    "Repository": "skillshelf.repository",
    "Skill": "skillshelf.skills.skill",
    "Diagnostic": "skillshelf.core.diagnostics",
    "Watcher": "skillshelf.repository.watch",
    "validate_path": "skillshelf.skills.validate",
    "parse_skill_md": "skillshelf.skills.skill",
    "safe_join": "skillshelf.skills.paths",
    "read_skill_file": "skillshelf.skills.paths",
    "CatalogEntry": "skillshelf.core.catalog",
    "render_catalog": "skillshelf.core.catalog",
    "Lockfile": "skillshelf.trust.lockfile",
    "ScanPolicy": "skillshelf.trust.scanner",
    "SkillTools": "skillshelf.tools",
    "ToolResult": "skillshelf.tools",
    "Tool": "skillshelf.tools",
    "Activation": "skillshelf.tools",
    "WorkspaceManager": "skillshelf.exec.workspace",
    "ExecPolicy": "skillshelf.exec.workspace",
    "Agent": "skillshelf.agent.loop",
    "Conversation": "skillshelf.agent.conversation",
    "RunResult": "skillshelf.agent.results",
    "RetryPolicy": "skillshelf.agent.results",
    "HistoryLimit": "skillshelf.agent.history",
    "Trace": "skillshelf.harness",
    "SkillSettings": "skillshelf.harness",
    "open_model": "skillshelf.models",
    "Usage": "skillshelf.models",
    "open_store": "skillshelf.stores",
    "SkillshelfError": "skillshelf.errors",
    "ConfigError": "skillshelf.errors",
    "MissingExtraError": "skillshelf.errors",
    "UsageError": "skillshelf.errors",
    "SkillNotFoundError": "skillshelf.errors",
    "FileAccessError": "skillshelf.errors",
    "ToolError": "skillshelf.errors",
    "ToolRetry": "skillshelf.errors",
    "ToolFailed": "skillshelf.errors",
    "AgentError": "skillshelf.agent.results",
    "MaxStepsError": "skillshelf.agent.results",
    "RepeatedToolFailureError": "skillshelf.agent.results",
    "EmptyResponseError": "skillshelf.agent.results",
    "ModelError": "skillshelf.models",
    "StoreError": "skillshelf.stores",
    "HistoryError": "skillshelf.agent.history",
}

if TYPE_CHECKING:
    from skillshelf.agent.conversation import Conversation
    from skillshelf.agent.history import HistoryError, HistoryLimit
    from skillshelf.agent.loop import Agent
    from skillshelf.agent.results import (
        AgentError,
        EmptyResponseError,
        MaxStepsError,
        RepeatedToolFailureError,
        RetryPolicy,
        RunResult,
    )
    from skillshelf.core.catalog import CatalogEntry, render_catalog
    from skillshelf.core.diagnostics import Diagnostic
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
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager
    from skillshelf.harness import SkillSettings, Trace
    from skillshelf.models import ModelError, Usage, open_model
    from skillshelf.repository import Repository
    from skillshelf.repository.watch import Watcher
    from skillshelf.skills.paths import read_skill_file, safe_join
    from skillshelf.skills.skill import Skill, parse_skill_md
    from skillshelf.skills.validate import validate_path
    from skillshelf.stores import StoreError, open_store
    from skillshelf.tools import Activation, SkillTools, Tool, ToolResult
    from skillshelf.trust.lockfile import Lockfile
    from skillshelf.trust.scanner import ScanPolicy


__getattr__ = lazy_attributes("skillshelf", _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(__all__)

"""What every face adapter shares: the options a scenario runs with, and the trace file.

A face adapter (``face_*.py``) turns a :class:`~conformance.scenarios.Scenario` into its
framework's offline model, runs it, and returns a :class:`~conformance.record.Record`.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from conformance.record import Grading, Record, read_trace
from conformance.scenarios import Scenario
from skillshelf.exec.runner import LocalExecutor
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.harness import SkillSettings, Trace
from skillshelf.repository import Repository

# A scenario's commands are the skill's own short scripts: the local executor runs them
# without a sandbox's start-up cost (the sandbox has its own tests under tests/exec).
EXEC_TIMEOUT_S = 1


@dataclass(frozen=True, slots=True)
class Env:
    """Where a run happens: the skills root and a private working folder."""

    skills: Path
    work: Path

    @property
    def trace_path(self) -> Path:
        return self.work / "trace.jsonl"

    def repo(self) -> Repository:
        return Repository([self.skills], cache_dir=False)

    @contextmanager
    def trace(self) -> Iterator[Trace]:
        trace = Trace(self.trace_path)
        try:
            yield trace
        finally:
            trace.close()

    def settings(self, scenario: Scenario, trace: Trace | None) -> SkillSettings:
        """The harness options of ``scenario`` (user tools are each face's own affair)."""
        workspace = WorkspaceManager(self.work / "ws") if scenario.workspace else None
        settings = SkillSettings(
            load_mode=scenario.load_mode,
            enforce_allowed_tools=scenario.enforce_allowed_tools,
            workspace=workspace,
            executor=LocalExecutor() if scenario.workspace else None,
            trace=trace,
        )
        if scenario.catalog_budget is None:
            return settings
        return settings.replace(catalog_budget=scenario.catalog_budget)

    def read_trace(self) -> list[dict[str, object]]:
        if not self.trace_path.exists():
            return []
        return read_trace(self.trace_path.read_text(encoding="utf-8"))


class Face(Protocol):
    """One way of giving skills to a model."""

    @property
    def name(self) -> str: ...

    @property
    def grading(self) -> Grading: ...

    def run(self, scenario: Scenario, env: Env) -> Record: ...

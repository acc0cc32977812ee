"""An executor that starts nothing and reports the ending it was given (an exit code, or a
timeout), so every face's handling of a command's outcome is tested without a process."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from skillshelf.exec.runner import RunOutput, RunSpec

__all__ = ["FinishedExecutor"]


@dataclass
class FinishedExecutor:
    """Every command "ran" and ended with ``exit_code`` (killed at its limit if ``timed_out``)."""

    exit_code: int = 0
    timed_out: bool = False
    name: str = "finished"
    isolated: bool = True

    def visible(self, spec_root: Path, path: Path) -> str:
        return str(path)

    def run(self, spec: RunSpec) -> RunOutput:
        return RunOutput(self.exit_code, self.timed_out, 0.01, "half done\n", "", False, False)

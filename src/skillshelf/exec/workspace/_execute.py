"""Running one command in a workspace: :func:`execute` and its :class:`ExecResult`."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from skillshelf.errors import ToolRetry, UsageError
from skillshelf.exec.missing import Missing, find_missing, missing_notes
from skillshelf.exec.runner import Executor, RunOutput, RunSpec
from skillshelf.exec.workspace._collect import CollectedFile
from skillshelf.exec.workspace._policy import ExecPolicy, check_allowed
from skillshelf.exec.workspace._workspace import Workspace
from skillshelf.skills.skill import Skill

__all__ = ["ExecResult", "execute"]


@dataclass(frozen=True, slots=True)
class ExecResult:
    """The outcome of :func:`execute`: the runner's output and what the workspace added.

    Attributes:
        output: What the command produced (exit code, time, capped stdout and stderr); its
            fields are also readable here (``result.exit_code`` and so on).
        files: The collected output files.
        run_id: The name of the command's ``runs/<run-id>/`` folder.
        executor: The executor's name.
        notes: For people: what the command lacked and what collection refused.
        missing: The modules or programs a failed command lacked.
    """

    output: RunOutput
    files: list[CollectedFile]
    run_id: str
    executor: str
    notes: list[str] = field(default_factory=list)
    missing: list[Missing] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """``output.exit_code``."""
        return self.output.exit_code

    @property
    def timed_out(self) -> bool:
        """``output.timed_out``."""
        return self.output.timed_out

    @property
    def duration_s(self) -> float:
        """``output.duration_s``."""
        return self.output.duration_s

    @property
    def stdout(self) -> str:
        """``output.stdout``."""
        return self.output.stdout

    @property
    def stderr(self) -> str:
        """``output.stderr``."""
        return self.output.stderr

    @property
    def stdout_truncated(self) -> bool:
        """``output.stdout_truncated``."""
        return self.output.stdout_truncated

    @property
    def stderr_truncated(self) -> bool:
        """``output.stderr_truncated``."""
        return self.output.stderr_truncated

    def to_json(self) -> dict[str, Any]:
        """The shape of ``skillshelf exec --json``."""
        out = self.output
        return {
            "exit_code": out.exit_code,
            "timed_out": out.timed_out,
            "stdout": out.stdout,
            "stderr": out.stderr,
            "stdout_truncated": out.stdout_truncated,
            "stderr_truncated": out.stderr_truncated,
            "files": [f.to_dict() for f in self.files],
            "missing": [m.to_dict() for m in self.missing],
        }


def execute(
    workspace: Workspace,
    executor: Executor,
    argv: Sequence[str],
    *,
    skill: Skill | None = None,
    policy: ExecPolicy | None = None,
    timeout_s: float | None = None,
    collect: Sequence[str] = (),
    stdin: str | bytes | None = None,
    network: bool = False,
    pinned: str | None = None,
) -> ExecResult:
    """Run ``argv`` in the workspace (in ``skill``'s staged copy when given).

    ``pinned`` is the skill's approved digest under a lockfile: see :meth:`Workspace.stage`.
    ``timeout_s`` None means the policy's default.

    Raises:
        ToolRetry: The policy refuses the command or network access.
        UsageError: ``argv`` is empty.
        StagingRefused: The skill's content is not the pinned one.
    """
    policy = policy or ExecPolicy()
    if not argv:
        raise UsageError("no command given")
    check_allowed(policy, argv)
    if network and not policy.allow_network:
        raise ToolRetry("Refused: network access is not allowed by this policy.")
    timeout = min(timeout_s or policy.default_timeout_s, policy.max_timeout_s)
    skill_dir = workspace.stage(skill, pinned=pinned) if skill is not None else None
    run_id, run_dir = workspace.new_run()
    env = {k: os.environ[k] for k in policy.env_passthrough if k in os.environ}
    env |= workspace.env(executor, run_dir=run_dir, skill_dir=skill_dir)
    spec = RunSpec(
        list(argv),
        root=workspace.root,
        cwd=skill_dir or workspace.work_dir,
        env=env,
        timeout_s=timeout,
        stdin=stdin.encode() if isinstance(stdin, str) else stdin,
        network=network,
        limits=policy.limits,
        output_cap=policy.output_cap,
        ro_paths=policy.extra_ro_paths,
    )
    output = executor.run(spec)
    files, notes = workspace.collect(collect)
    missing = find_missing(output.stderr, output.exit_code) if output.exit_code != 0 else []
    return ExecResult(
        output,
        files=files,
        run_id=run_id,
        executor=executor.name,
        notes=[*missing_notes(missing), *notes],
        missing=missing,
    )

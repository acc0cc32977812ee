"""``workspace_exec``: a shell command run in the session's workspace, and its result as the
model reads it."""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from skillshelf.errors import ToolFailed
from skillshelf.tools._spec import WorkspaceExecArgs
from skillshelf.tools._view import SkillView

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, ExecResult, WorkspaceManager

__all__ = ["choose_executor", "run_command"]


def choose_executor() -> tuple[Executor, str | None]:
    """The ``auto`` executor and its warning (bubblewrap where it works, else local).

    Raises:
        ToolFailed: No sandbox is available.
    """
    from skillshelf.exec.executors import select_executor
    from skillshelf.exec.runner import SandboxUnavailableError

    try:
        return select_executor("auto")
    except SandboxUnavailableError as exc:
        raise ToolFailed(f"No sandbox is available to run commands: {exc}") from exc


def run_command(
    view: SkillView,
    args: WorkspaceExecArgs,
    *,
    workspace: WorkspaceManager,
    session_id: str,
    policy: ExecPolicy | None,
    sandbox: Callable[[], tuple[Executor, str | None]],
) -> tuple[str, dict[str, Any]]:
    """``workspace_exec``: run ``args.command`` in the workspace of ``session_id`` (in the
    skill's copy when ``args.skill`` names one) with the executor ``sandbox`` gives."""
    from skillshelf.exec.skill_limits import apply_skill_limits, read_skill_limits
    from skillshelf.exec.workspace import ExecPolicy, execute, shell_command

    skill = view.skill(args.skill) if args.skill else None
    policy, limit_notes = policy or ExecPolicy(), list[str]()
    if skill is not None:  # the skill's own limits, never above the operator's
        limits = read_skill_limits(skill.manifest.metadata)
        policy, limit_notes = apply_skill_limits(policy, limits)
    executor, warning = sandbox()
    try:
        with workspace.use(session_id) as session_workspace:
            result = execute(
                session_workspace,
                executor,
                shell_command(args.command),
                skill=skill,
                policy=policy,
                # Not sent: the skill's or the policy's default, not the schema's.
                timeout_s=args.timeout_s if "timeout_s" in args.model_fields_set else None,
                collect=args.collect,
                stdin=args.stdin,
                pinned=view.repo.pinned_digest(skill.name) if skill is not None else None,
            )
    except OSError as exc:
        raise ToolFailed(f"The command could not be started: {exc}") from exc
    result.notes[:0] = limit_notes
    if warning:
        result.notes.append(warning)
    data = result.to_json() | {"run_id": result.run_id, "executor": result.executor}
    return _render_exec(result), data


def _render_exec(result: ExecResult) -> str:
    # Everything below but the status line comes from the sandbox: names arrive escaped to
    # one line (exec.workspace.escape_name) and every text is markup-escaped, so neither a
    # file name nor output can close a tag or start a line of harness text.
    status = "timed out and was killed" if result.timed_out else f"exit code {result.exit_code}"
    parts = [f"Command finished: {status} ({result.duration_s:.2f} s, {result.executor})."]
    for label, text, cut in (
        ("stdout", result.stdout, result.stdout_truncated),
        ("stderr", result.stderr, result.stderr_truncated),
    ):
        if text:
            note = " (truncated: head and tail kept)" if cut else ""
            parts.append(f"<{label}{note}>\n{_markup(text)}\n</{label}>")
    for file in result.files:
        path = _markup(file.path)
        parts.append(f"Collected {path} ({file.size} B, {file.mime}, sha256 {file.sha256})")
        if file.text is not None:
            parts.append(f'<file path="{path}">\n{_markup(file.text)}\n</file>')
    parts += [f"Note: {_markup(note)}" for note in result.notes]
    return "\n".join(parts)


def _markup(text: str) -> str:
    return html.escape(text, quote=True)

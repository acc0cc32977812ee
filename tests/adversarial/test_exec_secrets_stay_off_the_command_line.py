"""``env_passthrough`` values reach the sandbox through the environment, never bwrap's argv.

Any local user can read ``/proc/PID/cmdline`` (what ``ps`` shows); the test reads it from the
running bwrap process while the sandboxed command waits, then lets it finish.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import pytest

from adversarial._exec_faces import bwrap, skill_root
from skillshelf.exec.runner import BwrapExecutor
from skillshelf.exec.workspace import (
    ExecPolicy,
    Workspace,
    WorkspaceManager,
    execute,
    shell_command,
)
from skillshelf.repository import Repository
from skillshelf.tools import SkillTools

__all__ = ["bwrap"]

T = TypeVar("T")

SECRET_NAME = "SKILLSHELF_ADVERSARIAL_SECRET"
# Sandbox start on a busy CI machine; the command itself waits for the test's go-ahead.
FIND_TIMEOUT_S = 20.0
RUN_TIMEOUT_S = 30.0


def _bwrap_cmdlines(token: str) -> list[bytes]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        argv0 = cmdline.split(b"\0", 1)[0]
        if argv0.endswith(b"bwrap") and token.encode() in cmdline:
            found.append(cmdline)
    return found


def _waiting_command(token: str) -> str:
    # Records what it sees, then waits (bounded by the run's timeout) for work/go.
    return (
        f'printenv {SECRET_NAME} > "$OUTPUT_DIR/seen"; '
        f'while [ ! -e "$WORK_DIR/go" ]; do sleep 0.05; done; : {token}'
    )


def _observe(run: Callable[[], T], go: Path, token: str) -> tuple[list[bytes], list[T]]:
    results: list[T] = []
    thread = threading.Thread(target=lambda: results.append(run()), daemon=True)
    thread.start()
    deadline = time.monotonic() + FIND_TIMEOUT_S
    cmdlines: list[bytes] = []
    while not cmdlines and time.monotonic() < deadline and thread.is_alive():
        cmdlines = _bwrap_cmdlines(token)
        threading.Event().wait(0.02)
    go.touch()
    thread.join(RUN_TIMEOUT_S + 5)
    assert not thread.is_alive(), "the sandboxed command did not finish"
    return cmdlines, results


def test_a_passed_through_secret_is_not_on_bwraps_command_line(
    bwrap: BwrapExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"hunter2-{uuid.uuid4().hex}"
    monkeypatch.setenv(SECRET_NAME, secret)
    token = uuid.uuid4().hex
    workspace = Workspace(tmp_path / "ws")
    policy = ExecPolicy(env_passthrough=(SECRET_NAME,))
    run = lambda: execute(  # noqa: E731
        workspace,
        bwrap,
        shell_command(_waiting_command(token)),
        policy=policy,
        timeout_s=RUN_TIMEOUT_S,
    )
    cmdlines, results = _observe(run, workspace.work_dir / "go", token)
    assert cmdlines, "the bwrap process was not seen"
    assert all(secret.encode() not in c for c in cmdlines)
    assert results[0].exit_code == 0, results[0].stderr
    assert (workspace.out_dir / "seen").read_text().strip() == secret


def test_the_caller_environment_does_not_leak_beyond_the_allowlist(
    bwrap: BwrapExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLSHELF_NOT_PASSED", "leak")
    result = execute(Workspace(tmp_path / "ws"), bwrap, ["/usr/bin/env"])
    assert result.exit_code == 0
    assert "SKILLSHELF_NOT_PASSED" not in result.stdout
    assert "HOME=/workspace" in result.stdout and "WORKSPACE_DIR=/workspace" in result.stdout


def test_workspace_exec_tool_keeps_the_secret_off_the_command_line(
    bwrap: BwrapExecutor, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = f"hunter2-{uuid.uuid4().hex}"
    monkeypatch.setenv(SECRET_NAME, secret)
    token = uuid.uuid4().hex
    manager = WorkspaceManager(tmp_path / "workspaces")
    tools = SkillTools(
        Repository([skill_root(tmp_path)]),
        workspace=manager,
        executor=bwrap,
        exec_policy=ExecPolicy(env_passthrough=(SECRET_NAME,)),
        session_id="s",
    )
    args = {"command": _waiting_command(token), "skill": "demo", "timeout_s": RUN_TIMEOUT_S}
    go = manager.open("s").work_dir / "go"
    cmdlines, results = _observe(lambda: tools.call("workspace_exec", args), go, token)
    assert cmdlines and all(secret.encode() not in c for c in cmdlines)
    assert results[0].status == "ok", results[0].content
    assert (manager.open("s").out_dir / "seen").read_text().strip() == secret

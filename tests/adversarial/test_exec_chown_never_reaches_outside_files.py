"""Preparing a workspace for the sandbox user never hands it a file from outside.

As root, the bwrap executor gives the workspace's own folders and files to the unprivileged
sandbox user. A hard link planted in the workspace (by a skill or an earlier run) to a
root-owned file outside must keep that file's owner, mode and content — through the library
and the model tools (``skillshelf exec`` makes a fresh workspace folder for every run, and
staging copies files, so it has no earlier run to plant a link from).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adversarial._exec_faces import bwrap, skill_root
from skillshelf.exec.runner import SANDBOX_UID, BwrapExecutor
from skillshelf.exec.workspace import Workspace, WorkspaceManager, execute, shell_command
from skillshelf.repository import Repository
from skillshelf.tools import SkillTools

__all__ = ["bwrap"]

ORIGINAL = "root-owned original\n"
# Tries to write the planted link, and proves an ordinary run still works.
ATTACK = 'cd "$WORKSPACE_DIR"; echo pwned > work/x; echo pwned >> work/x; echo ok > out/ok'

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown happens only as root")


@pytest.fixture
def outside(tmp_path: Path) -> Path:
    target = tmp_path / "outside" / "root-file"
    target.parent.mkdir()
    target.write_text(ORIGINAL)
    target.chmod(0o644)
    return target


def _unchanged(target: Path) -> None:
    info = target.stat()
    assert (info.st_uid, info.st_gid) == (0, 0)
    assert info.st_mode & 0o777 == 0o644
    assert target.read_text() == ORIGINAL


def test_a_planted_hard_link_keeps_its_owner_and_content(
    bwrap: BwrapExecutor, tmp_path: Path, outside: Path
) -> None:
    workspace = Workspace(tmp_path / "ws")
    os.link(outside, workspace.work_dir / "x")
    os.mkfifo(workspace.work_dir / "fifo")  # never opened for a chown, never blocks
    (workspace.work_dir / "link").symlink_to(outside)
    result = execute(workspace, bwrap, shell_command(ATTACK))
    _unchanged(outside)
    assert (workspace.out_dir / "ok").read_text() == "ok\n", result.stderr
    assert (workspace.out_dir / "ok").stat().st_uid == SANDBOX_UID
    assert workspace.work_dir.stat().st_uid == SANDBOX_UID


def test_workspace_exec_tool_does_not_chown_a_planted_hard_link(
    bwrap: BwrapExecutor, tmp_path: Path, outside: Path
) -> None:
    manager = WorkspaceManager(tmp_path / "workspaces")
    os.link(outside, manager.open("s").work_dir / "x")
    tools = SkillTools(
        Repository([skill_root(tmp_path)]), workspace=manager, executor=bwrap, session_id="s"
    )
    result = tools.call("workspace_exec", {"command": ATTACK, "skill": "demo"})
    assert result.status == "ok", result.content
    _unchanged(outside)
    assert (manager.open("s").out_dir / "ok").read_text() == "ok\n"

"""Output collection runs with the harness's rights: it must never follow a link the sandbox made.

A script links ``out/k`` (and deeper folders) to a host folder holding a secret file; the
collect globs ``out/k/*`` and ``**`` must neither name nor read anything in it — through the
library (bwrap and local), the model tools and the CLI.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from adversarial._exec_faces import bwrap, cli_exec, local, skill_root
from skillshelf.exec.runner import BwrapExecutor, Executor
from skillshelf.exec.workspace import Workspace, WorkspaceManager, execute, shell_command
from skillshelf.repository import Repository
from skillshelf.tools import SkillTools

__all__ = ["bwrap", "local"]

SENTINEL = "id_ed25519_SENTINEL_c0ffee"
GLOBS = ["out/k/*", "out/k/**", "**", "**/*", "out/**/*", "out/d/*/*"]


@pytest.fixture
def secret_dir(tmp_path: Path) -> Path:
    secret = tmp_path / "host-secret"
    (secret / "inner").mkdir(parents=True)
    (secret / SENTINEL).write_text("PRIVATE KEY MATERIAL")
    (secret / "inner" / SENTINEL).write_text("PRIVATE KEY MATERIAL")
    secret.chmod(0o700)
    return secret


def _plant(secret: Path) -> str:
    return (
        f'cd "$WORKSPACE_DIR" && mkdir -p out/d && ln -s {secret} out/k '
        f"&& ln -s {secret} out/d/deeper "
        f"&& ln -s {secret}/{SENTINEL} out/file && ln -s / out/d/root && ln -s {secret} work/w"
    )


@pytest.mark.parametrize("which", ["bwrap", "local"])
def test_collect_globs_never_list_or_read_a_host_folder_behind_a_link(
    which: str, request: pytest.FixtureRequest, tmp_path: Path, secret_dir: Path
) -> None:
    executor: Executor = request.getfixturevalue(which)
    workspace = Workspace(tmp_path / "ws")
    result = execute(workspace, executor, shell_command(_plant(secret_dir)), collect=GLOBS)
    assert result.exit_code == 0, result.stderr
    shown = repr([f.path for f in result.files]) + repr([f.text for f in result.files])
    assert SENTINEL not in shown and "PRIVATE KEY" not in shown
    assert SENTINEL not in "\n".join(result.notes)
    assert "out/k: refused (symbolic link)" in result.notes
    assert "out/file: refused (symbolic link)" in result.notes


def test_a_link_swapped_in_for_a_folder_is_refused_not_walked(
    tmp_path: Path, secret_dir: Path
) -> None:
    workspace = Workspace(tmp_path / "ws")
    (workspace.out_dir / "k").symlink_to(secret_dir, target_is_directory=True)
    files, notes = workspace.collect(["out/k/*", f"out/k/{SENTINEL}", "out/*/*"])
    assert files == []
    assert all(SENTINEL not in note for note in notes)


def test_a_fifo_made_by_the_sandbox_does_not_hang_collection(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    os.mkfifo(workspace.out_dir / "pipe")
    (workspace.out_dir / "real.txt").write_text("ok")
    files, _notes = workspace.collect(["out/*"])  # a blocking open would hang here
    assert [f.path for f in files] == ["out/real.txt"]


def test_workspace_exec_tool_does_not_reveal_a_host_folder(
    tmp_path: Path, secret_dir: Path, bwrap: BwrapExecutor
) -> None:
    repo = Repository([skill_root(tmp_path)])
    manager = WorkspaceManager(tmp_path / "workspaces")
    tools = SkillTools(repo, workspace=manager, executor=bwrap, session_id="s")
    args = {"command": _plant(secret_dir), "skill": "demo", "collect": GLOBS}
    result = tools.call("workspace_exec", args)
    assert result.status == "ok", result.content
    assert SENTINEL not in result.content and "PRIVATE KEY" not in result.content
    assert SENTINEL not in repr(result.data)
    assert "out/k: refused (symbolic link)" in result.content


def test_cli_exec_does_not_reveal_a_host_folder(tmp_path: Path, secret_dir: Path) -> None:
    root = skill_root(tmp_path)
    collect = [arg for glob in GLOBS for arg in ("--collect", glob)]
    code, data, stderr = cli_exec(
        root, "--sandbox", "local", *collect, "--json", "--", "/bin/sh", "-c", _plant(secret_dir)
    )
    assert code == 0, stderr
    assert data is not None
    assert SENTINEL not in repr(data) and SENTINEL not in stderr
    code, _data, stderr = cli_exec(
        root, "--sandbox", "local", *collect, "--", "/bin/sh", "-c", _plant(secret_dir)
    )
    assert code == 0 and SENTINEL not in stderr
    assert "out/k: refused (symbolic link)" in stderr


def test_a_huge_tree_stops_the_search_with_one_note(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path / "ws")
    for i in range(120):
        folder = workspace.out_dir / f"d{i:03}"
        folder.mkdir()
        for j in range(100):
            (folder / f"f{j}").touch()
    files, notes = workspace.collect(["out/**/*.none", "**/**/**/**/x"])
    assert files == []
    stopped = [n for n in notes if "search stopped after" in n]
    assert len(stopped) == 2  # one per glob

"""A file added anywhere in a locked skill is drift, and the skill is neither served nor staged.

Each case is checked through the library (``Lockfile.verify``), a ``Repository`` opened with
the lockfile, workspace staging pinned to the approved digest, ``workspace_exec`` through the
skill tools, and the ``skillshelf verify`` CLI.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.exec.runner import LocalExecutor
from skillshelf.exec.workspace import StagingRefused, Workspace, WorkspaceManager
from skillshelf.repository import Repository
from skillshelf.skills import walk
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools
from skillshelf.trust.lockfile import Lockfile


def _write(relative: str) -> Callable[[Path], None]:
    def add(skill: Path) -> None:
        path = skill / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"print('planted')\n")

    return add


def _fifo(skill: Path) -> None:
    os.mkfifo(skill / "pipe")


def _link_out(skill: Path) -> None:
    (skill / "key").symlink_to("/etc/hostname")


ADDITIONS = [
    pytest.param(_write("scripts/__pycache__/run.cpython-311.pyc"), "__pycache__", id="pycache"),
    pytest.param(_write(".git/config"), ".git/config", id="git"),
    pytest.param(_write(".hidden"), ".hidden", id="dotfile"),
    pytest.param(_write("noext"), "noext", id="extensionless"),
    pytest.param(_write("a/b/c/nested.txt"), "a/b/c/nested.txt", id="nested"),
    pytest.param(_write("node_modules/x/index.js"), "node_modules", id="node-modules"),
    pytest.param(_fifo, "pipe", id="fifo"),
    pytest.param(_link_out, "key", id="link-out"),
]


@pytest.fixture(autouse=True)
def _env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("SKILLSHELF_ROOTS", "SKILLSHELF_LOCK"):
        monkeypatch.delenv(name, raising=False)


def _locked(tmp_path: Path) -> tuple[Path, Path, Path]:
    root = tmp_path / "skills"
    skill = make_skill(root, "demo", files={"scripts/run.py": "print(1)\n"})
    lock_path = tmp_path / "skills.lock"
    repo = Repository([root], cache_dir=False, lockfile=False)
    lock = Lockfile()
    lock.approve(repo.skills)
    lock.save(lock_path)
    return root, skill, lock_path


@pytest.mark.parametrize(("add", "shown"), ADDITIONS)
def test_added_file_is_drift_for_verify(
    tmp_path: Path, add: Callable[[Path], None], shown: str
) -> None:
    root, skill, lock_path = _locked(tmp_path)
    add(skill)
    repo = Repository([root], cache_dir=False, lockfile=False)
    drifts = Lockfile.load(lock_path).verify(repo.skills)
    assert [(d.name, d.kind) for d in drifts] == [("demo", "changed")]
    assert any(shown in p for p in drifts[0].added)


@pytest.mark.parametrize(("add", "shown"), ADDITIONS)
def test_added_file_makes_cli_verify_fail(
    tmp_path: Path, add: Callable[[Path], None], shown: str
) -> None:
    root, skill, lock_path = _locked(tmp_path)
    clean = CliRunner().invoke(main, ["verify", "--root", str(root), "--lock", str(lock_path)])
    assert clean.exit_code == 0, clean.output
    add(skill)
    result = CliRunner().invoke(main, ["verify", "--root", str(root), "--lock", str(lock_path)])
    assert result.exit_code == 1
    assert "demo\tchanged" in result.stdout and shown in result.stdout


@pytest.mark.parametrize(("add", "shown"), ADDITIONS)
def test_added_file_keeps_skill_from_being_served(
    tmp_path: Path, add: Callable[[Path], None], shown: str
) -> None:
    root, skill, lock_path = _locked(tmp_path)
    assert Repository([root], cache_dir=False, lockfile=lock_path).names() == ["demo"]
    add(skill)
    repo = Repository([root], cache_dir=False, lockfile=lock_path)
    assert repo.names() == []
    held = [d for skipped in repo.skipped for d in skipped.diagnostics]
    assert any(d.code == "lock.drift" and shown in d.message for d in held)


@pytest.mark.parametrize(("add", "shown"), ADDITIONS)
def test_added_file_keeps_skill_from_being_staged(
    tmp_path: Path, add: Callable[[Path], None], shown: str
) -> None:
    root, skill, lock_path = _locked(tmp_path)
    repo = Repository([root], cache_dir=False, lockfile=lock_path)
    demo = repo.get("demo")
    pinned = repo.pinned_digest("demo")
    workspace = Workspace(tmp_path / "ws")
    assert (workspace.stage(demo, pinned=pinned) / "scripts" / "run.py").is_file()
    add(skill)
    with pytest.raises(StagingRefused, match="changed since it was approved"):
        workspace.stage(demo, pinned=pinned)
    assert not (workspace.skills_dir / "demo").exists()


def test_workspace_exec_refuses_a_skill_changed_after_the_repository_opened(
    tmp_path: Path,
) -> None:
    root, skill, lock_path = _locked(tmp_path)
    repo = Repository([root], cache_dir=False, lockfile=lock_path)
    tools = SkillTools(
        repo,
        workspace=WorkspaceManager(tmp_path / "ws"),
        executor=LocalExecutor(),
    )
    assert tools.call("workspace_exec", {"command": "true", "skill": "demo"}).status == "ok"
    _write("scripts/__pycache__/run.cpython-311.pyc")(skill)
    result = tools.call("workspace_exec", {"command": "true", "skill": "demo"})
    assert result.status == "recoverable"
    assert "changed since it was approved" in result.content


def test_capped_skill_cannot_be_verified(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, _, lock_path = _locked(tmp_path)
    monkeypatch.setattr(walk, "MAX_ENTRIES", 2)
    repo = Repository([root], cache_dir=False, lockfile=False)
    drifts = Lockfile.load(lock_path).verify(repo.skills)
    assert [d.kind for d in drifts] == ["capped"]
    assert "more than 2 files and folders" in drifts[0].summary()
    with pytest.raises(StagingRefused, match="more than 2"):
        Workspace(tmp_path / "ws").stage(repo.get("demo"))


@pytest.mark.parametrize(("before", "after"), [(0o644, 0o755), (0o755, 0o644), (0o644, 0o645)])
def test_a_mode_change_of_a_script_is_drift_for_verify_and_holds_the_skill(
    tmp_path: Path, before: int, after: int
) -> None:
    root = tmp_path / "skills"
    skill = make_skill(root, "demo", files={"scripts/run.py": "print(1)\n"})
    script = skill / "scripts" / "run.py"
    script.chmod(before)
    lock_path = tmp_path / "skills.lock"
    lock = Lockfile()
    lock.approve(Repository([root], cache_dir=False, lockfile=False).skills)
    lock.save(lock_path)
    repo = Repository([root], cache_dir=False, lockfile=lock_path)
    assert repo.names() == ["demo"]
    script.chmod(after)
    drifts = Lockfile.load(lock_path).verify(repo.skills)
    assert [(d.name, d.kind, d.changed) for d in drifts] == [
        ("demo", "changed", ("scripts/run.py",))
    ]
    result = CliRunner().invoke(main, ["verify", "--root", str(root), "--lock", str(lock_path)])
    assert result.exit_code == 1
    assert "demo\tchanged" in result.stdout and "scripts/run.py" in result.stdout
    repo.refresh()
    assert repo.names() == []

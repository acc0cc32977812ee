"""The per-session workspace: staging, layout, environment, collection."""

from __future__ import annotations

from pathlib import Path

import pytest

from finished_executor import FinishedExecutor
from skillshelf.errors import ToolRetry
from skillshelf.exec.runner import LocalExecutor, RunOutput
from skillshelf.exec.workspace import (
    INLINE_TEXT_BYTES,
    ExecPolicy,
    Workspace,
    WorkspaceManager,
    check_allowed,
    execute,
    shell_command,
)
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.testing import make_skill


def _skill(tmp_path: Path, **files: str) -> Skill:
    make_skill(tmp_path / "skills", "demo", files={"scripts/run.py": "print('hi')", **files})
    skill = Repository([tmp_path / "skills"]).find("demo")
    assert skill is not None
    return skill


def test_workspace_has_the_documented_layout(workspace: Workspace) -> None:
    names = sorted(p.name for p in workspace.root.iterdir())
    assert names == ["inputs", "out", "runs", "skills", "work"]


def test_staging_copies_the_skill_and_links_the_shared_folders(
    tmp_path: Path, workspace: Workspace
) -> None:
    staged = workspace.stage(_skill(tmp_path))
    assert staged == workspace.skills_dir / "demo"
    assert (staged / "scripts/run.py").read_text() == "print('hi')"
    for name in ("out", "work", "inputs"):
        assert (staged / name).is_symlink()
        assert (staged / name).resolve() == workspace.root / name


def test_writing_the_staged_copy_never_touches_the_source(
    tmp_path: Path, workspace: Workspace
) -> None:
    skill = _skill(tmp_path)
    staged = workspace.stage(skill)
    (staged / "scripts/run.py").write_text("changed")
    assert (skill.path / "scripts/run.py").read_text() == "print('hi')"
    assert not (skill.path / "out").exists()


def test_staging_again_keeps_the_copy_until_the_source_changes(
    tmp_path: Path, workspace: Workspace
) -> None:
    skill = _skill(tmp_path)
    staged = workspace.stage(skill)
    (staged / "scratch.txt").write_text("kept")
    workspace.stage(skill)
    assert (staged / "scratch.txt").exists()
    (skill.path / "scripts/run.py").write_text("print('v2')")
    workspace.stage(skill)
    assert not (staged / "scratch.txt").exists()
    assert (staged / "scripts/run.py").read_text() == "print('v2')"


def test_symlinks_in_the_source_are_not_staged(tmp_path: Path, workspace: Workspace) -> None:
    skill = _skill(tmp_path)
    secret = tmp_path / "secret.txt"
    secret.write_text("s3cret")
    (skill.path / "leak.txt").symlink_to(secret)
    staged = workspace.stage(skill)
    assert not (staged / "leak.txt").exists()


def test_inputs_are_copied_into_inputs(tmp_path: Path, workspace: Workspace) -> None:
    source = tmp_path / "data.csv"
    source.write_text("a,b\n1,2\n")
    assert workspace.add_input(source).read_text() == "a,b\n1,2\n"
    assert (workspace.inputs_dir / "data.csv").is_file()


def test_command_runs_in_the_staged_skill_with_the_workspace_variables(
    tmp_path: Path, workspace: Workspace
) -> None:
    code = (
        "import os\nfor k in ('WORKSPACE_DIR','SKILLS_DIR','SKILL_DIR','WORK_DIR','OUTPUT_DIR',"
        "'RUN_DIR'): print(k, os.environ[k])\nprint('CWD', os.getcwd())"
    )
    result = execute(workspace, LocalExecutor(), ["python3", "-c", code], skill=_skill(tmp_path))
    seen = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    assert seen["CWD"] == seen["SKILL_DIR"] == str(workspace.skills_dir / "demo")
    assert seen["OUTPUT_DIR"] == str(workspace.out_dir)
    assert seen["RUN_DIR"] == str(workspace.runs_dir / result.run_id)


def test_without_a_skill_the_command_runs_in_work(workspace: Workspace) -> None:
    result = execute(workspace, LocalExecutor(), shell_command("pwd; echo ${SKILL_DIR:-none}"))
    assert result.stdout.split() == [str(workspace.work_dir), "none"]


def test_the_result_holds_the_runners_output_and_reads_its_fields(workspace: Workspace) -> None:
    executor = FinishedExecutor(exit_code=3)
    result = execute(workspace, executor, shell_command("true"))
    assert result.output == RunOutput(3, False, 0.01, "half done\n", "", False, False)
    assert (result.exit_code, result.stdout, result.timed_out) == (3, "half done\n", False)
    assert result.to_json()["exit_code"] == 3 and result.executor == "finished"


def test_collection_describes_files_and_inlines_small_text(workspace: Workspace) -> None:
    (workspace.out_dir / "a.md").write_text("# hi\n")
    (workspace.out_dir / "big.txt").write_text("x" * (INLINE_TEXT_BYTES + 1))
    (workspace.out_dir / "img.png").write_bytes(b"\x89PNG\0\0")
    files, _notes = workspace.collect(["out/*"])
    by_path = {f.path: f for f in files}
    assert by_path["out/a.md"].text == "# hi\n"
    assert by_path["out/a.md"].mime == "text/markdown"
    assert by_path["out/big.txt"].text is None
    assert by_path["out/img.png"].mime == "image/png" and by_path["out/img.png"].text is None
    assert len(by_path["out/a.md"].sha256) == 64


def test_collection_stops_at_the_file_and_byte_limits(workspace: Workspace) -> None:
    for i in range(5):
        (workspace.out_dir / f"{i}.txt").write_text("0123456789")
    files, notes = workspace.collect(["out/*.txt"], max_files=3)
    assert len(files) == 3 and sum("not collected" in n for n in notes) == 2
    files, _ = workspace.collect(["out/*.txt"], max_bytes=25)
    assert len(files) == 2


@pytest.mark.parametrize("pattern", ["/etc/passwd", "../*", "out/../../*", "~/x", ""])
def test_collection_refuses_globs_leaving_the_workspace(workspace: Workspace, pattern: str) -> None:
    files, notes = workspace.collect([pattern])
    assert files == [] and "refused" in notes[0]


def test_collection_refuses_a_symlink_even_inside_the_workspace(workspace: Workspace) -> None:
    (workspace.work_dir / "real.txt").write_text("x")
    (workspace.out_dir / "link.txt").symlink_to(workspace.work_dir / "real.txt")
    files, notes = workspace.collect(["out/*"])
    assert files == [] and notes == ["out/link.txt: refused (symbolic link)"]


def test_manager_deletes_the_workspace_with_the_session(tmp_path: Path) -> None:
    manager = WorkspaceManager(tmp_path / "all")
    root = manager.open("s/1").root
    assert root.parent == tmp_path / "all"
    manager.close("s/1")
    assert not root.exists()
    kept = WorkspaceManager(tmp_path / "all", retention="keep")
    root = kept.open("s/2").root
    kept.close("s/2")
    assert root.exists()


def test_policy_refuses_programs_it_does_not_list() -> None:
    policy = ExecPolicy(allowed_commands=("python3",))
    check_allowed(policy, ["python3", "x.py"])
    check_allowed(policy, shell_command("python3 scripts/a.py --out out/x"))
    for argv in (["curl", "x"], shell_command("python3 a.py; curl x"), shell_command("rm -rf /")):
        with pytest.raises(ToolRetry):
            check_allowed(policy, argv)


def test_policy_refuses_network_unless_allowed(workspace: Workspace) -> None:
    with pytest.raises(ToolRetry, match="network"):
        execute(workspace, LocalExecutor(), ["true"], network=True)


def test_policy_caps_the_timeout(workspace: Workspace) -> None:
    policy = ExecPolicy(max_timeout_s=0.3)
    result = execute(workspace, LocalExecutor(), ["sleep", "30"], policy=policy, timeout_s=100)
    assert result.timed_out


def test_staging_refuses_a_skill_copy_replaced_by_a_link_outside(
    tmp_path: Path, workspace: Workspace
) -> None:
    from skillshelf.errors import FileAccessError

    outside = tmp_path / "outside"
    outside.mkdir()
    (workspace.skills_dir / "demo").symlink_to(outside)
    with pytest.raises(FileAccessError):
        workspace.stage(_skill(tmp_path))
    assert list(outside.iterdir()) == []


def test_default_base_planted_as_a_link_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os
    import tempfile

    from skillshelf.errors import SkillshelfError

    monkeypatch.setattr(tempfile, "gettempdir", lambda: str(tmp_path))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / f"skillshelf-ws-{os.getuid()}").symlink_to(elsewhere)
    with pytest.raises(SkillshelfError, match="not a private directory"):
        WorkspaceManager().open("s")
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("made", ["world-writable", "group-writable", "other-user"])
def test_the_default_workspace_folder_is_refused_when_others_could_write_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, made: str
) -> None:
    import os
    import tempfile

    from skillshelf.errors import SkillshelfError

    shared = tmp_path / "tmp"
    shared.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(shared))
    base = shared / f"skillshelf-ws-{os.getuid()}"
    base.mkdir()
    base.chmod({"world-writable": 0o777, "group-writable": 0o770}.get(made, 0o700))
    if made == "other-user":
        if os.getuid() != 0:
            pytest.skip("only root can hand a folder to another user")
        os.chown(base, 65534, 65534)
    with pytest.raises(SkillshelfError, match="not a private directory"):
        WorkspaceManager().open("s1")
    assert list(base.iterdir()) == []

"""Hostile scripts run in each sandbox (bwrap and docker): each must be contained.

These run for real wherever the sandbox works and always under ``CI=true`` (see conftest).
"""

from __future__ import annotations

import os
import socket
import sys
import tracemalloc
import uuid
from pathlib import Path

import pytest

from skillshelf.exec.runner import DEFAULT_OUTPUT_CAP, KILL_GRACE_S, BwrapExecutor, Executor, Limits
from skillshelf.exec.workspace import ExecPolicy, ExecResult, Workspace, execute, shell_command

# Generous bound on sandbox start + kill + drain on a slow shared CI machine.
SLACK_S = 10.0
PROJECT = Path(__file__).resolve().parents[2]


def _sh(executor: Executor, ws: Workspace, command: str, **kw: object) -> ExecResult:
    return execute(ws, executor, shell_command(command), **kw)  # type: ignore[arg-type]


def _py(executor: Executor, ws: Workspace, code: str, *args: str, **kw: object) -> ExecResult:
    return execute(ws, executor, ["python3", "-c", code, *args], **kw)  # type: ignore[arg-type]


def _alive(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if token.encode() in cmdline:
            found.append(int(entry.name))
    return found


def test_sandboxed_command_runs_as_an_unprivileged_user(
    executor: Executor, workspace: Workspace
) -> None:
    result = _sh(executor, workspace, "id -u; id -g")
    uid, gid = result.stdout.split()
    assert result.exit_code == 0
    assert uid != "0" and gid != "0"


def test_tcp_connect_to_a_host_listener_fails(executor: Executor, workspace: Workspace) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen(1)
        server.setblocking(False)
        port = server.getsockname()[1]
        code = (
            "import socket,sys\n"
            "try:\n socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3)\n"
            "except OSError as e:\n print('refused', e); sys.exit(1)\n"
            "print('connected')\n"
        )
        result = _py(executor, workspace, code, str(port))
        with pytest.raises(BlockingIOError):
            server.accept()
    assert result.exit_code == 1
    assert "connected" not in result.stdout.replace("refused", "")


@pytest.mark.parametrize(
    "path",
    ["/etc/shadow", os.path.expanduser("~/.ssh"), str(PROJECT / "pyproject.toml"), str(PROJECT)],
)
def test_host_secrets_and_the_project_are_not_readable(
    executor: Executor, workspace: Workspace, path: str
) -> None:
    # Absent (bwrap) or the image's own root-only file (docker): either way, not readable.
    code = (
        "import os,sys\np = sys.argv[1]\n"
        "try:\n open(p, 'rb').read(1) if os.path.isfile(p) else os.listdir(p)\n"
        "except OSError:\n print('unreadable')\nelse:\n print('READ')\n"
    )
    result = _py(executor, workspace, code, path)
    assert result.exit_code == 0
    assert result.stdout.strip() == "unreadable"


def test_a_secret_in_the_parent_environment_is_not_visible(
    executor: Executor, workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("SKILLSHELF_FAKE_API_KEY", "sk-fake-secret-123")
    result = _sh(executor, workspace, "env; cat /proc/1/environ 2>/dev/null; true")
    assert result.exit_code == 0
    assert "sk-fake-secret-123" not in result.stdout
    assert "WORKSPACE_DIR=" in result.stdout


def test_writes_outside_the_workspace_fail(executor: Executor, workspace: Workspace) -> None:
    outside = workspace.root.parent / f"escaped-{uuid.uuid4().hex}"
    targets = ["/usr/escaped", "/etc/escaped", "/escaped", str(outside), str(PROJECT / "escaped")]
    script = "; ".join(f"touch {t} 2>/dev/null && echo WROTE {t}" for t in targets)
    result = _sh(executor, workspace, script + "; touch $WORK_DIR/ok && echo inside")
    assert "WROTE" not in result.stdout
    assert "inside" in result.stdout
    assert not outside.exists() and not (PROJECT / "escaped").exists()
    assert (workspace.work_dir / "ok").is_file()


def test_a_fork_bomb_is_contained_by_the_process_limit(
    executor: Executor, workspace: Workspace
) -> None:
    code = (
        "import os,time\n"
        "n=0\n"
        "try:\n"
        " while True:\n"
        "  if os.fork()==0:\n   time.sleep(60); os._exit(0)\n"
        "  n+=1\n"
        "except OSError as e:\n print('blocked', n)\n"
    )
    policy = ExecPolicy(limits=Limits(processes=64))
    result = _py(executor, workspace, code, policy=policy, timeout_s=20)
    words = result.stdout.split()
    assert words[0] == "blocked"
    assert int(words[1]) < 64


def test_a_shell_fork_bomb_ends_at_the_timeout(executor: Executor, workspace: Workspace) -> None:
    policy = ExecPolicy(limits=Limits(processes=64))
    result = _sh(executor, workspace, "b() { b | b & }; b", policy=policy, timeout_s=1)
    assert result.duration_s < 1 + KILL_GRACE_S + SLACK_S


def test_using_more_memory_than_the_limit_is_refused(
    executor: Executor, workspace: Workspace
) -> None:
    # The pages are touched: a container's limit counts memory used, bwrap's the address space.
    code = "b = bytearray(1 << 30)\nfor i in range(0, len(b), 4096): b[i] = 1\nprint('allocated')"
    policy = ExecPolicy(limits=Limits(address_space=256 << 20))
    result = _py(executor, workspace, code, policy=policy, timeout_s=60)
    assert result.exit_code != 0
    assert "allocated" not in result.stdout
    assert "MemoryError" in result.stderr or "out of memory" in result.stderr


def test_printing_100_mb_is_capped_without_buffering_it(
    executor: Executor, workspace: Workspace
) -> None:
    code = "import sys\nfor _ in range(100): sys.stdout.write('x' * (1 << 20))\nprint('END')"
    tracemalloc.start()
    try:
        result = _py(executor, workspace, code, timeout_s=60)
        _current, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert result.exit_code == 0
    assert result.stdout_truncated
    assert len(result.stdout) < DEFAULT_OUTPUT_CAP + 200
    assert result.stdout.rstrip().endswith("END")
    assert "bytes omitted" in result.stdout
    assert peak < 8 << 20


def test_sleeping_forever_is_killed_at_the_timeout_with_its_children(
    executor: Executor, workspace: Workspace
) -> None:
    token = f"tok-{uuid.uuid4().hex}"
    sleeper = f"python3 -c 'import time; time.sleep(1000)' {token}"
    result = _sh(executor, workspace, f"{sleeper} & {sleeper}", timeout_s=0.5)
    assert result.timed_out
    assert result.duration_s < 0.5 + KILL_GRACE_S + SLACK_S
    assert _alive(token) == []


def test_a_background_child_left_running_is_killed(
    executor: Executor, workspace: Workspace
) -> None:
    token = f"tok-{uuid.uuid4().hex}"
    sleeper = f"python3 -c 'import time; time.sleep(1000)' {token}"
    result = _sh(executor, workspace, f"({sleeper} &); echo started", timeout_s=30)
    assert not result.timed_out
    assert result.stdout.strip() == "started"
    assert result.duration_s < SLACK_S
    assert _alive(token) == []


def test_a_symlink_in_out_to_etc_passwd_is_not_collected(
    executor: Executor, workspace: Workspace
) -> None:
    result = _sh(
        executor,
        workspace,
        "ln -s /etc/passwd $OUTPUT_DIR/passwd; ln -s ../../../../../etc/passwd $OUTPUT_DIR/rel",
        collect=["out/*", "out/passwd"],
    )
    assert result.exit_code == 0
    assert result.files == []
    assert any("out/passwd: refused" in note for note in result.notes)
    assert any("out/rel: refused" in note for note in result.notes)


def test_glob_arguments_cannot_inject_commands(
    executor: Executor, workspace: Workspace, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    hostile = ["out/$(touch pwned1)", "`touch pwned2`", "out/*; touch pwned3", "../*", "/etc/*"]
    result = _sh(executor, workspace, "echo hi > $OUTPUT_DIR/a.txt", collect=hostile)
    assert result.files == []
    leftovers = [p.name for p in tmp_path.rglob("pwned*")]
    assert leftovers == []


def test_the_sandbox_uses_the_running_python(bwrap: BwrapExecutor, workspace: Workspace) -> None:
    result = _py(bwrap, workspace, "import sys; print(sys.version_info[:2])")
    assert result.exit_code == 0
    assert result.stdout.strip() == str(sys.version_info[:2])


def test_workspace_folders_replaced_by_links_are_not_written_through(
    executor: Executor, workspace: Workspace, tmp_path: Path
) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    links = " ".join(
        f"rm -rf $WORKSPACE_DIR/{d}; ln -s {outside} $WORKSPACE_DIR/{d};"
        for d in ("inputs", "runs", "skills")
    )
    assert _sh(executor, workspace, links).exit_code == 0
    source = tmp_path / "data.txt"
    source.write_text("x")
    workspace.add_input(source)
    _sh(executor, workspace, "true")
    assert list(outside.iterdir()) == []
    assert (workspace.inputs_dir / "data.txt").is_file()

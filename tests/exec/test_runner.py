"""The executors: output capture, timeouts, environment, limits (local and bwrap)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillshelf.exec.executors import select_executor
from skillshelf.exec.runner import (
    KILL_GRACE_S,
    BwrapExecutor,
    Limits,
    LocalExecutor,
    RunSpec,
    SandboxUnavailableError,
    _Capture,
)

SLACK_S = 10.0


def _spec(root: Path, *argv: str, **kw: object) -> RunSpec:
    return RunSpec(list(argv), root=root, cwd=root, **kw)  # type: ignore[arg-type]


def test_capture_keeps_head_and_tail_and_counts_the_rest() -> None:
    capture = _Capture(10)
    for chunk in (b"abc", b"defgh", b"ijklmnop", b"qrstuvwxyz"):
        capture.feed(chunk)
    assert capture.truncated
    assert capture.text() == "abcde\n[... 16 bytes omitted ...]\nvwxyz"


def test_capture_under_the_cap_is_whole() -> None:
    capture = _Capture(10)
    capture.feed(b"0123456789")
    assert not capture.truncated and capture.text() == "0123456789"


def test_local_executor_passes_only_allowlisted_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    result = LocalExecutor().run(_spec(tmp_path, "env", env={"EXTRA": "1"}))
    names = {line.split("=", 1)[0] for line in result.stdout.splitlines()}
    assert "OPENAI_API_KEY" not in names
    assert {"PATH", "HOME", "EXTRA"} <= names
    assert f"HOME={tmp_path}" in result.stdout


def test_local_executor_reports_exit_code_and_stdin(tmp_path: Path) -> None:
    result = LocalExecutor().run(_spec(tmp_path, "sh", "-c", "cat; exit 7", stdin=b"in"))
    assert (result.exit_code, result.stdout, result.timed_out) == (7, "in", False)


def test_local_timeout_kills_the_process_group(tmp_path: Path) -> None:
    result = LocalExecutor().run(
        _spec(tmp_path, "sh", "-c", "sleep 100 & sleep 100", timeout_s=0.3)
    )
    assert result.timed_out
    assert result.duration_s < 0.3 + KILL_GRACE_S + SLACK_S


def test_a_term_ignoring_script_is_killed_after_the_grace(tmp_path: Path) -> None:
    script = "trap '' TERM; while :; do sleep 0.05; done"
    result = LocalExecutor().run(_spec(tmp_path, "sh", "-c", script, timeout_s=0.2))
    assert result.timed_out and result.exit_code == -9


def test_local_limits_apply_to_the_child(tmp_path: Path) -> None:
    code = "import resource; print(resource.getrlimit(resource.RLIMIT_NOFILE)[0])"
    result = LocalExecutor().run(_spec(tmp_path, "python3", "-c", code))
    assert result.stdout.strip() == "256"


@pytest.mark.parametrize("through_prlimit", [True, False], ids=["prlimit", "preexec_fn"])
def test_every_limit_reaches_the_child_either_way_it_is_spawned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, through_prlimit: bool
) -> None:
    from skillshelf.exec import runner

    if through_prlimit:
        assert runner._prlimit() is not None, "util-linux prlimit is expected on this machine"
    else:
        monkeypatch.setattr(runner, "_prlimit", lambda: None)
    limits = Limits(
        address_space=512 << 20, cpu_s=77, file_size=3 << 20, open_files=99, processes=55
    )
    code = (
        "import resource as r; print(*(r.getrlimit(getattr(r, 'RLIMIT_' + n)) for n in"
        " ('AS', 'CPU', 'FSIZE', 'NOFILE', 'NPROC')))"
    )
    result = LocalExecutor().run(_spec(tmp_path, "python3", "-c", code, limits=limits))
    assert result.stdout.split(") (") and result.exit_code == 0
    shown = result.stdout.strip()
    for value in (512 << 20, 77, 3 << 20, 99, 55):
        assert f"({value}, {value})" in shown


def test_bwrap_sees_the_workspace_at_a_fixed_root(bwrap: BwrapExecutor, tmp_path: Path) -> None:
    (tmp_path / "hello.txt").write_text("hi\n")
    result = bwrap.run(_spec(tmp_path, "sh", "-c", "pwd; cat hello.txt; echo $HOME"))
    assert result.stdout.split() == ["/workspace", "hi", "/workspace"]


def test_bwrap_gets_network_only_when_asked(bwrap: BwrapExecutor, tmp_path: Path) -> None:
    show = ["python3", "-c", "import socket; print(len(socket.if_nameindex()))"]
    closed = bwrap.run(_spec(tmp_path, *show))
    opened = bwrap.run(_spec(tmp_path, *show, network=True))
    assert closed.stdout.strip() == "1"  # loopback only
    assert opened.exit_code == 0


def test_local_selection_needs_no_sandbox() -> None:
    executor, warning = select_executor("local")
    assert executor.name == "local" and warning is None


def test_docker_without_an_engine_says_where_it_looked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DOCKER_HOST", "unix:///nonexistent/docker.sock")
    with pytest.raises(SandboxUnavailableError, match="DOCKER_HOST"):
        select_executor("docker")


def test_auto_warns_when_it_falls_back_to_local(monkeypatch: pytest.MonkeyPatch) -> None:
    from skillshelf.exec import runner

    monkeypatch.setattr(runner, "bwrap_available", lambda: "no bwrap here")
    executor, warning = select_executor("auto")
    assert executor.name == "local"
    assert warning is not None and "NOT isolated" in warning
    with pytest.raises(SandboxUnavailableError):
        select_executor("bwrap")


def test_only_the_runner_imports_subprocess() -> None:
    src = Path(__file__).resolve().parents[2] / "src" / "skillshelf"
    offenders = [
        p.relative_to(src).as_posix()
        for p in src.rglob("*.py")
        if "import subprocess" in p.read_text() or "os.fork" in p.read_text()
    ]
    assert offenders == ["exec/runner.py"]
    assert os.path.exists(src / "exec/runner.py")

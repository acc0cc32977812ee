"""The docker executor: the container it asks for, and ordinary scripts running in it.

The first tests read :func:`container_config` (no engine needed); the rest run real
containers on the engine at ``DOCKER_HOST`` (see conftest; ``.ci/docker-engine`` starts one).
The containment suite that every sandbox passes is in ``test_hostile_scripts.py``.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.exec.container import LABEL, DockerExecutor, container_config, docker_available
from skillshelf.exec.executors import select_executor
from skillshelf.exec.runner import Executor, Limits, RunSpec, SandboxUnavailableError
from skillshelf.exec.workspace import ExecPolicy, Workspace, execute, shell_command
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

from .conftest import TEST_IMAGE

PROJECT = Path(__file__).resolve().parents[2]


def _config(tmp_path: Path, **kw: object) -> dict[str, object]:
    spec = RunSpec(["python3", "x.py"], root=tmp_path, cwd=tmp_path / "work", **kw)  # type: ignore[arg-type]
    return container_config(spec, image="img", user="65534:65534")


def test_the_container_has_no_network_a_read_only_root_and_no_capabilities(
    tmp_path: Path,
) -> None:
    host = _config(tmp_path)["HostConfig"]
    assert isinstance(host, dict)
    assert host["NetworkMode"] == "none"
    assert host["ReadonlyRootfs"] is True
    assert host["Tmpfs"] == {"/tmp": "rw,nosuid,nodev,size=64m,mode=1777"}
    assert host["CapDrop"] == ["ALL"]
    assert host["SecurityOpt"] == ["no-new-privileges"]
    assert host["LogConfig"]["Type"] == "none"


def test_the_workspace_is_the_only_mount_at_the_bwrap_path(tmp_path: Path) -> None:
    config = _config(tmp_path)
    host = config["HostConfig"]
    assert isinstance(host, dict)
    assert host["Mounts"] == [{"Type": "bind", "Source": str(tmp_path), "Target": "/workspace"}]
    assert config["WorkingDir"] == "/workspace/work"
    assert config["Entrypoint"] == [""] and config["Cmd"] == ["python3", "x.py"]


def test_policy_read_only_paths_are_bound_read_only_at_the_same_path(tmp_path: Path) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir()
    host = _config(tmp_path, ro_paths=(str(runtime),))["HostConfig"]
    assert isinstance(host, dict)
    assert host["Mounts"][1] == {
        "Type": "bind",
        "Source": str(runtime),
        "Target": str(runtime),
        "ReadOnly": True,
    }


def test_limits_become_cgroup_limits_and_rlimits(tmp_path: Path) -> None:
    limits = Limits(address_space=256 << 20, processes=32, open_files=64)
    host = _config(tmp_path, limits=limits)["HostConfig"]
    assert isinstance(host, dict)
    assert (host["Memory"], host["MemorySwap"], host["PidsLimit"]) == (256 << 20,) * 2 + (32,)
    assert host["NanoCpus"] == 1_000_000_000
    ulimits = {u["Name"]: u["Hard"] for u in host["Ulimits"]}
    assert ulimits["nproc"] == 32 and ulimits["nofile"] == 64


def test_only_the_allowlisted_environment_is_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-should-not-leak")
    env = _config(tmp_path, env={"WORK_DIR": "/workspace/work"})["Env"]
    assert isinstance(env, list)
    assert {e.split("=", 1)[0] for e in env} == {"PATH", "HOME", "LANG", "TERM", "WORK_DIR"}
    assert "HOME=/workspace" in env


def test_network_and_a_runtime_only_when_asked(tmp_path: Path) -> None:
    spec = RunSpec(["true"], root=tmp_path, cwd=tmp_path, network=True)
    host = container_config(spec, image="i", user="1:1", runtime="runsc")["HostConfig"]
    assert host["NetworkMode"] == "default" and host["Runtime"] == "runsc"
    assert "PidsLimit" not in host  # gVisor's own threads would count; it applies nproc itself
    assert "Runtime" not in _config(tmp_path)["HostConfig"]  # type: ignore[operator]


def test_an_engine_that_is_not_there_is_a_clear_error() -> None:
    problem = docker_available(base_url="unix:///nonexistent/docker.sock")
    assert problem is not None and "start dockerd" in problem


# -- a real engine ----------------------------------------------------------------------------


def test_a_missing_image_says_how_to_get_one(docker: DockerExecutor) -> None:
    problem = docker_available(image="skillshelf-no-such-image:0")
    assert problem is not None and "docker pull skillshelf-no-such-image:0" in problem


def test_an_unknown_runtime_is_refused_before_running(docker: DockerExecutor) -> None:
    with pytest.raises(SandboxUnavailableError, match="no runtime 'no-such-runtime'"):
        select_executor("docker", image=TEST_IMAGE, runtime="no-such-runtime")


def test_ordinary_tools_and_a_yaml_script_run_in_the_container(
    docker: DockerExecutor, workspace: Workspace
) -> None:
    script = workspace.work_dir / "load.py"
    script.write_text("import sys, yaml\nprint(yaml.safe_load(sys.stdin.read())['k'])\n")
    result = execute(workspace, docker, ["python3", "load.py"], stdin="k: from-yaml\n")
    assert (result.exit_code, result.stdout, result.stderr) == (0, "from-yaml\n", "")
    tools = "printf 'b\\na\\n' | sort | tr '\\n' ' '; awk 'BEGIN{print 6*7}'; echo x | sed s/x/y/"
    result = execute(workspace, docker, shell_command(tools))
    assert result.stdout.split() == ["a", "b", "42", "y"]


def test_a_skill_script_writes_its_output_into_the_workspace(
    docker: DockerExecutor, workspace: Workspace, tmp_path: Path
) -> None:
    make_skill(
        tmp_path / "skills",
        "report",
        files={"scripts/report.py": "open('out/report.txt', 'w').write('done')\n"},
    )
    skill = Repository([tmp_path / "skills"], cache_dir=False).find("report")
    assert skill is not None
    result = execute(
        workspace, docker, ["python3", "scripts/report.py"], skill=skill, collect=["out/*"]
    )
    assert result.exit_code == 0, result.stderr
    assert [(f.path, f.text) for f in result.files] == [("out/report.txt", "done")]


def test_a_workspace_owned_by_a_user_runs_as_that_user(
    docker: DockerExecutor, tmp_path: Path
) -> None:
    workspace = Workspace(tmp_path / "ws")
    owner = os.getuid()
    if owner == 0:  # as root, hand the workspace to a user; otherwise it is the caller's
        owner = 4321
        for folder in (workspace.root, workspace.work_dir, workspace.runs_dir):
            os.chown(folder, owner, owner)
    result = execute(workspace, docker, shell_command("id -u; touch $WORK_DIR/made"))
    assert result.stdout.split() == [str(owner)], result.stderr
    assert (workspace.work_dir / "made").stat().st_uid == owner


def test_no_container_is_left_behind(docker: DockerExecutor, workspace: Workspace) -> None:
    execute(workspace, docker, shell_command("sleep 30"), timeout_s=0.5)
    execute(workspace, docker, shell_command("exit 3"))
    left = docker.client.containers.list(all=True, filters={"label": LABEL})
    assert left == []


def test_a_term_ignoring_command_is_killed_after_the_grace(
    docker: DockerExecutor, workspace: Workspace
) -> None:
    script = "trap '' TERM; while :; do sleep 0.05; done"
    result = execute(workspace, docker, shell_command(script), timeout_s=0.3)
    assert result.timed_out and result.exit_code == -9


def test_gvisor_runs_scripts_without_network_and_bounds_a_fork_bomb(
    docker: DockerExecutor, workspace: Workspace
) -> None:
    runtimes = docker.client.info().get("Runtimes") or {}
    if "runsc" not in runtimes:
        if os.environ.get("CI"):
            pytest.fail("CI registers runsc (gVisor) with its engine; this one has none")
        pytest.skip("the engine has no runsc runtime")
    gvisor: Executor = DockerExecutor(image=TEST_IMAGE, runtime="runsc")
    code = "import socket, yaml; print(len(socket.if_nameindex()), yaml.safe_load('[1]'))"
    result = execute(workspace, gvisor, ["python3", "-c", code])
    assert (result.exit_code, result.stdout.strip()) == (0, "1 [1]"), result.stderr
    bomb = (
        "import os,time\nn=0\ntry:\n while True:\n  if os.fork()==0:\n"
        "   time.sleep(60); os._exit(0)\n  n+=1\nexcept OSError:\n print('blocked', n)\n"
    )
    policy = ExecPolicy(limits=Limits(processes=64))
    result = execute(workspace, gvisor, ["python3", "-c", bomb], policy=policy, timeout_s=30)
    words = result.stdout.split()
    assert words[0] == "blocked" and int(words[1]) < 64, result.stderr
    gvisor.close()  # type: ignore[attr-defined]


def test_cli_exec_runs_a_skill_script_in_a_container(docker: DockerExecutor) -> None:
    examples = PROJECT / "examples" / "skills"
    argv = ["python3", "scripts/summarize_csv.py", "scripts/sample.csv", "--json"]
    options = ["--root", str(examples), "--sandbox", "docker", "--image", TEST_IMAGE]
    result = CliRunner().invoke(main, ["exec", "csv-insights", *options, "--", *argv])
    assert result.exit_code == 0, result.output
    assert '"rows"' in result.stdout


def test_cli_image_without_docker_is_a_usage_error() -> None:
    examples = PROJECT / "examples" / "skills"
    result = CliRunner().invoke(
        main,
        ["exec", "csv-insights", "--root", str(examples), "--image", "x", "--", "true"],
    )
    assert result.exit_code == 2
    assert "--sandbox docker" in result.stderr

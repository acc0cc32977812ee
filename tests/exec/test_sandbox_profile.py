"""Ordinary scripts work in the bwrap sandbox, and what must stay hidden stays hidden.

Each check runs twice: as whoever runs the suite (root in CI and on this machine: the command
drops to uid 65534 inside), and — when the suite runs as root — with the whole harness started
as an unprivileged user (``setpriv``), which takes bwrap's user-namespace path. The second needs
an interpreter that user can run; the suite's own often lives under ``/root``, so it falls back
to the system ``python3``, and the checks compare against *that* harness's ``sys.executable``.
"""

from __future__ import annotations

import json
import os
import shutil
import site
import ssl
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from skillshelf.errors import UsageError
from skillshelf.exec import bwrap_profile
from skillshelf.exec.runner import SANDBOX_UID, BwrapExecutor
from skillshelf.exec.workspace import ExecPolicy, Workspace, execute, shell_command

SRC = Path(__file__).resolve().parents[2] / "src"
DOCS = Path(__file__).resolve().parents[2] / "docs" / "security.md"
CA_BUNDLE = ssl.get_default_verify_paths().openssl_cafile
PEM = "-----BEGIN CERTIFICATE-----"
EXE = "@EXE@"  # replaced by the running harness's sys.executable

# name → (shell command, expected stdout stripped). Ordinary tools and files that must work.
WORKS: dict[str, tuple[str, str]] = {
    "interpreter": ("python3 -c 'import sys; print(sys.executable)'", EXE),
    "python-alias": ("python -c 'import sys; print(sys.executable)'", EXE),
    "yaml": ("python3 -c 'import yaml; print(yaml.safe_load(\"a: [1, 2]\"))'", "{'a': [1, 2]}"),
    "awk": ("awk 'BEGIN { print 6 * 7 }'", "42"),
    "sed": ("echo hello | sed s/l/L/g", "heLLo"),
    "sort": ("printf 'b\\nc\\na\\n' | sort | paste -sd ' '", "a b c"),
    "which": ("which sort", "/usr/bin/sort"),
    "env": ("env | grep -c '^TMPDIR=/tmp$'", "1"),
    "date": ("date -u -d @0 +%Y && date > /dev/null && echo ok", "1970\nok"),
    "whoami": ("id -un > /dev/null && echo ok", "ok"),
    "os-release": ("grep -c '^ID=' /etc/os-release", "1"),
    # Everything the sandbox shows of /etc is readable by the user it runs as (it once was a
    # 0700 root folder), links followed.
    "etc-readable": ("find -L /etc -mindepth 1 ! -readable 2>&1 | head -5; echo done", "done"),
    "ca-bundle": (f"head -c {len(PEM)} {CA_BUNDLE}; echo", PEM),
    "tmp": ("echo x > $TMPDIR/f && cat $TMPDIR/f", "x"),
    "multiprocessing": (  # needs a writable /dev/shm for its semaphores
        "python3 -c 'import multiprocessing as m; p = m.Pool(2); print(p.map(abs, [-1, -2]))'",
        "[1, 2]",
    ),
    "package-metadata": (
        "python3 -c 'import importlib.metadata as m; print(bool(m.version(\"PyYAML\")))'",
        "True",
    ),
}
# name → shell command printing "hidden" when the thing is out of reach.
HIDDEN: dict[str, str] = {
    "shadow": "test -e /etc/shadow || echo hidden",
    "gshadow": "test -e /etc/gshadow || echo hidden",
    "sudoers": "test -e /etc/sudoers || echo hidden",
    "ssh": "test -e /etc/ssh || echo hidden",
    # Loopback is the only interface of a fresh network namespace.
    "network": "python3 -c 'import socket as s; exit(len(s.if_nameindex()) - 1)' && echo hidden",
    "root-listing": "ls /root > /dev/null 2>&1 || echo hidden",
}


def _expected(expected: str, executable: str) -> str:
    return expected.replace(EXE, executable)


def _hidden_host_paths() -> list[str]:
    """Host paths under /home and /root (and /home itself) that the sandbox must not show."""
    paths = [*_host_names_outside("/home"), *_host_names_outside("/root")]
    if not any(m.path.startswith("/home/") for m in bwrap_profile.python_mounts()):
        paths.append("/home")
    return paths


def _host_names_outside(folder: str) -> list[str]:
    """Entries of a host folder that the sandbox mounts nothing under."""
    try:
        names = os.listdir(folder)
    except OSError:
        return []
    mounts = [m.path for m in bwrap_profile.python_mounts()]
    kept = []
    for name in names:
        full = os.path.join(folder, name)
        if not any(m == full or m.startswith(full + "/") for m in mounts):
            kept.append(full)
    return sorted(kept)


def _run(bwrap: BwrapExecutor, workspace: Workspace, command: str, **kw: object) -> str:
    result = execute(workspace, bwrap, shell_command(command), **kw)  # type: ignore[arg-type]
    assert result.exit_code == 0, result.stderr
    return result.stdout.strip()


@pytest.mark.parametrize("name", sorted(WORKS))
def test_ordinary_tools_and_files_work_in_the_sandbox(
    bwrap: BwrapExecutor, workspace: Workspace, name: str
) -> None:
    command, expected = WORKS[name]
    assert _run(bwrap, workspace, command) == _expected(expected, sys.executable)


@pytest.mark.parametrize("name", sorted(HIDDEN))
def test_secrets_and_the_network_are_out_of_reach(
    bwrap: BwrapExecutor, workspace: Workspace, name: str
) -> None:
    assert _run(bwrap, workspace, HIDDEN[name]) == "hidden"


def test_home_folders_and_the_rest_of_root_are_not_visible(
    bwrap: BwrapExecutor, workspace: Workspace
) -> None:
    host = _hidden_host_paths()
    script = 'for p in "$@"; do test -e "$p" && echo "visible $p"; done; true'
    result = execute(workspace, bwrap, ["/bin/sh", "-c", script, "sh", *host])
    assert result.exit_code == 0
    assert result.stdout == ""


def test_another_workspace_is_not_visible(bwrap: BwrapExecutor, tmp_path: Path) -> None:
    mine, theirs = Workspace(tmp_path / "a"), Workspace(tmp_path / "b")
    secret = theirs.work_dir / "secret.txt"
    secret.write_text("theirs")
    probe = f"cat {secret} 2>/dev/null; test -e {tmp_path} || echo hidden"
    assert _run(bwrap, mine, probe) == "hidden"


def test_the_interpreter_prefix_is_mounted_read_only(
    bwrap: BwrapExecutor, workspace: Workspace
) -> None:
    target = Path(sys.prefix, "skillshelf-sandbox-write-probe")
    result = execute(workspace, bwrap, ["touch", str(target)])
    assert result.exit_code != 0
    assert not target.exists()


def test_an_extra_read_only_path_is_visible_and_not_writable(
    bwrap: BwrapExecutor, workspace: Workspace, tmp_path: Path
) -> None:
    # /tmp is the sandbox's own (a fresh tmpfs): a host folder elsewhere.
    runtime = Path(tempfile.mkdtemp(prefix="skillshelf-runtime-", dir="/var/tmp"))
    try:
        runtime.chmod(0o755)
        (runtime / "tool.txt").write_text("from the host\n")
        (runtime / "tool.txt").chmod(0o644)
        policy = ExecPolicy(extra_ro_paths=(str(runtime),))
        command = f"cat {runtime}/tool.txt; touch {runtime}/new 2>/dev/null || echo read-only"
        assert _run(bwrap, workspace, command, policy=policy) == "from the host\nread-only"
        assert not (runtime / "new").exists()
    finally:
        shutil.rmtree(runtime)


def test_a_missing_extra_read_only_path_fails_clearly(
    bwrap: BwrapExecutor, workspace: Workspace
) -> None:
    policy = ExecPolicy(extra_ro_paths=("/nonexistent/skillshelf-runtime",))
    with pytest.raises(FileNotFoundError, match="does not exist"):
        execute(workspace, bwrap, ["true"], policy=policy)


@pytest.mark.parametrize(
    "path", ["relative/dir", "/", "/workspace", "/proc/self", "/tmp/x", "/dev", ""]
)
def test_extra_read_only_paths_the_sandbox_owns_are_refused(path: str) -> None:
    with pytest.raises(UsageError):
        ExecPolicy(extra_ro_paths=(path,))


@pytest.mark.parametrize("prefix", ["/", "/root", "/home/someone"])
def test_a_prefix_as_wide_as_a_home_or_the_system_is_never_mounted(
    prefix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "prefix", prefix)
    monkeypatch.setattr(sys, "base_prefix", prefix)
    monkeypatch.setattr(sys, "exec_prefix", prefix)
    monkeypatch.setattr(sys, "base_exec_prefix", prefix)
    monkeypatch.setattr(site, "getsitepackages", lambda: [])
    monkeypatch.setattr(os.path, "isdir", lambda _path: True)
    assert prefix not in [m.path for m in bwrap_profile.python_mounts()]


def test_every_mount_is_listed_in_the_security_docs() -> None:
    documented = DOCS.read_text(encoding="utf-8")
    paths = [m.path for m in (*bwrap_profile.SYSTEM_MOUNTS, *bwrap_profile.ETC_MOUNTS)]
    assert [p for p in paths if f"`{p}`" not in documented] == []


# -- the same checks with the harness itself running as an unprivileged user ------------------

_DRIVER = """
import json, sys
from pathlib import Path
from skillshelf.exec.runner import BwrapExecutor, RunSpec
root = Path(sys.argv[1])
result = BwrapExecutor().run(RunSpec(["/bin/sh", "-c", sys.argv[2]], root=root, cwd=root))
print(json.dumps({"executable": sys.executable, "exit_code": result.exit_code,
                  "stdout": result.stdout, "stderr": result.stderr}))
"""


def _as_user(*argv: str) -> list[str]:
    uid = str(SANDBOX_UID)
    return ["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups", *argv]


@pytest.fixture
def unprivileged_harness(bwrap: BwrapExecutor) -> Iterator[tuple[str, Path]]:
    """An interpreter and a copy of skillshelf an unprivileged user can run, and a workspace."""
    if os.geteuid() != 0:
        pytest.skip("the suite already runs as an unprivileged user")
    base = Path(tempfile.mkdtemp(prefix="skillshelf-unpriv-"))
    try:
        base.chmod(0o755)
        shutil.copytree(SRC / "skillshelf", base / "src" / "skillshelf")
        for folder, _dirs, files in os.walk(base):
            os.chmod(folder, 0o755)
            for name in files:
                os.chmod(os.path.join(folder, name), 0o644)
        (base / "driver.py").write_text(_DRIVER)
        ws = base / "ws"
        ws.mkdir()
        os.chown(ws, SANDBOX_UID, SANDBOX_UID)
        for python in dict.fromkeys((sys.executable, "/usr/bin/python3")):
            # An interpreter under a folder the user cannot enter may still start (with the
            # system's standard library): it must also reach its own executable.
            code = "import os, sys, yaml; sys.exit(not os.access(sys.executable, os.X_OK))"
            probe = subprocess.run(_as_user(python, "-c", code), capture_output=True, check=False)
            if probe.returncode == 0:
                yield python, base
                return
        message = "no interpreter with PyYAML that an unprivileged user can run"
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the unprivileged sandbox tests: {message}")
        pytest.skip(message)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _drive(python: str, base: Path, script: str) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "PYTHONPATH": str(base / "src"), "LANG": "C.UTF-8"}
    done = subprocess.run(
        _as_user(python, str(base / "driver.py"), str(base / "ws"), script),
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_an_unprivileged_harness_runs_ordinary_scripts(
    unprivileged_harness: tuple[str, Path],
) -> None:
    python, base = unprivileged_harness
    script = "".join(f"echo '>> {n}'; {c}\n" for n, (c, _) in sorted(WORKS.items()))
    outcome = _drive(python, base, script)
    assert outcome["exit_code"] == 0, outcome["stderr"]
    executable = str(outcome["executable"])
    expected = "".join(
        f">> {n}\n{_expected(e, executable)}\n" for n, (_, e) in sorted(WORKS.items())
    )
    assert outcome["stdout"] == expected


def test_an_unprivileged_harness_hides_secrets_and_homes(
    unprivileged_harness: tuple[str, Path],
) -> None:
    python, base = unprivileged_harness
    homes = " ".join([*_hidden_host_paths(), "/etc/shadow"])
    script = "".join(f"echo '>> {n}'; {c}\n" for n, c in sorted(HIDDEN.items()))
    script += f"for p in {homes}; do test -e $p && echo visible $p; done; true\n"
    outcome = _drive(python, base, script)
    expected = "".join(f">> {n}\nhidden\n" for n in sorted(HIDDEN))
    assert outcome["stdout"] == expected, outcome["stderr"]

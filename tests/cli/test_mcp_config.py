"""``skillshelf mcp-config``: client configurations that start serve safely from any folder."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf import __version__
from skillshelf.cli import main

SRC = Path(__file__).resolve().parents[2] / "src"
HOSTILE = 'open(__file__ + ".ran", "w").close()\nraise SystemExit("imported from the folder")\n'


def _config(*args: str) -> str:
    result = CliRunner().invoke(main, ["mcp-config", *args])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_claude_desktop_config_names_absolute_paths_and_the_checked_serve_options(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "skills").mkdir()
    monkeypatch.chdir(tmp_path)
    entry = json.loads(
        _config("claude-desktop", "--root", "skills", "--watch", "--load-mode", "session")
    )
    server = entry["mcpServers"]["skillshelf"]
    assert Path(server["command"]).is_absolute()
    assert server["args"] == [
        *server["args"][: server["args"].index("serve")],
        "serve",
        "--root",
        str(tmp_path / "skills"),
        "--watch",
        "--load-mode",
        "session",
    ]


def test_codex_config_is_valid_toml_and_claude_code_a_shell_line(tmp_path: Path) -> None:
    parsed = tomllib.loads(_config("--name", "my skills", "codex", "--root", str(tmp_path)))
    server = parsed["mcp_servers"]["my skills"]
    assert server["args"][-3:] == ["serve", "--root", str(tmp_path)]
    words = shlex.split(_config("claude-code", "--root", str(tmp_path)))
    assert words[:5] == ["claude", "mcp", "add", "skillshelf", "--"]
    assert words[-3:] == ["serve", "--root", str(tmp_path)]


def test_a_serve_option_that_serve_refuses_is_refused_here() -> None:
    result = CliRunner().invoke(main, ["mcp-config", "json", "--load-mode", "forever"])
    assert result.exit_code == 2
    assert "forever" in result.output and "Traceback" not in result.output


def test_a_missing_root_is_warned_about(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["mcp-config", "json", "--root", str(tmp_path / "gone")])
    assert result.exit_code == 0
    assert "does not exist" in result.stderr


def _hostile_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "cloned-repo"
    folder.mkdir()
    for module in ("click.py", "yaml.py", "anyio.py"):
        (folder / module).write_text(HOSTILE)
    return folder


def test_python_dash_m_skillshelf_never_imports_modules_from_the_working_folder(
    tmp_path: Path,
) -> None:
    folder = _hostile_folder(tmp_path)
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(
        [sys.executable, "-m", "skillshelf", "--version"],
        cwd=folder,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
    assert not list(folder.glob("*.ran"))


def test_the_printed_command_runs_from_a_hostile_working_folder(tmp_path: Path) -> None:
    folder = _hostile_folder(tmp_path)
    entry = json.loads(_config("json", "--root", str(tmp_path)))
    command = [entry["command"], *entry["args"][: entry["args"].index("serve")], "--version"]
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    done = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert __version__ in done.stdout
    assert not list(folder.glob("*.ran"))

"""Every command without the optional extra it needs: one line naming the extra, exit 2.

Each command runs in a fresh interpreter whose import system refuses the extra's modules, as
an installation without the extra would.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

import skillshelf
from skillshelf.errors import install_hint
from skillshelf.testing import make_skill

SRC = str(Path(skillshelf.__file__).resolve().parents[1])
# A command that needs no network or server still gets this long on a slow, busy machine.
RUN_TIMEOUT_S = 60

# Installs a meta-path finder that makes the named top-level modules unimportable, then runs
# the CLI exactly as the `skillshelf` script does.
WRAPPER = """
import sys

BLOCKED = set(sys.argv[1].split(","))


class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Refuse())
from skillshelf.cli import main

main(sys.argv[2:], prog_name="skillshelf")
"""


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_skill(tmp_path / "skills", "alpha", "Alpha things. Use for alpha.")
    return tmp_path / "skills"


def _run(
    blocked: str, args: list[str], tmp_path: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    environment = {
        "PATH": os.environ.get("PATH", ""),
        "PYTHONPATH": SRC,
        "HOME": str(tmp_path),
        "SKILLSHELF_CACHE_DIR": str(tmp_path / "cache"),
        **env,
    }
    return subprocess.run(
        [sys.executable, "-c", WRAPPER, blocked, *args],
        capture_output=True,
        text=True,
        env=environment,
        cwd=tmp_path,
        timeout=RUN_TIMEOUT_S,
        check=False,
    )


def _scripted(tmp_path: Path) -> str:
    script = tmp_path / "script.json"
    script.write_text(json.dumps(["never sent"]))
    return f"scripted:{script}"


def _cases(tmp_path: Path) -> str:
    cases = tmp_path / "cases.json"
    cases.write_text(json.dumps([{"id": "a", "query": "alpha", "expected_skill": "alpha"}]))
    return str(cases)


CASES: dict[str, tuple[str, str, Callable[[Path, str], list[str]]]] = {
    "chat-openai": ("openai", "openai", lambda t, r: ["chat", "-r", r, "--model", "openai:x"]),
    "chat-anthropic": (
        "anthropic",
        "anthropic",
        lambda t, r: ["chat", "-r", r, "--model", "anthropic:x", "-m", "hi"],
    ),
    "eval-openai": (
        "openai",
        "openai",
        lambda t, r: ["eval", _cases(t), "-r", r, "--model", "openai:x"],
    ),
    "serve": ("mcp,mcp_types", "mcp", lambda t, r: ["serve", "-r", r]),
    "chat-watch": (
        "watchfiles",
        "watch",
        lambda t, r: ["chat", "-r", r, "--model", _scripted(t), "--watch", "-m", "hi"],
    ),
    "chat-redis-store": (
        "redis",
        "redis",
        lambda t, r: [
            "chat",
            "-r",
            r,
            "--model",
            _scripted(t),
            "--store",
            "redis://127.0.0.1:1/0",
            "-m",
            "hi",
        ],
    ),
    "call-redis-store": (
        "redis",
        "redis",
        lambda t, r: ["call", "skill_list", "-r", r, "--store", "redis://127.0.0.1:1/0"],
    ),
    "list-url-root": (
        "httpx",
        "remote",
        lambda t, r: ["list", "-r", "https://skills.invalid/pack.zip"],
    ),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_a_command_without_its_extra_names_the_extra_in_one_line_and_exits_2(
    case: str, root: Path, tmp_path: Path
) -> None:
    blocked, extra, make_args = CASES[case]
    keys = {"OPENAI_API_KEY": "k", "ANTHROPIC_API_KEY": "k"}
    result = _run(blocked, make_args(tmp_path, str(root)), tmp_path, **keys)
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    lines = [line for line in result.stderr.splitlines() if line.startswith("error:")]
    assert lines == [lines[0]] and install_hint(extra) in lines[0]
    assert result.stdout == ""


def test_exact_token_counting_without_tiktoken_names_the_tokens_extra(
    root: Path, tmp_path: Path
) -> None:
    result = _run(
        "tiktoken,tiktoken_ext",
        ["tokens", "-r", str(root)],
        tmp_path,
        SKILLSHELF_TOKENS_BACKEND="tiktoken",
    )
    assert result.returncode == 2, result.stderr
    assert "Traceback" not in result.stderr
    assert install_hint("tokens") in result.stderr.splitlines()[-1]


def test_a_command_that_needs_no_extra_runs_without_any(root: Path, tmp_path: Path) -> None:
    blocked = "openai,anthropic,mcp,mcp_types,redis,httpx,watchfiles,tiktoken,bpe_openai"
    result = _run(blocked, ["list", "-r", str(root)], tmp_path)
    assert result.returncode == 0, result.stderr
    assert "alpha" in result.stdout

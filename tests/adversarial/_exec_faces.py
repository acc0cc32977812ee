"""Shared pieces of the running-scripts adversarial tests (not a test module)."""

from __future__ import annotations

import importlib
import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.testing import make_skill

# tests/exec is a package named "exec", a keyword: import its fixtures by name.
bwrap = importlib.import_module("exec.conftest").bwrap
local = importlib.import_module("exec.conftest").local


def skill_root(tmp_path: Path) -> Path:
    """A root with one plain skill, ``demo``, to run commands in."""
    root = tmp_path / "skills"
    make_skill(root, "demo", description="A skill to run hostile commands in.")
    return root


def cli_exec(root: Path, *args: str) -> tuple[int, dict[str, Any] | None, str]:
    """``skillshelf exec demo --root ROOT ARGS`` → exit code, JSON (with --json), stderr."""
    result = CliRunner().invoke(main, ["exec", "demo", "--root", str(root), "--no-cache", *args])
    data = json.loads(result.stdout) if "--json" in args and result.stdout.strip() else None
    return result.exit_code, data, result.stderr

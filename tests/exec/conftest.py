"""Shared fixtures for the workspace and runner tests.

``bwrap`` gives the bubblewrap executor; where bubblewrap does not work the tests that need it
skip locally and FAIL under ``CI=true`` (CI installs bubblewrap, so a skip there would hide a
broken sandbox).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillshelf.exec.runner import BwrapExecutor, LocalExecutor, bwrap_available
from skillshelf.exec.workspace import Workspace


@pytest.fixture
def bwrap() -> BwrapExecutor:
    problem = bwrap_available()
    if problem is not None:
        if os.environ.get("CI"):
            pytest.fail(f"CI must run the sandbox tests for real: {problem}")
        pytest.skip(f"bubblewrap does not work here: {problem}")
    return BwrapExecutor()


@pytest.fixture
def local() -> LocalExecutor:
    return LocalExecutor()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")

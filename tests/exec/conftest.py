"""Shared fixtures for the workspace and runner tests.

``bwrap`` gives the bubblewrap executor, ``docker`` the container executor (on the engine at
``DOCKER_HOST``, with the image ``$SKILLSHELF_TEST_IMAGE``, default ``skillshelf-test:bookworm``
— ``.ci/docker-engine`` starts such an engine and builds that image), and ``executor`` each of
them in turn, for the tests every sandbox must pass. Where a sandbox does not work the tests
that need it skip locally and FAIL under ``CI=true`` (CI installs both, so a skip there would
hide a broken sandbox).
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import NoReturn

import pytest

from skillshelf.exec.runner import BwrapExecutor, Executor, LocalExecutor, bwrap_available
from skillshelf.exec.workspace import Workspace

TEST_IMAGE = os.environ.get("SKILLSHELF_TEST_IMAGE", "skillshelf-test:bookworm")
# SKILLSHELF_TEST_RUNTIME=runsc runs every docker test on gVisor instead of the engine's default.
TEST_RUNTIME = os.environ.get("SKILLSHELF_TEST_RUNTIME") or None


def _unavailable(what: str, problem: str) -> NoReturn:
    if os.environ.get("CI"):
        pytest.fail(f"CI must run the {what} tests for real: {problem}")
    pytest.skip(f"{what} does not work here: {problem}")


@pytest.fixture
def bwrap() -> BwrapExecutor:
    problem = bwrap_available()
    if problem is not None:
        _unavailable("sandbox", problem)
    return BwrapExecutor()


@pytest.fixture
def docker() -> Iterator[Executor]:
    from skillshelf.exec.container import DockerExecutor, docker_available

    problem = docker_available(image=TEST_IMAGE, runtime=TEST_RUNTIME)
    if problem is not None:
        _unavailable("container executor", problem)
    executor = DockerExecutor(image=TEST_IMAGE, runtime=TEST_RUNTIME)
    yield executor
    executor.close()


@pytest.fixture(params=["bwrap", "docker"])
def executor(request: pytest.FixtureRequest) -> Executor:
    """Each sandboxing executor in turn."""
    found: Executor = request.getfixturevalue(request.param)
    return found


@pytest.fixture
def local() -> LocalExecutor:
    return LocalExecutor()


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path / "ws")

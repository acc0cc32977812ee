"""Fixtures of the conformance suite: the scenario skills, written once per module."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from conformance.face_mcp import stop_servers
from conformance.faces import Env
from conformance.scenarios import DEPLOYED, write_skills


@pytest.fixture(scope="session")
def skills_root(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    yield write_skills(tmp_path_factory.mktemp("conformance") / "skills")
    stop_servers()  # the serve processes the MCP face started over these skills


@pytest.fixture
def env(skills_root: Path, tmp_path: Path) -> Env:
    DEPLOYED.clear()
    return Env(skills_root, tmp_path)

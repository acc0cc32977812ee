"""Fixtures for the MCP server tests: a copy of the examples, and a real HTTP server."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcpserver.helpers import EXAMPLES, HttpServer, start_http_server


@pytest.fixture
def skills_root(tmp_path: Path) -> Path:
    """A private copy of examples/skills that a test may edit."""
    root = tmp_path / "skills"
    shutil.copytree(EXAMPLES, root)
    return root


@pytest.fixture
def http_server(skills_root: Path) -> Iterator[HttpServer]:
    """``skillshelf serve --transport http`` over a copy of the examples."""
    server = start_http_server(["--root", str(skills_root)])
    try:
        yield server
    finally:
        server.stop()

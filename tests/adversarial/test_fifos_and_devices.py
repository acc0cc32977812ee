"""FIFOs and device files in a skill never block a face or feed it a device's bytes.

One skill's SKILL.md is a FIFO; another skill holds a FIFO (and, as root, a character device
reading zeros forever). Every face — the repository, validation, the index cache, reads, the
tool, digests, the scanner, staging, the CLI's ``list``/``validate``/``lock``/``verify``/
``scan``/``read``, and the MCP server in process and as a ``serve`` subprocess — answers
under a hard deadline; the other skill keeps working.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import anyio
import pytest

from reads_helpers import DEADLINE_S, cli, within
from skillshelf.errors import FileAccessError
from skillshelf.repository import Repository
from skillshelf.skills.paths import read_skill_file
from skillshelf.skills.validate import validate_path
from skillshelf.skills.walk import digest_skill
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools
from skillshelf.trust.scanner import scan_skill

IS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root with ``piped`` (SKILL.md is a FIFO) and ``good`` (holding a FIFO, a device)."""
    skills = tmp_path / "skills"
    good = make_skill(skills, "good", files={"docs/guide.md": "# Guide\n"})
    os.mkfifo(good / "docs" / "pipe.md")
    if IS_ROOT:
        os.mknod(good / "docs" / "zero.md", stat.S_IFCHR | 0o644, os.makedev(1, 5))
    piped = skills / "piped"
    piped.mkdir()
    os.mkfifo(piped / "SKILL.md")
    return skills


def test_repository_skips_a_fifo_skill_md_and_keeps_the_others(root: Path, tmp_path: Path) -> None:
    for cache in (False, tmp_path / "cache", tmp_path / "cache"):  # cold, then warm index
        repo = within(DEADLINE_S, lambda c=cache: Repository([root], cache_dir=c))  # type: ignore[misc]
        assert repo.names() == ["good"]
        [skipped] = repo.skipped
        assert skipped.path.endswith("piped/SKILL.md")
        assert [d.code for d in skipped.diagnostics] == ["file.unreadable"]
        assert "not a regular file" in skipped.reason


def test_validate_reports_a_fifo_skill_md(root: Path) -> None:
    reports = within(DEADLINE_S, lambda: validate_path(root))
    by_path = {r.path: r for r in reports}
    assert any("piped" in str(p) for p in by_path)
    assert any(d.code == "file.unreadable" for r in reports for d in r.diagnostics)


@pytest.mark.parametrize(
    "name",
    [
        "pipe.md",
        pytest.param("zero.md", marks=pytest.mark.skipif(not IS_ROOT, reason="mknod needs root")),
    ],
)
def test_reads_refuse_fifos_and_devices_without_blocking(root: Path, name: str) -> None:
    with pytest.raises(FileAccessError) as caught:
        within(DEADLINE_S, lambda: read_skill_file(root / "good", f"docs/{name}"))
    assert caught.value.reason == "unreadable"
    assert "not a regular file" in str(caught.value)
    tools = SkillTools(Repository([root], cache_dir=False))
    result = within(
        DEADLINE_S, lambda: tools.call("skill_read_file", {"skill": "good", "path": f"docs/{name}"})
    )
    assert result.status == "recoverable"
    assert "not a regular file" in result.content
    assert within(DEADLINE_S, lambda: read_skill_file(root / "good", "docs/guide.md")).text


def test_digest_scan_and_staging_never_open_special_files(root: Path, tmp_path: Path) -> None:
    from skillshelf.exec.workspace import WorkspaceManager

    digest = within(DEADLINE_S, lambda: digest_skill(root / "good"))
    assert digest.files["docs/pipe.md"] == "special:fifo"
    findings = within(DEADLINE_S, lambda: scan_skill(root / "good"))
    assert "scan.special_file" in {f.code for f in findings}
    repo = Repository([root], cache_dir=False)
    workspace = WorkspaceManager(tmp_path / "ws").open("s1")
    staged = within(DEADLINE_S, lambda: workspace.stage(repo.get("good")))
    assert (staged / "docs" / "guide.md").is_file()
    assert not (staged / "docs" / "pipe.md").exists()
    assert not (staged / "docs" / "zero.md").exists()


def test_cli_faces_answer_under_a_deadline(root: Path, tmp_path: Path) -> None:
    listed = cli("list", "--root", root, "--all", "--json", "--no-cache")
    rows = json.loads(listed.stdout)
    assert [r["name"] for r in rows if r["status"] == "ok"] == ["good"]
    [piped] = [r for r in rows if r["status"] == "skipped"]
    assert piped["path"].endswith("piped/SKILL.md")
    assert "not a regular file" in piped["reason"]
    validated = cli("validate", root)
    assert validated.returncode == 1
    assert "file.unreadable" in validated.stdout + validated.stderr
    lock = tmp_path / "skills.lock"
    assert cli("lock", "--root", root, "--out", lock, "--no-cache").returncode == 0
    assert cli("verify", "--root", root, "--lock", lock, "--no-cache").returncode == 0
    scanned = cli("scan", "--root", root, "--no-cache")
    assert "scan.special_file" in scanned.stdout
    read = cli("read", "good", "docs/pipe.md", "--root", root, "--no-cache")
    assert read.returncode != 0
    assert "not a regular file" in read.stderr
    assert "Traceback" not in read.stderr


def test_mcp_server_starts_and_refuses_special_files(root: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from mcpserver.helpers import serve_command, server_env, stdio_params
    from skillshelf.mcpserver import SkillServer

    async def check(client_of: object) -> None:
        with anyio.fail_after(DEADLINE_S):
            async with client_of as client:  # type: ignore[attr-defined]
                uris = {str(r.uri) for r in (await client.list_resources()).resources}
                assert "skill://good/docs/guide.md" in uris
                assert "skill://good/docs/pipe.md" not in uris
                with pytest.raises(MCPError):
                    await client.read_resource("skill://good/docs/pipe.md")

    server = within(DEADLINE_S, lambda: SkillServer(Repository([root], cache_dir=False)))
    anyio.run(check, Client(server.server))
    command = serve_command("--root", str(root))
    anyio.run(check, Client(stdio_params(command, server_env())))

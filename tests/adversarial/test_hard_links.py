"""A hard link in a skill to a file outside it.

Untrusted sources (a folder root the trust gate scans; archives and URLs) never serve it: the
scanner blocks ``scan.hard_link`` and the gate holds the skill back whatever the scan policy,
keeping its name in every listing. Extraction writes fresh files, so an archive's own hard
link members load (one name each). Trusted folder roots serve it, as they serve any file the
owner put there, and ``skillshelf scan`` reports it (exit 1) for a CI gate.
"""

from __future__ import annotations

import json
import os
import tarfile
from pathlib import Path

import pytest

from reads_helpers import cli
from skillshelf.errors import FileAccessError
from skillshelf.repository import Repository
from skillshelf.skills.paths import read_skill_file
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools
from skillshelf.trust.scanner import ScanPolicy
from trust_helpers import make_tar, skill_md, tar_file, tar_special

SECRET = "machine secret: do not serve"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    linked = make_skill(skills, "linked", files={"docs/readme.md": "hello"})
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET)
    os.link(secret, linked / "docs" / "notes.md")
    make_skill(skills, "clean")
    return skills


@pytest.mark.parametrize("action", ["block", "warn"])
def test_untrusted_root_holds_a_skill_with_a_hard_link(root: Path, action: str) -> None:
    policy = ScanPolicy(action=action, untrusted_roots=(str(root),))  # type: ignore[arg-type]
    repo = Repository([root], cache_dir=False, scan_policy=policy)
    assert repo.names() == ["clean"]
    [held] = repo.skipped
    assert (held.name, held.held) == ("linked", True)
    [diag] = [d for d in held.diagnostics if d.code == "scan.hard_link"]
    assert diag.severity == "error" and diag.path is not None
    assert diag.path.endswith("docs/notes.md")
    tools = SkillTools(repo)
    result = tools.call("skill_read_file", {"skill": "linked", "path": "docs/notes.md"})
    assert result.status == "recoverable" and SECRET not in result.content


def test_untrusted_root_does_not_serve_it_over_mcp(root: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from skillshelf.mcpserver import SkillServer

    policy = ScanPolicy(untrusted_roots=(str(root),))
    server = SkillServer(Repository([root], cache_dir=False, scan_policy=policy))

    async def check() -> None:
        async with Client(server.server) as client:
            uris = {str(r.uri) for r in (await client.list_resources()).resources}
            assert not any(u.startswith("skill://linked/") for u in uris)
            with pytest.raises(MCPError):
                await client.read_resource("skill://linked/docs/notes.md")

    anyio.run(check)


def test_trusted_root_serves_it_and_scan_reports_it(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    assert repo.names() == ["clean", "linked"]
    assert read_skill_file(root / "linked", "docs/notes.md").text == SECRET
    scanned = cli("scan", "--root", root, "--no-cache")
    assert scanned.returncode == 1
    assert "scan.hard_link" in scanned.stdout and "docs/notes.md" in scanned.stdout


def test_archive_hard_link_members_are_fresh_files_and_load(tmp_path: Path) -> None:
    archive = tmp_path / "skills.tar.gz"
    archive.write_bytes(
        make_tar(
            [
                tar_file("demo/SKILL.md", skill_md("demo")),
                tar_file("demo/docs/a.md", b"shared"),
                tar_special("demo/docs/b.md", tarfile.LNKTYPE, link="demo/docs/a.md"),
            ]
        )
    )
    cache = tmp_path / "cache"
    repo = Repository([archive], cache_dir=cache)
    assert repo.names() == ["demo"]
    assert read_skill_file(repo.get("demo").path, "docs/b.md").text == "shared"
    assert os.stat(repo.get("demo").path / "docs" / "b.md").st_nlink == 1
    listed = cli("list", "--root", archive, "--json", cache=cache)
    assert [r["name"] for r in json.loads(listed.stdout)] == ["demo"]
    assert cli("scan", "--root", archive, cache=cache).returncode == 0


def test_a_hard_link_made_after_the_first_scan_is_caught_on_refresh(
    root: Path, tmp_path: Path
) -> None:
    os.unlink(root / "linked" / "docs" / "notes.md")
    policy = ScanPolicy(untrusted_roots=(str(root),))
    repo = Repository([root], cache_dir=False, scan_policy=policy)
    assert repo.names() == ["clean", "linked"]
    # A second name for an existing file changes none of its times, only its link count.
    os.link(root / "linked" / "docs" / "readme.md", tmp_path / "elsewhere.md")
    repo.refresh()
    assert repo.names() == ["clean"]
    assert [(s.name, s.held) for s in repo.skipped] == [("linked", True)]


def _plant_after_the_scan(root: Path, tmp_path: Path) -> Repository:
    """An untrusted root whose ``linked`` skill passed its scan, then got a hard link to a
    secret (and ``docs/readme.md`` a second name elsewhere), with no refresh since."""
    planted = root / "linked" / "docs" / "notes.md"
    os.unlink(planted)
    policy = ScanPolicy(untrusted_roots=(str(root),))
    repo = Repository([root], cache_dir=False, scan_policy=policy)
    assert repo.names() == ["clean", "linked"]
    os.link(tmp_path / "secret.txt", planted)
    os.link(root / "linked" / "docs" / "readme.md", tmp_path / "elsewhere.md")
    return repo


@pytest.mark.parametrize("path", ["docs/notes.md", "docs/readme.md"])
def test_a_hard_link_planted_after_the_scan_is_refused_by_every_read_of_an_untrusted_root(
    root: Path, tmp_path: Path, path: str
) -> None:
    repo = _plant_after_the_scan(root, tmp_path)
    tools = SkillTools(repo)
    read = tools.call("skill_read_file", {"skill": "linked", "path": path})
    assert read.status == "recoverable"
    assert "hard link" in read.content and "untrusted root" in read.content
    assert SECRET not in read.content
    loaded = tools.call("skill_load", {"skill": "linked", "docs": [path]})
    assert loaded.status == "ok"
    assert "hard link" in loaded.content and SECRET not in loaded.content
    with pytest.raises(FileAccessError, match="hard link") as caught:
        repo.read_file("linked", path)
    assert caught.value.reason == "refused"


def test_a_hard_link_planted_after_the_scan_is_not_served_over_mcp(
    root: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from skillshelf.mcpserver import SkillServer

    server = SkillServer(_plant_after_the_scan(root, tmp_path))

    async def check() -> None:
        async with Client(server.server) as client:
            with pytest.raises(MCPError, match="hard link"):
                await client.read_resource("skill://linked/docs/notes.md")
            with pytest.raises(MCPError, match="hard link"):
                await client.read_resource("skill://linked/docs/readme.md")

    anyio.run(check)


def test_a_hard_linked_skill_md_planted_after_the_scan_is_not_served_over_mcp(
    root: Path, tmp_path: Path
) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio
    from mcp import Client
    from mcp.shared.exceptions import MCPError

    from skillshelf.mcpserver import SkillServer

    server = SkillServer(_plant_after_the_scan(root, tmp_path))
    os.link(root / "linked" / "SKILL.md", tmp_path / "SKILL-copy.md")

    async def check() -> None:
        async with Client(server.server) as client:
            with pytest.raises(MCPError, match="hard link"):
                await client.read_resource("skill://linked/SKILL.md")

    anyio.run(check)


def test_a_trusted_root_still_serves_a_hard_link_planted_after_the_scan(root: Path) -> None:
    repo = Repository([root], cache_dir=False)
    assert repo.read_file("linked", "docs/notes.md").text == SECRET


def test_a_hard_link_planted_after_the_scan_is_not_staged_for_workspace_exec(
    root: Path, tmp_path: Path
) -> None:
    from skillshelf.exec.workspace import StagingRefused, Workspace

    repo = _plant_after_the_scan(root, tmp_path)
    workspace = Workspace(tmp_path / "ws")
    with pytest.raises(StagingRefused, match="hard link") as caught:
        workspace.stage(repo.get("linked"))
    assert "untrusted root" in str(caught.value)
    staged = tmp_path / "ws" / "skills" / "linked"
    assert not staged.exists()

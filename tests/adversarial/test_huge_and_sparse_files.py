"""A 5 GB sparse file in a skill is never read whole: every face ends quickly and says why.

Sizes come from ``lstat``, so the walker stops at the per-file cap (``MAX_FILE_BYTES``)
before reading a byte; reads of the file itself take only their head; the MCP server
refuses to serve it; ``lock``/``verify``/``scan`` and staging report the limit by name.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from reads_helpers import cli, within
from skillshelf.errors import FileAccessError
from skillshelf.repository import Repository
from skillshelf.skills.paths import read_skill_file
from skillshelf.skills.walk import MAX_FILE_BYTES, digest_skill, walk_skill
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools
from skillshelf.trust.scanner import scan_skill

HUGE = 5 * 10**9
# Each face costs a few system calls and at most one read of a file's head.
FAST_S = 20.0


@pytest.fixture
def root(tmp_path: Path) -> Path:
    skills = tmp_path / "skills"
    big = make_skill(skills, "big", files={"assets/notes.md": "ok"})
    with open(big / "assets" / "huge.txt", "wb") as handle:
        handle.truncate(HUGE)
    make_skill(skills, "small")
    return skills


def test_walk_stops_at_the_per_file_cap_naming_the_file(root: Path) -> None:
    started = time.monotonic()
    walk = walk_skill(root / "big")
    assert walk.capped is not None
    assert "assets/huge.txt" in walk.capped and f"{MAX_FILE_BYTES:,}" in walk.capped
    assert digest_skill(root / "big").capped == walk.capped
    assert time.monotonic() - started < FAST_S


def test_reads_take_only_the_head_of_a_huge_file(root: Path) -> None:
    content = within(FAST_S, lambda: read_skill_file(root / "big", "assets/huge.txt"))
    assert content.size == HUGE
    tools = SkillTools(Repository([root], cache_dir=False))
    result = within(
        FAST_S, lambda: tools.call("skill_read_file", {"skill": "big", "path": "assets/huge.txt"})
    )
    assert result.status == "ok"
    assert len(result.content) < 100_000


def test_scan_and_staging_refuse_with_the_limit(root: Path, tmp_path: Path) -> None:
    from skillshelf.exec.workspace import StagingRefused, WorkspaceManager

    findings = within(FAST_S, lambda: scan_skill(root / "big"))
    assert [(f.code, f.severity) for f in findings] == [("scan.too_large", "block")]
    repo = Repository([root], cache_dir=False)
    workspace = WorkspaceManager(tmp_path / "ws").open("s1")
    with pytest.raises(StagingRefused, match="per-file limit"):
        within(FAST_S, lambda: workspace.stage(repo.get("big")))
    assert within(FAST_S, lambda: workspace.stage(repo.get("small"))).is_dir()


def test_cli_lock_verify_scan_report_the_limit_quickly(root: Path, tmp_path: Path) -> None:
    lock = tmp_path / "skills.lock"
    locked = cli("lock", "--root", root, "--out", lock, "--no-cache", timeout=FAST_S)
    assert locked.returncode == 1
    assert "not locked: big" in locked.stderr and "per-file limit" in locked.stderr
    assert set(json.loads(lock.read_text())["skills"]) == {"small"}
    verified = cli("verify", "--root", root, "--lock", lock, "--json", "--no-cache", timeout=FAST_S)
    assert verified.returncode == 1
    [drift] = json.loads(verified.stdout)
    assert drift["name"] == "big" and drift["kind"] == "unlisted"
    from skillshelf.trust.lockfile import LockEntry, Lockfile

    skill = Repository([root], cache_dir=False).get("big")
    drift = Lockfile({"big": LockEntry.of(skill)}).check(skill)
    assert drift is not None and drift.kind == "capped" and "per-file limit" in drift.summary()
    scanned = cli("scan", "--root", root, "--no-cache", timeout=FAST_S)
    assert scanned.returncode == 1
    assert "scan.too_large" in scanned.stdout and "assets/huge.txt" in scanned.stdout


def test_mcp_refuses_to_serve_a_huge_file(root: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    from skillshelf.mcpserver.files import UriError, read_bytes

    repo = Repository([root], cache_dir=False)
    with pytest.raises(UriError, match="limit"):
        within(FAST_S, lambda: read_bytes(repo.get("big"), "assets/huge.txt"))
    with pytest.raises(FileAccessError):
        read_skill_file(root / "big", "assets/missing.txt")

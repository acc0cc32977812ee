"""When the index cache may reuse a SKILL.md's parse: its stat data, and never a racy one.

A row is reused only while the file's modification time, size, inode and status-change time
are what they were when it was read, and only if the file had not changed within
``cache_files.RACY_NS`` of that read. Each change below is checked through both ways a tree is
read again: ``refresh()`` of an open repository (the in-memory index) and a new
``Repository`` over the same cache folder (the index file).
"""

from __future__ import annotations

import os
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from skillshelf.repository import Repository
from skillshelf.skills import cache_files, discovery, skill
from skillshelf.testing import make_skill

# Long enough for any file system's timestamps to move on; the wait below ends far sooner.
_CLOCK_TICK_DEADLINE_S = 10.0


def _open(root: Path, cache: Path) -> Repository:
    return Repository([root], cache_dir=cache)


@pytest.fixture
def trusting(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust files changed just now, so that rows are reused as for an older tree."""
    monkeypatch.setattr(cache_files, "RACY_NS", 0)


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every SKILL.md discovery reads (rather than reuses from the index)."""
    seen: list[str] = []
    real: Callable[..., Any] = skill.read_skill_md_stat

    def counting(path: str, **kwargs: Any) -> Any:
        result = real(path, **kwargs)  # a SKILL.md that is not there is not a read
        seen.append(os.path.basename(os.path.dirname(path)))
        return result

    monkeypatch.setattr(discovery, "read_skill_md_stat", counting)
    return seen


def _after_a_clock_tick(scratch: Path, ctime_ns: int) -> None:
    """Return once a file written now gets a status-change time later than ``ctime_ns``.

    File timestamps come from a coarse clock: two writes a moment apart may share one.
    """
    probe = scratch / "clock-probe"
    deadline = time.monotonic() + _CLOCK_TICK_DEADLINE_S
    while time.monotonic() < deadline:
        probe.write_bytes(b"x")
        if probe.stat().st_ctime_ns > ctime_ns:
            probe.unlink()
            return
    raise AssertionError("the file system clock did not move")


def test_an_unchanged_file_is_not_read_again(
    tmp_path: Path, trusting: None, reads: list[str]
) -> None:
    make_skill(tmp_path / "root", "one")
    repo = _open(tmp_path / "root", tmp_path / "cache")
    reads.clear()

    assert not repo.refresh()
    assert _open(tmp_path / "root", tmp_path / "cache").names() == ["one"]
    assert reads == []


def test_a_file_changed_just_before_it_was_read_is_read_again(
    tmp_path: Path, reads: list[str]
) -> None:
    # The default RACY_NS: a file written a moment ago may change again within the same
    # timestamp tick, so its stat data are not trusted yet.
    make_skill(tmp_path / "root", "one")
    repo = _open(tmp_path / "root", tmp_path / "cache")
    reads.clear()

    assert not repo.refresh()
    _open(tmp_path / "root", tmp_path / "cache")
    assert reads == ["one", "one"]


def test_an_edit_keeping_size_and_modification_time_is_noticed(
    tmp_path: Path, trusting: None
) -> None:
    md = make_skill(tmp_path / "root", "one", "first") / "SKILL.md"
    repo = _open(tmp_path / "root", tmp_path / "cache")
    before = md.stat()
    _after_a_clock_tick(tmp_path, before.st_ctime_ns)

    md.write_text(md.read_text(encoding="utf-8").replace("first", "final"), encoding="utf-8")
    os.utime(md, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = md.stat()
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == (
        before.st_size,
        before.st_mtime_ns,
        before.st_ino,
    )

    assert _open(tmp_path / "root", tmp_path / "cache").get("one").description == "final"
    assert repo.refresh().changed == ("one",)
    assert repo.get("one").description == "final"


def test_a_replaced_file_is_noticed(tmp_path: Path, trusting: None) -> None:
    md = make_skill(tmp_path / "root", "one", "first") / "SKILL.md"
    repo = _open(tmp_path / "root", tmp_path / "cache")
    before = md.stat()

    replacement = tmp_path / "replacement.md"
    replacement.write_text(
        md.read_text(encoding="utf-8").replace("first", "final"), encoding="utf-8"
    )
    os.utime(replacement, ns=(before.st_atime_ns, before.st_mtime_ns))
    os.replace(replacement, md)
    assert md.stat().st_ino != before.st_ino

    assert _open(tmp_path / "root", tmp_path / "cache").get("one").description == "final"
    assert repo.refresh().changed == ("one",)
    assert repo.get("one").description == "final"


def test_a_removed_skill_is_noticed(tmp_path: Path, trusting: None) -> None:
    make_skill(tmp_path / "root", "keep")
    gone = make_skill(tmp_path / "root", "gone")
    repo = _open(tmp_path / "root", tmp_path / "cache")

    shutil.rmtree(gone)

    assert _open(tmp_path / "root", tmp_path / "cache").names() == ["keep"]
    assert repo.refresh().removed == ("gone",)
    assert repo.names() == ["keep"]


def test_a_removed_skill_md_is_noticed(tmp_path: Path, trusting: None) -> None:
    make_skill(tmp_path / "root", "keep")
    gone = make_skill(tmp_path / "root", "gone")
    repo = _open(tmp_path / "root", tmp_path / "cache")

    (gone / "SKILL.md").unlink()

    assert _open(tmp_path / "root", tmp_path / "cache").names() == ["keep"]
    assert repo.refresh().removed == ("gone",)


def test_a_new_skill_is_noticed(tmp_path: Path, trusting: None) -> None:
    make_skill(tmp_path / "root", "keep")
    repo = _open(tmp_path / "root", tmp_path / "cache")

    make_skill(tmp_path / "root", "new")

    assert _open(tmp_path / "root", tmp_path / "cache").names() == ["keep", "new"]
    assert repo.refresh().added == ("new",)


def test_a_skill_edited_into_an_invalid_state_is_noticed(tmp_path: Path, trusting: None) -> None:
    md = make_skill(tmp_path / "root", "one") / "SKILL.md"
    _open(tmp_path / "root", tmp_path / "cache")

    md.write_text("---\nname: one\n---\n", encoding="utf-8")

    reopened = _open(tmp_path / "root", tmp_path / "cache")
    assert reopened.names() == []
    assert [d.code for s in reopened.skipped for d in s.diagnostics] == ["description.missing"]


def test_a_reused_skill_keeps_its_manifest_and_warnings(tmp_path: Path, trusting: None) -> None:
    make_skill(
        tmp_path / "root",
        "one",
        frontmatter={"tags": ["a", "b"], "version": "1.2", "colour": "blue"},
    )
    first = _open(tmp_path / "root", tmp_path / "cache").get("one")

    again = _open(tmp_path / "root", tmp_path / "cache").get("one")

    assert again.manifest == first.manifest
    assert again.diagnostics == first.diagnostics
    assert [d.code for d in again.diagnostics] == ["field.unknown"]
    assert again.stamp == first.stamp


class _FrozenClockStat:
    """A ``stat`` result from a file system whose clock did not tick between two writes."""

    def __init__(self, st: os.stat_result, frozen_ns: int) -> None:
        self._st = st
        self.st_mtime_ns = self.st_ctime_ns = frozen_ns

    def __getattr__(self, name: str) -> Any:
        return getattr(self._st, name)


def test_an_edit_within_one_clock_tick_of_the_last_scan_reaches_search_and_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # On a file system with coarse timestamps (one second on HFS+, ext3, many NFS servers),
    # an edit of the same size right after a scan keeps every stamp; discovery reads such
    # racy files again, and the refresh must then report the change and rebuild the search.
    frozen = time.time_ns()

    def coarse(path: Any, *, full: bool) -> tuple[bytes, int, int, Any]:
        data, _mtime_ns, size, st = real_read(path, full=full)
        return data, frozen, size, _FrozenClockStat(st, frozen)

    real_read = skill.read_skill_md_stat
    monkeypatch.setattr(discovery, "read_skill_md_stat", coarse)
    make_skill(tmp_path / "skills", "demo", description="Alpha zebra.")
    repo = Repository([tmp_path / "skills"], cache_dir=False)
    assert [h.name for h in repo.search("zebra")] == ["demo"]
    skill_md = tmp_path / "skills" / "demo" / "SKILL.md"
    skill_md.write_text(skill_md.read_text().replace("Alpha zebra.", "Bravo koala."))

    changes = repo.refresh()

    assert repo.find("demo").description == "Bravo koala."  # type: ignore[union-attr]
    assert changes.changed == ("demo",)
    assert [(h.name, h.description) for h in repo.search("koala")] == [("demo", "Bravo koala.")]
    assert repo.search("zebra") == []

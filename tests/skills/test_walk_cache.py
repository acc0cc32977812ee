"""A kept walk is handed out again only while every folder and file it saw is unchanged."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from skillshelf.skills import cache_files, walk_cache
from skillshelf.skills.walk import SkillWalk, walk_skill
from skillshelf.skills.walk_cache import RACY_NS, WalkCache
from skillshelf.testing import age_tree, make_skill

# Far enough in the past that a walk trusts the times it sees (see RACY_NS).


_age = age_tree  # an hour back: walks of the tree are then kept between calls


pytestmark = pytest.mark.usefixtures("settled_stamps")


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    directory = make_skill(tmp_path, "alpha", files={"references/guide.md": "guide"})
    _age(directory)
    return directory


@pytest.fixture
def walks(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The folders actually walked by the cache."""
    walked: list[str] = []

    def counting(directory: str, *, stats: dict[str, os.stat_result] | None = None) -> SkillWalk:
        walked.append(directory)
        return walk_skill(directory, stats=stats)

    monkeypatch.setattr(walk_cache, "walk_skill", counting)
    return walked


def _sizes(walk: SkillWalk) -> dict[str, int]:
    return {e.path: e.size for e in walk.entries if e.kind == "file"}


def test_an_unchanged_folder_is_walked_once(skill: Path, walks: list[str]) -> None:
    cache = WalkCache()
    first = cache.get(str(skill))
    assert first.kept
    assert cache.get(str(skill)) is first
    assert walks == [str(skill)]
    assert first.walk == walk_skill(skill)


def test_a_derived_value_is_computed_once_per_kept_walk(skill: Path) -> None:
    cache = WalkCache()
    made: list[int] = []

    def count(walk: SkillWalk) -> int:
        made.append(1)
        return len(walk.entries)

    assert cache.get(str(skill)).derive("n", count) == 3
    assert cache.get(str(skill)).derive("n", count) == 3
    assert made == [1]


def test_a_file_written_is_seen_by_the_next_get(skill: Path) -> None:
    cache = WalkCache()
    assert _sizes(cache.get(str(skill)).walk)["references/guide.md"] == 5
    (skill / "references" / "guide.md").write_text("a longer guide")
    assert _sizes(cache.get(str(skill)).walk)["references/guide.md"] == 14


def test_a_file_added_deep_down_is_seen_by_the_next_get(skill: Path) -> None:
    cache = WalkCache()
    cache.get(str(skill))
    (skill / "references" / "more.md").write_text("more")
    assert "references/more.md" in _sizes(cache.get(str(skill)).walk)


def test_a_file_removed_is_gone_from_the_next_get(skill: Path) -> None:
    cache = WalkCache()
    cache.get(str(skill))
    (skill / "references" / "guide.md").unlink()
    assert "references/guide.md" not in _sizes(cache.get(str(skill)).walk)


def test_a_file_swapped_for_one_with_the_same_times_and_size_is_seen(
    skill: Path, walks: list[str]
) -> None:
    cache = WalkCache()
    cache.get(str(skill))
    guide = skill / "references" / "guide.md"
    swapped = skill / "references" / "new"
    swapped.write_text("GUIDE")
    os.replace(swapped, guide)
    _age(skill)  # every time as it was: only the inode tells
    cache.get(str(skill))
    assert len(walks) == 2


def test_a_folder_that_vanished_is_walked_again(skill: Path, walks: list[str]) -> None:
    cache = WalkCache()
    cache.get(str(skill))
    for path in sorted(skill.rglob("*"), reverse=True):
        path.rmdir() if path.is_dir() else path.unlink()
    skill.rmdir()
    assert cache.get(str(skill)).walk.entries == ()
    assert not cache.get(str(skill)).kept


def test_a_walk_of_freshly_changed_files_is_not_kept(
    tmp_path: Path, walks: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_files, "RACY_NS", RACY_NS)
    # Written just now: a second change within the same clock tick might not move the times.
    fresh = make_skill(tmp_path, "fresh")
    cache = WalkCache()
    assert not cache.get(str(fresh)).kept
    cache.get(str(fresh))
    assert len(walks) == 2


def test_the_racy_window_is_measured_from_the_walk(
    skill: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_files, "RACY_NS", RACY_NS)
    recent = time.time_ns() - RACY_NS // 2
    os.utime(skill / "SKILL.md", ns=(recent, recent))
    assert not WalkCache().get(str(skill)).kept


def test_a_walk_holding_a_symbolic_link_is_never_kept(skill: Path, walks: list[str]) -> None:
    (skill / "link.md").symlink_to("references/guide.md")
    _age(skill)
    cache = WalkCache()
    known = cache.get(str(skill))
    assert not known.kept
    assert "link.md" in {e.path for e in known.walk.entries}
    cache.get(str(skill))
    assert len(walks) == 2


def test_the_least_recently_used_folder_is_dropped_past_the_limit(
    tmp_path: Path, walks: list[str]
) -> None:
    folders = [make_skill(tmp_path, name) for name in ("a", "b", "c")]
    _age(tmp_path)
    cache = WalkCache(limit=2)
    for folder in folders:
        cache.get(str(folder))
    cache.get(str(folders[2]))
    cache.get(str(folders[0]))
    assert walks == [str(folders[0]), str(folders[1]), str(folders[2]), str(folders[0])]


def test_a_skill_folder_reached_through_a_link_is_kept_and_followed(
    skill: Path, tmp_path: Path, walks: list[str]
) -> None:
    link = tmp_path / "linked"
    link.symlink_to(skill)
    cache = WalkCache()
    assert cache.get(str(link)).kept
    assert cache.get(str(link)).kept
    assert len(walks) == 1
    other = make_skill(tmp_path / "elsewhere", "alpha", files={"references/guide.md": "other!"})
    _age(other)
    link.unlink()
    link.symlink_to(other)
    assert _sizes(cache.get(str(link)).walk)["references/guide.md"] == 6


def _next_ctime_tick(path: Path, probe: Path | None = None) -> None:
    """Wait (bounded) until a change made now gets a later change time than ``path`` has."""
    probe = path.parent / ".ctime-probe" if probe is None else probe
    before = os.stat(path).st_ctime_ns
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        probe.write_text("x")
        if os.stat(probe).st_ctime_ns > before:
            probe.unlink()
            return
    raise AssertionError("the file system's change time did not move within 5 s")


def test_a_file_added_with_the_folder_time_put_back_is_seen(skill: Path) -> None:
    # tar, rsync -t and cp -p put a folder's modification time back after adding to it; the
    # folder's size does not move either; only its change time tells.
    cache = WalkCache()
    assert cache.get(str(skill)).kept
    before = os.stat(skill)
    _next_ctime_tick(skill)
    (skill / "added.md").write_text("new")
    os.utime(skill, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert os.stat(skill).st_mtime_ns == before.st_mtime_ns
    assert "added.md" in _sizes(cache.get(str(skill)).walk)


def test_a_first_walk_stats_only_its_folders_again(
    skill: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Files are stamped with the lstat the walk took of them; folders need one of their own.
    real_lstat = os.lstat
    seen: list[str] = []

    def counting(path: str, *args: object, **kwargs: object) -> os.stat_result:
        seen.append(os.fspath(path))
        return real_lstat(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counting)
    known = WalkCache().get(str(skill))
    assert known.kept
    assert seen == [str(skill / "references")]


def test_stamps_taken_from_the_walk_still_see_a_file_rewritten_in_place(skill: Path) -> None:
    cache = WalkCache()
    first = cache.get(str(skill))
    assert first.kept
    guide = skill / "references" / "guide.md"
    before = os.stat(guide)
    folders = [_stamp(skill), _stamp(skill / "references")]
    _next_ctime_tick(guide, probe=skill.parent / ".ctime-probe")  # outside the skill
    guide.write_text("GUIDE")  # the same size, and the times put back: only its ctime moves
    os.utime(guide, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert [_stamp(skill), _stamp(skill / "references")] == folders
    assert cache.get(str(skill)) is not first


def _stamp(path: Path) -> tuple[int, int, int, int]:
    st = os.stat(path)
    return st.st_ino, st.st_mtime_ns, st.st_ctime_ns, st.st_size


def test_a_derived_none_is_computed_once(skill: Path) -> None:
    cache = WalkCache()
    made: list[int] = []

    def nothing(_walk: SkillWalk) -> None:
        made.append(1)

    assert cache.get(str(skill)).derive("none", nothing) is None
    assert cache.get(str(skill)).derive("none", nothing) is None
    assert made == [1]

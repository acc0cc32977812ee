"""Hot reload: refresh() keeps the last good version; the watcher picks up edits quickly."""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from skillshelf.repository import Changes, Repository
from skillshelf.repository.watch import Watcher, watched_paths
from skillshelf.testing import make_skill
from trust_helpers import make_zip, skill_md

pytest.importorskip("watchfiles")

# The bound for an edit to show up in the catalog.
PICKUP_S = 1.0
# Bounded wait for events a test expects; generous so a busy machine does not flake.
EVENT_WAIT_S = 5.0


def _broken(path: Path) -> None:
    path.write_text("---\nname: alpha\ndescription: [unclosed\n---\nbody\n")


def test_edit_into_an_invalid_state_keeps_the_last_good_version(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "alpha", "good description")
    repo = Repository([tmp_path], cache_dir=False)
    _broken(skill / "SKILL.md")
    assert not repo.refresh()
    assert repo.get("alpha").description == "good description"
    [skipped] = repo.skipped
    assert [d.code for d in skipped.diagnostics][-1] == "skill.stale"
    assert skipped.diagnostics[0].severity == "error"
    make_skill(tmp_path, "alpha", "fixed description")
    assert repo.refresh().changed == ("alpha",)
    assert repo.get("alpha").description == "fixed description"
    assert repo.skipped == []


def test_a_skill_invalid_from_the_start_is_not_loaded(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "alpha")
    _broken(skill / "SKILL.md")
    repo = Repository([tmp_path], cache_dir=False)
    assert repo.names() == []
    assert repo.refresh() == Changes()


def test_deleted_skill_is_removed_not_kept(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "alpha")
    repo = Repository([tmp_path], cache_dir=False)
    (skill / "SKILL.md").unlink()
    assert repo.refresh().removed == ("alpha",)


def test_archive_roots_are_not_watched(tmp_path: Path) -> None:
    archive = tmp_path / "skills.zip"
    archive.write_bytes(make_zip({"beta/SKILL.md": skill_md("beta")}))
    make_skill(tmp_path / "local", "alpha")
    repo = Repository([tmp_path / "local", archive], cache_dir=tmp_path / "cache")
    assert repo.names() == ["alpha", "beta"]
    assert watched_paths(repo) == [str(tmp_path / "local")]


def _next(changes: queue.Queue[Changes], timeout_s: float) -> Changes:
    """The next non-empty changes (a save may first show up as a half-written file)."""
    deadline = time.monotonic() + timeout_s
    while True:
        found = changes.get(timeout=max(0.0, deadline - time.monotonic()))
        if found:
            return found


def _until(changes: queue.Queue[Changes], condition: Callable[[], bool]) -> None:
    """Wait, refresh by refresh, until ``condition`` holds (bounded)."""
    deadline = time.monotonic() + EVENT_WAIT_S
    while not condition():
        changes.get(timeout=max(0.0, deadline - time.monotonic()))


def test_watcher_picks_up_an_edit_within_a_second(tmp_path: Path) -> None:
    make_skill(tmp_path, "alpha", "first")
    repo = Repository([tmp_path], cache_dir=False)
    seen: queue.Queue[Changes] = queue.Queue()
    with Watcher(repo, on_change=seen.put) as watcher:
        assert watcher.ready.is_set()
        started = time.monotonic()
        make_skill(tmp_path, "alpha", "second, edited")
        changes = _next(seen, EVENT_WAIT_S)
        elapsed = time.monotonic() - started
    assert changes.changed == ("alpha",)
    assert repo.get("alpha").description == "second, edited"
    assert elapsed < PICKUP_S, f"edit picked up after {elapsed:.3f} s"


def test_watcher_sees_added_and_removed_skills_and_keeps_last_good(tmp_path: Path) -> None:
    alpha = make_skill(tmp_path, "alpha", "good")
    repo = Repository([tmp_path], cache_dir=False)
    seen: queue.Queue[Changes] = queue.Queue()
    with Watcher(repo, on_change=seen.put):
        make_skill(tmp_path, "beta")
        assert _next(seen, EVENT_WAIT_S).added == ("beta",)
        _broken(alpha / "SKILL.md")
        _until(seen, lambda: bool(repo.skipped))
        assert [s.diagnostics[-1].code for s in repo.skipped] == ["skill.stale"]
        assert "alpha" in repo.catalog()
        (tmp_path / "beta" / "SKILL.md").unlink()
        assert _next(seen, EVENT_WAIT_S).removed == ("beta",)


def test_watcher_stops_promptly(tmp_path: Path) -> None:
    make_skill(tmp_path, "alpha")
    watcher = Watcher(Repository([tmp_path], cache_dir=False)).start()
    started = time.monotonic()
    watcher.stop()
    assert time.monotonic() - started < 2.0
    assert watcher.error is None

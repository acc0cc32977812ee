"""The integrity lockfile: stable digests, drift detection and approval."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillshelf.errors import UsageError
from skillshelf.repository import Repository
from skillshelf.testing import make_skill
from skillshelf.trust.lockfile import Lockfile, LockfileError, digest_skill

SCRIPT = "#!/bin/sh\necho hello\n"


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "skills"
    make_skill(root, "alpha", files={"scripts/run.sh": SCRIPT, "references/a.md": "A\n"})
    make_skill(root, "beta")
    return root


def _locked(tmp_path: Path) -> tuple[Path, Path]:
    root = _tree(tmp_path)
    lock = Lockfile()
    lock.approve(Repository([root], cache_dir=False))
    return root, lock.save(tmp_path / "skills.lock")


def test_digest_is_stable_and_independent_of_creation_order(tmp_path: Path) -> None:
    one = make_skill(tmp_path / "a", "s", files={"x.txt": "1", "y/z.txt": "2"})
    two = tmp_path / "b" / "s"
    (two / "y").mkdir(parents=True)
    (two / "y" / "z.txt").write_text("2")
    (two / "x.txt").write_text("1")
    (two / "SKILL.md").write_bytes((one / "SKILL.md").read_bytes())
    assert digest_skill(one) == digest_skill(two)
    assert list(digest_skill(one).files) == ["SKILL.md", "x.txt", "y/z.txt"]


def test_digest_keeps_line_endings_as_bytes(tmp_path: Path) -> None:
    unix = make_skill(tmp_path / "a", "s", files={"x.txt": "a\nb\n"})
    dos = make_skill(tmp_path / "b", "s", files={"x.txt": b"a\r\nb\r\n"})
    assert digest_skill(unix).digest != digest_skill(dos).digest


def test_digest_covers_pycache(tmp_path: Path) -> None:
    # It used to skip __pycache__: a planted .pyc then ran under the lock without being drift.
    skill = make_skill(tmp_path, "s")
    before = digest_skill(skill)
    (skill / "__pycache__").mkdir()
    (skill / "__pycache__" / "m.pyc").write_bytes(b"\0")
    after = digest_skill(skill)
    assert after.digest != before.digest
    assert "__pycache__/m.pyc" in after.files


def test_lockfile_round_trips(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    lock = Lockfile.load(path)
    assert sorted(lock.entries) == ["alpha", "beta"]
    alpha = lock.entries["alpha"]
    assert alpha.root == str(root)
    assert alpha.digest.startswith("sha256:")
    assert set(alpha.files) == {"SKILL.md", "references/a.md", "scripts/run.sh"}


def test_unchanged_skills_load_with_the_lockfile(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    repo = Repository([root], cache_dir=False, lockfile=path)
    assert repo.names() == ["alpha", "beta"]
    assert repo.skipped == []


def test_one_changed_byte_in_a_script_holds_the_skill_back(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    script = root / "alpha" / "scripts" / "run.sh"
    script.write_text(SCRIPT.replace("hello", "hellO"))
    repo = Repository([root], cache_dir=False, lockfile=path)
    assert repo.names() == ["beta"]
    assert "alpha" not in repo.catalog()
    [held] = repo.skipped
    assert [d.code for d in held.diagnostics] == ["lock.drift"]
    assert "changed 1 (scripts/run.sh)" in held.reason
    assert [d.name for d in Lockfile.load(path).verify(Repository([root], cache_dir=False))] == [
        "alpha"
    ]


def test_drift_summary_lists_added_removed_and_changed(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    (root / "alpha" / "references" / "a.md").unlink()
    (root / "alpha" / "references" / "new.md").write_text("new")
    (root / "alpha" / "SKILL.md").write_text((root / "alpha" / "SKILL.md").read_text() + "more\n")
    [drift] = Lockfile.load(path).verify(Repository([root], cache_dir=False))
    assert (drift.added, drift.removed, drift.changed) == (
        ("references/new.md",),
        ("references/a.md",),
        ("SKILL.md",),
    )
    assert drift.summary() == (
        "content changed since approved: added 1 (references/new.md), "
        "removed 1 (references/a.md), changed 1 (SKILL.md)"
    )


def test_unlisted_and_missing_skills_are_drift(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    make_skill(root, "gamma")
    for file in (root / "beta").iterdir():
        file.unlink()
    (root / "beta").rmdir()
    drifts = Lockfile.load(path).verify(Repository([root], cache_dir=False))
    assert [(d.name, d.kind) for d in drifts] == [("beta", "missing"), ("gamma", "unlisted")]
    repo = Repository([root], cache_dir=False, lockfile=path)
    assert repo.names() == ["alpha"]
    assert [d.code for s in repo.skipped for d in s.diagnostics] == ["lock.unlisted"]


def test_approve_records_the_change_and_loads_the_skill(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    (root / "alpha" / "scripts" / "run.sh").write_text("echo changed\n")
    repo = Repository([root], cache_dir=False, lockfile=path)
    assert "alpha" not in repo
    assert repo.approve("alpha").added == ("alpha",)
    assert Repository([root], cache_dir=False, lockfile=path).names() == ["alpha", "beta"]


def test_approve_needs_a_lockfile(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        Repository([_tree(tmp_path)], cache_dir=False).approve("alpha")


def test_drift_appearing_after_open_is_caught_by_refresh(tmp_path: Path) -> None:
    root, path = _locked(tmp_path)
    repo = Repository([root], cache_dir=False, lockfile=path)
    script = root / "alpha" / "scripts" / "run.sh"
    script.write_text(SCRIPT.replace("hello", "HELLO"))
    os.utime(script, ns=(1, 1))  # a different mtime even on coarse clocks
    assert repo.refresh().removed == ("alpha",)


def test_missing_lockfile_holds_every_skill_back(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    repo = Repository([root], cache_dir=False, lockfile=tmp_path / "nope.lock")
    assert repo.names() == []
    assert [d.code for d in repo.diagnostics] == ["lock.unreadable"]


def test_lockfile_from_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root, path = _locked(tmp_path)
    (root / "beta" / "SKILL.md").write_text("---\nname: beta\ndescription: changed\n---\n")
    monkeypatch.setenv("SKILLSHELF_LOCK", str(path))
    assert Repository([root], cache_dir=False).names() == ["alpha"]
    assert Repository([root], cache_dir=False, lockfile=False).names() == ["alpha", "beta"]


def test_not_a_lockfile_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "skills.lock"
    bad.write_text('{"hello": 1}')
    with pytest.raises(LockfileError):
        Lockfile.load(bad)

"""Fuzzing archive extraction: random member lists, random damage, only ArchiveError escapes.

Whatever the members (names with ``..``, backslashes, absolute paths, duplicates, a path that
is both file and folder, links anywhere) and whatever damage is done to the bytes, extraction
either succeeds with every path inside the target or raises :class:`ArchiveError`, and
``Repository([archive])`` never raises. The profile is fixed so CI runs the same examples.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from adversarial.archives import Member, tar_of, zip_of
from skillshelf.repository import Repository
from skillshelf.skills.archive import ArchiveError, extract_archive

FUZZ = settings(
    max_examples=2_000,
    derandomize=True,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)

# Thousands of tiny trees: memory-backed when the machine has it, else the default temp dir.
_FAST_TMP = "/dev/shm" if os.access("/dev/shm", os.W_OK) else None

_SEGMENTS = ["demo", "a", "b", "SKILL.md", "..", ".", "", "x\\y", "C:", "~", "é", "n" * 120]
_names = st.builds(
    lambda lead, parts: lead + "/".join(parts),
    st.sampled_from(["", "", "", "/", "./"]),
    st.lists(st.sampled_from(_SEGMENTS), min_size=1, max_size=4),
)
_members = st.lists(
    st.tuples(
        _names,
        st.sampled_from(["file", "file", "dir", "symlink", "hardlink"]),
        st.one_of(st.binary(max_size=64), _names.map(str.encode)),
    ),
    min_size=0,
    max_size=8,
)
_damage = st.one_of(
    st.none(),
    st.tuples(st.just("truncate"), st.floats(0, 1)),
    st.tuples(st.just("flip"), st.floats(0, 1)),
)


def _damaged(data: bytes, damage: tuple[str, float] | None) -> bytes:
    if damage is None or not data:
        return data
    kind, where = damage
    at = min(int(where * len(data)), len(data) - 1)
    if kind == "truncate":
        return data[:at]
    return data[:at] + bytes([data[at] ^ 0xA5]) + data[at + 1 :]


def _inside(root: Path, path: Path) -> bool:
    real, base = os.path.realpath(path), os.path.realpath(root)
    return real == base or real.startswith(base + os.sep)


def _check(data: bytes, suffix: str) -> None:
    with tempfile.TemporaryDirectory(dir=_FAST_TMP) as tmp:
        work = Path(tmp)
        archive = work / f"fuzz{suffix}"
        archive.write_bytes(data)
        target = work / "cache" / "tree"
        try:
            extract_archive(archive, target)
        except ArchiveError:
            assert not target.exists()
        else:
            for folder, dirs, files in os.walk(target):
                for entry in (*dirs, *files):
                    assert _inside(target, Path(folder) / entry)
        assert sorted(p.name for p in work.iterdir()) == ["cache", archive.name]
        Repository([archive], cache_dir=work / "repo-cache")  # never raises


def _zip_members(members: list[Member]) -> list[Member]:
    # zip has no hard links; the member becomes a file holding the would-be target.
    return [(n, "file" if k == "hardlink" else k, d) for n, k, d in members]


@FUZZ
@given(
    members=_members,
    damage=_damage,
    suffix=st.sampled_from([".zip", ".skill", ".tar", ".tar.gz", ".tgz"]),
)
def test_any_archive_extracts_inside_the_target_or_raises_archive_error(
    members: list[Member], damage: tuple[str, float] | None, suffix: str
) -> None:
    if suffix in (".zip", ".skill"):
        data = zip_of(_zip_members(members))
    else:
        data = tar_of(members, gz=suffix != ".tar")
    _check(_damaged(data, damage), suffix)

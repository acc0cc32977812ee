"""Archive and URL roots: safe extraction, hostile archives, download cache, revalidation."""

from __future__ import annotations

import os
import tarfile
from pathlib import Path

import pytest

from skillshelf.repository import Repository
from skillshelf.skills.archive import ArchiveError, ArchiveLimits, extract_archive
from skillshelf.skills.sources import materialize
from skillshelf.testing import make_skill
from trust_helpers import (
    deflated_zeros,
    files_under,
    http_server,
    make_tar,
    make_zip,
    raw_zip,
    skill_md,
    stored_zip_of_empty_files,
    tar_file,
    tar_special,
)

GOOD = {"alpha/SKILL.md": skill_md("alpha"), "alpha/scripts/run.py": b"print('hi')\n"}


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


def _refused(tmp_path: Path, name: str, data: bytes, **limits: int) -> ArchiveError:
    """Extract a hostile archive; assert nothing was written anywhere but the cache folder."""
    archive = _write(tmp_path, name, data)
    cache = tmp_path / "cache"
    before = files_under(tmp_path)
    with pytest.raises(ArchiveError) as info:
        extract_archive(archive, cache / "tree", limits=ArchiveLimits(**limits))
    assert files_under(tmp_path) - before <= {"cache"}
    assert not (cache / "tree").exists()
    assert list(cache.iterdir()) == []  # the staging folder is gone too
    return info.value


@pytest.mark.parametrize("suffix", [".zip", ".skill"])
def test_zip_root_lists_its_skills(tmp_path: Path, suffix: str) -> None:
    archive = _write(tmp_path, f"skills{suffix}", make_zip(GOOD))
    repo = Repository([archive], cache_dir=tmp_path / "cache")
    assert repo.names() == ["alpha"]
    assert repo.get("alpha").directory.startswith(str(tmp_path / "cache"))
    assert repo.read_file("alpha", "scripts/run.py").text == "print('hi')\n"


@pytest.mark.parametrize(("suffix", "gz"), [(".tar.gz", True), (".tgz", True), (".tar", False)])
def test_tar_roots_list_their_skills(tmp_path: Path, suffix: str, gz: bool) -> None:
    data = make_tar([tar_file(n, d) for n, d in GOOD.items()], gz=gz)
    archive = _write(tmp_path, f"skills{suffix}", data)
    assert Repository([archive], cache_dir=tmp_path / "cache").names() == ["alpha"]


def test_archive_is_extracted_once_and_reused(tmp_path: Path) -> None:
    archive = _write(tmp_path, "skills.zip", make_zip(GOOD))
    first = Repository([archive], cache_dir=tmp_path / "cache").get("alpha").directory
    marker = Path(first, "marker")
    marker.write_text("still here")
    assert Repository([archive], cache_dir=tmp_path / "cache").get("alpha").directory == first
    assert marker.exists()


def test_a_crashed_extraction_leaves_no_root_and_its_leftovers_are_removed(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    leftover = cache / "archives" / ".extract-crashed"
    (leftover / "alpha").mkdir(parents=True)
    (leftover / "alpha" / "SKILL.md").write_bytes(skill_md("alpha"))
    os.utime(leftover, (1, 1))
    archive = _write(tmp_path, "skills.zip", make_zip(GOOD))
    repo = Repository([archive], cache_dir=cache)
    assert repo.names() == ["alpha"]
    assert not leftover.exists()
    assert [p.name.startswith(".") for p in (cache / "archives").iterdir()] == [False]


def test_missing_archive_root_is_reported(tmp_path: Path) -> None:
    repo = Repository([tmp_path / "skills.zip"], cache_dir=tmp_path / "cache")
    assert [d.code for d in repo.diagnostics] == ["root.missing"]


def test_zip_slip_is_refused(tmp_path: Path) -> None:
    error = _refused(tmp_path, "slip.zip", make_zip({"../../evil.txt": b"x", **GOOD}))
    assert error.code == "archive.unsafe_path"
    assert "'..'" in str(error)


def test_absolute_path_is_refused(tmp_path: Path) -> None:
    data = make_tar([tar_file("/tmp/evil.txt", b"x")])
    assert _refused(tmp_path, "abs.tar.gz", data).code == "archive.unsafe_path"


def test_symlink_escaping_the_tree_is_refused(tmp_path: Path) -> None:
    data = make_zip(GOOD, symlinks={"alpha/secrets": "../../../etc"})
    error = _refused(tmp_path, "link.zip", data)
    assert error.code == "archive.link_escape"


def test_symlink_chain_that_escapes_is_refused(tmp_path: Path) -> None:
    # Each link's text stays inside; together they lead out (up -> ., up/out -> ..).
    data = make_zip(GOOD, symlinks={"up": ".", "up/out": ".."})
    assert _refused(tmp_path, "chain.zip", data).code in {
        "archive.link_escape",
        "archive.duplicate",
        "archive.conflict",  # "up/out" sits under the link "up"
    }


def test_link_chain_never_writes_outside_the_staging_folder(tmp_path: Path) -> None:
    # up2 -> up/.. reads as "." but is really the staging folder's parent.
    data = make_zip(GOOD, symlinks={"up": ".", "up2": "up/.."})
    assert _refused(tmp_path, "chain2.zip", data).code == "archive.link_escape"
    # A member under such a link is refused earlier: a link is never also a folder.
    data = make_zip(GOOD, symlinks={"up": ".", "up2": "up/..", "up2/x/y": "z"})
    assert _refused(tmp_path, "chain3.zip", data).code == "archive.conflict"


def test_symlink_inside_the_tree_is_kept(tmp_path: Path) -> None:
    data = make_zip(GOOD, symlinks={"alpha/again.py": "scripts/run.py"})
    tree = extract_archive(_write(tmp_path, "ok.zip", data), tmp_path / "cache" / "tree")
    assert (tree / "alpha" / "again.py").read_text() == "print('hi')\n"


def test_hard_link_out_of_the_tree_is_refused(tmp_path: Path) -> None:
    data = make_tar([tar_special("alpha/passwd", tarfile.LNKTYPE, link="/etc/passwd")])
    assert _refused(tmp_path, "hard.tar.gz", data).code == "archive.link_escape"


@pytest.mark.parametrize("kind", [tarfile.CHRTYPE, tarfile.BLKTYPE, tarfile.FIFOTYPE])
def test_tar_with_device_files_is_refused(tmp_path: Path, kind: bytes) -> None:
    data = make_tar([tar_file("alpha/SKILL.md", skill_md("alpha")), tar_special("dev", kind)])
    error = _refused(tmp_path, "dev.tar.gz", data)
    assert error.code == "archive.special_file"


def test_gigabyte_zip_bomb_is_refused_before_writing(tmp_path: Path) -> None:
    gib = 1 << 30
    stream = deflated_zeros(gib)
    data = raw_zip("alpha/bomb.txt", stream, size=gib, compressed=len(stream))
    assert len(data) < 2 * 1024 * 1024
    error = _refused(tmp_path, "bomb.zip", data)
    assert error.code in {"archive.ratio", "archive.file_too_large", "archive.too_large"}


def test_extreme_compression_ratio_is_refused(tmp_path: Path) -> None:
    size = 32 << 20  # under the single-file cap, but ~1000:1
    stream = deflated_zeros(size)
    data = raw_zip("alpha/zeros.txt", stream, size=size, compressed=len(stream))
    error = _refused(tmp_path, "ratio.zip", data)
    assert error.code == "archive.ratio"
    assert "compression bomb" in str(error)


def test_zip_entry_that_lies_about_its_size_is_stopped_while_extracting(tmp_path: Path) -> None:
    stream = deflated_zeros(64 << 20)
    # Claims 1 KiB; the data decompresses to 64 MiB.
    data = raw_zip("alpha/small.txt", stream, size=1024, compressed=len(stream))
    error = _refused(tmp_path, "liar.zip", data)
    assert error.code == "archive.size_mismatch"
    assert "more than the 1,024 bytes" in str(error)


def test_many_tar_entries_are_refused_while_reading(tmp_path: Path) -> None:
    members = [tar_file(f"alpha/f{i}", b"") for i in range(200)]
    error = _refused(tmp_path, "many.tar", make_tar(members, gz=False), max_entries=100)
    assert error.code == "archive.too_many_entries"


def test_total_size_cap_stops_extraction(tmp_path: Path) -> None:
    files = {f"alpha/f{i}.txt": os.urandom(4096) for i in range(8)}
    error = _refused(tmp_path, "big.zip", make_zip(files), max_total_bytes=16_000)
    assert error.code == "archive.too_large"


def test_single_file_cap(tmp_path: Path) -> None:
    data = make_zip({"alpha/big.bin": os.urandom(10_000)})
    assert _refused(tmp_path, "one.zip", data, max_file_bytes=5_000).code == (
        "archive.file_too_large"
    )


def test_hundred_thousand_tiny_entries_are_refused(tmp_path: Path) -> None:
    error = _refused(tmp_path, "many.zip", stored_zip_of_empty_files(100_000))
    assert error.code == "archive.too_many_entries"
    assert "10,000" in str(error)


def test_hostile_root_becomes_a_diagnostic_not_a_crash(tmp_path: Path) -> None:
    archive = _write(tmp_path, "slip.zip", make_zip({"../evil": b"x"}))
    repo = Repository([archive], cache_dir=tmp_path / "cache")
    assert len(repo) == 0
    assert [d.code for d in repo.diagnostics] == ["archive.unsafe_path"]
    assert not (tmp_path / "evil").exists()


def test_corrupt_archive_is_reported(tmp_path: Path) -> None:
    archive = _write(tmp_path, "junk.zip", b"PK\x03\x04 this is not a zip")
    found = materialize(str(archive), tmp_path / "cache")
    assert found.directory is None
    assert [d.code for d in found.diagnostics] == ["archive.corrupt"]


# -- URL roots -----------------------------------------------------------------------------


def test_url_root_is_downloaded_and_listed(tmp_path: Path) -> None:
    with http_server() as served:
        served.files["skills.zip"] = make_zip(GOOD)
        repo = Repository([served.url("skills.zip")], cache_dir=tmp_path / "cache")
    assert repo.names() == ["alpha"]
    assert repo.get("alpha").root == served.url("skills.zip")


def _hostile() -> dict[str, tuple[bytes, str]]:
    gib = 1 << 30
    bomb = deflated_zeros(gib)
    liar = deflated_zeros(32 << 20)
    return {
        "zip-slip.zip": (make_zip({"../../evil.txt": b"x", **GOOD}), "archive.unsafe_path"),
        "symlink.zip": (
            make_zip(GOOD, symlinks={"alpha/etc": "../../../etc"}),
            "archive.link_escape",
        ),
        "bomb.zip": (
            raw_zip("a/b.txt", bomb, size=gib, compressed=len(bomb)),
            "archive.file_too_large",
        ),
        "devices.tar.gz": (
            make_tar(
                [tar_file("alpha/SKILL.md", skill_md("alpha")), tar_special("d", tarfile.CHRTYPE)]
            ),
            "archive.special_file",
        ),
        "liar.zip": (
            raw_zip("a/b.txt", liar, size=10, compressed=len(liar)),
            "archive.size_mismatch",
        ),
        "many.zip": (stored_zip_of_empty_files(100_000), "archive.too_many_entries"),
    }


def test_hostile_archives_from_a_url_are_refused_and_write_nothing_outside_the_cache(
    tmp_path: Path,
) -> None:
    cache = tmp_path / "cache"
    before = files_under(tmp_path)
    with http_server() as served:
        hostile = _hostile()
        for name, (data, _) in hostile.items():
            served.files[name] = data
        for name, (_, code) in hostile.items():
            repo = Repository([served.url(name)], cache_dir=cache)
            assert len(repo) == 0
            assert [(d.code, d.severity) for d in repo.diagnostics] == [(code, "error")], name
    assert {p for p in files_under(tmp_path) - before if not p.startswith("cache")} == set()
    leftovers = [p for p in cache.rglob("*") if p.name != "meta.json" and p.is_file()]
    assert leftovers == []  # no extracted file, no partial download


def test_url_root_is_revalidated_with_etag(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with http_server() as served:
        served.files["skills.zip"] = make_zip(GOOD)
        url = served.url("skills.zip")
        Repository([url], cache_dir=cache)
        Repository([url], cache_dir=cache)
        assert served.statuses() == [200, 304]
        served.files["skills.zip"] = make_zip({"beta/SKILL.md": skill_md("beta")})
        assert Repository([url], cache_dir=cache).names() == ["beta"]
        assert served.statuses() == [200, 304, 200]
    assert len(list((cache / "remote").glob("*/tree-*"))) == 1  # the old tree was removed


def test_refresh_does_not_fetch_a_url_again(tmp_path: Path) -> None:
    make_skill(tmp_path / "local", "local-one")
    with http_server() as served:
        served.files["skills.zip"] = make_zip(GOOD)
        repo = Repository([tmp_path / "local", served.url("skills.zip")], cache_dir=tmp_path / "c")
        make_skill(tmp_path / "local", "local-two")
        assert repo.refresh().added == ("local-two",)
        assert served.statuses() == [200]
    assert repo.names() == ["alpha", "local-one", "local-two"]


def test_url_root_is_used_offline_from_the_cache(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    with http_server() as served:
        served.files["skills.zip"] = make_zip(GOOD)
        url = served.url("skills.zip")
        Repository([url], cache_dir=cache)
    repo = Repository([url], cache_dir=cache)  # the server is gone
    assert repo.names() == ["alpha"]
    assert [(d.code, d.severity) for d in repo.diagnostics] == [("remote.offline", "warning")]


def test_unreachable_url_without_a_cache_is_an_error(tmp_path: Path) -> None:
    with http_server() as served:
        url = served.url("skills.zip")
    repo = Repository([url], cache_dir=tmp_path / "cache")
    assert [(d.code, d.severity) for d in repo.diagnostics] == [("remote.unreachable", "error")]


def test_http_error_is_reported(tmp_path: Path) -> None:
    with http_server() as served:
        repo = Repository([served.url("missing.zip")], cache_dir=tmp_path / "cache")
    assert [d.code for d in repo.diagnostics] == ["remote.http_error"]
    assert "404" in repo.diagnostics[0].message


def test_redirects_are_followed_and_capped(tmp_path: Path) -> None:
    with http_server() as served:
        served.files["real.zip"] = make_zip(GOOD)
        served.redirects["moved.zip"] = served.url("real.zip")
        for i in range(7):
            served.redirects[f"loop{i}.zip"] = served.url(f"loop{i + 1}.zip")
        assert Repository([served.url("moved.zip")], cache_dir=tmp_path / "a").names() == ["alpha"]
        repo = Repository([served.url("loop0.zip")], cache_dir=tmp_path / "b")
    assert [d.code for d in repo.diagnostics] == ["remote.redirects"]


def test_download_over_the_size_cap_is_stopped(tmp_path: Path) -> None:
    with http_server() as served:
        served.files["big.zip"] = os.urandom(300_000)
        found = materialize(
            served.url("big.zip"), tmp_path / "cache", limits=ArchiveLimits(max_total_bytes=1000)
        )
    assert [d.code for d in found.diagnostics] == ["remote.too_large"]
    assert not list((tmp_path / "cache").rglob(".download-*"))

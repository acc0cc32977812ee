"""Malformed and hostile archive roots: a diagnostic naming the archive, never a traceback.

Every case goes through each face that reads archive roots: the extractor, the library
``Repository`` (next to a good root, which keeps working) and ``skillshelf list``. The MCP
face (``serve``) is in test_hostile_http_clients.py.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from adversarial.archives import (
    GOOD_SKILL,
    bad_crc_zip,
    corrupt_deflate_zip,
    encrypted_zip,
    gzip_of,
    tar_of,
    zip_of,
)
from skillshelf.cli import main
from skillshelf.repository import Repository
from skillshelf.skills.archive import ArchiveError, ArchiveLimits, extract_archive
from skillshelf.testing import make_skill
from trust_helpers import files_under, skill_md

_X = b"x"
_GOOD_ZIP = zip_of([GOOD_SKILL])
_GOOD_TAR_GZ = tar_of([GOOD_SKILL], gz=True)

# (id, file name, bytes, codes that may explain the refusal)
MALFORMED: list[tuple[str, str, bytes, set[str]]] = [
    (
        "zip_file_then_dir",
        "a.zip",
        zip_of([GOOD_SKILL, ("demo/x", "file", _X), ("demo/x/y", "file", _X)]),
        {"archive.conflict"},
    ),
    (
        "tar_file_then_dir",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/x", "file", _X), ("demo/x/y", "file", _X)]),
        {"archive.conflict"},
    ),
    (
        "tar_file_then_dir_entry",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/x", "file", _X), ("demo/x", "dir", b"")]),
        {"archive.conflict"},
    ),
    (
        "tar_dir_then_file",
        "a.tar.gz",
        tar_of([GOOD_SKILL, ("demo/x/y", "file", _X), ("demo/x", "file", _X)], gz=True),
        {"archive.conflict"},
    ),
    (
        "zip_dir_then_file",
        "a.zip",
        zip_of([GOOD_SKILL, ("demo/x", "dir", b""), ("demo/x", "file", _X)]),
        {"archive.conflict"},
    ),
    (
        "zip_duplicate_member",
        "a.zip",
        zip_of([GOOD_SKILL, ("demo/x", "file", _X), ("demo/x", "file", b"y")]),
        {"archive.duplicate"},
    ),
    (
        "tar_duplicate_member",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/x", "file", _X), ("demo/./x", "file", b"y")]),
        {"archive.duplicate"},
    ),
    (
        "tar_symlink_then_file_below_it",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/l", "symlink", b"."), ("demo/l/y", "file", _X)]),
        {"archive.conflict"},
    ),
    (
        "zip_file_then_symlink_same_name",
        "a.zip",
        zip_of([GOOD_SKILL, ("demo/l", "file", _X), ("demo/l", "symlink", b"SKILL.md")]),
        {"archive.conflict"},
    ),
    ("zip_truncated", "a.zip", _GOOD_ZIP[: len(_GOOD_ZIP) // 2], {"archive.corrupt"}),
    (
        "tar_gz_truncated",
        "a.tar.gz",
        tar_of([("demo/SKILL.md", "file", os.urandom(40_000))], gz=True)[:5_000],
        {"archive.corrupt"},
    ),
    (
        "tar_truncated",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/big", "file", bytes(10_000))])[:3_000],
        {"archive.corrupt"},
    ),
    ("zip_bad_crc", "a.zip", bad_crc_zip(), {"archive.corrupt"}),
    ("zip_corrupt_deflate", "a.zip", corrupt_deflate_zip(), {"archive.corrupt"}),
    (
        "tar_gz_corrupt_stream",
        "a.tgz",
        gzip_of(b"\x00" * 10)[:-8] + b"garbage!",
        {"archive.corrupt"},
    ),
    ("zip_encrypted_member", "a.zip", encrypted_zip(), {"archive.encrypted"}),
    (
        "zip_backslash_name",
        "a.zip",
        zip_of([GOOD_SKILL, ("demo\\..\\..\\x", "file", _X)]),
        {"archive.unsafe_path"},
    ),
    ("zip_absolute_name", "a.zip", zip_of([("/tmp/x", "file", _X)]), {"archive.unsafe_path"}),
    ("tar_absolute_name", "a.tar", tar_of([("/tmp/x", "file", _X)]), {"archive.unsafe_path"}),
    ("zip_drive_name", "a.zip", zip_of([("C:x", "file", _X)]), {"archive.unsafe_path"}),
    ("zip_dotdot_name", "a.zip", zip_of([("demo/../../x", "file", _X)]), {"archive.unsafe_path"}),
    ("tar_dotdot_name", "a.tar", tar_of([("../x", "file", _X)]), {"archive.unsafe_path"}),
    (
        "tar_name_too_long_for_the_file_system",
        "a.tar",
        tar_of([GOOD_SKILL, ("demo/" + "n" * 300, "file", _X)]),
        {"archive.unreadable"},
    ),
    ("zip_zero_length", "a.zip", b"", {"archive.corrupt"}),
    ("skill_zero_length", "a.skill", b"", {"archive.corrupt"}),
    ("tar_zero_length", "a.tar", b"", {"archive.corrupt"}),
    ("tar_gz_zero_length", "a.tar.gz", b"", {"archive.corrupt"}),
    ("zip_not_an_archive", "a.zip", b"just some text\n" * 40, {"archive.corrupt"}),
    ("tgz_not_an_archive", "a.tgz", b"just some text\n" * 40, {"archive.corrupt"}),
    ("tar_not_an_archive", "a.tar", b"just some text\n" * 40, {"archive.corrupt"}),
    ("tar_gz_that_is_a_zip", "a.tar.gz", _GOOD_ZIP, {"archive.corrupt"}),
    ("zip_that_is_a_tar_gz", "a.zip", _GOOD_TAR_GZ, {"archive.corrupt"}),
]


def _write(tmp_path: Path, name: str, data: bytes) -> Path:
    path = tmp_path / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    ("name", "data", "codes"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_malformed_archive_is_refused_with_a_code_and_writes_nothing(
    tmp_path: Path, name: str, data: bytes, codes: set[str]
) -> None:
    archive = _write(tmp_path, name, data)
    before = files_under(tmp_path)
    with pytest.raises(ArchiveError) as info:
        extract_archive(archive, tmp_path / "cache" / "tree")
    assert info.value.code in codes, str(info.value)
    assert "\n" not in str(info.value)
    assert files_under(tmp_path) - before <= {"cache"}
    assert list((tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize(
    ("name", "data", "codes"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_malformed_archive_root_is_a_diagnostic_and_other_roots_keep_working(
    tmp_path: Path, name: str, data: bytes, codes: set[str]
) -> None:
    archive = _write(tmp_path, name, data)
    good = tmp_path / "good"
    make_skill(good, "alpha", "A good skill. Use when checking the others still load.")
    repo = Repository([archive, good], cache_dir=tmp_path / "cache")
    assert repo.names() == ["alpha"]
    [diagnostic] = repo.diagnostics
    assert diagnostic.code in codes
    assert diagnostic.severity == "error"
    assert diagnostic.path == str(archive)


@pytest.mark.parametrize(
    ("name", "data", "codes"), [c[1:] for c in MALFORMED], ids=[c[0] for c in MALFORMED]
)
def test_list_reports_a_malformed_archive_and_lists_the_rest(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, data: bytes, codes: set[str]
) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    archive = _write(tmp_path, name, data)
    good = tmp_path / "good"
    make_skill(good, "alpha", "A good skill. Use when checking the others still load.")
    result = CliRunner().invoke(main, ["list", "--root", str(archive), "--root", str(good)])
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    assert "alpha" in result.stdout
    assert any(f"[{code}]" in result.output for code in codes), result.output
    assert name in result.output


def test_validate_reports_an_archive_path_without_a_traceback(tmp_path: Path) -> None:
    archive = _write(tmp_path, "a.zip", MALFORMED[0][2])
    result = CliRunner().invoke(main, ["validate", str(archive)])
    assert result.exit_code == 1
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "a.zip" in result.output


# -- expansion is measured, not guessed from member sizes ----------------------------------

_FIVE_MIB = 5 * 1024 * 1024


@pytest.mark.parametrize(
    ("name", "build"),
    [
        ("big.tar", lambda asset: tar_of([GOOD_SKILL, ("demo/assets/big.bin", "file", asset)])),
        (
            "big.tar.gz",
            lambda asset: tar_of([GOOD_SKILL, ("demo/assets/big.bin", "file", asset)], gz=True),
        ),
        (
            "stored.zip",
            lambda asset: zip_of([GOOD_SKILL, ("demo/assets/big.bin", "file", asset)], method=0),
        ),
    ],
)
def test_five_mib_asset_that_does_not_compress_is_accepted(
    tmp_path: Path, name: str, build: object
) -> None:
    asset = os.urandom(_FIVE_MIB)
    archive = _write(tmp_path, name, build(asset))  # type: ignore[operator]
    repo = Repository([archive], cache_dir=tmp_path / "cache")
    assert repo.diagnostics == []
    assert repo.names() == ["demo"]
    extracted = Path(repo.get("demo").directory) / "assets" / "big.bin"
    assert extracted.read_bytes() == asset


def test_stored_tar_of_five_mib_of_zeros_is_accepted(tmp_path: Path) -> None:
    # No compression at all: the bytes read equal the bytes written, whatever they are.
    archive = _write(
        tmp_path, "zeros.tar", tar_of([GOOD_SKILL, ("demo/assets/z.bin", "file", bytes(_FIVE_MIB))])
    )
    repo = Repository([archive], cache_dir=tmp_path / "cache")
    assert repo.diagnostics == []
    assert repo.names() == ["demo"]


def test_gzipped_hundred_mib_of_zeros_is_refused_naming_the_ratio_and_the_limit(
    tmp_path: Path,
) -> None:
    # Ten members of 10 MiB: each under the one-file cap, together under the total cap, so
    # only the measured expansion of the archive can stop it.
    chunk = bytes(10 * 1024 * 1024)
    members = [GOOD_SKILL, *((f"demo/assets/z{i}.bin", "file", chunk) for i in range(10))]
    archive = _write(tmp_path, "bomb.tar.gz", tar_of(members, gz=True))
    assert archive.stat().st_size < 1024 * 1024
    started = time.monotonic()
    with pytest.raises(ArchiveError) as info:
        extract_archive(archive, tmp_path / "cache" / "tree")
    assert info.value.code == "archive.ratio"
    message = str(info.value)
    assert "the limit is 200x" in message
    assert "expands" in message
    assert time.monotonic() - started < 30
    # Stopped early: nowhere near the 100 MiB was written.
    assert not (tmp_path / "cache" / "tree").exists()

    repo = Repository([archive], cache_dir=tmp_path / "cache2")
    assert [d.code for d in repo.diagnostics] == ["archive.ratio"]


def test_expansion_limit_is_configurable(tmp_path: Path) -> None:
    members = [GOOD_SKILL, ("demo/assets/z.bin", "file", bytes(4 * 1024 * 1024))]
    archive = _write(tmp_path, "zeros.tar.gz", tar_of(members, gz=True))
    lenient = Repository(
        [archive], cache_dir=tmp_path / "a", archive_limits=ArchiveLimits(max_ratio=100_000)
    )
    assert lenient.names() == ["demo"]
    strict = Repository([archive], cache_dir=tmp_path / "b", archive_limits=ArchiveLimits())
    assert [d.code for d in strict.diagnostics] == ["archive.ratio"]


def test_zip_member_ratio_names_the_member_and_the_limit(tmp_path: Path) -> None:
    members = [GOOD_SKILL, ("demo/assets/z.bin", "file", bytes(8 * 1024 * 1024))]
    archive = _write(tmp_path, "zeros.zip", zip_of(members))
    with pytest.raises(ArchiveError) as info:
        extract_archive(archive, tmp_path / "cache" / "tree")
    assert info.value.code == "archive.ratio"
    assert "'demo/assets/z.bin'" in str(info.value)
    assert "the limit is 200x" in str(info.value)


def test_a_skill_md_of_the_good_archive_is_served(tmp_path: Path) -> None:
    archive = _write(tmp_path, "ok.zip", _GOOD_ZIP)
    repo = Repository([archive], cache_dir=tmp_path / "cache")
    assert repo.read_file("demo", "SKILL.md").text == skill_md("demo").decode()

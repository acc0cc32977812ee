"""skill:// URIs, file listings, digests, limits and $ARGUMENTS — without a server."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from skillshelf.mcpserver import files
from skillshelf.mcpserver.files import (
    DigestCache,
    SkillUri,
    UriError,
    directory_children,
    file_uri,
    parse_uri,
    read_bytes,
    skill_files,
)
from skillshelf.mcpserver.shelf import Shelf
from skillshelf.repository import Repository
from skillshelf.skills.walk import SkillWalk, walk_skill
from skillshelf.testing import age_tree, make_skill


def _skill(root: Path, name: str = "demo", **kwargs: object) -> Repository:
    make_skill(root, name, **kwargs)  # type: ignore[arg-type]
    return Repository([root], cache_dir=False)


@pytest.mark.parametrize(
    ("uri", "expected"),
    [
        ("skill://demo/SKILL.md", SkillUri("demo", "SKILL.md")),
        ("skill://demo", SkillUri("demo", "")),
        ("skill://demo/", SkillUri("demo", "")),
        ("skill://demo/references/a%20b.md", SkillUri("demo", "references/a b.md")),
    ],
)
def test_parse_uri_splits_name_and_path(uri: str, expected: SkillUri) -> None:
    assert parse_uri(uri) == expected


@pytest.mark.parametrize(
    "uri",
    [
        "skill://x/../../etc/passwd",
        "skill://demo/../../etc/passwd",
        "skill://demo/..%2F..%2Fetc%2Fpasswd",
        "skill://demo/%2e%2e/%2e%2e/etc/passwd",
        "skill://demo/%2E%2E%2F%2E%2E%2Fetc%2Fpasswd",
        "skill://demo/..%5C..%5Cetc%5Cpasswd",
        "skill://demo/references/%00",
        "skill://demo//etc/passwd",
        "skill://demo/./SKILL.md",
        "skill://../etc/passwd",
        "skill:///etc/passwd",
        "file:///etc/passwd",
        "skill://demo/SKILL.md?x=1",
    ],
)
def test_traversal_and_odd_uris_are_refused(uri: str) -> None:
    with pytest.raises(UriError):
        parse_uri(uri)


def test_file_uri_round_trips_through_parse_uri() -> None:
    uri = file_uri("demo", "references/a b#c.md")
    assert uri == "skill://demo/references/a%20b%23c.md"
    assert parse_uri(uri) == SkillUri("demo", "references/a b#c.md")


def test_symlink_out_of_the_skill_is_neither_listed_nor_read(tmp_path: Path) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("secret")
    repo = _skill(tmp_path / "root")
    skill = repo.get("demo")
    (skill.path / "leak.txt").symlink_to(outside)
    listed = [f.relative for f in skill_files(skill, DigestCache()).files]
    assert listed == ["SKILL.md"]
    with pytest.raises(UriError):
        read_bytes(skill, "leak.txt")


def test_listing_has_skill_md_first_and_digests_match_bytes(tmp_path: Path) -> None:
    repo = _skill(tmp_path, files={"b.txt": "bee", "a/z.md": "zed", "__pycache__/x.pyc": "x"})
    skill = repo.get("demo")
    listed = skill_files(skill, DigestCache()).files
    # __pycache__ is served (and locked and scanned) like any file: it used to be hidden here
    # while staging copied it.
    assert [f.relative for f in listed] == ["SKILL.md", "__pycache__/x.pyc", "a/z.md", "b.txt"]
    for entry in listed:
        data = read_bytes(skill, entry.relative)
        assert entry.size == len(data)
        assert entry.digest == "sha256:" + hashlib.sha256(data).hexdigest()


def test_digest_cache_notices_an_edit(tmp_path: Path) -> None:
    repo = _skill(tmp_path, files={"notes.md": "one"})
    skill = repo.get("demo")
    cache = DigestCache()
    before = {f.relative: f.digest for f in skill_files(skill, cache).files}
    (skill.path / "notes.md").write_text("two, longer")
    after = {f.relative: f.digest for f in skill_files(skill, cache).files}
    assert before["notes.md"] != after["notes.md"]
    assert before["SKILL.md"] == after["SKILL.md"]


def test_skill_over_the_file_limit_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_FILES", 3)
    repo = _skill(tmp_path, files={f"f{i}.txt": "x" for i in range(5)})
    listing = skill_files(repo.get("demo"), DigestCache())
    assert listing.files == ()
    assert listing.over_limit == "more than 3 files"


def test_skill_over_the_size_limit_is_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(files, "MAX_TOTAL_BYTES", 100)
    repo = _skill(tmp_path, files={"big.txt": "x" * 200})
    assert skill_files(repo.get("demo"), DigestCache()).over_limit == "more than 100 bytes"


def test_directory_children_lists_subdirectories_as_directories(tmp_path: Path) -> None:
    repo = _skill(tmp_path, files={"references/templates/t.md": "t", "references/a.md": "a"})
    children = directory_children(repo.get("demo"), "references")
    assert [(c.name, c.relative, c.is_dir) for c in children] == [
        ("a.md", "references/a.md", False),
        ("templates", "references/templates", True),
    ]
    with pytest.raises(UriError):
        directory_children(repo.get("demo"), "references/a.md")
    with pytest.raises(UriError):
        directory_children(repo.get("demo"), "missing")


def test_lowercase_skill_md_is_served_as_skill_md(tmp_path: Path) -> None:
    repo = _skill(tmp_path, skill_md_name="skill.md")
    skill = repo.get("demo")
    assert [f.relative for f in skill_files(skill, DigestCache()).files] == ["SKILL.md"]
    assert read_bytes(skill, "SKILL.md").startswith(b"---")
    assert [c.name for c in directory_children(skill, "")] == ["SKILL.md"]


def test_entry_frontmatter_reads_yaml_as_the_core_schema_does(tmp_path: Path) -> None:
    raw = (
        "---\nname: demo\ndescription: A demo. Use in tests.\nflag: yes\nold-octal: 010\n"
        "hex: 0x1F\nversion: 1.0\nreleased: 2024-01-01\nat: 2024-01-01 10:00:00\n"
        "metadata:\n  owner: team\nlist: [a, b]\n---\nBody\n"
    )
    make_skill(tmp_path, "demo", raw=raw)
    shelf = Shelf(Repository([tmp_path], cache_dir=False))
    assert shelf.frontmatter(shelf.repo.get("demo")) == {
        "name": "demo",
        "description": "A demo. Use in tests.",
        "flag": "yes",
        "old-octal": 10,
        "hex": 31,
        "version": 1.0,
        "released": "2024-01-01",
        "at": "2024-01-01 10:00:00",
        "metadata": {"owner": "team"},
        "list": ["a", "b"],
    }


def test_skill_reached_through_a_linked_folder_is_listed_and_read_whole(tmp_path: Path) -> None:
    store = tmp_path / "store"
    make_skill(store, "demo", files={"doc.md": "# Doc\n"})
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "demo").symlink_to(store / "demo", target_is_directory=True)
    skill = Repository([tmp_path / "root"], cache_dir=False).get("demo")
    assert skill.directory == str(tmp_path / "root" / "demo")
    listed = [f.relative for f in skill_files(skill, DigestCache()).files]
    assert listed == ["SKILL.md", "doc.md"]
    assert read_bytes(skill, "SKILL.md") == (store / "demo" / "SKILL.md").read_bytes()
    assert read_bytes(skill, "doc.md") == b"# Doc\n"


def test_skill_md_swapped_for_a_link_out_of_the_skill_is_refused(tmp_path: Path) -> None:
    repo = _skill(tmp_path / "root")
    skill = repo.get("demo")
    secret = tmp_path / "secret.md"
    secret.write_text("---\nname: secret\n---\nsecret\n")
    (skill.path / "SKILL.md").unlink()
    (skill.path / "SKILL.md").symlink_to(secret)
    with pytest.raises(UriError):
        read_bytes(skill, "SKILL.md")


def test_skill_md_swapped_for_a_link_inside_the_skill_is_read_as_its_target(
    tmp_path: Path,
) -> None:
    repo = _skill(tmp_path / "root", files={"real.md": "---\nname: demo\n---\nthe target\n"})
    skill = repo.get("demo")
    (skill.path / "SKILL.md").unlink()
    (skill.path / "SKILL.md").symlink_to("real.md")
    assert read_bytes(skill, "SKILL.md").endswith(b"the target\n")


def test_skill_md_of_a_skill_folder_swapped_for_a_link_is_refused(tmp_path: Path) -> None:
    skill = _skill(tmp_path / "root").get("demo")
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "SKILL.md").write_text("---\nname: demo\n---\nsecret\n")
    skill.path.rename(tmp_path / "moved")
    skill.path.symlink_to(outside, target_is_directory=True)
    with pytest.raises(UriError):
        read_bytes(skill, "SKILL.md")


def test_skill_md_gone_since_the_scan_names_no_resource(tmp_path: Path) -> None:
    skill = _skill(tmp_path).get("demo")
    (skill.path / "SKILL.md").unlink()
    with pytest.raises(UriError, match="No resource is served"):
        read_bytes(skill, "SKILL.md")


@pytest.fixture
def aged(tmp_path: Path) -> Shelf:
    make_skill(tmp_path, "demo", files={"references/guide.md": "guide"})
    age_tree(tmp_path / "demo")  # old enough that its walk is kept (see skills.walk_cache)
    return Shelf(Repository([tmp_path], cache_dir=False))


@pytest.mark.usefixtures("settled_stamps")
def test_a_file_list_is_kept_from_the_second_request_on_while_nothing_changed(
    aged: Shelf,
) -> None:
    skill = aged.repo.get("demo")
    first = aged.files(skill, keep=True)
    second = aged.files(skill, keep=True)
    assert aged.files(skill, keep=True) is second
    assert first == second == skill_files(skill, DigestCache())


def test_a_kept_file_list_shows_an_edit_and_a_new_file(aged: Shelf) -> None:
    skill = aged.repo.get("demo")
    aged.files(skill, keep=True)
    before = aged.files(skill, keep=True)
    (skill.path / "references" / "guide.md").write_text("GUIDE")  # same size
    (skill.path / "notes.md").write_text("notes")
    after = aged.files(skill, keep=True)
    assert after == skill_files(skill, DigestCache())
    assert [f.relative for f in after.files] == ["SKILL.md", "notes.md", "references/guide.md"]
    guide = hashlib.sha256(b"GUIDE").hexdigest()
    assert after.files[2].digest == f"sha256:{guide}" != before.files[1].digest


@pytest.mark.usefixtures("settled_stamps")
def test_listings_walk_afresh_and_keep_no_walk(
    aged: Shelf, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.skills import walk_cache

    kept: list[str] = []

    def counting(directory: str, *, stats: dict[str, os.stat_result] | None = None) -> SkillWalk:
        kept.append(directory)
        return walk_skill(directory, stats=stats)

    monkeypatch.setattr(walk_cache, "walk_skill", counting)
    skill = aged.repo.get("demo")
    aged.files(skill)
    aged.entry(skill)
    assert kept == []
    aged.entry(skill, keep=True)  # asked about once: walked afresh, nothing kept
    assert kept == []
    aged.entry(skill, keep=True)
    aged.files(skill, keep=True)
    assert len(kept) == 1

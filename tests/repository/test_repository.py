"""Discovery and the repository: roots, precedence, bad input, caps, cache and refresh."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillshelf.errors import SkillNotFoundError
from skillshelf.repository import Repository, resolve_roots
from skillshelf.testing import make_skill


def _open(*roots: Path, **kwargs: object) -> Repository:
    kwargs.setdefault("cache_dir", False)
    return Repository(list(roots), **kwargs)  # type: ignore[arg-type]


def _skipped_codes(repo: Repository) -> dict[str, str]:
    return {os.path.basename(os.path.dirname(s.path)): s.diagnostics[0].code for s in repo.skipped}


def test_skills_are_listed_sorted_by_name(tmp_path: Path) -> None:
    for name in ("zeta", "alpha", "mid"):
        make_skill(tmp_path, name)
    assert _open(tmp_path).names() == ["alpha", "mid", "zeta"]


def test_root_may_be_a_single_skill_folder(tmp_path: Path) -> None:
    skill = make_skill(tmp_path, "solo")
    assert _open(skill).names() == ["solo"]


def test_skills_are_found_at_depth_but_not_inside_other_skills(tmp_path: Path) -> None:
    make_skill(tmp_path / "team" / "sub", "deep")
    outer = make_skill(tmp_path, "outer")
    make_skill(outer / "examples", "inner")
    assert _open(tmp_path).names() == ["deep", "outer"]


def test_depth_limit_is_respected(tmp_path: Path) -> None:
    make_skill(tmp_path / "a" / "b" / "c", "far")
    assert _open(tmp_path, max_depth=2).names() == []
    assert _open(tmp_path, max_depth=4).names() == ["far"]


def test_hidden_and_node_modules_are_skipped_unless_asked(tmp_path: Path) -> None:
    make_skill(tmp_path / ".curated", "hidden-one")
    make_skill(tmp_path / "node_modules", "vendored")
    make_skill(tmp_path, "visible")
    assert _open(tmp_path).names() == ["visible"]
    assert _open(tmp_path, include_hidden=True).names() == ["hidden-one", "vendored", "visible"]


def test_root_inside_a_hidden_folder_is_walked(tmp_path: Path) -> None:
    make_skill(tmp_path / ".agents" / "skills", "conventional")
    assert _open(tmp_path / ".agents" / "skills").names() == ["conventional"]


def test_first_root_wins_and_the_other_copy_is_shadowed(tmp_path: Path) -> None:
    first = make_skill(tmp_path / "one", "dup", "first copy")
    make_skill(tmp_path / "two", "dup", "second copy")
    repo = _open(tmp_path / "one", tmp_path / "two")
    assert repo.get("dup").description == "first copy"
    assert [(s.skill.description, s.winner) for s in repo.shadowed] == [
        ("second copy", str(first.resolve()))
    ]


def test_lowercase_skill_md_is_accepted(tmp_path: Path) -> None:
    make_skill(tmp_path, "lower", skill_md_name="skill.md")
    assert _open(tmp_path).names() == ["lower"]


@pytest.mark.parametrize(
    ("raw", "code"),
    [
        ("no frontmatter at all\n", "frontmatter.missing"),
        ("---\nname: x\ndescription: y\n", "frontmatter.unclosed"),
        ("---\nname: [x\n---\n", "frontmatter.yaml"),
        ("---\n- a\n- b\n---\n", "frontmatter.not_mapping"),
        (
            "---\nname: x\ndescription: !!python/object/apply:os.system [ls]\n---\n",
            "frontmatter.tag",
        ),
        ("---\nname: bad\ndescription: ''\n---\n", "description.empty"),
        ("---\ndescription: no name\n---\n", "name.missing"),
    ],
)
def test_bad_skill_is_skipped_with_a_diagnostic_and_others_still_load(
    tmp_path: Path, raw: str, code: str
) -> None:
    make_skill(tmp_path, "bad", raw=raw)
    make_skill(tmp_path, "good")
    repo = _open(tmp_path)
    assert repo.names() == ["good"]
    assert _skipped_codes(repo) == {"bad": code}


def test_huge_skill_md_is_skipped_without_reading_it(tmp_path: Path) -> None:
    make_skill(tmp_path, "huge", raw="---\nname: huge\ndescription: d\n---\n" + "x" * 10_000_000)
    make_skill(tmp_path, "good")
    repo = _open(tmp_path)
    assert repo.names() == ["good"]
    assert _skipped_codes(repo) == {"huge": "file.too_large"}


def test_binary_skill_md_is_skipped(tmp_path: Path) -> None:
    make_skill(tmp_path, "bin", raw=b"\x89PNG\r\n\x1a\n\x00\x00" + bytes(range(256)))
    assert _skipped_codes(_open(tmp_path)) == {"bin": "file.binary"}


def test_invalid_utf8_in_body_loads_with_a_warning(tmp_path: Path) -> None:
    make_skill(tmp_path, "enc", raw=b"---\nname: enc\ndescription: d\n---\nbad \xff byte\n")
    repo = _open(tmp_path)
    skill = repo.get("enc")
    assert "\ufffd" in skill.body()
    assert [(d.code, d.severity) for d in skill.diagnostics] == [("file.encoding", "warning")]


def test_invalid_utf8_in_frontmatter_is_reported(tmp_path: Path) -> None:
    make_skill(tmp_path, "enc", raw=b"---\nname: enc\ndescription: caf\xe9\n---\nbody\n")
    skill = _open(tmp_path).get("enc")
    assert [(d.code, d.severity) for d in skill.diagnostics] == [("file.encoding", "warning")]


def test_long_frontmatter_beyond_the_read_prefix_is_parsed(tmp_path: Path) -> None:
    long_desc = "word " * 1500
    make_skill(tmp_path, "long", long_desc.strip())
    skill = _open(tmp_path).get("long")
    assert skill.description == long_desc.strip()
    assert [d.code for d in skill.diagnostics] == ["description.too_long"]


def test_symlink_loop_is_reported_not_followed_forever(tmp_path: Path) -> None:
    make_skill(tmp_path / "a", "inside")
    (tmp_path / "a" / "loop").symlink_to(tmp_path, target_is_directory=True)
    repo = _open(tmp_path)
    assert repo.names() == ["inside"]
    assert "discovery.symlink_loop" in {d.code for d in repo.diagnostics}


def test_symlinked_skill_is_recorded_by_the_path_it_was_reached_by(tmp_path: Path) -> None:
    real = make_skill(tmp_path / "store", "linked")
    (tmp_path / "root").mkdir()
    (tmp_path / "root" / "linked").symlink_to(real, target_is_directory=True)
    skill = _open(tmp_path / "root").get("linked")
    assert skill.directory == str(tmp_path / "root" / "linked")
    assert skill.real_directory == str(real.resolve())


def test_unreadable_directory_is_reported(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    make_skill(tmp_path, "good")
    locked = tmp_path / "locked"
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: str) -> object:
        # Root ignores permission bits, so the denial is simulated at the one call that sees it.
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", path)
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    repo = _open(tmp_path)
    assert repo.names() == ["good"]
    assert [d.code for d in repo.diagnostics] == ["discovery.unreadable_dir"]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads directories whatever their mode")
def test_unreadable_directory_by_permissions_is_reported(tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0)
    try:
        repo = _open(tmp_path)
        assert "discovery.unreadable_dir" in {d.code for d in repo.diagnostics}
    finally:
        locked.chmod(0o755)


def test_dir_cap_stops_the_walk_with_a_warning(tmp_path: Path) -> None:
    for i in range(10):
        make_skill(tmp_path, f"s{i}")
    repo = _open(tmp_path, max_dirs=4)
    assert len(repo) == 4
    assert [(d.code, d.severity) for d in repo.diagnostics] == [("discovery.dir_cap", "warning")]


def test_missing_explicit_root_is_reported(tmp_path: Path) -> None:
    repo = _open(tmp_path / "nope")
    assert [d.code for d in repo.diagnostics] == ["root.missing"]


def test_missing_archive_root_is_reported_as_missing(tmp_path: Path) -> None:
    repo = _open(tmp_path / "skills.zip")
    assert [d.code for d in repo.diagnostics] == ["root.missing"]


def test_get_unknown_skill_suggests_close_names(tmp_path: Path) -> None:
    make_skill(tmp_path, "pdf-tools")
    with pytest.raises(SkillNotFoundError) as info:
        _open(tmp_path).get("pdf-tool")
    assert info.value.suggestions[0] == "pdf-tools"


def test_refresh_reports_added_changed_and_removed(tmp_path: Path) -> None:
    make_skill(tmp_path, "keep")
    make_skill(tmp_path, "edit", "old")
    gone = make_skill(tmp_path, "gone")
    repo = _open(tmp_path)
    make_skill(tmp_path, "new")
    make_skill(tmp_path, "edit", "a new, longer description")
    (gone / "SKILL.md").unlink()
    changes = repo.refresh()
    assert (changes.added, changes.changed, changes.removed) == (("new",), ("edit",), ("gone",))
    assert repo.get("edit").description == "a new, longer description"
    assert not repo.refresh()


def test_persistent_index_is_reused_and_invalidated_by_changes(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    make_skill(tmp_path / "root", "one", "first")
    assert _open(tmp_path / "root", cache_dir=cache).get("one").description == "first"
    assert list(cache.glob("index-*.bin"))
    reopened = _open(tmp_path / "root", cache_dir=cache)
    assert reopened.get("one").description == "first"
    make_skill(tmp_path / "root", "one", "second, longer")
    assert _open(tmp_path / "root", cache_dir=cache).get("one").description == "second, longer"


def test_corrupt_cache_file_is_ignored(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    make_skill(tmp_path / "root", "one")
    _open(tmp_path / "root", cache_dir=cache)
    for file in cache.glob("index-*.bin"):
        file.write_bytes(b"garbage")
    assert _open(tmp_path / "root", cache_dir=cache).names() == ["one"]


def test_conventional_roots_are_found_from_the_working_directory(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / ".git").mkdir(parents=True)
    make_skill(project / ".agents" / "skills", "proj")
    home = tmp_path / "home"
    make_skill(home / ".claude" / "skills", "mine")
    roots, explicit = resolve_roots(None, cwd=project / "src", home=home, environ={})
    assert not explicit
    assert roots == [str(project / ".agents" / "skills"), str(home / ".claude" / "skills")]


def test_environment_roots_are_used_when_none_are_given(tmp_path: Path) -> None:
    roots, explicit = resolve_roots(
        None, environ={"SKILLSHELF_ROOTS": f"{tmp_path}/a{os.pathsep}{tmp_path}/b"}
    )
    assert explicit
    assert roots == [f"{tmp_path}/a", f"{tmp_path}/b"]


def test_catalog_leaves_out_skills_the_model_may_not_invoke(tmp_path: Path) -> None:
    make_skill(tmp_path, "manual", frontmatter={"disable-model-invocation": True})
    make_skill(tmp_path, "auto")
    repo = _open(tmp_path)
    assert "manual" in repo.names()
    assert "<name>\nauto\n</name>" in repo.catalog()
    assert "manual" not in repo.catalog()

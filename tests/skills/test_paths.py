from __future__ import annotations

import os
from pathlib import Path

import pytest

from skillshelf.core.files import tree_order
from skillshelf.errors import FileAccessError, UsageError
from skillshelf.skills import walk
from skillshelf.skills.paths import (
    FileTree,
    TreeEntry,
    file_tree,
    human_size,
    read_skill_file,
    safe_join,
)


@pytest.fixture
def skill(tmp_path: Path) -> Path:
    """A skill dir with links that escape it (to a file, to a directory) and one that stays."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("secret")
    root = tmp_path / "skill"
    (root / "references").mkdir(parents=True)
    (root / "SKILL.md").write_text("---\nname: skill\n---\nbody\n")
    (root / "references" / "guide.md").write_text("guide")
    (root / "passwd_link").symlink_to("/etc/passwd")
    (root / "outside_dir").symlink_to(outside, target_is_directory=True)
    (root / "up").symlink_to("..", target_is_directory=True)
    (root / "alias.md").symlink_to("SKILL.md")
    return root


REFUSED = [
    pytest.param("../../etc/passwd", id="dotdot"),
    pytest.param("..", id="bare-dotdot"),
    pytest.param("/etc/passwd", id="posix-absolute"),
    pytest.param("a/../../x", id="dotdot-after-name"),
    pytest.param("..\\..\\x", id="backslash-dotdot"),
    pytest.param("C:\\Windows", id="windows-drive"),
    pytest.param("c:relative", id="windows-drive-relative"),
    pytest.param("\\\\srv\\share", id="unc"),
    pytest.param("~/.ssh/id_rsa", id="home"),
    pytest.param("~root/x", id="other-home"),
    pytest.param("", id="empty"),
    pytest.param("   ", id="whitespace"),
    pytest.param("a\x00b", id="nul"),
    pytest.param("passwd_link", id="symlink-to-etc-passwd"),
    pytest.param("outside_dir/secret.txt", id="symlinked-dir-outside"),
    pytest.param("outside_dir", id="symlinked-dir-itself"),
    pytest.param("up/outside/secret.txt", id="relative-symlink-up"),
]


@pytest.mark.parametrize("relative", REFUSED)
def test_escaping_or_malformed_path_is_refused(skill: Path, relative: str) -> None:
    with pytest.raises(FileAccessError) as caught:
        safe_join(skill, relative)
    assert caught.value.reason == "refused"
    assert "relative to the skill directory" in str(caught.value)


ALLOWED = [
    pytest.param("a/../b", "b", id="dotdot-staying-inside"),
    pytest.param("./x", "x", id="dot-prefix"),
    pytest.param(".", ".", id="base-itself"),
    pytest.param("references\\guide.md", "references/guide.md", id="backslash-separator"),
    pytest.param("references//guide.md", "references/guide.md", id="doubled-slash"),
    pytest.param("alias.md", "SKILL.md", id="symlink-inside-to-inside"),
    pytest.param("a/~b", "a/~b", id="tilde-not-leading"),
]


@pytest.mark.parametrize(("relative", "expected"), ALLOWED)
def test_path_inside_skill_is_joined(skill: Path, relative: str, expected: str) -> None:
    assert safe_join(skill, relative) == (skill / expected).resolve()


def test_skill_dir_reached_through_symlink_still_contains_its_files(
    skill: Path, tmp_path: Path
) -> None:
    link = tmp_path / "link-to-skill"
    link.symlink_to(skill, target_is_directory=True)
    assert safe_join(link, "SKILL.md") == (skill / "SKILL.md").resolve()


def test_symlink_loop_is_refused(skill: Path) -> None:
    (skill / "loop").symlink_to("loop")
    with pytest.raises(FileAccessError) as caught:
        safe_join(skill, "loop")
    assert caught.value.reason == "refused"


def test_refusal_message_echoes_a_long_path_only_in_part(skill: Path) -> None:
    with pytest.raises(FileAccessError) as caught:
        safe_join(skill, "../" + "x" * 10_000)
    assert len(str(caught.value)) < 400


# --- read_skill_file -------------------------------------------------------------------------


def test_long_text_is_cut_exactly_with_a_marker(tmp_path: Path) -> None:
    (tmp_path / "big.txt").write_text("a" * 31_337)
    content = read_skill_file(tmp_path, "big.txt")
    assert content.truncated
    assert content.text == "a" * 24_000
    assert content.total_chars == 31_337
    assert content.render() == "a" * 24_000 + "\n[truncated: showed 24,000 of 31,337 characters]"


def test_text_exactly_at_the_limit_is_not_truncated(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("abcde")
    content = read_skill_file(tmp_path, "f.txt", max_chars=5)
    assert not content.truncated
    assert content.render() == "abcde"


def test_cut_counts_characters_not_bytes(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_text("é" * 20, encoding="utf-8")
    content = read_skill_file(tmp_path, "f.txt", max_chars=10)
    assert content.text == "é" * 10
    assert content.render().endswith("[truncated: showed 10 of 20 characters]")


def test_huge_text_is_read_only_in_part_and_reports_bytes(tmp_path: Path) -> None:
    (tmp_path / "huge.txt").write_text("é" * 100_000, encoding="utf-8")
    content = read_skill_file(tmp_path, "huge.txt", max_chars=10)
    assert content.text == "é" * 10  # no U+FFFD from a character split at the read limit
    assert content.total_chars is None
    assert content.size == 200_000
    assert content.render().endswith("\n[truncated: showed 10 characters of a 200,000-byte file]")


def test_file_with_nul_bytes_is_described_not_dumped(tmp_path: Path) -> None:
    (tmp_path / "data.bin").write_bytes(b"abc\x00def")
    content = read_skill_file(tmp_path, "data.bin")
    assert content.binary
    assert content.text is None
    assert (
        content.render() == "[binary file: data.bin, 7 bytes, application/octet-stream — not shown]"
    )


def test_png_is_binary_by_its_name_even_without_nul(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "assets" / "logo.png").write_bytes(b"\x89PNG\r\n\x1a\nxyz")
    content = read_skill_file(tmp_path, "assets/logo.png")
    assert content.binary
    assert content.mime == "image/png"
    assert content.render() == "[binary file: assets/logo.png, 11 bytes, image/png — not shown]"


def test_font_render_uses_thousands_separators(tmp_path: Path) -> None:
    (tmp_path / "fonts").mkdir()
    (tmp_path / "fonts" / "x.ttf").write_bytes(b"\x01" * 48_212)
    content = read_skill_file(tmp_path, "fonts/x.ttf")
    assert content.render() == "[binary file: fonts/x.ttf, 48,212 bytes, font/ttf — not shown]"


def test_compressed_file_is_binary(tmp_path: Path) -> None:
    (tmp_path / "a.tar.gz").write_bytes(b"\x1f\x8bxyz")
    content = read_skill_file(tmp_path, "a.tar.gz")
    assert (content.binary, content.mime) == (True, "application/gzip")


@pytest.mark.parametrize(
    ("name", "mime"),
    [
        ("SKILL.md", "text/markdown"),
        ("run.py", "text/x-python"),
        ("icon.svg", "image/svg+xml"),
        ("data.json", "application/json"),
        ("page.xml", "text/xml"),
        # RFC 9239; Python 3.11's table said application/javascript, 3.12's text/javascript.
        ("app.js", "text/javascript"),
        ("config.yaml", "application/yaml"),
        ("Makefile", "text/plain"),
        ("script.ts", "text/typescript"),  # the MCP face said octet-stream, a system table video
    ],
)
def test_text_formats_are_shown_as_text(tmp_path: Path, name: str, mime: str) -> None:
    (tmp_path / name).write_text("<hello/>")
    content = read_skill_file(tmp_path, name)
    assert (content.binary, content.mime, content.text) == (False, mime, "<hello/>")


def test_invalid_utf8_is_replaced(tmp_path: Path) -> None:
    (tmp_path / "f.txt").write_bytes(b"ok \xff end")
    assert read_skill_file(tmp_path, "f.txt").text == "ok \ufffd end"


def test_utf8_bom_is_stripped(tmp_path: Path) -> None:
    (tmp_path / "f.md").write_bytes(b"\xef\xbb\xbfhello")
    assert read_skill_file(tmp_path, "f.md").text == "hello"


def test_relative_path_is_normalised(tmp_path: Path) -> None:
    (tmp_path / "scripts").mkdir()
    (tmp_path / "scripts" / "run.py").write_text("print()")
    content = read_skill_file(tmp_path, "./scripts\\run.py")
    assert content.relative == "scripts/run.py"
    assert content.path == (tmp_path / "scripts" / "run.py").resolve()
    assert content.path.is_absolute()


def test_missing_file_reports_missing_with_its_path(tmp_path: Path) -> None:
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(tmp_path, "references/nope.md")
    assert caught.value.reason == "missing"
    assert "references/nope.md" in str(caught.value)


def test_path_under_a_file_reports_missing(tmp_path: Path) -> None:
    (tmp_path / "SKILL.md").write_text("x")
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(tmp_path, "SKILL.md/x")
    assert caught.value.reason == "missing"


def test_directory_reports_missing_and_says_directory(tmp_path: Path) -> None:
    (tmp_path / "references").mkdir()
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(tmp_path, "references")
    assert caught.value.reason == "missing"
    assert "directory" in str(caught.value)


def test_escaping_path_is_refused_when_reading(skill: Path) -> None:
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(skill, "passwd_link")
    assert caught.value.reason == "refused"


@pytest.mark.skipif(
    not hasattr(os, "geteuid") or os.geteuid() == 0,
    reason="root reads files whatever their mode; the simulated-denial test covers this",
)
@pytest.mark.parametrize("locked", ["secret.txt", "."], ids=["file", "parent-directory"])
def test_file_without_read_permission_is_unreadable(tmp_path: Path, locked: str) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "secret.txt").write_text("x")
    target = tmp_path / "sub" / locked
    target.chmod(0)
    try:
        with pytest.raises(FileAccessError) as caught:
            read_skill_file(tmp_path, "sub/secret.txt")
        assert caught.value.reason == "unreadable"
    finally:
        target.chmod(0o700)


def test_permission_denied_is_unreadable(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "secret.txt").write_text("x")

    def deny(*_args: object, **_kwargs: object) -> int:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "open", deny)
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(tmp_path, "secret.txt")
    assert caught.value.reason == "unreadable"
    assert "Permission denied" in str(caught.value)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_fifo_is_unreadable_and_does_not_hang(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(FileAccessError) as caught:
        read_skill_file(tmp_path, "pipe")
    assert caught.value.reason == "unreadable"


def test_nonpositive_max_chars_is_a_usage_error(tmp_path: Path) -> None:
    with pytest.raises(UsageError):
        read_skill_file(tmp_path, "x", max_chars=0)


# --- file_tree -------------------------------------------------------------------------------


def _make_tree(root: Path) -> None:
    (root / "references").mkdir(parents=True)
    (root / "scripts" / "__pycache__").mkdir(parents=True)
    (root / ".git").mkdir()
    (root / "SKILL.md").write_bytes(b"x" * 1_200)
    (root / "references" / "guide.md").write_bytes(b"x" * 3_400)
    (root / "scripts" / "run.py").write_bytes(b"x" * 812)
    (root / "scripts" / "__pycache__" / "run.cpython-311.pyc").write_bytes(b"x")
    (root / ".git" / "HEAD").write_text("ref")
    (root / ".DS_Store").write_bytes(b"x")


def test_tree_renders_sorted_indented_with_sizes_and_skips_clutter(tmp_path: Path) -> None:
    _make_tree(tmp_path)
    tree = file_tree(tmp_path)
    assert tree.omitted == 0
    assert tree.render() == (
        "SKILL.md (1.2 KB)\nreferences/\n  guide.md (3.4 KB)\nscripts/\n  run.py (812 B)"
    )
    assert tree.entries[1] == TreeEntry("references", is_dir=True, size=None, depth=0)
    assert tree.entries[2] == TreeEntry("references/guide.md", is_dir=False, size=3_400, depth=1)


def test_tree_lists_files_before_directories_ignoring_case(tmp_path: Path) -> None:
    for name in ("b.txt", "A.txt", "C.txt"):
        (tmp_path / name).write_text("x")
    (tmp_path / "a_dir").mkdir()
    assert [e.path for e in file_tree(tmp_path).entries] == ["A.txt", "b.txt", "C.txt", "a_dir"]


def test_entry_cap_keeps_shallow_entries_and_counts_the_rest(tmp_path: Path) -> None:
    (tmp_path / "a").mkdir()
    for i in range(5):
        (tmp_path / "a" / f"f{i}.txt").write_text("x")
    (tmp_path / "z.md").write_text("x")
    tree = file_tree(tmp_path, max_entries=3)
    assert [e.path for e in tree.entries] == ["z.md", "a", "a/f0.txt"]
    assert tree.omitted == 4
    assert tree.render().endswith("\n[… 4 more entries not shown]")


def test_depth_cap_counts_deeper_entries_as_omitted(tmp_path: Path) -> None:
    (tmp_path / "a" / "b" / "c").mkdir(parents=True)
    (tmp_path / "a" / "b" / "c" / "deep.txt").write_text("x")
    tree = file_tree(tmp_path, max_depth=2)
    assert [e.path for e in tree.entries] == ["a", "a/b"]
    assert tree.omitted == 2
    assert tree.render() == "a/\n  b/\n[… 2 more entries not shown]"


def test_scan_cap_reports_a_lower_bound(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(walk, "MAX_ENTRIES", 4)
    for i in range(10):
        (tmp_path / f"f{i}.txt").write_text("x")
    tree = file_tree(tmp_path, max_entries=3)
    assert (len(tree.entries), tree.omitted, tree.omitted_is_lower_bound) == (3, 1, True)
    assert tree.render().endswith("\n[… at least 1 more entry not shown]")


def test_symlinked_directories_are_listed_but_not_entered(skill: Path) -> None:
    (skill / "refs").symlink_to("references", target_is_directory=True)
    paths_listed = [e.path for e in file_tree(skill).entries]
    assert "refs" in paths_listed
    assert not any(p.startswith("refs/") for p in paths_listed)


def test_links_leading_outside_are_hidden(skill: Path) -> None:
    listed = {e.path: e for e in file_tree(skill).entries}
    assert "passwd_link" not in listed
    assert "outside_dir" not in listed
    assert "up" not in listed
    assert listed["alias.md"].size == (skill / "SKILL.md").stat().st_size


def test_tree_of_missing_directory_reports_missing(tmp_path: Path) -> None:
    with pytest.raises(FileAccessError) as caught:
        file_tree(tmp_path / "nope")
    assert caught.value.reason == "missing"


def test_rendering_needs_no_filesystem() -> None:
    tree = FileTree(
        entries=(
            TreeEntry("a", is_dir=True, size=None, depth=0),
            TreeEntry("a/b.bin", is_dir=False, size=2_500_000, depth=1),
        ),
        omitted=12,
    )
    assert tree.render() == "a/\n  b.bin (2.5 MB)\n[… 12 more entries not shown]"
    assert FileTree(entries=(), omitted=0).render() == "(no files)"


@pytest.mark.parametrize(
    ("n", "text"),
    [
        (0, "0 B"),
        (812, "812 B"),
        (999, "999 B"),
        (1_000, "1.0 KB"),
        (1_234, "1.2 KB"),
        (999_949, "999.9 KB"),
        (999_950, "1.0 MB"),
        (3_400_000, "3.4 MB"),
        (5 * 10**15, "5000.0 TB"),
    ],
)
def test_human_size_formats_bytes(n: int, text: str) -> None:
    assert human_size(n) == text


def test_negative_size_is_a_usage_error() -> None:
    with pytest.raises(UsageError):
        human_size(-1)


def _breadth_first_cut(tree_of: FileTree, max_depth: int, max_entries: int) -> list[str]:
    # The definition: breadth first, then tree order; cut at the depth, then at the count.
    listed = sorted(tree_of.entries, key=lambda e: (e.depth, tree_order(e)))
    kept = [e for e in listed if e.depth < max_depth][:max_entries]
    return [e.path for e in sorted(kept, key=tree_order)]


def test_tree_at_every_cap_is_the_breadth_first_cut(tmp_path: Path) -> None:
    for relative in ("b.md", "A.md", "x/y/z/deep.md", "x/y/w.md", "x/a.md", "c/d.md", "Z/e"):
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / relative).write_text("x")
    (tmp_path / "link.md").symlink_to("x/a.md")
    (tmp_path / "linked").symlink_to("x", target_is_directory=True)
    whole = file_tree(tmp_path, max_depth=99, max_entries=1000)
    assert whole.omitted == 0
    for max_depth in range(1, 6):
        for max_entries in range(len(whole.entries) + 2):
            tree = file_tree(tmp_path, max_depth=max_depth, max_entries=max_entries)
            expected = _breadth_first_cut(whole, max_depth, max_entries)
            assert [e.path for e in tree.entries] == expected
            assert tree.omitted == len(whole.entries) - len(expected)
    sizes = {e.path: e.size for e in whole.entries}
    assert sizes["link.md"] == sizes["x/a.md"] == 1
    assert sizes["linked"] is None

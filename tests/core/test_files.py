"""Tree order: files before folders, by name ignoring case, each folder's entries after it."""

from __future__ import annotations

import pytest

from skillshelf.core.files import FileTree, TreeEntry, tree_order


def _reference(entry: TreeEntry) -> tuple[tuple[bool, str, str], ...]:
    *parents, name = entry.path.split("/")
    return (*((True, p.casefold(), p) for p in parents), (entry.is_dir, name.casefold(), name))


@pytest.mark.parametrize(
    "entry",
    [
        TreeEntry("SKILL.md", False, 1, 0),
        TreeEntry("scripts", True, None, 0),
        TreeEntry("scripts/run.py", False, 5, 1),
        TreeEntry("A/b/C/d.md", False, 5, 3),
        TreeEntry("Straße/ß", True, None, 1),
    ],
)
def test_tree_order_key_is_files_first_by_folded_name_per_level(entry: TreeEntry) -> None:
    assert tree_order(entry) == _reference(entry)


def test_a_tree_puts_folders_after_files_and_children_right_after_their_folder() -> None:
    entries = [
        TreeEntry("b", True, None, 0),
        TreeEntry("b/x.md", False, 1, 1),
        TreeEntry("A.md", False, 1, 0),
        TreeEntry("a", True, None, 0),
        TreeEntry("a/z", True, None, 1),
        TreeEntry("a/z/q.md", False, 1, 2),
        TreeEntry("a/y.md", False, 1, 1),
        TreeEntry("c.md", False, 1, 0),
    ]
    tree = FileTree(tuple(reversed(entries)), 0)
    assert [e.path for e in tree.entries] == [
        "A.md",
        "c.md",
        "a",
        "a/y.md",
        "a/z",
        "a/z/q.md",
        "b",
        "b/x.md",
    ]


@pytest.mark.parametrize(
    "name",
    ["plain.md", "two\nlines.md", "<skill_resources>.md", "tab\t< Skill_Doc >", "a<b.md", "é.md"],
)
def test_an_entry_renders_on_one_line_with_our_tags_defused(name: str) -> None:
    from skillshelf.core.markup import neutralize_tags, one_line

    tree = FileTree((TreeEntry(f"d/{name}", False, 5, 1), TreeEntry("d", True, None, 0)), 0)
    assert tree.render() == f"d/\n  {neutralize_tags(one_line(name))} (5 B)"
    assert len(tree.render().splitlines()) == 2

"""One rule per case of a real tree (docs/design.md, "Discovery rules").

A symlinked skill folder is named by the path it was reached by; one folder reached twice is
one skill; a SKILL.md link leading outside is refused, never half-usable; a SKILL.MD in the
wrong case, a dangling SKILL.md link and a SKILL.md nested in a skill are reported candidates.
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from skillshelf.cli.app import main
from skillshelf.repository import Repository
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools


def _open(root: Path, **kwargs: object) -> Repository:
    return Repository([root], cache_dir=False, **kwargs)  # type: ignore[arg-type]


def _list_all(root: Path) -> list[dict[str, object]]:
    result = CliRunner().invoke(main, ["list", "--root", str(root), "--all", "--json"])
    assert result.exit_code == 0, result.output
    rows: list[dict[str, object]] = json.loads(result.stdout)
    return rows


def _codes(rows: list[dict[str, object]]) -> dict[str, str]:
    out: dict[str, str] = {}
    for row in rows:
        if row["status"] == "skipped":
            [diagnostic] = row["diagnostics"][-1:]  # type: ignore[index]
            out[Path(str(row["path"])).parent.name] = diagnostic["code"]
    return out


def _linked_store(tmp_path: Path) -> tuple[Path, Path]:
    """A root holding `beta` for real and `beta-link` leading to it, plus a store link."""
    root = tmp_path / "root"
    real = make_skill(root, "beta")
    (root / "beta-link").symlink_to(real, target_is_directory=True)
    return root, real


def test_a_folder_reached_through_a_link_is_named_by_the_link(tmp_path: Path) -> None:
    store = make_skill(tmp_path / "store", "gamma", files={"doc.md": "# Doc\n"})
    root = tmp_path / "root"
    root.mkdir()
    (root / "gamma").symlink_to(store, target_is_directory=True)
    repo = _open(root)
    skill = repo.get("gamma")
    assert skill.directory == str(root / "gamma")
    assert repo.shadowed == [] and repo.ignored == []
    # Fully readable through the name it was reached by: library, tools and the body.
    assert repo.read_file("gamma", "doc.md").text == "# Doc\n"
    assert "gamma" in str(repo.read_file("gamma", "SKILL.md").text)
    tools = SkillTools(repo)
    assert tools.call("skill_read_file", {"skill": "gamma", "path": "SKILL.md"}).status == "ok"
    assert tools.call("skill_load", {"skill": "gamma"}).status == "ok"


def test_one_folder_reached_twice_is_one_skill_by_its_direct_path(tmp_path: Path) -> None:
    root, real = _linked_store(tmp_path)
    repo = _open(root)
    assert [s.directory for s in repo.skills] == [str(real)]
    assert repo.shadowed == []
    [again] = repo.ignored
    assert (again.code, Path(again.path).parent.name) == ("discovery.same_folder", "beta-link")
    assert str(real) in again.reason


def test_validate_lists_a_folder_reached_twice_once(tmp_path: Path) -> None:
    root, _ = _linked_store(tmp_path)
    result = CliRunner().invoke(main, ["validate", str(root)])
    assert result.exit_code == 0, result.output
    assert result.stdout.count("valid ") == 1
    assert "name.duplicate" not in result.output


def test_strict_verdict_uses_the_name_the_folder_was_reached_by(tmp_path: Path) -> None:
    store = make_skill(tmp_path / "store", "delta")
    root = tmp_path / "root"
    root.mkdir()
    (root / "other-name").symlink_to(store, target_is_directory=True)
    strict = _open(root, mode="strict")
    assert strict.names() == []
    [skipped] = strict.skipped
    assert "other-name" in skipped.reason
    (root / "delta").symlink_to(store, target_is_directory=True)  # now reached by its name too
    assert _open(root, mode="strict").names() == ["delta"]


def test_skill_md_link_leading_outside_is_refused_with_its_reason(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outside = make_skill(tmp_path / "elsewhere", "escape")
    (root / "escape").mkdir(parents=True)
    (root / "escape" / "SKILL.md").symlink_to(outside / "SKILL.md")
    repo = _open(root)
    assert "escape" not in repo  # not listed, loaded or offered: nothing half-usable
    [skipped] = repo.skipped
    assert "leading outside its skill folder" in skipped.reason
    assert _codes(_list_all(root)) == {"escape": "file.unreadable"}


def test_dangling_skill_md_link_is_a_reported_candidate(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root, "fine")
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").symlink_to(tmp_path / "nowhere.md")
    repo = _open(root)
    assert repo.names() == ["fine"] and repo.skipped == []
    [dangling] = repo.ignored
    assert (dangling.code, dangling.severity) == ("discovery.dangling", "warning")
    assert "nowhere.md" in dangling.reason and "does not exist" in dangling.reason
    assert _codes(_list_all(root)) == {"broken": "discovery.dangling"}


def test_skill_md_in_the_wrong_case_is_a_reported_candidate(tmp_path: Path) -> None:
    root = tmp_path / "root"
    make_skill(root, "upper", skill_md_name="SKILL.md")
    (root / "upper" / "SKILL.md").rename(root / "upper" / "SKILL.MD")
    repo = _open(root)
    assert repo.names() == []
    [wrong] = repo.ignored
    assert (wrong.code, Path(wrong.path).name) == ("discovery.wrong_case", "SKILL.MD")
    assert _codes(_list_all(root)) == {"upper": "discovery.wrong_case"}


def test_skill_md_nested_in_a_skill_is_a_reported_candidate(tmp_path: Path) -> None:
    root = tmp_path / "root"
    outer = make_skill(root, "outer")
    make_skill(outer / "examples", "inner")
    repo = _open(root)
    assert repo.names() == ["outer"]
    [nested] = repo.nested()
    assert nested.path == str(outer / "examples" / "inner" / "SKILL.md")
    assert (nested.code, nested.severity) == ("discovery.nested", "info")
    assert "'outer'" in nested.reason
    rows = _list_all(root)
    assert [r["status"] for r in rows] == ["ok", "skipped"]
    assert _codes(rows) == {"inner": "discovery.nested"}


def test_list_all_terminal_output_shows_every_candidate_with_its_reason(tmp_path: Path) -> None:
    root, _ = _linked_store(tmp_path)
    (root / "broken").mkdir()
    (root / "broken" / "SKILL.md").symlink_to(tmp_path / "nowhere.md")
    result = CliRunner().invoke(main, ["list", "--root", str(root), "--all"])
    lines = result.stdout.splitlines()
    assert lines[0].startswith("beta\tok")
    assert any("skipped" in line and "is a symbolic link to" in line for line in lines)
    assert any("skipped" in line and "The same folder as" in line for line in lines)

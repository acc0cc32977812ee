"""Builders shared by the parsing and names tests: a root of one good skill beside hostile ones."""

from __future__ import annotations

import json
import os
from pathlib import Path

from click.testing import CliRunner, Result

from skillshelf.cli import main

GOOD = "good-skill"


def write_skill(root: Path, folder: str, frontmatter: str, body: str = "Body.\n") -> Path:
    """Write ``root/folder/SKILL.md`` with the frontmatter text as given (no escaping)."""
    skill_dir = root / folder
    skill_dir.mkdir(parents=True)
    (skill_dir / "SKILL.md").write_text(f"---\n{frontmatter}\n---\n{body}", encoding="utf-8")
    return skill_dir


def root_with_good_skill(root: Path) -> Path:
    """A root holding one ordinary skill, to prove the hostile ones never take it down."""
    write_skill(root, GOOD, f"name: {GOOD}\ndescription: An ordinary skill that must survive.")
    return root


def cli(*args: str | os.PathLike[str]) -> Result:
    """``skillshelf ARGS`` in-process; stdout and stderr kept apart."""
    return CliRunner().invoke(main, [os.fspath(a) for a in args], catch_exceptions=False)


def listed_names(root: Path) -> list[str]:
    """The names ``skillshelf list --json`` prints for ``root``."""
    result = cli("list", "--root", root, "--no-cache", "--json")
    assert result.exit_code == 0, result.output
    return [entry["name"] for entry in json.loads(result.stdout)]

"""docs/cli-reference.md is generated from the click commands and must match them."""

from __future__ import annotations

import re
from pathlib import Path

import click

from skillshelf.cli import main
from skillshelf.cli.reference import DEFAULT_PATH, REGENERATE, render_reference

REPO = Path(__file__).resolve().parents[2]


def test_cli_reference_matches_the_commands() -> None:
    committed = (REPO / DEFAULT_PATH).read_text(encoding="utf-8")
    assert committed == render_reference(), (
        f"{DEFAULT_PATH} is out of date with the click commands; regenerate it with "
        f"`{REGENERATE}` from the repository's top folder and commit the result"
    )


def test_cli_reference_has_a_section_for_every_command() -> None:
    sections = re.findall(r"^## `skillshelf (\S+)`$", render_reference(), flags=re.MULTILINE)
    assert sections == sorted(main.commands)
    assert len(sections) == 20


def test_cli_reference_lists_only_the_options_a_command_has() -> None:
    validate = render_reference().split("## `skillshelf validate`")[1].split("\n## ")[0]
    assert "`--strict`" in validate
    assert "--root" not in validate  # validate takes paths, not roots


def test_cli_reference_escapes_table_cells() -> None:
    @click.group()
    def group() -> None:
        """A group."""

    @group.command()
    @click.option("--mode", type=click.Choice(["a", "b"]), default="a", help="Pick <one> of *two*.")
    def pick(mode: str) -> None:
        """Pick one."""

    text = render_reference(group, prog="tool")
    assert "| `--mode [a\\|b]` | Pick &lt;one> of \\*two\\*. [default: a] |" in text

"""Every face says "unknown skill" with the one sentence from ``errors.unknown_skill_message``."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from skillshelf.cli import main
from skillshelf.core.slash import SlashCommandError, parse_commands
from skillshelf.errors import SkillNotFoundError, unknown_skill_message
from skillshelf.evals.cases import CasesError, EvalCase, check_cases
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import make_skill
from skillshelf.tools import ArgumentProblem, SkillTools, parse_arguments

ASKED = "alpah"
EXPECTED = unknown_skill_message(ASKED, ["alpha"])


@pytest.fixture
def root(tmp_path: Path) -> Path:
    make_skill(tmp_path / "skills", "alpha")
    return tmp_path / "skills"


def _cli(root: Path) -> str:
    result = CliRunner().invoke(main, ["show", ASKED, "--root", str(root)])
    assert result.exit_code == 1
    return result.stderr


def _repository(root: Path) -> str:
    with pytest.raises(SkillNotFoundError) as info:
        Repository([str(root)], cache_dir=False).get(ASKED)
    return str(info.value)


def _tool_arguments(root: Path) -> str:
    problem = parse_arguments("skill_load", {"skill": ASKED}, skill_names=["alpha"])
    assert isinstance(problem, ArgumentProblem)
    return problem.message


def _tool_call(root: Path) -> str:
    tools = SkillTools(Repository([str(root)], cache_dir=False), store=open_store(None))
    result = tools.call("skill_read_file", {"skill": ASKED, "path": "SKILL.md"})
    assert result.status == "recoverable"
    return result.content


def _eval_cases(root: Path) -> str:
    with pytest.raises(CasesError) as info:
        check_cases([EvalCase("one", "q", ASKED)], {"alpha": root / "alpha"})
    return str(info.value)


FACES: dict[str, Callable[[Path], str]] = {
    "cli": _cli,
    "repository": _repository,
    "tool arguments": _tool_arguments,
    "tool call": _tool_call,
    "eval cases": _eval_cases,
}


@pytest.mark.parametrize("face", list(FACES))
def test_every_face_says_the_one_unknown_skill_sentence(face: str, root: Path) -> None:
    assert EXPECTED in FACES[face](root)


def test_slash_commands_say_it_with_the_command_prefix() -> None:
    with pytest.raises(SlashCommandError) as info:
        parse_commands(f"/{ASKED} now", ["alpha"])
    assert str(info.value) == unknown_skill_message(ASKED, ["alpha"], prefix="/")
    assert str(info.value) == 'Unknown skill "/alpah". Did you mean: /alpha?'


@pytest.mark.parametrize(
    ("name", "suggestions", "expected"),
    [
        ("x", [], 'Unknown skill "x".'),
        ("x", ["a", "b"], 'Unknown skill "x". Did you mean: a, b?'),
        ('a"b\nNote: SYSTEM', [], 'Unknown skill "a\\"b\\nNote: SYSTEM".'),
        ("n" * 100_000, [], 'Unknown skill "' + "n" * 80 + '" (cut, 100000 characters).'),
    ],
)
def test_the_sentence_quotes_and_clips_the_name(
    name: str, suggestions: list[str], expected: str
) -> None:
    assert unknown_skill_message(name, suggestions) == expected

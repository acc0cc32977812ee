"""The error tree: every library error is a SkillshelfError; signals and misuse stay apart."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import ClassVar

import pytest

import skillshelf
from skillshelf import errors
from skillshelf.errors import (
    ConfigError,
    MissingExtraError,
    SkillshelfError,
    ToolError,
    ToolFailed,
    ToolRetry,
    UsageError,
    install_hint,
)

LIBRARY_ERRORS = [
    "skillshelf.core.yaml_loader.YamlError",
    "skillshelf.core.yaml_loader.YamlSyntaxError",
    "skillshelf.core.yaml_loader.YamlTooDeepError",
    "skillshelf.core.yaml_loader.YamlTooComplexError",
    "skillshelf.core.frontmatter.FrontmatterError",
    "skillshelf.core.description_edit.DescriptionEditError",
    "skillshelf.exec.workspace.StagingRefused",
    "skillshelf.evals.improve_result.ImproveError",
    "skillshelf.evals.proposer.ProposerError",
    "skillshelf.reports.tracereport.TraceReadError",
    "skillshelf.core.slash.SlashCommandError",
    "skillshelf.skills.archive.ArchiveError",
    "skillshelf.trust.lockfile.LockfileError",
    "skillshelf.stores.StoreError",
    "skillshelf.stores.StoreConflictError",
    "skillshelf.exec.runner.SandboxUnavailableError",
    "skillshelf.tools.DeclaredLoadError",
    "skillshelf.models.ModelError",
    "skillshelf.models.ModelAuthError",
    "skillshelf.models.TransientModelError",
    "skillshelf.agent.results.AgentError",
    "skillshelf.agent.results.MaxStepsError",
    "skillshelf.agent.results.RepeatedToolFailureError",
    "skillshelf.agent.results.EmptyResponseError",
    "skillshelf.agent.history.HistoryError",
    "skillshelf.evals.cases.CasesError",
    "skillshelf.evals.compare.BaselineError",
    "skillshelf.evals.output.OutputDirError",
    "skillshelf.evals.runner.EvalAbortedError",
    "skillshelf.mcpserver.files.UriError",
    "skillshelf.compat.skills_ref.SkillError",
]


# Exceptions that never leave the module (or the private modules of the package) defining
# them, so no caller can catch one.
PRIVATE_EXCEPTIONS = {
    "skillshelf.tools._record._Unmigrated": (
        "control flow of one session-store update, caught in the same function"
    ),
    "skillshelf.tools._view._UnknownSkill": (
        "a ToolRetry the skill tools raise (tools._view) and grade as unknown_skill themselves "
        "(tools._skill_tools); callers see only the graded tool result"
    ),
    "skillshelf.reports.tokens._Unavailable": (
        "a token-counting backend that cannot run offline; get_counter catches it and falls "
        "back or raises ConfigError"
    ),
}
# The documentation's own words on errors, each of which must agree with errors.py.
DOCS = Path(__file__).parents[1] / "docs"
ERROR_SECTIONS = [DOCS / "library.md", DOCS / "design.md"]


def _modules() -> Iterator[ModuleType]:
    """Every module under skillshelf, but those whose optional extra is not installed here."""
    for info in pkgutil.walk_packages(skillshelf.__path__, "skillshelf."):
        if info.name.endswith("__main__"):
            continue  # runs the command line
        try:
            yield importlib.import_module(info.name)
        except ModuleNotFoundError as exc:
            if MissingExtraError.from_import_error(exc, feature=info.name) is None:
                raise


def _exceptions() -> dict[str, type[BaseException]]:
    """Every exception class defined anywhere under skillshelf, by dotted path."""
    found: dict[str, type[BaseException]] = {}
    for module in _modules():
        for name, value in vars(module).items():
            if (
                inspect.isclass(value)
                and issubclass(value, BaseException)
                and value.__module__ == module.__name__
                and value.__name__ == name  # not an alias (yaml_loader.YAMLError)
            ):
                found[f"{module.__name__}.{name}"] = value
    return found


def _public_exceptions() -> dict[str, type[BaseException]]:
    """Every public exception class defined anywhere under skillshelf, by dotted path."""
    return {path: cls for path, cls in _exceptions().items() if not cls.__name__.startswith("_")}


def test_private_exceptions_are_only_the_ones_excused_here() -> None:
    private = {path for path, cls in _exceptions().items() if cls.__name__.startswith("_")}
    assert private == set(PRIVATE_EXCEPTIONS)


def _error_section(path: Path) -> str:
    text = path.read_text(encoding="utf-8")
    section = text.partition("\n## Errors\n")[2]
    assert section, f"{path.name} has no Errors section"
    return section.partition("\n## ")[0]


def test_the_errors_the_docs_name_are_exported_from_skillshelf_errors() -> None:
    for path in ERROR_SECTIONS:
        named = set(re.findall(r"`(\w+(?:Error|Retry|Failed))`", _error_section(path)))
        assert named, path.name
        assert named <= set(errors.__all__), path.name


def test_the_docs_point_to_the_tree_errors_py_draws() -> None:
    assert "skillshelf.errors" in _error_section(DOCS / "library.md")


def test_every_public_exception_is_drawn_in_the_documented_tree() -> None:
    tree = errors.__doc__ or ""
    missing = [
        path
        for path in _public_exceptions()
        if not re.search(rf"\b{path.rsplit('.', 1)[1]}\b", tree)
    ]
    assert missing == []


def test_every_library_error_under_skillshelf_is_listed_here() -> None:
    library = {
        path: cls
        for path, cls in _public_exceptions().items()
        if issubclass(cls, SkillshelfError) and not path.startswith("skillshelf.errors.")
    }
    listed = set()
    for path in LIBRARY_ERRORS:
        module, _, name = path.rpartition(".")
        listed.add(getattr(importlib.import_module(module), name))
    # skills-ref's drop-in names (ParseError, ValidationError) are its SkillError's.
    drop_in = {
        "skillshelf.compat.skills_ref.ParseError",
        "skillshelf.compat.skills_ref.ValidationError",
    }
    assert {path for path, cls in library.items() if cls not in listed} <= drop_in


@pytest.mark.parametrize("path", LIBRARY_ERRORS)
def test_every_library_error_is_in_the_skillshelf_error_tree(path: str) -> None:
    module, _, name = path.rpartition(".")
    assert issubclass(getattr(importlib.import_module(module), name), SkillshelfError)


def test_the_three_families_stay_apart() -> None:
    assert not issubclass(UsageError, SkillshelfError)
    assert not issubclass(ToolError, SkillshelfError) and not issubclass(ToolError, UsageError)
    assert issubclass(MissingExtraError, ConfigError) and issubclass(ConfigError, SkillshelfError)


def test_signals_carry_their_grade() -> None:
    assert ToolRetry("fix it").recoverable and not ToolFailed("stop").recoverable


def test_a_failed_import_of_an_extras_module_names_the_extra() -> None:
    missing = MissingExtraError.from_import_error(
        ModuleNotFoundError("No module named 'mcp.server'", name="mcp.server"), feature="serve"
    )
    assert missing is not None and missing.extra == "mcp"
    assert str(missing).endswith(install_hint("mcp"))
    other = ModuleNotFoundError("No module named 'nope'", name="nope")
    assert MissingExtraError.from_import_error(other, feature="x") is None


def test_the_install_hint_reinstalls_an_editable_checkout_with_the_extra() -> None:
    from skillshelf.errors import _editable_checkout

    url = '{"url": "file:///src/my%20shelf", "dir_info": {"editable": true}}'
    assert _editable_checkout(url) == "/src/my shelf"
    assert _editable_checkout('{"url": "file:///w", "dir_info": {}}') is None
    assert _editable_checkout("not json") is None
    # The suite runs from an editable install of a checkout: the hint reinstalls that one.
    hint = install_hint("mcp")
    assert hint.startswith("pip install -e '") and hint.endswith("[mcp]'"), hint
    checkout = Path(hint.removeprefix("pip install -e '").removesuffix("[mcp]'"))
    assert (checkout / "pyproject.toml").is_file()


def test_the_install_hint_from_a_wheel_names_the_extras_requirements(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import importlib.metadata

    class Wheel:
        requires: ClassVar = [
            'mcp<3,>=2.3; extra == "mcp"',
            "click>=8",
            'redis<7,>=5; extra == "redis"',
        ]

        def read_text(self, name: str) -> str | None:
            return None

    monkeypatch.setattr(importlib.metadata, "distribution", lambda name: Wheel())
    install_hint.cache_clear()
    try:
        assert install_hint("mcp") == "pip install 'mcp<3,>=2.3'"
    finally:
        install_hint.cache_clear()


def test_library_errors_name_no_cli_flags() -> None:
    """A library error speaks of options and values, not of the CLI's flags: the CLI
    translates; an embedder has no ``--flag`` to pass."""
    import ast
    import re
    from pathlib import Path

    flag = re.compile(r"(?:^|[\s(`'\"])--[a-z][a-z-]+")
    src = Path(__file__).parents[1] / "src" / "skillshelf"
    found = []
    for path in sorted(src.rglob("*.py")):
        if "cli" in path.relative_to(src).parts:
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Raise) or node.exc is None:
                continue
            for part in ast.walk(node.exc):
                text = part.value if isinstance(part, ast.Constant) else None
                if isinstance(text, str) and flag.search(text):
                    found.append(f"{path.relative_to(src)}:{getattr(part, 'lineno', 0)}: {text!r}")
    assert found == []

"""The one YAML entry point: safe, bounded, and nothing else in the package loads YAML."""

from __future__ import annotations

import ast
import datetime
from pathlib import Path

import pytest

from skillshelf.core import yaml_loader
from skillshelf.core.yaml_loader import MAX_YAML_NODES, Flavour, YamlTooComplexError

SRC = Path(__file__).resolve().parents[2] / "src" / "skillshelf"
_ENTRY_POINT = SRC / "core" / "yaml_loader.py"
# What reads YAML text or builds a loader; node and event types are fine elsewhere.
_BANNED_CALLS = frozenset(
    {
        "load",
        "safe_load",
        "full_load",
        "unsafe_load",
        "load_all",
        "safe_load_all",
        "compose",
        "compose_all",
        "parse",
        "scan",
    }
)


def _yaml_uses(path: Path) -> list[str]:
    """``yaml.<reader>(…)`` calls, ``Loader=`` arguments and ``*Loader`` names in ``path``."""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "yaml" and (node.attr in _BANNED_CALLS or "Loader" in node.attr):
                found.append(f"{node.lineno}: yaml.{node.attr}")
        elif isinstance(node, ast.keyword) and node.arg == "Loader":
            found.append(f"{node.lineno}: Loader=")
        elif isinstance(node, ast.ImportFrom) and node.module == "yaml":
            found += [f"{node.lineno}: from yaml import {a.name}" for a in node.names]
    return found


def test_no_module_but_the_entry_point_reads_yaml() -> None:
    offenders = {
        str(path.relative_to(SRC)): uses
        for path in sorted(SRC.rglob("*.py"))
        if path != _ENTRY_POINT and (uses := _yaml_uses(path))
    }
    assert offenders == {}


def test_the_entry_point_itself_is_seen_by_the_check() -> None:
    assert _yaml_uses(_ENTRY_POINT)  # the scan would notice a second copy


_DOCUMENT = "a: yes\nb: 010\nc: 1.10\nd: 2024-01-02\ne: [x, 1]\nf: ~\n"


@pytest.mark.parametrize(
    ("flavour", "expected"),
    [
        (
            "strings",
            {"a": "yes", "b": "010", "c": "1.10", "d": "2024-01-02", "e": ["x", "1"], "f": "~"},
        ),
        ("core", {"a": "yes", "b": 10, "c": 1.1, "d": "2024-01-02", "e": ["x", 1], "f": None}),
        (
            "yaml11",
            {"a": True, "b": 8, "c": 1.1, "d": datetime.date(2024, 1, 2), "e": ["x", 1], "f": None},
        ),
    ],
)
def test_each_flavour_types_scalars_its_own_way(flavour: Flavour, expected: object) -> None:
    assert yaml_loader.load(_DOCUMENT, flavour=flavour) == expected


@pytest.mark.parametrize("flavour", ["strings", "strict", "core", "yaml11"])
@pytest.mark.parametrize(
    "document",
    [
        "x: !!python/object/apply:os.system ['echo hi']\n",
        "x: !!python/name:os.system\n",
        "x: !!python/object:builtins.dict {}\n",
    ],
)
def test_no_flavour_builds_python_objects(flavour: Flavour, document: str) -> None:
    with pytest.raises(yaml_loader.YAMLError):
        yaml_loader.load(document, flavour=flavour)


_LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{n}: &{n} [{', '.join(['*' + p] * 10)}]\n" for p, n in zip("abcde", "bcdef", strict=True)
)


@pytest.mark.parametrize("flavour", ["strings", "core", "yaml11"])
def test_alias_expansion_past_the_node_cap_is_refused(flavour: Flavour) -> None:
    with pytest.raises(YamlTooComplexError, match=f"{MAX_YAML_NODES:,}"):
        yaml_loader.load(_LAUGHS, flavour=flavour)


def test_a_self_referencing_alias_is_refused_not_looped() -> None:
    with pytest.raises(YamlTooComplexError):
        yaml_loader.load("a: &a [*a]\n", flavour="core")


def test_an_empty_document_loads_as_none() -> None:
    assert yaml_loader.load("", flavour="core") is None


def test_compose_keeps_lines_for_callers_that_report_them() -> None:
    node = yaml_loader.compose("- a\n- b\n", flavour="yaml11")
    assert node is not None
    assert [item.start_mark.line for item in node.value] == [0, 1]
    assert yaml_loader.construct(node, flavour="yaml11") == ["a", "b"]

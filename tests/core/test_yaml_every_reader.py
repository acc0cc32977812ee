"""Every YAML reader refuses hostile YAML with the project's own error, whatever libyaml does.

The readers are the four flavours of :mod:`skillshelf.core.yaml_loader` and what is built on
them: SKILL.md frontmatter (lenient and strict), skills-ref's drop-in parser, the MCP
``skills/get`` entry (the ``core`` flavour), eval cases files and the description editor.
PyYAML releases differ in where they give up: 6.0.4's libyaml scanner refuses flow
collections nested 1,000 deep before the loader's own depth check sees an event, 6.0.3's does
not. The ``libyaml`` fixture runs every case with the installed release as it is, and with
its scanner made to refuse at 1,000 levels (6.0.4) and at 8 (a release stricter than
``MAX_YAML_DEPTH``), so the verdict is checked against each behaviour on any release.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
import yaml

from adversarial.yaml_bombs import AMPLIFIED, DEEP, block_sequence, flow_list, flow_map
from skillshelf.compat.skills_ref import ParseError
from skillshelf.compat.skills_ref import parse_frontmatter as skills_ref_parse
from skillshelf.core import yaml_loader
from skillshelf.core.description_edit import DescriptionEditError, replace_description
from skillshelf.core.frontmatter import FrontmatterError, parse_frontmatter
from skillshelf.core.yaml_loader import (
    MAX_YAML_DEPTH,
    MAX_YAML_EXPANDED_CHARS,
    MAX_YAML_NODES,
    YamlError,
    YamlSyntaxError,
    YamlTooComplexError,
    YamlTooDeepError,
)
from skillshelf.evals.cases import CasesError, parse_cases

FLAVOURS: list[yaml_loader.Flavour] = ["strings", "strict", "core", "yaml11"]
TOO_DEEP = f"more than {MAX_YAML_DEPTH} levels deep"
TOO_COMPLEX = (f"{MAX_YAML_NODES:,} YAML nodes", f"{MAX_YAML_EXPANDED_CHARS:,} characters")


def _flow_depth(text: str) -> int:
    depth = deepest = 0
    for char in text:
        if char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


def _refusing_scanner(limit: int) -> Callable[..., type[Any]]:
    """``yaml_loader._loader`` whose libyaml classes refuse flow nesting past ``limit``.

    That is what PyYAML 6.0.4's scanner does (limit 1,000): it raises ``ScannerError`` while
    the first event is read, before anything of the document is seen.
    """
    real = yaml_loader._loader

    def loader(flavour: yaml_loader.Flavour, *, pure: bool = False) -> type[Any]:
        cls = real(flavour, pure=pure)
        if pure or cls is real(flavour, pure=True):
            return cls

        def __init__(self: Any, stream: str) -> None:
            if isinstance(stream, str) and _flow_depth(stream) > limit:
                mark = yaml.Mark("<unicode string>", 0, 0, limit, stream, 0)
                raise yaml.scanner.ScannerError(
                    "while increasing flow level", mark, "exceeded maximum nesting depth", mark
                )
            cls.__init__(self, stream)

        return type(cls.__name__, (cls,), {"__init__": __init__})

    return loader


@pytest.fixture(params=["installed", "scanner-refuses-at-1000", "scanner-refuses-at-8"])
def libyaml(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    if request.param != "installed":
        limit = int(request.param.rsplit("-", 1)[1])
        monkeypatch.setattr(yaml_loader, "_loader", _refusing_scanner(limit))
    yield request.param


def _skill_md(fragment: str) -> str:
    return f"---\nname: hostile\ndescription: d\n{fragment}\n---\nbody\n"


def _cases_yaml(fragment: str) -> str:
    return f"cases:\n  - query: q\n    expect: [hostile]\n{fragment}\n"


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize(("label", "fragment"), DEEP, ids=[c[0] for c in DEEP])
def test_every_flavour_refuses_deep_nesting_as_too_deep(
    libyaml: str, flavour: yaml_loader.Flavour, label: str, fragment: str
) -> None:
    with pytest.raises(YamlTooDeepError, match=TOO_DEEP) as caught:
        yaml_loader.load(fragment, flavour=flavour)
    assert caught.value.line is not None
    assert not isinstance(caught.value, yaml.YAMLError)


@pytest.mark.parametrize("flavour", ["strings", "core", "yaml11"])
@pytest.mark.parametrize(("label", "fragment"), AMPLIFIED, ids=[c[0] for c in AMPLIFIED])
def test_every_flavour_refuses_alias_bombs_as_too_complex(
    libyaml: str, flavour: yaml_loader.Flavour, label: str, fragment: str
) -> None:
    with pytest.raises(YamlTooComplexError) as caught:
        yaml_loader.load(fragment, flavour=flavour)
    assert any(limit in str(caught.value) for limit in TOO_COMPLEX)


@pytest.mark.parametrize(
    ("label", "fragment"), DEEP + AMPLIFIED, ids=[c[0] for c in DEEP + AMPLIFIED]
)
def test_lenient_frontmatter_gives_its_own_code_for_every_hostile_text(
    libyaml: str, label: str, fragment: str
) -> None:
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter(_skill_md(fragment), mode="lenient")
    expected = "frontmatter.too_complex" if label.startswith("amp-") else "frontmatter.too_deep"
    assert caught.value.code == expected
    assert caught.value.line is not None and caught.value.line >= 1


@pytest.mark.parametrize(
    ("label", "fragment"), DEEP + AMPLIFIED, ids=[c[0] for c in DEEP + AMPLIFIED]
)
def test_strict_frontmatter_and_skills_ref_refuse_every_hostile_text(
    libyaml: str, label: str, fragment: str
) -> None:
    # Strict mode refuses flow collections and aliases as strictyaml does, before any limit;
    # block nesting is left for the depth limit.
    expected = "frontmatter.too_deep" if label.startswith("block-") else "frontmatter.yaml"
    with pytest.raises(FrontmatterError) as caught:
        parse_frontmatter(_skill_md(fragment), mode="strict")
    assert caught.value.code == expected
    with pytest.raises(ParseError):
        skills_ref_parse(_skill_md(fragment))


@pytest.mark.parametrize(
    ("label", "fragment"), DEEP + AMPLIFIED, ids=[c[0] for c in DEEP + AMPLIFIED]
)
def test_eval_cases_and_the_description_editor_name_the_limit(
    libyaml: str, label: str, fragment: str
) -> None:
    limit = TOO_COMPLEX if label.startswith("amp-") else (TOO_DEEP,)
    with pytest.raises(CasesError) as cases:
        parse_cases(_cases_yaml(fragment), "yaml")
    assert any(text in str(cases.value) for text in limit)
    with pytest.raises(DescriptionEditError) as edit:
        replace_description(_skill_md(fragment), "a new description")
    assert any(text in str(edit.value) for text in limit)


@pytest.mark.parametrize("flavour", FLAVOURS)
def test_nesting_libyaml_refuses_but_within_the_limit_still_loads(
    libyaml: str, flavour: yaml_loader.Flavour
) -> None:
    # Under the 8-level scanner this text is refused by libyaml and read by the pure parser.
    depth = 20
    data = yaml_loader.load(
        "x:\n  " + block_sequence(depth)[3:] + f"\ny: {flow_list(depth)[3:]}", flavour=flavour
    )
    assert isinstance(data, dict) and set(data) == {"x", "y"}
    assert yaml_loader.load(flow_map(depth), flavour=flavour) is not None


def test_a_recursion_error_from_the_parser_is_too_deep(monkeypatch: pytest.MonkeyPatch) -> None:
    def recursing(*_args: object, **_kwargs: object) -> None:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr(yaml, "compose", recursing)
    for flavour in FLAVOURS:
        with pytest.raises(YamlTooDeepError, match=TOO_DEEP):
            yaml_loader.compose("x: 1", flavour=flavour)


NOT_PLAIN_DATA = [
    "a: !!int abc",
    "a: !!int 0o9",
    "a: !!bool maybe",
    "a: !!float x",
    "a: !!timestamp 2020-13-45",
    "a: !!timestamp 2020-01-01T25:00:00",
    "a: !!binary ~~~",
    "a: !!python/object:os.system x",
    "a: !!omap 5",
    "<<: 5",
]
NOT_YAML = [
    "a: \ud800",
    "\x00",
    "a: \x07",
    "a: [b",
    "a: b\n---\nc: d",
    "%YAML 9.9\n---\na: 1",
    "a: b: c",
]


@pytest.mark.parametrize("flavour", FLAVOURS)
@pytest.mark.parametrize("text", NOT_PLAIN_DATA + NOT_YAML)
def test_every_parser_or_constructor_failure_is_a_yaml_syntax_error(
    libyaml: str, flavour: yaml_loader.Flavour, text: str
) -> None:
    try:
        yaml_loader.load(text, flavour=flavour)
    except YamlError as exc:
        assert isinstance(exc, YamlSyntaxError)
        assert not isinstance(exc, yaml.YAMLError)
        assert str(exc)
    # Some flavours read some of these as plain data (strings ignores !!int): no failure is fine.


@pytest.mark.parametrize("text", NOT_YAML)
def test_text_that_is_not_yaml_fails_in_every_flavour(text: str) -> None:
    for flavour in FLAVOURS:
        with pytest.raises(YamlSyntaxError):
            yaml_loader.load(text, flavour=flavour)

"""One validity verdict: ``validate`` and the runtime (``list --all``) agree on every skill folder.

Each case is a skill folder built with ``make_skill``; the corpus of real collections is checked
the same way. The library (``validate_path`` vs ``Repository``) and the CLI (``validate --json``
vs ``list --all --json``) must give the same verdict for every folder, in lenient mode, and the
library in strict mode too.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from corpus_paths import CORPUS
from skillshelf.cli import main
from skillshelf.core.diagnostics import Diagnostic
from skillshelf.core.frontmatter import Mode
from skillshelf.core.manifest import Manifest
from skillshelf.core.verdict import LENIENT_WARNINGS, is_valid
from skillshelf.repository import Repository
from skillshelf.skills.validate import validate_path
from skillshelf.testing import make_skill

REPO = Path(__file__).resolve().parents[2]

Maker = Callable[[Path], object]


def _raw(folder: str, text: str | bytes) -> Maker:
    return lambda root: make_skill(root, folder, raw=text)


def _fm(name: str, description: str = "Does things. Use when testing.", **kwargs: Any) -> Maker:
    return lambda root: make_skill(root, name, description, **kwargs)


# (case, how to make it, valid in lenient mode, valid in strict mode)
CASES: list[tuple[str, Maker, bool, bool]] = [
    ("plain", _fm("plain-skill"), True, True),
    ("plugin-style-name", _fm("Agent Development", dir_name="agent-development"), True, False),
    ("capitalised", _fm("MySkill"), True, False),
    ("space-in-name", _fm("my skill"), True, False),
    ("name-differs-from-folder", _fm("other-name", dir_name="folder"), True, False),
    ("underscore", _fm("my_skill"), True, False),
    ("hyphen-edge", _fm("-lead", dir_name="lead"), True, False),
    ("name-too-long", _fm("a" * 70), True, False),
    ("unicode-name", _fm("café"), True, True),
    ("description-too-long", _fm("long-desc", "x" * 1500), True, False),
    ("unknown-key", _fm("unknown-key", frontmatter={"owner": "infra"}), True, False),
    (
        "claude-code-keys",
        _fm("cc-keys", frontmatter={"disable-model-invocation": True, "argument-hint": "[x]"}),
        True,
        False,
    ),
    (
        "compatibility-too-long",
        _fm("compat", frontmatter={"compatibility": "c" * 600}),
        True,
        False,
    ),
    (
        "non-string-metadata",
        _raw("meta", "---\nname: meta\ndescription: d\nmetadata:\n  l:\n    - a\n---\nB\n"),
        True,
        True,
    ),
    ("lowercase-skill-md", _fm("lower-md", skill_md_name="skill.md"), True, True),
    ("empty-body", _fm("empty-body", body=""), True, True),
    (
        "crlf-and-bom",
        _raw("crlf", "\ufeff---\r\nname: crlf\r\ndescription: d\r\n---\r\nB\r\n"),
        True,
        False,
    ),
    (
        "invalid-utf8-body",
        _raw("bad-utf8", b"---\nname: bad-utf8\ndescription: d\n---\n\xff\n"),
        True,
        False,
    ),
    (
        "flow-list",
        _raw("flow", "---\nname: flow\ndescription: d\ntags: [a, b]\n---\nB\n"),
        True,
        False,
    ),
    ("missing-description", _raw("no-desc", "---\nname: no-desc\n---\nB\n"), False, False),
    (
        "empty-description",
        _raw("empty-desc", '---\nname: empty-desc\ndescription: ""\n---\n'),
        False,
        False,
    ),
    (
        "list-description",
        _raw("list-desc", "---\nname: list-desc\ndescription: [a]\n---\n"),
        False,
        False,
    ),
    ("missing-name", _raw("no-name", "---\ndescription: d\n---\nB\n"), False, False),
    ("slash-in-name", _raw("slash", '---\nname: "a/b"\ndescription: d\n---\n'), False, False),
    ("dots-name", _raw("dots", '---\nname: ".."\ndescription: d\n---\n'), False, False),
    ("newline-in-name", _raw("nl", '---\nname: "a\\nb"\ndescription: d\n---\n'), False, False),
    ("bad-yaml", _raw("bad-yaml", "---\nname: [oops\ndescription: d\n---\n"), False, False),
    (
        "object-tag",
        _raw("tag", "---\nname: !!python/name:os.system\ndescription: d\n---\n"),
        False,
        False,
    ),
    ("not-a-mapping", _raw("seq", "---\n- a\n- b\n---\n"), False, False),
    ("no-frontmatter", _raw("no-fm", "# Just Markdown\n"), False, False),
    ("unclosed", _raw("unclosed", "---\nname: unclosed\ndescription: d\n"), False, False),
    ("binary", _raw("binary", b"---\nname: binary\ndescription: d\n---\n\x00\x01"), False, True),
]


def _folder_verdicts(root: Path, mode: Mode) -> tuple[dict[str, bool], dict[str, bool]]:
    """``(validate's verdict, the repository's)`` by skill folder."""
    reports = validate_path(root, mode=mode, include_hidden=True)
    validated = {r.path: r.valid for r in reports if r.path != str(root) or r.name}
    repo = Repository([root], mode=mode, include_hidden=True, cache_dir=False)
    loaded = {s.directory: True for s in repo.skills}
    loaded |= {sh.skill.directory: True for sh in repo.shadowed}
    loaded |= {os.path.dirname(sk.path): False for sk in repo.skipped}
    return validated, loaded


def _cli_verdicts(runner: CliRunner, root: Path) -> tuple[dict[str, bool], dict[str, bool]]:
    """``(validate --json, list --all --json)`` verdicts by skill folder (lenient mode)."""
    checked = runner.invoke(main, ["validate", str(root), "--json", "--include-hidden"])
    validated = {r["path"]: r["valid"] for r in json.loads(checked.stdout)}
    assert checked.exit_code == (0 if all(validated.values()) else 1)
    listed = runner.invoke(
        main, ["list", "--root", str(root), "--all", "--json", "--include-hidden", "--no-cache"]
    )
    assert listed.exit_code == 0, listed.output
    rows = json.loads(listed.stdout)
    loaded = {
        r["path"] if r["status"] != "skipped" else os.path.dirname(r["path"]): r["status"]
        in ("ok", "shadowed")
        for r in rows
    }
    return validated, loaded


@pytest.fixture
def cases_root(tmp_path: Path) -> tuple[Path, dict[str, tuple[bool, bool]]]:
    """Every case in one root, with the expected verdicts by folder."""
    root = tmp_path / "skills"
    expected = {}
    for _case, make, lenient, strict in CASES:
        folder = make(root)
        assert isinstance(folder, Path)
        expected[str(folder)] = (lenient, strict)
    return root, expected


@pytest.mark.parametrize(("case", "make", "lenient", "strict"), CASES, ids=[c[0] for c in CASES])
def test_validate_and_the_runtime_agree_on_each_case(
    tmp_path: Path, case: str, make: Maker, lenient: bool, strict: bool
) -> None:
    folder = make(tmp_path / "skills")
    for mode, expected in (("lenient", lenient), ("strict", strict)):
        validated, loaded = _folder_verdicts(tmp_path / "skills", mode)  # type: ignore[arg-type]
        assert validated == loaded == {str(folder): expected}, mode


def test_validate_json_and_list_all_json_agree_on_every_case(
    cases_root: tuple[Path, dict[str, tuple[bool, bool]]],
) -> None:
    root, expected = cases_root
    validated, loaded = _cli_verdicts(CliRunner(), root)
    assert validated == loaded == {folder: lenient for folder, (lenient, _) in expected.items()}


def test_a_duplicate_name_is_valid_for_validate_and_shadowed_for_list(tmp_path: Path) -> None:
    first = make_skill(tmp_path / "skills", "twin", dir_name="a-twin")
    second = make_skill(tmp_path / "skills", "twin", dir_name="b-twin")
    validated, loaded = _cli_verdicts(CliRunner(), tmp_path / "skills")
    assert validated == loaded == {str(first): True, str(second): True}


def test_a_cached_index_gives_the_same_verdict(
    tmp_path: Path, cases_root: tuple[Path, dict[str, tuple[bool, bool]]]
) -> None:
    root, expected = cases_root
    for mode, column in (("lenient", 0), ("strict", 1)):
        for _ in range(2):  # the second open reuses the index rows
            repo = Repository([root], mode=mode, include_hidden=True, cache_dir=tmp_path / "c")  # type: ignore[arg-type]
            usable = {s.directory for s in (*repo.skills, *(sh.skill for sh in repo.shadowed))}
            assert usable == {f for f, verdicts in expected.items() if verdicts[column]}


@pytest.mark.parametrize("mode", ["lenient", "strict"])
def test_validate_and_the_runtime_agree_on_every_corpus_skill(mode: Mode) -> None:
    roots = sorted(p for p in CORPUS.glob("*/skills") if p.is_dir())
    assert roots
    for root in roots:
        validated, loaded = _folder_verdicts(root, mode)
        assert validated == loaded, root
        assert validated  # every collection holds skills


def test_validate_json_and_list_all_json_agree_on_every_corpus_skill() -> None:
    runner = CliRunner()
    for root in sorted(p for p in CORPUS.glob("*/skills") if p.is_dir()):
        validated, loaded = _cli_verdicts(runner, root)
        assert validated == loaded, root
        assert all(validated.values())  # lenient mode loads every skill of real collections


_D = Manifest(name="x", description="d")


@pytest.mark.parametrize(
    ("manifest", "diagnostics", "lenient", "strict"),
    [
        (None, [], False, False),
        (_D, [], True, True),
        (_D, [Diagnostic("name.case", "warning", "m")], True, True),
        *[(_D, [Diagnostic(code, "error", "m")], True, False) for code in sorted(LENIENT_WARNINGS)],
        (_D, [Diagnostic("name.unsafe", "error", "m")], False, False),
        (_D, [Diagnostic("frontmatter.yaml", "error", "m")], False, False),
        (_D, [Diagnostic("file.encoding", "warning", "m")], True, True),
    ],
)
def test_is_valid_rule(
    manifest: Manifest | None, diagnostics: list[Diagnostic], lenient: bool, strict: bool
) -> None:
    assert is_valid(manifest, diagnostics, mode="lenient") is lenient
    assert is_valid(manifest, diagnostics, mode="strict") is strict


def test_every_face_offers_exactly_the_skills_validate_passes(
    cases_root: tuple[Path, dict[str, tuple[bool, bool]]],
) -> None:
    from skillshelf.mcpserver import SkillServer, Viewer
    from skillshelf.tools import SkillTools

    root, _ = cases_root
    valid = {r.name for r in validate_path(root, include_hidden=True) if r.valid}
    repo = Repository([root], include_hidden=True, cache_dir=False)
    served = {s.name for s in SkillServer(repo).shelf.skills(Viewer())}
    (load,) = SkillTools(repo).schemas("openai", tools=["skill_load"])
    offered = set(load["function"]["parameters"]["properties"]["skill"]["enum"])
    assert served == valid
    assert offered == {s.name for s in repo.skills if s.model_invocable}
    assert offered < valid

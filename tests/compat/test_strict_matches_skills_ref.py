"""Strict mode and the skills-ref drop-in judge every SKILL.md exactly as skills-ref 0.1.1 does.

Differential tests against the real skills-ref (a dev dependency): on tests/corpus, on a
table of inputs that once disagreed, and on SKILL.md files hypothesis assembles from tricky
fragments. Strict mode must make the same accept/reject decision; the drop-in must return the
same messages, except that after "Invalid YAML in frontmatter: " skills-ref quotes strictyaml's
own parser report.
"""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any, Final

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from corpus_paths import CORPUS
from skillshelf.compat import skills_ref as compat
from skillshelf.skills.skill import parse_skill_md

skills_ref: Any = pytest.importorskip("skills_ref", reason="skills-ref is a dev dependency")
pytest.importorskip("strictyaml", reason="strictyaml (skills-ref's YAML parser) is not installed")

_REPO: Final = Path(__file__).resolve().parents[2]
_YAML_ERROR: Final = "Invalid YAML in frontmatter:"
_SPEC_KEYS: Final = (
    "['allowed-tools', 'compatibility', 'description', 'license', 'metadata', 'name']"
)


def _comparable(message: str) -> str:
    return _YAML_ERROR if message.startswith(_YAML_ERROR) else message


def _outcome(module: Any, entry: str, arg: Any) -> tuple[str, Any] | None:
    """What an entry point did: its result, the SkillError it raised, or None if it crashed."""
    try:
        value = getattr(module, entry)(arg)
    except module.SkillError as exc:
        return (type(exc).__name__, _comparable(str(exc)))
    except Exception:
        return None  # skills-ref itself crashed (e.g. UnicodeDecodeError): nothing to compare
    return ("ok", value.to_dict() if entry == "read_properties" else value)


def _assert_judged_alike(skill_dir: Path) -> None:
    try:
        expected = skills_ref.validate(skill_dir)
    except Exception:
        return  # skills-ref crashed instead of returning a list: nothing to compare
    skill_md = compat.find_skill_md(skill_dir)
    assert skill_md is not None
    strict = parse_skill_md(skill_md, mode="strict")
    strict_errors = [d.message for d in strict.diagnostics if d.severity == "error"]
    assert bool(strict_errors) == bool(expected), (strict_errors, expected)
    assert [_comparable(m) for m in compat.validate(skill_dir)] == [
        _comparable(m) for m in expected
    ]
    for entry, arg in (("read_properties", skill_dir), ("to_prompt", [skill_dir])):
        reference = _outcome(skills_ref, entry, arg)
        if reference is not None:
            assert _outcome(compat, entry, arg) == reference, entry


def _write_skill(root: str, dir_name: str, raw: bytes) -> Path:
    skill_dir = Path(root, dir_name)
    skill_dir.mkdir()
    (skill_dir / "SKILL.md").write_bytes(raw)
    return skill_dir


# --- the corpus (tests/corpus) ----------------------------------------------------------------


def _corpus_skill_dirs() -> list[Any]:
    # rglob also walks hidden folders: openai-skills keeps its skills under `.curated/` etc.
    dirs = {p.parent for p in CORPUS.rglob("*") if p.name.lower() == "skill.md" and p.is_file()}
    return [pytest.param(d, id=str(d.relative_to(CORPUS))) for d in sorted(dirs)]


@pytest.mark.parametrize("skill_dir", _corpus_skill_dirs())
def test_corpus_skill_is_judged_like_skills_ref(skill_dir: Path) -> None:
    _assert_judged_alike(skill_dir)


# --- inputs that once disagreed ------------------------------------------------------------------

_VALID: Final = "---\nname: my-skill\ndescription: d\n"


@pytest.mark.parametrize(
    "text",
    [
        pytest.param("---\n---\nbody", id="empty-frontmatter"),
        pytest.param("---\n# only a comment\n---\n", id="comment-only-frontmatter"),
        pytest.param(_VALID + 'license: "a\tb"\n---\n', id="tab-in-double-quotes"),
        pytest.param(_VALID + "license: |\n  a\tb\n---\n", id="tab-in-block-scalar"),
        pytest.param(_VALID + "license: a #\tb\n---\n", id="tab-in-comment"),
        pytest.param(_VALID + "license: a\tb\n---\n", id="tab-in-plain-scalar"),
        pytest.param(_VALID + "license: a\t\n---\n", id="trailing-tab"),
        pytest.param(_VALID + "license: \x85x\n---\n", id="nel-line-break"),
        pytest.param(_VALID + "license: a\u2028b\n---\n", id="line-separator"),
        pytest.param("---\n<<:\n  name: my-skill\n  description: d\n---\n", id="top-merge"),
        pytest.param(_VALID + "<<: x\n---\n", id="merge-of-a-scalar"),
        pytest.param(_VALID + "metadata:\n  <<:\n    a: b\n  c: d\n---\n", id="nested-merge"),
        pytest.param(_VALID + "metadata:\n  a: b\nlicense:\n    x: y\n---\n", id="indentation"),
        pytest.param(_VALID + "license: ! MIT\n---\n", id="non-specific-tag"),
        pytest.param("---\nname: my-skill\ndescription: <<\n---\n", id="merge-tag-value"),
        pytest.param(_VALID + "license: x\n...\n...\n---\n", id="second-document-end"),
        pytest.param(_VALID + ": empty key\n---\n", id="empty-key"),
        pytest.param(_VALID + "---\nbody \x00 with a NUL\n", id="nul-in-body"),
        pytest.param("- a\n- b\n", id="no-fence"),
        pytest.param("---\n- a\n- b: c\n  b: d\n---\n", id="duplicate-inside-a-list"),
    ],
)
def test_tricky_input_is_judged_like_skills_ref(text: str, tmp_path: Path) -> None:
    _assert_judged_alike(_write_skill(str(tmp_path), "my-skill", text.encode("utf-8")))


def test_unexpected_fields_message_matches_skills_ref(tmp_path: Path) -> None:
    skill_dir = _write_skill(
        str(tmp_path), "my-skill", (_VALID + "zeta: 1\nalpha: 2\n---\n").encode()
    )
    assert compat.validate(skill_dir) == [
        f"Unexpected fields in frontmatter: alpha, zeta. Only {_SPEC_KEYS} are allowed."
    ]
    _assert_judged_alike(skill_dir)


# --- generated SKILL.md files --------------------------------------------------------------------

# (YAML text after `name:`, the directory name the author meant)
_NAMES: Final = [
    ("my-skill", "my-skill"),
    ("MySkill", "MySkill"),
    ("技能", "技能"),
    ("мой-навык", "мой-навык"),
    ("НАВЫК", "НАВЫК"),
    ("-my-skill", "-my-skill"),
    ("my-skill-", "my-skill-"),
    ("my--skill", "my--skill"),
    ("my_skill", "my_skill"),
    ("my skill", "my skill"),
    ("a" * 64, "a" * 64),
    ("a" * 65, "a" * 65),
    ("cafe\u0301", "café"),
    ("café", "cafe\u0301"),
    ("ﬁle-tool", "file-tool"),
    ("Ⅻ", "xii"),
    ("123", "123"),
    ("-", "-"),
    ("", "my-skill"),
    ("'my-skill'", "my-skill"),
    ('"my-skill"', "my-skill"),
    ("'  '", "my-skill"),
    ('"my\\x2Dskill"', "my-skill"),
    ("my-skill # a comment", "my-skill"),
    ("my-skill\t", "my-skill"),
    ("|\n  my-skill", "my-skill"),
    (">-\n  my-skill", "my-skill"),
    ("\n  - my-skill", "my-skill"),
    ("\n  first: my-skill", "my-skill"),
    ("&n my-skill", "my-skill"),
    ("!!str my-skill", "my-skill"),
    ("~", "my-skill"),
    ("yes", "yes"),
]
_DESCRIPTIONS: Final = [
    "A test skill",
    "'Quoted: with a colon'",
    '"Double-quoted # hash"',
    "Has: a colon and space",
    "Use when:asked",
    "text # trailing comment",
    "a --- b",
    "a---b",
    "|\n  Block literal\n  second line",
    ">\n  Folded text\n  continues",
    "|-\n  stripped",
    "[a, b]",
    "{a: b}",
    "x" * 1024,
    "x" * 1025,
    "é" * 1025,
    "",
    "''",
    "'   '",
    "plain\n  continued on the next line",
    "\n  - item one\n  - item two",
    "\n  key: value",
    "&d described",
    "*d",
    "!!str tagged",
    "!!python/object:os.system x",
    "! non-specific",
    "yes",
    "~",
    "1.0",
    '"escaped\\ttab"',
    "'it''s'",
    '"unterminated',
    "tab\there",
    "%percent",
    "@at",
    "`backtick",
    "- dash",
    "? question",
    "<b>html</b> & 'quotes'",
    "<<",
]
_EXTRAS: Final = [
    "license: MIT",
    "license: Apache-2.0 # SPDX",
    "license:\n  - a",
    "compatibility: Requires Python 3.11+",
    "compatibility: " + "c" * 500,
    "compatibility: " + "c" * 501,
    "compatibility:\n  os: linux",
    "allowed-tools: Bash(git:*) Read",
    "allowed-tools:\n  - Bash\n  - Read",
    "metadata:\n  author: me\n  version: 1.0",
    "metadata:\n  nested:\n    deep: x",
    "metadata:\n    four: spaces",
    "metadata:\n  list:\n    - 1\n    - 2",
    "metadata:\n  n: 42\n  f: 1.5\n  b: true",
    "metadata: plain string",
    "metadata:",
    "metadata: {a: b}",
    "unknown_field: x",
    "version: 1.0",
    "tags: [a, b]",
    "tags:\n  - a\n  - b",
    "# a comment line",
    "  # an indented comment",
    "",
    "\tkey: tab-indented",
    "key: value\twith a tab",
    "key: 'quoted\ttab'",
    "base: &b x",
    "ref: *b",
    "<<:\n  license: merged",
    "license: !!str tagged",
    "x: !!python/object:os.system x",
    "...",
    "? complex\n: key",
    "'quoted key': v",
    "123: numeric key",
    "dup: 1\ndup: 2",
    "name: second-name",
    "description: second description",
    "other:\n  a: b\nmore:\n    c: d",
    "text: a ---- b",
    "'': empty key",
]
_OPENINGS: Final = ["---", "---", "---", "----", "--- ", "--- # comment", ""]
_CLOSINGS: Final = ["---", "---", "---", "----", "--- ", "", "...\n---"]
_BODIES: Final = ["", "# Body\n\nUse it.\n", "Body with --- inside\n", "\n\n  padded  \n"]


def _field(key: str, value: str) -> str:
    return f"{key}:{'' if not value or value.startswith(chr(10)) else ' '}{value}"


@st.composite
def _skill_md_files(draw: st.DrawFn) -> tuple[bytes, str]:
    name, meant_dir = draw(st.sampled_from(_NAMES))
    lines = draw(st.lists(st.sampled_from(_EXTRAS), max_size=4))
    if draw(st.integers(0, 9)):
        lines.append(_field("name", name))
    if draw(st.integers(0, 9)):
        lines.append(_field("description", draw(st.sampled_from(_DESCRIPTIONS))))
    lines = list(draw(st.permutations(lines)))
    opening = draw(st.sampled_from(_OPENINGS))
    head = [opening] if opening else []
    text = "\n".join([*head, *lines, draw(st.sampled_from(_CLOSINGS)), ""])
    text += draw(st.sampled_from(_BODIES))
    text = text.replace("\n", draw(st.sampled_from(["\n", "\n", "\r\n", "\r"])))
    raw = (draw(st.sampled_from(["", "", "", "\ufeff"])) + text).encode("utf-8")
    if draw(st.integers(0, 49)) == 0:
        raw += b"\xff"  # not UTF-8: skills-ref crashes, the drop-in reports it
    return raw, draw(st.sampled_from([meant_dir, meant_dir, "my-skill"]))


@settings(
    max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(case=_skill_md_files())
def test_generated_skill_md_is_judged_like_skills_ref(case: tuple[bytes, str]) -> None:
    raw, dir_name = case
    with tempfile.TemporaryDirectory() as tmp:
        _assert_judged_alike(_write_skill(tmp, dir_name, raw))

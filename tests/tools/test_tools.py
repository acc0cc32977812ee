"""The model-facing skill tools: every tool's output, error grading, bad input, visibility.

Skills are real folders under ``tmp_path`` (``make_skill``); state lives in the in-memory store
unless a test says otherwise. Each bad-input case checks three things: a graded result comes
back (never an exception), its message is useful, and the loaded state is unchanged.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Any

import pytest

from finished_executor import FinishedExecutor
from skillshelf.core.session import FATAL_REPEAT_MESSAGE, SessionState
from skillshelf.exec.workspace import WorkspaceManager
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores.memory import MemoryStore
from skillshelf.testing import make_skill
from skillshelf.tools import (
    FATAL_INTERNAL_MESSAGE,
    LIST_CHARS,
    LIST_PAGE,
    SKILL_TOOLS,
    DeclaredLoadError,
    SchemaFormat,
    SkillTools,
    ToolResult,
)

# A PNG header: binary by name and by content.
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)
ALPHA_BODY = """# Alpha

Format the report with [the guide](references/guide.md) and the
[style sheet](references/missing-style.md). See also [the web](https://example.com/x) and
[a section](#usage).

## Usage

Run `scripts/run.py`.
"""


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the index cache out of ~/.cache and ignore the user's roots."""
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """alpha (version, tags, docs, a script, a binary, a long file, a missing link), beta
    (not user-invocable), gamma, and secret (hidden by the visibility tests)."""
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "alpha",
        "Alpha formats CSV reports into tables. Use when the user has a CSV report.",
        body=ALPHA_BODY,
        frontmatter={"version": "2.1", "tags": ["csv", "reports"]},
        files={
            "references/guide.md": "# Guide\n\nUse tables.\n",
            "references/extra.md": "# Extra\n\nMore detail.\n",
            "scripts/run.py": "print('run')\n",
            "assets/logo.png": PNG,
            "assets/long.txt": "x" * 5000,
        },
    )
    make_skill(
        skills,
        "beta",
        "Beta writes commit messages. Use when committing.",
        frontmatter={"user-invocable": False},
    )
    make_skill(skills, "gamma", "Gamma triages HTTP errors. Use when an API call fails.")
    make_skill(skills, "secret", "Secret internal tooling. Use for internal audits.")
    outside = tmp_path / "outside.txt"
    outside.write_text("top secret\n")
    os.symlink(outside, skills / "alpha" / "references" / "escape.txt")
    return skills


@pytest.fixture
def repo(root: Path) -> Repository:
    return Repository([root], cache_dir=False)


@pytest.fixture
def tools(repo: Repository) -> SkillTools:
    return SkillTools(repo, store=MemoryStore(), session_id="s1", max_file_chars=1000)


def _hide_secret(skill: Skill) -> bool:
    return skill.name != "secret"


def _loaded(tools: SkillTools) -> dict[str, Any]:
    """The part of the state bad input must never change."""
    state = tools.state()
    return {"loaded": {n: s.to_doc() for n, s in state.loaded.items()}, "clock": state.clock}


def _ok(result: ToolResult) -> ToolResult:
    assert result.status == "ok", result.content
    return result


# -- success output of every tool --------------------------------------------------------------


def test_search_ranks_the_matching_skill_first_and_hints_to_load(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_search", {"query": "csv report"}))
    assert result.data is not None
    names = [r["name"] for r in result.data["results"]]
    assert names[0] == "alpha"
    assert result.content.startswith("- alpha: Alpha formats CSV reports")
    assert "call skill_load" in result.content


def test_search_respects_the_limit(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_search", {"query": "csv commit http errors", "limit": 1}))
    assert result.data is not None
    assert len(result.data["results"]) == 1


def test_search_shows_a_description_whole_on_one_line(tmp_path: Path) -> None:
    long = "Wordy explains things.\nUse when " + "word " * 150
    make_skill(tmp_path / "r", "wordy", long)
    tools = SkillTools(Repository([tmp_path / "r"], cache_dir=False))
    result = _ok(tools.call("skill_search", {"query": "wordy"}))
    assert result.data is not None
    description = result.data["results"][0]["description"]
    assert description == " ".join(long.split())
    assert description in result.content


def test_search_without_a_match_points_to_skill_list(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_search", {"query": "zzqx"}))
    assert "No skill matches 'zzqx'" in result.content
    assert "skill_list" in result.content
    assert result.data == {"results": []}


def test_list_shows_versions_tags_and_user_slash_commands(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_list"))
    lines = result.content.splitlines()
    assert lines[0].startswith("- alpha (v2.1; tags: csv, reports): Alpha formats")
    assert lines[1].startswith("- beta: Beta writes")
    assert "User slash commands: /alpha /gamma /secret" in result.content
    assert "/beta" not in result.content  # user-invocable: false
    assert result.data is not None
    assert [s["name"] for s in result.data["skills"]] == ["alpha", "beta", "gamma", "secret"]
    assert result.data["skills"][0]["version"] == "2.1"
    assert result.data["skills"][0]["tags"] == ["csv", "reports"]


def _pages(tools: SkillTools) -> list[ToolResult]:
    """Every page of skill_list, following the cursors."""
    pages = [_ok(tools.call("skill_list"))]
    while (data := pages[-1].data) is not None and data["next_cursor"] is not None:
        pages.append(_ok(tools.call("skill_list", {"cursor": data["next_cursor"]})))
        assert len(pages) < 100
    return pages


def _listed(page: ToolResult) -> list[str]:
    assert page.data is not None
    return [row["name"] for row in page.data["skills"]]


def test_list_of_a_large_repository_comes_in_pages_of_list_page_skills(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(250):
        make_skill(root, f"skill-{i:04d}", f"Skill {i} does a task. " + "word " * 60)
    first = _ok(SkillTools(Repository([root], cache_dir=False)).call("skill_list"))
    shown = [line for line in first.content.splitlines() if line.startswith("- skill-")]
    assert len(shown) == LIST_PAGE
    assert first.data is not None
    assert first.data["total"] == 250 and first.data["truncated"] is True
    assert first.data["start"] == 0 and first.data["next_cursor"] == "skill-0099"
    assert _listed(first) == [line[2:12] for line in shown]
    note = first.content.splitlines()[-1]
    assert "150 more skills after this page (250 in all)" in note
    assert "cursor 'skill-0099'" in note and "skill_search" in note


def test_list_pages_cover_every_visible_skill_once_in_order(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(230):
        make_skill(root, f"skill-{i:04d}", f"Skill {i} does a task.")
    tools = SkillTools(
        Repository([root], cache_dir=False), visible=lambda s: not s.name.endswith("7")
    )
    pages = _pages(tools)
    names = [name for page in pages for name in _listed(page)]
    assert names == [f"skill-{i:04d}" for i in range(230) if i % 10 != 7]
    assert [page.data["start"] for page in pages if page.data] == [0, 100, 200]
    last = pages[-1]
    assert last.data is not None and last.data["truncated"] is False
    assert "more skills after this page" not in last.content


def test_list_page_stops_at_list_chars_and_the_next_page_goes_on(tmp_path: Path) -> None:
    root = tmp_path / "tagged"
    # 64 tags of 200 characters: about 13,000 characters a line, so a page holds 3 skills.
    tags = [f"t{j:02d}" + "x" * 197 for j in range(64)]
    for i in range(8):
        make_skill(root, f"skill-{i}", f"Skill {i}.", frontmatter={"tags": tags})
    pages = _pages(SkillTools(Repository([root], cache_dir=False)))
    assert all(len(page.content) <= LIST_CHARS for page in pages)
    assert [len(_listed(page)) for page in pages] == [3, 3, 2]
    assert [name for page in pages for name in _listed(page)] == [f"skill-{i}" for i in range(8)]


def test_list_cursor_of_a_removed_skill_goes_on_after_its_place(tmp_path: Path) -> None:
    root = tmp_path / "many"
    for i in range(120):
        make_skill(root, f"skill-{i:04d}", f"Skill {i} does a task.")
    tools = SkillTools(Repository([root], cache_dir=False))
    page = _ok(tools.call("skill_list", {"cursor": "skill-0049x"}))
    assert _listed(page)[0] == "skill-0050"
    end = _ok(tools.call("skill_list", {"cursor": "zzz"}))
    assert end.content == "No more skills after 'zzz' (120 in all)."
    assert end.data is not None and end.data["skills"] == [] and end.data["truncated"] is False


def test_list_cursor_longer_than_a_name_is_an_invalid_argument(tools: SkillTools) -> None:
    result = tools.call("skill_list", {"cursor": "x" * 1000})
    assert result.status == "recoverable"
    assert "cursor" in result.content


def test_list_of_an_empty_repository_says_so(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    tools = SkillTools(Repository([tmp_path / "empty"], cache_dir=False))
    assert _ok(tools.call("skill_list")).content == "No skills are available."


def test_load_returns_body_directory_resources_in_that_order(tools: SkillTools, root: Path) -> None:
    content = _ok(tools.call("skill_load", {"skill": "alpha"})).content
    directory = str((root / "alpha").resolve())
    markers = [
        '<skill_content name="alpha">',
        "# Alpha",
        "Run `scripts/run.py`.",
        "</skill_content>",
        f"Skill directory: {directory}",
        "resolve against that directory; use the absolute path in later tool calls",
        "<skill_resources>",
        "</skill_resources>",
    ]
    positions = [content.index(m) for m in markers]
    assert positions == sorted(positions)
    assert os.path.isabs(directory)
    resources = content.split("<skill_resources>")[1].split("</skill_resources>")[0]
    assert "SKILL.md (" in resources  # files carry their sizes
    assert "references/" in resources
    assert "  guide.md (" in resources  # nested one level down
    assert "  logo.png (" in resources
    assert "<skill_doc" not in content  # no docs asked for


def test_load_includes_the_selected_docs_after_the_resources(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_load", {"skill": "alpha", "docs": ["references/guide.md"]}))
    content = result.content
    assert '<skill_doc path="references/guide.md">\n# Guide\n\nUse tables.\n\n</skill_doc>' in (
        content
    )
    assert content.index("</skill_resources>") < content.index("<skill_doc")
    assert 'references/extra.md">' not in content
    assert tools.state().loaded["alpha"].docs == ["references/guide.md"]


def test_load_with_include_all_docs_includes_every_document(tools: SkillTools) -> None:
    content = _ok(tools.call("skill_load", {"skill": "alpha", "include_all_docs": True})).content
    for doc in ("assets/long.txt", "references/extra.md", "references/guide.md"):
        assert f'<skill_doc path="{doc}">' in content
    assert 'escape.txt">' not in content  # a link out of the skill is no document
    assert "top secret" not in content
    assert tools.state().loaded["alpha"].docs == "*"


def test_load_flags_relative_links_to_missing_files_only(tools: SkillTools) -> None:
    content = _ok(tools.call("skill_load", {"skill": "alpha"})).content
    note = next(line for line in content.splitlines() if line.startswith("Note:"))
    assert note == (
        "Note: the body links to files that are not in the skill: references/missing-style.md"
    )


def test_load_reports_the_load_in_data(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_load", {"skill": "gamma"}))
    assert result.data == {"skill": "gamma", "docs": [], "evicted": []}
    assert "Note:" not in result.content
    assert set(tools.state().loaded) == {"gamma"}


def test_list_docs_lists_documents_but_not_scripts_nor_links_out_of_the_skill(
    tools: SkillTools,
) -> None:
    result = _ok(tools.call("skill_list_docs", {"skill": "alpha"}))
    assert result.content.splitlines() == [
        "assets/long.txt",
        "references/extra.md",
        "references/guide.md",
    ]


def test_list_docs_keeps_a_symbolic_link_that_stays_inside_the_skill(tmp_path: Path) -> None:
    skill = make_skill(tmp_path / "r", "linked", files={"docs/real.md": "# Real\n"})
    os.symlink("real.md", skill / "docs" / "alias.md")
    tools = SkillTools(Repository([tmp_path / "r"], cache_dir=False))
    result = _ok(tools.call("skill_list_docs", {"skill": "linked"}))
    assert result.content.splitlines() == ["docs/alias.md", "docs/real.md"]


def test_list_docs_of_a_skill_without_docs_says_so(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_list_docs", {"skill": "gamma"}))
    assert result.content == "(this skill has no document files)"


def test_select_docs_adds_to_the_selection_by_default(tools: SkillTools) -> None:
    _ok(tools.call("skill_load", {"skill": "alpha", "docs": ["references/guide.md"]}))
    result = _ok(
        tools.call("skill_select_docs", {"skill": "alpha", "docs": ["references/extra.md"]})
    )
    assert result.content == ("Docs selected for 'alpha': references/guide.md, references/extra.md")
    assert tools.state().loaded["alpha"].docs == ["references/guide.md", "references/extra.md"]


def test_select_docs_replace_and_clear(tools: SkillTools) -> None:
    _ok(tools.call("skill_load", {"skill": "alpha", "docs": ["references/guide.md"]}))
    args = {"skill": "alpha", "docs": ["./references/extra.md"], "mode": "replace"}
    _ok(tools.call("skill_select_docs", args))
    assert tools.state().loaded["alpha"].docs == ["references/extra.md"]
    result = _ok(tools.call("skill_select_docs", {"skill": "alpha", "mode": "clear"}))
    assert result.content == "Docs selected for 'alpha': none"
    assert tools.state().loaded["alpha"].docs == []


def test_select_docs_include_all_selects_every_doc(tools: SkillTools) -> None:
    _ok(tools.call("skill_load", {"skill": "alpha"}))
    result = _ok(tools.call("skill_select_docs", {"skill": "alpha", "include_all_docs": True}))
    assert tools.state().loaded["alpha"].docs == "*"
    assert result.data is not None
    assert "references/guide.md" in result.data["docs"]
    # adding to "everything" keeps everything
    _ok(tools.call("skill_select_docs", {"skill": "alpha", "docs": ["references/guide.md"]}))
    assert tools.state().loaded["alpha"].docs == "*"


def test_read_file_returns_text_and_the_absolute_path(tools: SkillTools, root: Path) -> None:
    result = _ok(tools.call("skill_read_file", {"skill": "alpha", "path": "references/guide.md"}))
    assert result.content == "# Guide\n\nUse tables.\n"
    assert result.data is not None
    assert result.data["path"] == str((root / "alpha" / "references" / "guide.md").resolve())
    assert result.data["truncated"] is False


def test_read_file_truncates_long_text_with_a_marker(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_read_file", {"skill": "alpha", "path": "assets/long.txt"}))
    assert result.content == "x" * 1000 + "\n[truncated: showed 1,000 of 5,000 characters]"
    assert result.data is not None
    assert result.data["truncated"] is True


def test_read_file_describes_a_binary_file_instead_of_returning_bytes(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_read_file", {"skill": "alpha", "path": "assets/logo.png"}))
    assert (
        result.content == f"[binary file: assets/logo.png, {len(PNG)} bytes, image/png — not shown]"
    )
    assert result.data is not None
    assert result.data["binary"] is True


def test_unload_frees_a_loaded_skill(tools: SkillTools) -> None:
    _ok(tools.call("skill_load", {"skill": "alpha"}))
    result = _ok(tools.call("skill_unload", {"skill": "alpha"}))
    assert result.content == "Skill 'alpha' unloaded."
    assert tools.state().loaded == {}


def test_unload_of_a_skill_that_is_not_loaded_is_ok_and_says_so(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_unload", {"skill": "alpha"}))
    assert result.content == "Skill 'alpha' was not loaded."
    assert result.data == {"skill": "alpha", "was_loaded": False}


def test_arguments_may_be_a_json_string(tools: SkillTools) -> None:
    _ok(tools.call("skill_load", '{"skill": "gamma"}'))
    assert "gamma" in tools.state().loaded


def test_forgiven_slips_are_mentioned_in_the_result(tools: SkillTools) -> None:
    result = _ok(tools.call("skill_load", {"skill_name": "**gamma**"}))
    assert "(Arguments adjusted:" in result.content
    assert "gamma" in tools.state().loaded


def test_result_to_dict_is_the_cli_json_shape(tools: SkillTools) -> None:
    result = tools.call("skill_unload", {"skill": "gamma"})
    assert result.to_dict() == {"tool": "skill_unload", "status": "ok", "content": result.content}
    assert not result.is_error


# -- grading --------------------------------------------------------------------------------


def test_unknown_skill_is_recoverable_and_suggests_the_closest_names(tools: SkillTools) -> None:
    before = _loaded(tools)
    result = tools.call("skill_load", {"skill": "alpah"})
    assert result.status == "recoverable"
    assert result.is_error
    assert "Unknown skill" in result.content
    assert "Did you mean: alpha" in result.content
    assert _loaded(tools) == before


def test_the_third_identical_failure_is_fatal_with_the_standard_message(
    tools: SkillTools,
) -> None:
    args = {"skill": "alpha", "path": "nope.md"}
    first = tools.call("skill_read_file", args)
    second = tools.call("skill_read_file", args)
    third = tools.call("skill_read_file", args)
    assert [first.status, second.status, third.status] == ["recoverable", "recoverable", "fatal"]
    assert third.content == FATAL_REPEAT_MESSAGE.format(
        count=3, tool=third.tool, reason=first.content
    )
    assert "Stop retrying it" in third.content
    assert tools.call("skill_read_file", args).status == "fatal"


@pytest.mark.parametrize(
    ("exit_code", "timed_out", "status"),
    [(0, False, "ok"), (3, False, "nonzero_exit"), (-9, True, "timed_out")],
)
def test_a_command_that_ran_is_ok_for_the_model_and_its_trace_says_how_it_ended(
    repo: Repository, tmp_path: Path, exit_code: int, timed_out: bool, status: str
) -> None:
    tools = SkillTools(
        repo,
        workspace=WorkspaceManager(tmp_path / "ws"),
        executor=FinishedExecutor(exit_code, timed_out),
    )
    result = tools.call("workspace_exec", {"command": "make"})
    assert (result.status, result.exit_code, result.timed_out) == ("ok", exit_code, timed_out)
    assert result.trace_fields() == {
        "status": status,
        "error_kind": None,
        "exit_code": exit_code,
        "timed_out": timed_out,
    }


def test_a_call_that_ran_no_command_traces_its_graded_status(tools: SkillTools) -> None:
    result = tools.call("skill_read_file", {"skill": "alpha", "path": "nope.md"})
    assert result.exit_code is None
    assert result.trace_fields() == {"status": "recoverable", "error_kind": "tool_error"}


def test_a_respelt_failing_call_counts_as_the_same_call(tools: SkillTools) -> None:
    spellings: list[dict[str, Any] | str] = [
        {"skill": "alpha", "path": "nope.md"},
        '{"path":"nope.md",  "skill":"alpha"}',
        {"Skill": "ALPHA", "file_path": "`nope.md`"},
    ]
    statuses = [tools.call("skill_read_file", s).status for s in spellings]
    assert statuses == ["recoverable", "recoverable", "fatal"]
    assert tools.call("Skill-Read-File", '{"skillName": "alpha", "path": " nope.md"}').status == (
        "fatal"
    )


def test_a_respelt_invalid_call_counts_as_the_same_call(tools: SkillTools) -> None:
    # Invalid arguments are counted as validation reads them too; unknown keys case-folded.
    spellings: list[dict[str, Any] | str] = [
        {"query": "pdf", "limit": "many", "Verbose": True},
        '{"limit": "many", "q": "pdf", "verbose": true}',
        {"Query": "pdf", "LIMIT": "many", "VERBOSE": True},
    ]
    statuses = [tools.call("skill_search", s).status for s in spellings]
    assert statuses == ["recoverable", "recoverable", "fatal"]


def test_a_different_failing_call_has_its_own_counter(tools: SkillTools) -> None:
    for _ in range(2):
        assert tools.call("skill_read_file", {"skill": "alpha", "path": "a.md"}).is_error
    other = tools.call("skill_read_file", {"skill": "alpha", "path": "b.md"})
    assert other.status == "recoverable"
    assert tools.call("skill_read_file", {"skill": "alpha", "path": "a.md"}).status == "fatal"


def test_failure_counts_are_per_session(repo: Repository) -> None:
    store = MemoryStore()
    one = SkillTools(repo, store=store, session_id="one")
    two = SkillTools(repo, store=store, session_id="two")
    for _ in range(2):
        one.call("skill_load", {"skill": "nope"})
    assert two.call("skill_load", {"skill": "nope"}).status == "recoverable"
    assert one.call("skill_load", {"skill": "nope"}).status == "fatal"


def test_a_success_in_between_does_not_reset_nor_count(tools: SkillTools) -> None:
    args = {"skill": "alpha", "path": "nope.md"}
    tools.call("skill_read_file", args)
    _ok(tools.call("skill_list"))
    assert tools.call("skill_read_file", args).status == "recoverable"


def test_skill_md_vanished_after_discovery_is_recoverable(tools: SkillTools, root: Path) -> None:
    (root / "gamma" / "SKILL.md").unlink()
    result = tools.call("skill_load", {"skill": "gamma"})
    assert result.status == "recoverable"
    assert "gamma" in result.content
    assert tools.state().loaded == {}


def test_an_internal_failure_is_fatal_logged_with_its_traceback_and_never_raises(
    tools: SkillTools, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*_args: object, **_kwargs: object) -> str:
        raise RuntimeError("renderer exploded")

    monkeypatch.setattr("skillshelf.tools._load.render_load", broken)
    with caplog.at_level(logging.ERROR, logger="skillshelf.tools"):
        result = tools.call("skill_load", {"skill": "gamma"})
    assert result.status == "fatal"
    assert result.content.startswith(FATAL_INTERNAL_MESSAGE.split("{", 1)[0])
    assert "RuntimeError" in result.content
    assert "renderer exploded" not in result.content  # the details go to the log, not the model
    (record,) = caplog.records
    assert record.exc_info is not None and "renderer exploded" in str(record.exc_info[1])
    assert tools.state().loaded == {}


def test_workspace_exec_is_not_served_by_the_skill_tools(tools: SkillTools) -> None:
    result = tools.call("workspace_exec", {"command": "ls"})
    assert result.status == "recoverable"
    assert "not available here" in result.content


def test_an_unknown_tool_is_recoverable_and_lists_the_tools(tools: SkillTools) -> None:
    result = tools.call("skill_destroy", {})
    assert result.status == "recoverable"
    assert "skill_load" in result.content


# -- bad input ------------------------------------------------------------------------------

LONG = "a" * 10_000
GOOD: dict[str, dict[str, Any]] = {
    "skill_search": {"query": "csv"},
    "skill_list": {},
    "skill_load": {"skill": "alpha"},
    "skill_list_docs": {"skill": "alpha"},
    "skill_select_docs": {"skill": "alpha", "docs": ["references/guide.md"]},
    "skill_read_file": {"skill": "alpha", "path": "references/guide.md"},
    "skill_unload": {"skill": "alpha"},
}
MISSING = [
    ("skill_search", {}, "query"),
    ("skill_load", {}, "skill"),
    ("skill_list_docs", {}, "skill"),
    ("skill_select_docs", {"docs": ["references/guide.md"]}, "skill"),
    ("skill_read_file", {"skill": "alpha"}, "path"),
    ("skill_read_file", {"path": "references/guide.md"}, "skill"),
    ("skill_unload", {}, "skill"),
    ("skill_unload", {"skill": None}, "skill"),  # null means "not given"
]
WRONG_TYPE = [
    ("skill_search", {"query": 42}, "query"),
    ("skill_search", {"query": "csv", "limit": "many"}, "limit"),
    ("skill_search", {"query": "csv", "limit": 0}, "limit"),
    ("skill_load", {"skill": ["alpha"]}, "skill"),
    ("skill_load", {"skill": "alpha", "docs": {"a": 1}}, "docs"),
    ("skill_load", {"skill": "alpha", "include_all_docs": "perhaps"}, "include_all_docs"),
    ("skill_list_docs", {"skill": 7}, "skill"),
    ("skill_select_docs", {"skill": "alpha", "mode": "delete"}, "mode"),
    ("skill_select_docs", {"skill": "alpha", "docs": [1, 2]}, "docs[0]"),
    ("skill_read_file", {"skill": "alpha", "path": ["a"]}, "path"),
    ("skill_unload", {"skill": {"name": "alpha"}}, "skill"),
]
EMPTY = [
    ("skill_search", {"query": ""}),
    ("skill_search", {"query": "   "}),
    ("skill_load", {"skill": ""}),
    ("skill_load", {"skill": "alpha", "docs": [""]}),
    ("skill_list_docs", {"skill": ""}),
    ("skill_select_docs", {"skill": ""}),
    ("skill_select_docs", {"skill": "alpha", "mode": ""}),
    ("skill_read_file", {"skill": "alpha", "path": ""}),
    ("skill_unload", {"skill": ""}),
]
TOO_LONG = [
    ("skill_search", {"query": LONG}),
    ("skill_load", {"skill": LONG}),
    ("skill_load", {"skill": "alpha", "docs": [LONG]}),
    ("skill_load", {"skill": "alpha", "docs": [LONG] * 50}),
    ("skill_list_docs", {"skill": LONG}),
    ("skill_select_docs", {"skill": LONG}),
    ("skill_select_docs", {"skill": "alpha", "docs": [LONG] * 50}),
    ("skill_read_file", {"skill": "alpha", "path": LONG}),
    ("skill_read_file", {"skill": "alpha", "path": "b/" * 5000}),
    ("skill_unload", {"skill": LONG}),
]
TRAVERSAL = [
    "../../etc/passwd",
    "/etc/passwd",
    "references/../../beta/SKILL.md",
    "..\\..\\etc\\passwd",
    "~/.ssh/id_rsa",
    "references/escape.txt",  # a symbolic link out of the skill dir
]


def _assert_graded(tools: SkillTools, tool: str, args: Any) -> ToolResult:
    """The call answers with a non-ok graded result and leaves the loads as they were."""
    before = _loaded(tools)
    result = tools.call(tool, args)
    assert result.status == "recoverable", result.content
    assert result.tool == tool
    assert _loaded(tools) == before
    return result


@pytest.fixture
def busy(tools: SkillTools) -> SkillTools:
    """Tools with alpha (two docs) and gamma loaded, so bad input has state to disturb."""
    _ok(tools.call("skill_load", {"skill": "alpha", "docs": ["references/guide.md"]}))
    _ok(tools.call("skill_load", {"skill": "gamma"}))
    return tools


@pytest.mark.parametrize(("tool", "args", "field"), MISSING)
def test_missing_argument_tells_the_model_to_ask_the_user(
    busy: SkillTools, tool: str, args: dict[str, Any], field: str
) -> None:
    result = _assert_graded(busy, tool, args)
    assert f"Missing required argument '{field}'" in result.content
    assert "Ask the user" in result.content


@pytest.mark.parametrize(("tool", "args", "field"), WRONG_TYPE)
def test_wrong_type_names_the_argument_to_fix(
    busy: SkillTools, tool: str, args: dict[str, Any], field: str
) -> None:
    result = _assert_graded(busy, tool, args)
    assert f"Invalid argument '{field}'" in result.content
    assert f"call {tool} again" in result.content


@pytest.mark.parametrize(("tool", "args"), EMPTY)
def test_empty_strings_are_graded(busy: SkillTools, tool: str, args: dict[str, Any]) -> None:
    result = _assert_graded(busy, tool, args)
    assert "Missing required argument" in result.content or "Invalid argument" in result.content


@pytest.mark.parametrize(("tool", "args"), TOO_LONG)
def test_ten_thousand_character_strings_are_graded_and_not_echoed(
    busy: SkillTools, tool: str, args: dict[str, Any]
) -> None:
    result = _assert_graded(busy, tool, args)
    assert len(result.content) < 2000


@pytest.mark.parametrize("tool", [t for t in SKILL_TOOLS if t != "skill_list"])
@pytest.mark.parametrize("name", ["alpah", "nope", "/etc/passwd"])
def test_unknown_skill_is_graded_for_every_tool(busy: SkillTools, tool: str, name: str) -> None:
    args = {**GOOD[tool], "skill": name} if "skill" in GOOD[tool] else {"query": name}
    if tool == "skill_search":
        assert busy.call(tool, args).status == "ok"  # a query, not a skill name
        return
    result = _assert_graded(busy, tool, args)
    assert "Unknown skill" in result.content


@pytest.mark.parametrize("tool", SKILL_TOOLS)
def test_extra_unknown_arguments_are_ignored_and_mentioned(tools: SkillTools, tool: str) -> None:
    if tool == "skill_select_docs":
        _ok(tools.call("skill_load", {"skill": "alpha"}))
    result = _ok(tools.call(tool, {**GOOD[tool], "colour": "blue", "verbose": True}))
    assert result.content.endswith("(Ignored unknown arguments: colour, verbose.)")


@pytest.mark.parametrize("path", TRAVERSAL)
def test_read_file_refuses_paths_that_leave_the_skill(busy: SkillTools, path: str) -> None:
    result = _assert_graded(busy, "skill_read_file", {"skill": "alpha", "path": path})
    assert "Refused path" in result.content
    assert "top secret" not in result.content
    assert "root:" not in result.content


@pytest.mark.parametrize("path", [*TRAVERSAL, "references/nope.md", "SKILL.md"])
@pytest.mark.parametrize("tool", ["skill_load", "skill_select_docs"])
def test_docs_that_escape_or_do_not_exist_are_refused(
    busy: SkillTools, tool: str, path: str
) -> None:
    result = _assert_graded(busy, tool, {"skill": "alpha", "docs": [path]})
    assert "Unknown doc(s) for skill 'alpha'" in result.content
    assert "Available docs:" in result.content


def test_selecting_docs_of_a_skill_that_is_not_loaded_is_recoverable(busy: SkillTools) -> None:
    result = _assert_graded(busy, "skill_select_docs", {"skill": "beta", "docs": []})
    assert result.content == "Skill 'beta' is not loaded. Call skill_load first."


@pytest.mark.parametrize("raw", ["{not json", "[1, 2]", '"alpha"', "42"])
def test_arguments_that_are_not_a_json_object_are_graded(busy: SkillTools, raw: str) -> None:
    result = _assert_graded(busy, "skill_load", raw)
    assert "JSON" in result.content


# -- visibility -----------------------------------------------------------------------------


@pytest.fixture
def filtered(repo: Repository) -> SkillTools:
    return SkillTools(repo, store=MemoryStore(), visible=_hide_secret)


def test_hidden_skills_are_absent_from_skill_list(filtered: SkillTools) -> None:
    result = _ok(filtered.call("skill_list"))
    assert "secret" not in result.content
    assert result.data is not None
    assert [s["name"] for s in result.data["skills"]] == ["alpha", "beta", "gamma"]


def test_hidden_skills_are_absent_from_skill_search(filtered: SkillTools) -> None:
    everyone = SkillTools(filtered.repo)
    query = {"query": "secret internal audits"}
    assert "- secret:" in _ok(everyone.call("skill_search", query)).content
    result = _ok(filtered.call("skill_search", query))
    assert "- secret:" not in result.content
    assert result.data is not None
    assert "secret" not in [r["name"] for r in result.data["results"]]


def test_hidden_skills_are_absent_from_the_skill_load_enum(filtered: SkillTools) -> None:
    formats: list[tuple[SchemaFormat, str | None]] = [
        ("openai", None),
        ("anthropic", "input_schema"),
        ("mcp", "inputSchema"),
    ]
    for fmt, key in formats:
        for entry in filtered.schemas(fmt):
            schema = entry["function"]["parameters"] if key is None else entry[key]
            skill = schema["properties"].get("skill")
            name = entry["function"]["name"] if key is None else entry["name"]
            if name == "skill_load":
                assert skill["enum"] == ["alpha", "beta", "gamma"]
            elif skill is not None:
                assert "enum" not in skill


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("skill_load", {"skill": "secret"}),
        ("skill_read_file", {"skill": "secret", "path": "SKILL.md"}),
        ("skill_list_docs", {"skill": "secret"}),
        ("skill_unload", {"skill": "secret"}),
    ],
)
def test_hidden_skills_are_refused_as_unknown(
    filtered: SkillTools, tool: str, args: dict[str, Any]
) -> None:
    result = filtered.call(tool, args)
    assert result.status == "recoverable"
    assert "Unknown skill" in result.content
    assert result.content.count("secret") == 1  # the echoed name only, never a suggestion
    assert filtered.state().loaded == {}


def test_declare_refuses_a_hidden_skill(filtered: SkillTools) -> None:
    with pytest.raises(DeclaredLoadError):
        filtered.declare(["secret"])


def test_schemas_fall_back_to_a_plain_string_above_the_enum_limit(repo: Repository) -> None:
    tools = SkillTools(repo, enum_limit=2)
    load = next(s for s in tools.schemas("anthropic") if s["name"] == "skill_load")
    assert "enum" not in load["input_schema"]["properties"]["skill"]
    assert tools.call("skill_load", {"skill": "nope"}).status == "recoverable"


def test_schemas_cover_the_seven_tools_in_each_format(tools: SkillTools) -> None:
    assert [s["function"]["name"] for s in tools.schemas("openai")] == list(SKILL_TOOLS)
    assert [s["name"] for s in tools.schemas("mcp")] == list(SKILL_TOOLS)


# -- declared loads -------------------------------------------------------------------------


def test_declare_loads_every_skill_and_its_docs(tools: SkillTools) -> None:
    results = tools.declare([("alpha", ["references/guide.md"]), "gamma"])
    assert [r.status for r in results] == ["ok", "ok"]
    state = tools.state()
    assert set(state.loaded) == {"alpha", "gamma"}
    assert state.loaded["alpha"].docs == ["references/guide.md"]
    assert state.loaded["alpha"].call_id is None


@pytest.mark.parametrize(
    "loads",
    [
        ["alpha", "nope"],
        [("alpha", ["references/guide.md"]), ("gamma", ["references/nope.md"])],
        [("alpha", ["../../etc/passwd"])],
    ],
)
def test_declare_is_all_or_nothing(tools: SkillTools, loads: list[Any]) -> None:
    with pytest.raises(DeclaredLoadError, match="Declared skills cannot be loaded"):
        tools.declare(loads)
    assert tools.state() == SessionState()


def test_declare_names_every_problem(tools: SkillTools) -> None:
    with pytest.raises(DeclaredLoadError) as info:
        tools.declare(["nope", ("alpha", ["missing.md"])])
    assert 'Unknown skill "nope"' in str(info.value)
    assert "missing.md" in str(info.value)


# -- user-only skills, search over-fetch, failure memory ---------------------------------------


@pytest.fixture
def user_only_tools(tmp_path: Path) -> SkillTools:
    make_skill(
        tmp_path / "u",
        "deploy",
        "Deploys prod. Use when asked to deploy.",
        frontmatter={"disable-model-invocation": True},
    )
    make_skill(tmp_path / "u", "lint", "Lints code. Use when asked to lint.")
    return SkillTools(Repository([tmp_path / "u"], cache_dir=False), store=MemoryStore())


def test_user_only_skill_is_refused_to_the_model(user_only_tools: SkillTools) -> None:
    result = user_only_tools.call("skill_load", {"skill": "deploy"})
    assert result.status == "recoverable"
    assert user_only_tools.state().loaded == {}


def test_user_only_skill_is_absent_from_enum_and_search(user_only_tools: SkillTools) -> None:
    [load] = [s for s in user_only_tools.schemas("openai") if s["function"]["name"] == "skill_load"]
    assert load["function"]["parameters"]["properties"]["skill"]["enum"] == ["lint"]
    hits = user_only_tools.call("skill_search", {"query": "deploy"})
    assert hits.data is not None and [r["name"] for r in hits.data["results"]] == []


def test_user_only_skill_is_listed_only_as_a_slash_command(user_only_tools: SkillTools) -> None:
    listing = _ok(user_only_tools.call("skill_list"))
    assert "/deploy" in listing.content


def test_declared_load_may_load_a_user_only_skill(user_only_tools: SkillTools) -> None:
    [result] = user_only_tools.declare(["deploy"])
    assert result.status == "ok"
    assert "deploy" in user_only_tools.state().loaded
    assert user_only_tools.call("skill_load", {"skill": "deploy"}).status == "recoverable"


def test_search_fills_the_limit_even_when_top_hits_are_hidden(tmp_path: Path) -> None:
    for i in range(5):
        make_skill(tmp_path / "r", f"hidden-csv-{i}", "CSV CSV CSV csv tools. Use for csv.")
    make_skill(tmp_path / "r", "shown", "Shows a csv. Use when a csv is shared.")
    tools = SkillTools(
        Repository([tmp_path / "r"], cache_dir=False),
        visible=lambda s: not s.name.startswith("hidden"),
    )
    result = _ok(tools.call("skill_search", {"query": "csv", "limit": 1}))
    assert result.data is not None
    assert [r["name"] for r in result.data["results"]] == ["shown"]


def test_failure_memory_is_bounded(tools: SkillTools) -> None:
    from skillshelf.core.session import MAX_REMEMBERED_FAILURES

    for i in range(MAX_REMEMBERED_FAILURES + 20):
        tools.call("skill_load", {"skill": f"nope-{i}"})
    assert len(tools.state().failures) == MAX_REMEMBERED_FAILURES


def test_user_only_skill_is_not_in_the_model_list(user_only_tools: SkillTools) -> None:
    listing = _ok(user_only_tools.call("skill_list"))
    assert "- deploy" not in listing.content
    assert "- lint" in listing.content

"""Materialisation: where loaded skill content goes in the next model request.

Messages are in the OpenAI chat shape: an assistant message whose ``tool_calls`` asks for
``skill_load``, then the ``tool`` message carrying the result, as a tool loop builds them.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest

from skillshelf.core.session import LoadMode
from skillshelf.harness import LOADED_CONTEXT_HEADER, materialize
from skillshelf.repository import Repository
from skillshelf.skills.content import render_load
from skillshelf.stores.memory import MemoryStore
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools

Message = dict[str, Any]
SYSTEM: Message = {
    "role": "system",
    "content": "You are a careful assistant.\n\n<available_skills>…</available_skills>",
}
USER: Message = {"role": "user", "content": "Summarise data.csv for me."}
NO_LONGER = "is no longer loaded; its content was released"


@pytest.fixture(autouse=True)
def _cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SKILLSHELF_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SKILLSHELF_ROOTS", raising=False)


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(
        root,
        "csv-insights",
        "Profiles CSV files. Use when the user shares a CSV.",
        body="# CSV Insights\n\nRun `scripts/summarize.py`.\n",
        files={"scripts/summarize.py": "print(1)\n", "references/columns.md": "# Columns\n"},
    )
    make_skill(root, "commit-message", "Writes commit messages. Use when committing.")
    return Repository([root], cache_dir=False)


@pytest.fixture
def store() -> MemoryStore:
    return MemoryStore()


def _tools(repo: Repository, store: MemoryStore, mode: LoadMode = "turn") -> SkillTools:
    return SkillTools(repo, store=store, session_id="s1", load_mode=mode)


def _call(call_id: str, tool: str, args: dict[str, Any]) -> Message:
    function = {"name": tool, "arguments": json.dumps(args)}
    return {
        "role": "assistant",
        "content": None,
        "tool_calls": [{"id": call_id, "type": "function", "function": function}],
    }


def _run(
    tools: SkillTools, history: list[Message], call_id: str, tool: str, args: dict[str, Any]
) -> str:
    """One step of a tool loop: the model's call and its result appended to ``history``."""
    ids = {m["tool_call_id"] for m in history if m.get("role") == "tool"}
    result = tools.call(tool, args, call_id=call_id, history_call_ids=ids)
    history += [
        _call(call_id, tool, args),
        {"role": "tool", "tool_call_id": call_id, "content": result.content},
    ]
    return result.content


def _tool_message(messages: list[Message], call_id: str) -> Message:
    return next(m for m in messages if m.get("tool_call_id") == call_id)


def _bytes(message: Message) -> bytes:
    return json.dumps(message, sort_keys=True).encode()


def _expected_load(repo: Repository, name: str, docs: list[str] | None = None) -> str:
    skill = repo.get(name)
    return render_load(skill, skill.body(), docs or [])


def test_nothing_loaded_leaves_the_messages_as_they_are(
    repo: Repository, store: MemoryStore
) -> None:
    messages = [SYSTEM, USER]
    assert materialize(messages, _tools(repo, store)) == messages


def test_system_message_bytes_stay_identical_across_a_load_in_the_tool_loop(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [copy.deepcopy(SYSTEM), copy.deepcopy(USER)]
    before = materialize(history, tools)
    content = _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    tools.after_request()
    after = materialize(history, tools)
    assert _bytes(after[0]) == _bytes(before[0]) == _bytes(SYSTEM)
    assert [m["role"] for m in after] == ["system", "user", "assistant", "tool"]
    assert _tool_message(after, "c1")["content"] == content
    assert content.startswith('<skill_content name="csv-insights">')


def test_materialize_never_modifies_its_input(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store)
    history = [copy.deepcopy(SYSTEM), copy.deepcopy(USER)]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    tools.call("skill_unload", {"skill": "csv-insights"})
    snapshot = copy.deepcopy(history)
    materialize(history, tools, placement="system")
    materialize(history, tools)
    assert history == snapshot


def test_the_content_stays_in_its_tool_result_over_several_requests(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    content = _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    first = materialize(history, tools)
    _run(tools, history, "c2", "skill_list", {})
    tools.after_request()
    second = materialize(history, tools)
    assert second[: len(first)] == first  # a stable prefix, as the prompt cache wants
    assert _tool_message(second, "c1")["content"] == content


def test_a_second_load_in_the_loop_is_a_stub_and_the_first_result_keeps_the_content(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    content = _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    stub = _run(tools, history, "c2", "skill_load", {"skill": "csv-insights"})
    assert "already loaded" in stub
    out = materialize(history, tools)
    assert _tool_message(out, "c1")["content"] == content
    assert _tool_message(out, "c2")["content"] == stub
    assert sum(m["role"] == "system" for m in out) == 1


def test_after_unload_the_old_result_is_replaced_by_a_note(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    unloaded = _run(tools, history, "c2", "skill_unload", {"skill": "csv-insights"})
    out = materialize(history, tools)
    assert _tool_message(out, "c1")["content"] == (
        "[Skill 'csv-insights' is no longer loaded; its content was released. "
        "Load it again if needed.]"
    )
    assert _tool_message(out, "c2")["content"] == unloaded
    assert _bytes(out[0]) == _bytes(SYSTEM)
    assert sum(m["role"] == "system" for m in out) == 1


@pytest.mark.parametrize(("mode", "event"), [("turn", "begin_turn"), ("once", "after_request")])
def test_after_expiry_the_old_result_is_replaced_by_a_note(
    repo: Repository, store: MemoryStore, mode: LoadMode, event: str
) -> None:
    tools = _tools(repo, store, mode)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    assert _tool_message(materialize(history, tools), "c1")["content"].startswith("<skill_")
    getattr(tools, event)()
    assert NO_LONGER in _tool_message(materialize(history, tools), "c1")["content"]


def test_a_reload_after_the_skill_changed_releases_the_older_result(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    skill_md = repo.get("csv-insights").skill_md
    skill_md.write_text(skill_md.read_text() + "\nStep two.\n")
    repo.refresh()
    newer = _run(tools, history, "c2", "skill_load", {"skill": "csv-insights"})
    out = materialize(history, tools)
    assert _tool_message(out, "c2")["content"] == newer
    assert "Step two." in newer
    assert "<skill_content" not in _tool_message(out, "c1")["content"]
    assert "loaded again later" in _tool_message(out, "c1")["content"]


def test_release_note_names_the_skill_even_when_the_model_used_a_slip(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill_name": "**csv-insights**"})
    tools.call("skill_unload", {"skill": "csv-insights"})
    out = materialize(history, tools)
    assert "'csv-insights' is no longer loaded" in _tool_message(out, "c1")["content"]


def test_a_loaded_skill_hidden_by_the_filter_is_not_materialised(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    hidden = SkillTools(
        repo, store=store, session_id="s1", visible=lambda s: s.name != "csv-insights"
    )
    out = materialize(history, hidden)
    assert "<skill_content" not in _tool_message(out, "c1")["content"]


def test_errors_and_other_results_are_left_alone(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    error = _run(tools, history, "c1", "skill_load", {"skill": "nope"})
    listing = _run(tools, history, "c2", "skill_list", {})
    out = materialize(history, tools)
    assert _tool_message(out, "c1")["content"] == error
    assert _tool_message(out, "c2")["content"] == listing


def test_a_load_whose_result_was_truncated_away_is_carried_by_a_system_message(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    # The history was cut: the call and its result are gone, a summary took their place.
    truncated = [SYSTEM, {"role": "user", "content": "(summary of earlier turns)"}, USER]
    out = materialize(truncated, tools)
    assert [m["role"] for m in out] == ["system", "system", "user", "user"]
    assert _bytes(out[0]) == _bytes(SYSTEM)
    carried = out[1]["content"]
    assert carried.startswith(LOADED_CONTEXT_HEADER)
    assert carried == f"{LOADED_CONTEXT_HEADER}\n\n{_expected_load(repo, 'csv-insights')}"


def test_the_context_message_goes_after_every_leading_system_message(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    tools.declare(["csv-insights"])
    extra = {"role": "system", "content": "Project rules."}
    out = materialize([SYSTEM, extra, USER], tools)
    assert [m["content"][:21] for m in out[:3]] == [
        SYSTEM["content"][:21],
        "Project rules.",
        LOADED_CONTEXT_HEADER,
    ]


def test_without_a_system_message_the_context_message_comes_first(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    tools.declare(["csv-insights"])
    out = materialize([USER], tools)
    assert out[0]["role"] == "system"
    assert out[0]["content"].startswith(LOADED_CONTEXT_HEADER)
    assert out[1] == USER


def test_declared_loads_are_carried_by_the_system_message(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    tools.declare([("csv-insights", ["references/columns.md"]), "commit-message"])
    out = materialize([SYSTEM, USER], tools)
    carried = out[1]["content"]
    expected = [
        _expected_load(repo, "csv-insights", ["references/columns.md"]),
        _expected_load(repo, "commit-message"),
    ]
    assert carried == "\n\n".join([LOADED_CONTEXT_HEADER, *expected])
    assert '<skill_doc path="references/columns.md">' in carried


def test_the_carried_context_is_byte_stable_across_requests(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    tools.declare(["csv-insights", "commit-message"])
    first = materialize([SYSTEM, USER], tools)
    tools.after_request()
    assert _bytes(materialize([SYSTEM, USER], tools)[1]) == _bytes(first[1])


def test_placement_system_puts_content_in_the_system_message_and_stubs_the_result(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    out = materialize(history, tools, placement="system")
    assert _bytes(out[0]) == _bytes(SYSTEM)
    assert out[1]["role"] == "system"
    assert out[1]["content"] == f"{LOADED_CONTEXT_HEADER}\n\n{_expected_load(repo, 'csv-insights')}"
    assert _tool_message(out, "c1")["content"] == (
        "[Skill 'csv-insights' is loaded; its content is in the system message.]"
    )


def test_placement_system_follows_the_doc_selection(repo: Repository, store: MemoryStore) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    _run(
        tools,
        history,
        "c2",
        "skill_select_docs",
        {"skill": "csv-insights", "include_all_docs": True},
    )
    carried = materialize(history, tools, placement="system")[1]["content"]
    assert '<skill_doc path="references/columns.md">' in carried


def test_placement_system_releases_unloaded_skills_too(
    repo: Repository, store: MemoryStore
) -> None:
    tools = _tools(repo, store)
    history = [SYSTEM, USER]
    _run(tools, history, "c1", "skill_load", {"skill": "csv-insights"})
    tools.call("skill_unload", {"skill": "csv-insights"})
    out = materialize(history, tools, placement="system")
    assert [m["role"] for m in out] == ["system", "user", "assistant", "tool"]
    assert NO_LONGER in _tool_message(out, "c1")["content"]


def test_a_sub_agents_loads_never_reach_the_parents_request(
    repo: Repository, store: MemoryStore
) -> None:
    parent = SkillTools(repo, store=store, session_id="s1", agent="main")
    child = SkillTools(repo, store=store, session_id="s1", agent="sub")
    child.declare(["csv-insights"])
    assert materialize([SYSTEM, USER], parent) == [SYSTEM, USER]
    assert materialize([SYSTEM, USER], child)[1]["content"].startswith(LOADED_CONTEXT_HEADER)

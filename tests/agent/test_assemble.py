"""Assembling a request's messages from a gathered snapshot alone: no store, no files."""

from __future__ import annotations

import json
from typing import Any

from skillshelf.core.files import FileTree, TreeEntry
from skillshelf.core.render import (
    LOADED_CONTEXT_HEADER,
    SkillSnapshot,
    render_loaded_context,
    render_release_note,
)
from skillshelf.core.session import LoadedSkill
from skillshelf.harness import ContextSnapshot, Placement, assemble

Message = dict[str, Any]
SYSTEM: Message = {"role": "system", "content": "You are careful."}
USER: Message = {"role": "user", "content": "Summarise data.csv."}
CONTENT = '<skill_content name="csv-insights">\n# CSV\n</skill_content>'
CSV = SkillSnapshot(
    name="csv-insights",
    directory="/srv/skills/csv-insights",
    body="# CSV",
    tree=FileTree((TreeEntry("SKILL.md", is_dir=False, size=5, depth=0),), omitted=0),
)


def _load(call_id: str, skill: str = "csv-insights") -> list[Message]:
    function = {"name": "skill_load", "arguments": json.dumps({"skill": skill})}
    call = {"id": call_id, "type": "function", "function": function}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": CONTENT},
    ]


def _snapshot(
    messages: list[Message],
    loaded: dict[str, LoadedSkill],
    carried: tuple[SkillSnapshot, ...] = (),
    placement: Placement = "tool_result",
) -> ContextSnapshot:
    return ContextSnapshot(tuple(messages), loaded, carried, placement)


def test_a_loaded_skill_keeps_its_content_in_its_tool_result() -> None:
    messages = [SYSTEM, USER, *_load("c1")]
    loaded = {"csv-insights": LoadedSkill("csv-insights", call_id="c1")}
    assert assemble(_snapshot(messages, loaded)) == messages


def test_a_released_skill_has_its_result_replaced_by_a_note() -> None:
    out = assemble(_snapshot([SYSTEM, USER, *_load("c1")], {}))
    assert out[-1]["content"] == render_release_note("csv-insights", "released")
    assert out[:3] == [SYSTEM, USER, _load("c1")[0]]


def test_an_older_result_of_a_reloaded_skill_points_at_the_newer_one() -> None:
    messages = [SYSTEM, USER, *_load("c1"), *_load("c2")]
    loaded = {"csv-insights": LoadedSkill("csv-insights", call_id="c2")}
    out = assemble(_snapshot(messages, loaded))
    assert out[3]["content"] == render_release_note("csv-insights", "superseded")
    assert out[5]["content"] == CONTENT


def test_carried_skills_go_in_a_system_message_after_the_leading_ones() -> None:
    rules: Message = {"role": "system", "content": "Project rules."}
    loaded = {"csv-insights": LoadedSkill("csv-insights")}
    out = assemble(_snapshot([SYSTEM, rules, USER], loaded, carried=(CSV,)))
    assert out == [
        SYSTEM,
        rules,
        {"role": "system", "content": render_loaded_context([CSV])},
        USER,
    ]
    assert out[2]["content"].startswith(f"{LOADED_CONTEXT_HEADER}\n\n<skill_content")


def test_placement_system_notes_the_result_and_carries_the_content() -> None:
    loaded = {"csv-insights": LoadedSkill("csv-insights", call_id="c1")}
    snapshot = _snapshot([SYSTEM, USER, *_load("c1")], loaded, carried=(CSV,), placement="system")
    out = assemble(snapshot)
    assert out[1] == {"role": "system", "content": render_loaded_context([CSV])}
    assert out[-1]["content"] == render_release_note("csv-insights", "in_system_message")


def test_assembling_the_same_snapshot_twice_gives_the_same_bytes() -> None:
    loaded = {"csv-insights": LoadedSkill("csv-insights")}
    snapshot = _snapshot([SYSTEM, USER, *_load("c1")], loaded, carried=(CSV,))
    first, second = assemble(snapshot), assemble(snapshot)
    assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_assembling_leaves_the_snapshot_messages_unchanged() -> None:
    messages = [SYSTEM, USER, *_load("c1")]
    before = json.dumps(messages)
    assemble(_snapshot(messages, {}, carried=(CSV,)))
    assert json.dumps(messages) == before

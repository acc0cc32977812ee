"""What the caller controls beyond the settings: skills switched per conversation (kept in
the store), options per message, the guidance and a whitelist of skill tools."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from skillshelf import Agent
from skillshelf.errors import SkillNotFoundError, UsageError
from skillshelf.harness import Harness, SkillSettings, TurnOptions
from skillshelf.repository import Repository
from skillshelf.stores import open_store
from skillshelf.testing import ScriptedModel, make_skill, reply

NOTES = "Draft release notes from commits. Use when preparing a release."
CSV = "Summarise CSV files. Use when a CSV file is attached."


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path, "release-notes", NOTES, body="NOTES-BODY\n")
    make_skill(tmp_path, "csv-insights", CSV, body="CSV-BODY\n")
    make_skill(tmp_path, "git-helper", "Inspect git history. Use when asked.", body="GIT\n")
    return Repository([tmp_path], cache_dir=False)


def _load(harness: Harness, conversation: str, skill: str) -> dict[str, object]:
    record = harness.session(conversation).call_skill_tool("c1", "skill_load", {"skill": skill})
    return {"status": record.status, "content": record.content}


def test_a_disabled_skill_is_gone_for_that_conversation_only(repo: Repository) -> None:
    harness = Harness(repo)
    session = harness.session("a")
    assert _load(harness, "a", "csv-insights")["status"] == "ok"
    session.disable("csv-insights")
    assert "csv-insights" not in session.tools.state().loaded  # unloaded
    assert "csv-insights" not in session.instructions()
    assert _load(harness, "a", "csv-insights")["status"] == "recoverable"
    # Another conversation of the same harness still has it.
    assert "csv-insights" in harness.session("b").instructions()
    assert _load(harness, "b", "csv-insights")["status"] == "ok"


def test_switches_are_kept_in_the_store_and_read_at_the_next_turn(repo: Repository) -> None:
    store = open_store(None)
    Harness(repo, SkillSettings(store=store)).session("a").disable("git-helper")
    later = Harness(repo, SkillSettings(store=store)).session("a")  # another process
    later.begin_turn()
    assert "git-helper" not in later.instructions()
    later.enable("git-helper")
    assert "git-helper" in later.instructions()


def test_a_hidden_skill_leaves_the_catalog_but_is_found_and_loaded(repo: Repository) -> None:
    harness = Harness(repo)
    session = harness.session("a")
    session.hide("release-notes")
    assert "release-notes" not in session.instructions()
    found = session.call_skill_tool("c1", "skill_search", {"query": "release notes"})
    assert NOTES in found.content
    assert _load(harness, "a", "release-notes")["status"] == "ok"
    assert "release-notes" in Harness(repo).session("b").instructions()


def test_switching_an_unknown_skill_names_the_closest(repo: Repository) -> None:
    session = Harness(repo).session("a")
    with pytest.raises(SkillNotFoundError, match="release-notes"):
        session.disable("release-note")


def test_turn_options_apply_to_one_message_then_lapse(repo: Repository) -> None:
    model = ScriptedModel(["One.", "Two."])
    agent = Agent(model, repo)
    conversation = agent.conversation("c")
    options = TurnOptions(
        load=["release-notes"],
        only=["release-notes", "git-helper"],
        guidance="Use the loaded skill.",
        skill_tools=["skill_load", "skill_read_file"],
    )
    conversation.send_sync("write the notes", turn=options)
    conversation.send_sync("and now?")
    first, second = model.requests
    system = str(first.messages[0]["content"])
    assert "csv-insights" not in system and "git-helper" in system
    assert system.endswith("Use the loaded skill.")
    assert [d.name for d in first.tools] == ["skill_load", "skill_read_file"]
    assert "NOTES-BODY" in json.dumps(first.messages)  # loaded for the turn
    again = str(second.messages[0]["content"])
    assert "csv-insights" in again and "Use the loaded skill." not in again
    assert "skill_search" in [d.name for d in second.tools]


def test_a_turn_catalog_replaces_the_rendered_one(repo: Repository) -> None:
    model = ScriptedModel(["Done."])
    Agent(model, repo).conversation("c").send_sync(
        "hi", turn=TurnOptions(catalog="ONLY-THIS-CATALOG")
    )
    system = str(model.requests[0].messages[0]["content"])
    assert "ONLY-THIS-CATALOG" in system and "<available_skills>" not in system


def test_a_tool_outside_the_whitelist_is_refused_as_unavailable(repo: Repository) -> None:
    model = ScriptedModel([reply(tools=[("skill_search", {"query": "csv"})]), "Done."])
    agent = Agent(model, repo, settings=SkillSettings(skill_tools=("skill_load",)))
    result = agent.conversation("c").send_sync("find a csv skill")
    (record,) = result.tool_calls
    assert record.status == "recoverable"
    assert "Available tools: skill_load." in record.content
    assert [d.name for d in model.requests[0].tools] == ["skill_load"]


def test_the_settings_guidance_replaces_the_built_in_one(repo: Repository) -> None:
    system = Harness(repo, SkillSettings(guidance="HOUSE-GUIDANCE")).instructions()
    assert system.endswith("HOUSE-GUIDANCE")
    assert "skill_load with its name" not in system


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"skill_tools": ("skill_loda",)}, "skill_tools names no skill tool 'skill_loda'"),
        ({"skill_tools": "skill_load"}, "must be a sequence of tool names"),
    ],
)
def test_bad_skill_tools_are_usage_errors(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        SkillSettings(**kwargs)  # type: ignore[arg-type]


def test_bad_turn_options_are_usage_errors() -> None:
    with pytest.raises(UsageError, match="not a string"):
        TurnOptions(load="release-notes")
    with pytest.raises(UsageError, match="skill tool"):
        TurnOptions(skill_tools=["Read"])


def test_an_integration_applies_options_set_ahead_for_the_next_turn(repo: Repository) -> None:
    harness = Harness(repo)
    session = harness.session("a")
    session.next_turn(TurnOptions(only=["git-helper"]))
    assert "csv-insights" in session.instructions()  # not yet: the turn has not begun
    session.begin_turn()
    assert "csv-insights" not in session.instructions()
    session.begin_turn()
    assert "csv-insights" in session.instructions()

"""SkillSettings: one checked, frozen value for every harness option, taken by every face."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

import skillshelf.harness as harness
from skillshelf.agent.loop import Agent
from skillshelf.errors import UsageError
from skillshelf.harness import Harness, SkillSettings
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill
from skillshelf.tools import Tool


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path, "csv-insights", "Summarise CSV files.", body="Read the CSV.\n")
    return Repository([tmp_path])


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"load_mode": "forever"}, "load_mode must be one of"),
        ({"catalog_format": "html"}, "catalog_format must be one of"),
        ({"tool_style": "codex"}, "tool_style must be one of"),
        ({"placement": "elsewhere"}, "placement must be one of"),
        ({"max_loaded": 0}, "max_loaded must be at least 1"),
        ({"max_loaded": True}, "max_loaded must be an integer"),
        ({"tool_timeout_s": 0}, "tool_timeout_s must be positive"),
        ({"tool_retries": -1}, "tool_retries must not be negative"),
        ({"catalog_budget": -5}, "catalog_budget must not be negative"),
        ({"relevant_skills": 21}, "relevant_skills must be between 0 and 20"),
        ({"relevant_skills": 2.5}, "relevant_skills must be an integer"),
        ({"agent": " "}, "The agent name ' ' is not a valid name"),
        ({"agent": "main#history"}, "no '#'"),
        ({"agent": "a\nb"}, "no control or format characters"),
    ],
)
def test_a_bad_option_is_a_usage_error_naming_it(changes: dict[str, object], message: str) -> None:
    with pytest.raises(UsageError, match=message):
        SkillSettings(**changes)  # type: ignore[arg-type]


def test_replace_refuses_an_unknown_option_and_checks_the_new_value() -> None:
    settings = SkillSettings()
    with pytest.raises(UsageError, match="no option loadmode"):
        settings.replace(loadmode="once")
    with pytest.raises(UsageError, match="max_loaded"):
        settings.replace(max_loaded=0)
    assert settings.replace(load_mode="once").load_mode == "once"


def test_settings_are_frozen_and_keep_sequences_as_tuples() -> None:
    tool = Tool.from_function(lambda: "x", name="x")
    settings = SkillSettings(tools=[tool], declared=["a"])
    assert settings.tools == (tool,) and settings.declared == ("a",)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.load_mode = "once"  # type: ignore[misc]


def test_keyword_shortcuts_apply_over_the_settings_given() -> None:
    base = SkillSettings(load_mode="session", max_loaded=2)
    chosen = SkillSettings.of(base, max_loaded=5)
    assert (chosen.load_mode, chosen.max_loaded) == ("session", 5)
    assert SkillSettings.of(base) is base


def test_an_agent_reads_its_options_from_its_settings(repo: Repository) -> None:
    settings = SkillSettings(load_mode="once", catalog_format="markdown", instructions="Be brief.")
    agent = Agent(ScriptedModel([]), repo, settings=settings, name="helper")
    assert agent.settings.load_mode == "once" and agent.load_mode == "once"
    assert agent.name == "helper" and agent.settings.agent == "helper"
    assert agent.system_prompt().startswith("Be brief.")
    with pytest.raises(AttributeError):
        agent.no_such_option  # noqa: B018


def test_a_harness_without_a_store_gets_a_private_one(repo: Repository) -> None:
    one, two = Harness(repo), Harness(repo)
    assert one.store is not two.store
    assert one.session("c").tools.store is one.store


def test_the_harness_package_face_is_pinned() -> None:
    assert sorted(harness.__all__) == [
        "CLAUDE_CODE_GUIDANCE",
        "CatalogPlacement",
        "ContextSnapshot",
        "DEFAULT_CATALOG_BUDGET",
        "DEFAULT_RELEVANT_SKILLS",
        "DEFAULT_TOOL_RETRIES",
        "DEFAULT_TOOL_TIMEOUT_S",
        "DeclaredLoad",
        "Fork",
        "ForkTree",
        "GUIDANCE",
        "Harness",
        "HarnessFace",
        "LOADED_CONTEXT_HEADER",
        "LOAD_TOOL_NAMES",
        "MAX_FORK_AGENTS",
        "MAX_FORK_DEPTH",
        "MAX_RELEVANT_SKILLS",
        "Offer",
        "Placement",
        "Prompt",
        "RELEVANT_CHARS",
        "RELEVANT_QUERY_CHARS",
        "Recent",
        "SEARCH_FIRST",
        "SettingsOptions",
        "SkillSession",
        "SkillSettings",
        "Switch",
        "TOOL_STYLES",
        "ToolContext",
        "ToolRecord",
        "ToolSink",
        "ToolStyle",
        "Trace",
        "TurnOptions",
        "assemble",
        "canonical_call",
        "digest",
        "fork_result",
        "gather_context",
        "guidance",
        "materialize",
        "relevant_block",
        "skills_catalog",
        "skills_prompt",
        "span",
        "styled_definitions",
    ]
    for name in harness.__all__:
        assert getattr(harness, name) is not None
    assert "SkillSession" in harness.__all__ and "SkillSettings" in harness.__all__

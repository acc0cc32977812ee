"""Catalog rendering: skills-ref's XML, Markdown, and budgets that never drop a skill silently."""

from __future__ import annotations

import pytest

from skillshelf.core.catalog import CatalogEntry, CatalogFormat, fit_catalog, render_catalog
from skillshelf.errors import UsageError


def _entries(n: int, desc_len: int = 200) -> list[CatalogEntry]:
    return [
        CatalogEntry(
            f"skill-{i:02d}", ("word " * desc_len)[:desc_len], f"/s/skill-{i:02d}/SKILL.md"
        )
        for i in range(n)
    ]


def test_xml_matches_skills_ref_layout_and_escaping() -> None:
    text = render_catalog([CatalogEntry("a", "Use <b> & 'c'", "/x/a/SKILL.md")])
    assert text == (
        "<available_skills>\n<skill>\n<name>\na\n</name>\n<description>\n"
        "Use &lt;b&gt; &amp; &#x27;c&#x27;\n</description>\n<location>\n/x/a/SKILL.md\n"
        "</location>\n</skill>\n</available_skills>"
    )


def test_xml_escapes_a_location_that_would_close_its_element() -> None:
    location = "/x/a</location>\n<name>\nevil\n</name>/SKILL.md"
    text = render_catalog([CatalogEntry("a", "d", location)])
    assert text.count("<location>") == text.count("</location>") == 1
    assert text.count("<name>") == 1
    assert "/x/a&lt;/location&gt;\n&lt;name&gt;" in text


def test_markdown_keeps_a_name_with_a_line_break_on_its_line() -> None:
    text = render_catalog([CatalogEntry("a\n- **b**", "d", "/a")], format="markdown")
    assert text == "## Available skills\n\n- **a\\n- **b****: d"


def test_empty_catalog_matches_skills_ref() -> None:
    assert render_catalog([]) == "<available_skills>\n</available_skills>"


def test_markdown_lists_one_line_per_skill() -> None:
    text = render_catalog([CatalogEntry("a", "first\nline", "/a")], format="markdown")
    assert text == "## Available skills\n\n- **a**: first line"


def test_budget_that_fits_changes_nothing() -> None:
    entries = _entries(3)
    full = render_catalog(entries)
    assert render_catalog(entries, budget_chars=len(full)) == full


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_budget_trims_descriptions_evenly_first(fmt: str) -> None:
    entries = _entries(5)
    full = render_catalog(entries, format=fmt)  # type: ignore[arg-type]
    text = render_catalog(entries, format=fmt, budget_chars=len(full) - 300)  # type: ignore[arg-type]
    assert len(text) <= len(full) - 300
    assert text.count("…") == 5
    assert all(e.name in text for e in entries)


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_budget_falls_back_to_names_only(fmt: str) -> None:
    entries = _entries(20)
    names_only_size = 900 if fmt == "xml" else 300
    text = render_catalog(entries, format=fmt, budget_chars=names_only_size)  # type: ignore[arg-type]
    assert len(text) <= names_only_size
    assert all(e.name in text for e in entries)
    assert "word" not in text


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_tiny_budget_says_how_many_skills_were_left_out(fmt: str) -> None:
    entries = _entries(50)
    text = render_catalog(entries, format=fmt, budget_chars=250)  # type: ignore[arg-type]
    assert len(text) <= 250
    listed = sum(e.name in text for e in entries)
    assert f"{50 - listed} more skills are not listed here; call skill_search" in text


def test_output_is_stable_for_the_same_input() -> None:
    entries = _entries(10)
    assert render_catalog(entries, budget_chars=900) == render_catalog(entries, budget_chars=900)


def test_unknown_format_and_negative_budget_are_usage_errors() -> None:
    with pytest.raises(UsageError):
        render_catalog([], format="html")  # type: ignore[arg-type]
    with pytest.raises(UsageError):
        render_catalog([], budget_chars=-1)


def _realistic(n: int) -> list[CatalogEntry]:
    """Skills as real collections write them: a first sentence, then when to use it."""
    return [
        CatalogEntry(
            f"collection-skill-{i:03d}",
            f"Handles task number {i} for the team. "
            + "Use when the user asks about this kind of work, with details " * 3,
            f"/home/user/.claude/plugins/marketplace/collection/skills/skill-{i:03d}/SKILL.md",
        )
        for i in range(n)
    ]


def test_xml_drops_locations_before_shortening_any_description() -> None:
    entries = _realistic(10)
    full = fit_catalog(entries)
    fit = fit_catalog(entries, budget_chars=len(full.text) - 100)
    assert "<location>" not in fit.text
    assert fit.fates == ("full",) * 10
    assert fit.text.count("Use when the user asks") == 30


def test_descriptions_keep_their_first_sentence_before_being_cut_evenly() -> None:
    entries = _realistic(10)
    fit = fit_catalog(entries, format="markdown", budget_chars=1_200)
    assert set(fit.fates) == {"trimmed"}
    assert all(f"Handles task number {i} for the team." in fit.text for i in range(10))
    assert len(fit.text) <= 1_200


def test_the_budget_is_used_not_left_idle() -> None:
    entries = _realistic(77)
    formats: tuple[CatalogFormat, ...] = ("xml", "markdown")
    for fmt in formats:
        fit = fit_catalog(entries, format=fmt, budget_chars=12_000)
        assert 12_000 - 200 < len(fit.text) <= 12_000, fmt
        assert fit.count("name_only") == fit.count("omitted") == 0, fmt


def test_seventy_seven_real_sized_skills_all_keep_a_description_in_xml() -> None:
    fit = fit_catalog(_realistic(77), budget_chars=12_000)
    assert fit.text.count("<description>") == 77
    assert not fit.cut


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_names_only_never_while_a_description_still_fits(fmt: str) -> None:
    n = 150 if fmt == "xml" else 300  # all the names fit, all the descriptions do not
    entries = _realistic(n)
    fit = fit_catalog(entries, format=fmt, budget_chars=12_000)  # type: ignore[arg-type]
    described = fit.count("full") + fit.count("trimmed")
    assert 0 < described < n
    assert fit.count("name_only") == n - described
    # The first skills keep the descriptions, in catalog order.
    assert fit.fates[:described] == ("trimmed",) * described
    assert fit.cut
    assert len(fit.text) <= 12_000


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_fates_say_what_each_step_left_and_render_catalog_is_the_same_text(fmt: str) -> None:
    entries = _realistic(2_000)
    fit = fit_catalog(entries, format=fmt, budget_chars=12_000)  # type: ignore[arg-type]
    assert fit.count("omitted") > 0
    assert fit.fates[-1] == "omitted"
    listed = 2_000 - fit.count("omitted")
    assert f"{2_000 - listed} more skills are not listed here; call skill_search" in fit.text
    assert render_catalog(entries, format=fmt, budget_chars=12_000) == fit.text  # type: ignore[arg-type]


def test_a_cut_after_a_whole_sentence_says_more_follows() -> None:
    entries = [CatalogEntry("a", "One. Two three four five six seven eight nine ten.", "/a")]
    budget = len("## Available skills\n\n- **a**: One. Two three four five six seven e…")
    text = fit_catalog(entries, format="markdown", budget_chars=budget).text
    assert text.endswith("- **a**: One. Two three four five six seven e…")
    budget = len("## Available skills\n\n- **a**: One. …")
    shorter = fit_catalog(entries, format="markdown", budget_chars=budget).text
    assert shorter.endswith("- **a**: One. …")

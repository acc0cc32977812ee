"""Reading back what a request showed of the skills: every budget step of both catalog
formats, the catalog in a reminder, the relevant-skills block, and which is which."""

from __future__ import annotations

import pytest

from skillshelf.core.catalog import CatalogEntry, CatalogFormat, fit_catalog, render_catalog
from skillshelf.core.catalog_view import SeenSkill, read_catalog, read_view
from skillshelf.core.render import render_system_reminder

FORMATS: tuple[CatalogFormat, ...] = ("xml", "markdown")


def _entries(n: int) -> list[CatalogEntry]:
    return [
        CatalogEntry(
            f"skill-{i:02d}",
            f"Handles task {i} <with> & 'marks'. Use it when the user asks for task {i}, "
            f"then more words about task {i} follow here.",
            f"/s/skill-{i:02d}/SKILL.md",
        )
        for i in range(n)
    ]


@pytest.mark.parametrize("format", FORMATS)
def test_every_budget_step_reads_back_as_the_fit_says(format: CatalogFormat) -> None:
    entries = _entries(12)
    full = len(render_catalog(entries, format=format))
    seen_fates = set()
    for budget in [None, *range(60, full + 200, 37)]:
        fit = fit_catalog(entries, format=format, budget_chars=budget)
        read, omitted = read_catalog(f"Be helpful.\n\n{fit.text}\n\nGuidance follows.")
        shown = dict(read)
        assert omitted == fit.count("omitted")
        for entry, fate in zip(entries, fit.fates, strict=True):
            seen_fates.add(fate)
            if fate == "omitted":
                assert entry.name not in shown
            elif fate == "name_only":
                assert shown[entry.name] is None
            elif fate == "full":
                assert shown[entry.name] == entry.description
            else:
                description = shown[entry.name]
                assert description is not None and description.endswith("…")
                assert entry.description.startswith(description.removesuffix("…").rstrip())
    assert seen_fates == {"full", "trimmed", "name_only", "omitted"}


def test_a_markdown_catalog_of_names_only_reads_as_names() -> None:
    text = render_catalog(_entries(3), format="markdown", budget_chars=60)
    assert "- **" not in text  # no description fits: names alone, no "Also" line
    read, omitted = read_catalog(text)
    assert [name for name, _ in read] == ["skill-00", "skill-01", "skill-02"][: len(read)]
    assert all(description is None for _, description in read)
    assert len(read) + omitted == 3


def test_text_after_a_markdown_catalog_is_not_read_as_skills() -> None:
    text = render_catalog(_entries(1), format="markdown")
    read, _ = read_catalog(f"{text}\n\nSome guidance.\n- **not-a-skill**: a list item")
    assert [name for name, _ in read] == ["skill-00"]


@pytest.mark.parametrize("format", FORMATS)
def test_the_catalog_in_a_reminder_is_the_catalog(format: CatalogFormat) -> None:
    catalog = render_catalog(_entries(2), format=format)
    view = read_view(
        [
            {"role": "system", "content": "Be helpful.\n\nGuidance."},
            {"role": "user", "content": render_system_reminder(f"Skills:\n\n{catalog}")},
            {"role": "user", "content": "do task 1"},
        ]
    )
    assert [s.where for s in view.skills] == ["catalog", "catalog"]
    assert view.query == "do task 1" and view.listed == 2 and not view.cut


@pytest.mark.parametrize("format", FORMATS)
def test_the_relevant_block_beside_a_cut_catalog_shows_whole_descriptions(
    format: CatalogFormat,
) -> None:
    entries = _entries(30)
    catalog = fit_catalog(entries, format=format, budget_chars=900)
    assert catalog.cut
    block = render_catalog([entries[25]], format=format)
    view = read_view(
        [
            {"role": "system", "content": f"Be helpful.\n\n{catalog.text}\n\nGuidance."},
            {"role": "user", "content": render_system_reminder(f"Skills that match:\n\n{block}")},
            {"role": "user", "content": "do task 25"},
        ]
    )
    assert view.get("skill-25") == SeenSkill("skill-25", entries[25].description, "relevant")
    assert view.cut and view.listed + view.omitted == 30
    assert all(s.where == "catalog" for s in view.skills if s.name != "skill-25")


def test_with_the_catalog_in_a_reminder_a_second_reminder_is_the_relevant_block() -> None:
    entries = _entries(30)
    catalog = render_catalog(entries, format="xml", budget_chars=900)
    block = render_catalog([entries[3]], format="xml")
    view = read_view(
        [
            {"role": "system", "content": "Guidance only."},
            {"role": "user", "content": render_system_reminder(catalog)},
            {"role": "user", "content": render_system_reminder(block)},
            {"role": "user", "content": [{"type": "text", "text": "do task 3"}]},
        ]
    )
    seen = view.get("skill-03")
    assert seen is not None and seen.where == "relevant"
    assert seen.description == entries[3].description
    assert view.query == "do task 3"


def test_a_request_without_a_catalog_shows_nothing() -> None:
    view = read_view([{"role": "system", "content": "Hi."}, {"role": "user", "content": "x"}])
    assert view.skills == () and view.omitted == 0 and not view.cut and view.query == "x"

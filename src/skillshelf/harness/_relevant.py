"""The skills relevant to a user message: when the catalog's budget cannot show every skill's
description, the best matches for the latest user message, with whole descriptions, travel
beside that message as a ``<system-reminder>`` (Agent Zero's idea). The system prompt stays
byte-stable for prompt caching; the block changes only with the message.

One function for every face: the agent loop puts the block in the history just before the
user's message; the integrations put it after their stable instructions; ``serve`` has no
user messages and relies on the search-first rule and ``skill_search`` instead.
"""

from __future__ import annotations

from typing import Final

from skillshelf.core.catalog import CatalogEntry, CatalogFit, CatalogFormat, render_catalog
from skillshelf.core.render import render_system_reminder
from skillshelf.skills.skill import Skill
from skillshelf.tools import SkillTools

__all__ = ["RELEVANT_CHARS", "RELEVANT_QUERY_CHARS", "relevant_block"]

RELEVANT_CHARS: Final = 4_000  # the block's catalog: a few whole descriptions
RELEVANT_QUERY_CHARS: Final = 2_000  # of the message, searched (its start says what it asks)
# Matches fetched beyond ``count``, to skip those the catalog already shows in full.
_EXTRA_HITS: Final = 50
_LEAD: Final = (
    "Skills that match this message, with their whole descriptions (the catalog could not "
    "show them all). Load one with skill_load only if it fits the task:"
)


def relevant_block(
    tools: SkillTools,
    skills: list[Skill],
    fit: CatalogFit,
    message: str,
    *,
    count: int,
    format: CatalogFormat,
) -> str | None:
    """The ``<system-reminder>`` of the best ``count`` matches for ``message`` that the
    catalog ``fit`` (of the loadable ``skills``, in order) does not show in full; None when
    it shows every skill in full, ``count`` is 0, or nothing matches."""
    if count <= 0 or all(fate == "full" for fate in fit.fates):
        return None
    query = message[:RELEVANT_QUERY_CHARS].strip()
    if not query:
        return None
    loadable = [s for s in skills if s.model_invocable]
    shown_in_full = {s.name for s, fate in zip(loadable, fit.fates, strict=False) if fate == "full"}
    by_name = {s.name: s for s in loadable}
    entries = [
        CatalogEntry.of(by_name[hit.name])
        for hit in tools.matches(query, count + min(len(shown_in_full), _EXTRA_HITS))
        if hit.name in by_name and hit.name not in shown_in_full
    ][:count]
    if not entries:
        return None
    catalog = render_catalog(entries, format=format, budget_chars=RELEVANT_CHARS)
    return render_system_reminder(f"{_LEAD}\n\n{catalog}")

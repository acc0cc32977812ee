"""What the model reads before the conversation: the caller's instructions, the skills catalog
(within a budget, in a stable order) and short guidance on the skill tools.

One rendering for every face (the agent loop, ``serve``'s instructions, the framework
integrations), so the bytes agree and stay stable for prompt caching: they change only when the
visible skill set does.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from typing import Final

from skillshelf.core.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.core.render import render_system_reminder
from skillshelf.harness._settings import DEFAULT_CATALOG_BUDGET, SkillSettings
from skillshelf.harness._tool_style import GUIDANCE, guidance
from skillshelf.skills.skill import Skill

__all__ = ["Prompt", "skills_catalog", "skills_prompt"]

_REMINDER_LEAD: Final = "The following skills are available in this conversation:"


def skills_catalog(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = DEFAULT_CATALOG_BUDGET,
) -> str:
    """The catalog of the skills a model may load (the model-invocable ones of ``skills``);
    empty when there are none."""
    entries = [CatalogEntry.of(s) for s in skills if s.model_invocable]
    if not entries:
        return ""
    return render_catalog(entries, format=format, budget_chars=budget_chars)


def skills_prompt(
    skills: Sequence[Skill],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = DEFAULT_CATALOG_BUDGET,
) -> str:
    """:func:`skills_catalog` followed by the tool guidance; empty when no skill is loadable."""
    catalog = skills_catalog(skills, format=format, budget_chars=budget_chars)
    return f"{catalog}\n\n{GUIDANCE}" if catalog else ""


class Prompt:
    """The system prompt and catalog reminder of one harness, rendered again only when the
    visible, model-invocable skills change (their names and descriptions)."""

    def __init__(self, settings: SkillSettings) -> None:
        self.settings = settings
        self._lock = threading.Lock()
        self._cached: tuple[tuple[CatalogEntry, ...], str] | None = None

    def catalog(self, skills: Sequence[Skill]) -> str:
        """The catalog of ``skills`` (the visible ones); empty when none is loadable."""
        entries = tuple(CatalogEntry.of(s) for s in skills if s.model_invocable)
        with self._lock:
            cached = self._cached
        if cached is not None and cached[0] == entries:
            return cached[1]
        text = (
            render_catalog(
                list(entries),
                format=self.settings.catalog_format,
                budget_chars=self.settings.catalog_budget,
            )
            if entries
            else ""
        )
        with self._lock:
            self._cached = (entries, text)
        return text

    def system(self, skills: Sequence[Skill]) -> str:
        """The system prompt: instructions, catalog (unless it goes in a reminder), guidance."""
        settings = self.settings
        catalog = self.catalog(skills)
        if not catalog:
            return settings.instructions if settings.instructions.strip() else ""
        if settings.catalog_placement == "reminder":
            catalog = ""
        parts = [settings.instructions.strip(), catalog, guidance(settings.tool_style)]
        return "\n\n".join(p for p in parts if p.strip())

    def reminder(self, skills: Sequence[Skill]) -> str | None:
        """The ``<system-reminder>`` user message carrying the catalog, when
        ``catalog_placement`` is ``reminder`` and a skill is loadable; else None."""
        if self.settings.catalog_placement != "reminder":
            return None
        catalog = self.catalog(skills)
        return render_system_reminder(f"{_REMINDER_LEAD}\n\n{catalog}") if catalog else None

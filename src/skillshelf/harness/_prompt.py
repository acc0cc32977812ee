"""What the model reads before the conversation: the caller's instructions, the skills catalog
(within a budget, in a stable order) and short guidance on the skill tools.

One rendering for every face (the agent loop, ``serve``'s instructions, the framework
integrations), so the bytes agree and stay stable for prompt caching: they change only when the
visible skill set does.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Final

from skillshelf.core.catalog import (
    CatalogEntry,
    CatalogFit,
    CatalogFormat,
    fit_catalog,
    render_catalog,
)
from skillshelf.core.render import render_system_reminder
from skillshelf.harness._recent import Recent
from skillshelf.harness._settings import DEFAULT_CATALOG_BUDGET, SkillSettings
from skillshelf.harness._tool_style import GUIDANCE, SEARCH_FIRST, guidance
from skillshelf.skills.skill import Skill

__all__ = ["Prompt", "skills_catalog", "skills_prompt"]

_REMINDER_LEAD: Final = "The following skills are available in this conversation:"
_EMPTY: Final = CatalogFit("", ())
_KEPT_FITS: Final = 16
logger = logging.getLogger(__name__)


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
        # The shared catalog, and those of sessions whose switches or turn narrow it.
        self._fits: Recent[tuple[CatalogEntry, ...], CatalogFit] = Recent(_KEPT_FITS)
        self._warned: tuple[int, int, int, int] | None = None

    def fit(self, skills: Sequence[Skill]) -> CatalogFit:
        """The catalog of ``skills`` (the visible ones) within the budget, with what it shows
        of each loadable skill (in name order); empty when none is loadable."""
        entries = tuple(CatalogEntry.of(s) for s in skills if s.model_invocable)
        cached = self._fits.get(entries)
        if cached is not None:
            return cached
        fit = (
            fit_catalog(
                entries,
                format=self.settings.catalog_format,
                budget_chars=self.settings.catalog_budget,
            )
            if entries
            else _EMPTY
        )
        self._fits.put(entries, fit)
        self._warn_if_cut(fit)
        return fit

    def catalog(self, skills: Sequence[Skill]) -> str:
        """The catalog of ``skills`` (the visible ones); empty when none is loadable."""
        return self.fit(skills).text

    def _warn_if_cut(self, fit: CatalogFit) -> None:
        """Tell the operator, once per outcome, what the budget left out of the catalog."""
        figures = (
            fit.count("full"),
            fit.count("trimmed"),
            fit.count("name_only"),
            fit.count("omitted"),
        )
        if figures[0] == len(fit.fates) or figures == self._warned:
            return
        self._warned = figures
        full, trimmed, names, omitted = figures
        logger.warning(
            "The skills catalog (%d skills) exceeds its budget of %s characters (%s format): "
            "%d shown in full, %d with shortened descriptions, %d by name only, %d left out%s. "
            "Raise the budget (catalog_budget, --catalog-budget) or narrow the visible "
            "skills to show more.",
            len(fit.fates),
            f"{self.settings.catalog_budget:,}",
            self.settings.catalog_format,
            full,
            trimmed,
            names,
            omitted,
            "; the model is told to search first" if fit.cut else "",
        )

    def system(
        self,
        skills: Sequence[Skill],
        *,
        catalog: str | None = None,
        guidance_text: str | None = None,
    ) -> str:
        """The system prompt: instructions, catalog (unless it goes in a reminder), guidance;
        ``catalog`` and ``guidance_text`` replace those parts (a request's own text)."""
        settings = self.settings
        fit = self.fit(skills)
        shown = fit.text if catalog is None else catalog
        if not fit.text and catalog is None:
            return settings.instructions if settings.instructions.strip() else ""
        if settings.catalog_placement == "reminder" and catalog is None:
            shown = ""
        # The search-first rule, when the catalog is the harness's own and search is offered.
        searchable = settings.skill_tools is None or "skill_search" in settings.skill_tools
        cut = fit.cut and catalog is None and searchable
        text = guidance_text if guidance_text is not None else settings.guidance
        if text is None:
            text = guidance(settings.tool_style, cut=cut)
        elif cut:
            text = f"{text} {SEARCH_FIRST}".strip()
        parts = [settings.instructions.strip(), shown, text]
        return "\n\n".join(p for p in parts if p.strip())

    def reminder(self, skills: Sequence[Skill]) -> str | None:
        """The ``<system-reminder>`` user message carrying the catalog, when
        ``catalog_placement`` is ``reminder`` and a skill is loadable; else None."""
        if self.settings.catalog_placement != "reminder":
            return None
        catalog = self.catalog(skills)
        return render_system_reminder(f"{_REMINDER_LEAD}\n\n{catalog}") if catalog else None

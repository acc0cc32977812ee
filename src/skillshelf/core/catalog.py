"""Catalog rendering: the skills' names and descriptions as prompt text, within a budget.

Pure functions over values. The XML form is byte-identical to skills-ref's ``to_prompt`` for
the same skills in the same order, except that a location holding ``& < > " '`` is escaped too
(skills-ref leaves it raw, so a folder name could close ``<location>`` and forge a skill); the
Markdown form is more compact and keeps each name on its line. A budget never drops a
skill silently: descriptions are trimmed evenly first, then only names are listed, and only
when even the names do not fit are the remaining skills counted in a closing line that points
the model at ``skill_search``.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Final, Literal, NamedTuple, Protocol

from skillshelf.core.markup import escape_xml, one_line
from skillshelf.errors import UsageError

__all__ = ["CatalogEntry", "CatalogFormat", "render_catalog"]

CatalogFormat = Literal["xml", "markdown"]
_ELLIPSIS: Final = "…"
# Below this, a trimmed description says too little to choose by; list names instead.
MIN_DESCRIPTION_CHARS: Final = 40


class _SkillLike(Protocol):
    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def directory(self) -> str: ...
    @property
    def skill_md_name(self) -> str: ...


class CatalogEntry(NamedTuple):
    """One line of the catalog (a tuple: cheap to build for 10,000 skills).

    Attributes:
        name: The skill's name.
        description: Its description.
        location: Where its SKILL.md is (shown in the XML form).
    """

    name: str
    description: str
    location: str

    @classmethod
    def of(cls, skill: _SkillLike) -> CatalogEntry:
        """Build the entry for a discovered skill."""
        return cls(skill.name, skill.description, f"{skill.directory}/{skill.skill_md_name}")


def render_catalog(
    entries: Iterable[CatalogEntry],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
) -> str:
    """Render the catalog in the given order (callers sort; the repository sorts by name).

    Args:
        entries: The skills to list.
        format: ``"xml"`` (skills-ref's ``<available_skills>``) or ``"markdown"``.
        budget_chars: Upper bound on the result's length; None for no bound. The closing
            "N more skills are not listed" line is always kept, even when it alone is longer.

    Raises:
        UsageError: An unknown format or a negative budget.
    """
    if format not in ("xml", "markdown"):
        raise UsageError(f"Unknown catalog format {format!r}; use 'xml' or 'markdown'")
    if budget_chars is not None and budget_chars < 0:
        raise UsageError("budget_chars must be zero or more")
    items = _escaped(entries, format)
    full = _render(items, format, desc_limit=None)
    if budget_chars is None or len(full) <= budget_chars:
        return full
    limit = _widest_description_that_fits(items, format, budget_chars)
    if limit is not None:
        return _render(items, format, desc_limit=limit)
    return _names_within(items, format, budget_chars)


def _escaped(entries: Iterable[CatalogEntry], format: CatalogFormat) -> list[CatalogEntry]:
    """Escape names and locations once, not on each render of the budget search.

    Descriptions are escaped as they are rendered: a trim must count their own characters.
    """
    items = list(entries)
    if not items:
        return items
    # One check over all the names (and locations) at once: almost every catalog has nothing
    # to escape, and an escaping call per entry would cost as much as the render itself.
    names, _, locations = zip(*items, strict=True)
    if format == "xml":
        together = "".join(names) + "".join(locations)
        if escape_xml(together) != together:
            return [CatalogEntry(escape_xml(n), d, escape_xml(loc)) for n, d, loc in items]
    elif not "".join(names).isprintable():  # a line break in a name would start a line
        return [CatalogEntry(one_line(n), d, loc) for n, d, loc in items]
    return items


def _trim(text: str, limit: int | None) -> str:
    if limit is None or len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + _ELLIPSIS


def _render(
    items: Sequence[CatalogEntry],
    format: CatalogFormat,
    *,
    desc_limit: int | None,
    names_only: bool = False,
    omitted: int = 0,
) -> str:
    if format == "xml":
        return _render_xml(items, desc_limit=desc_limit, names_only=names_only, omitted=omitted)
    return _render_markdown(items, desc_limit=desc_limit, names_only=names_only, omitted=omitted)


def _render_xml(
    items: Sequence[CatalogEntry], *, desc_limit: int | None, names_only: bool, omitted: int
) -> str:
    if names_only:
        parts = [f"<skill>\n<name>\n{item.name}\n</name>\n</skill>" for item in items]
    else:
        parts = [
            f"<skill>\n<name>\n{name}\n</name>\n"
            f"<description>\n{escape_xml(_trim(description, desc_limit))}\n</description>\n"
            f"<location>\n{location}\n</location>\n</skill>"
            for name, description, location in items
        ]
    if omitted:
        parts.append(f'<omitted count="{omitted}">{_omitted_text(omitted)}</omitted>')
    return "\n".join(["<available_skills>", *parts, "</available_skills>"])


def _render_markdown(
    items: Sequence[CatalogEntry], *, desc_limit: int | None, names_only: bool, omitted: int
) -> str:
    lines = ["## Available skills", ""]
    if names_only:
        if items:
            lines.append(", ".join(f"`{item.name}`" for item in items))
    else:
        for item in items:
            description = " ".join(_trim(item.description, desc_limit).split())
            lines.append(f"- **{item.name}**: {description}")
    if omitted:
        if items:
            lines.append("")
        lines.append(_omitted_text(omitted))
    return "\n".join(lines)


def _omitted_text(omitted: int) -> str:
    noun = "skill is" if omitted == 1 else "skills are"
    return f"{omitted} more {noun} not listed here; call skill_search to find them."


def _widest_description_that_fits(
    items: Sequence[CatalogEntry], format: CatalogFormat, budget: int
) -> int | None:
    """Binary-search the longest per-description cap that fits the budget."""
    longest = max((len(item.description) for item in items), default=0)
    low, high, best = MIN_DESCRIPTION_CHARS, longest, None
    while low <= high:
        mid = (low + high) // 2
        if len(_render(items, format, desc_limit=mid)) <= budget:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _names_within(items: Sequence[CatalogEntry], format: CatalogFormat, budget: int) -> str:
    names_only = _render(items, format, desc_limit=None, names_only=True)
    if len(names_only) <= budget:
        return names_only
    # Keep the longest prefix of skills whose names fit beside the "N more" line.
    low, high, best = 0, len(items), 0
    while low <= high:
        mid = (low + high) // 2
        text = _render(
            items[:mid], format, desc_limit=None, names_only=True, omitted=len(items) - mid
        )
        if len(text) <= budget:
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return _render(
        items[:best], format, desc_limit=None, names_only=True, omitted=len(items) - best
    )

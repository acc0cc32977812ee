"""Catalog rendering: the skills' names and descriptions as prompt text, within a budget.

Pure functions over values. The XML form is byte-identical to skills-ref's ``to_prompt`` for
the same skills in the same order, except that a location holding ``& < > " '`` is escaped too
(skills-ref leaves it raw, so a folder name could close ``<location>`` and forge a skill); the
Markdown form is more compact and keeps each name on its line.

A budget degrades the catalog one step at a time and uses the whole budget at each step
(:func:`fit_catalog` says what each skill got):

1. every description in full;
2. the XML form without ``<location>`` (the skill tools take names, not paths);
3. descriptions shortened, none below its first sentence (the rest evenly);
4. descriptions shortened evenly, to no less than :data:`MIN_DESCRIPTION_CHARS`;
5. the first skills keep a short description, the rest are listed by name (never names only
   while a description still fits);
6. the first names that fit, and a closing line that counts the skills left out and points the
   model at ``skill_search``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Final, Literal, NamedTuple, Protocol

from skillshelf.core.markup import escape_xml, one_line
from skillshelf.errors import UsageError

__all__ = ["CatalogEntry", "CatalogFit", "CatalogFormat", "Fate", "fit_catalog", "render_catalog"]

CatalogFormat = Literal["xml", "markdown"]
Fate = Literal["full", "trimmed", "name_only", "omitted"]
"""What a budget left of one skill: its whole description, a shortened one, its name, nothing."""

_ELLIPSIS: Final = "…"
# Below this, a trimmed description says too little to choose by; list names instead.
MIN_DESCRIPTION_CHARS: Final = 40
# A sentence ends at one of these followed by a space or the end (CJK stops need no space).
_SENTENCE_END: Final = re.compile(r"[.!?](?=\s|$)|[。！？]")
_NAME_ONLY: Final = -1  # a description cap meaning "list the name only"


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


class CatalogFit(NamedTuple):
    """A rendered catalog and what the budget left of each skill.

    Attributes:
        text: The catalog text.
        fates: One :data:`Fate` per entry, in the entries' order.
    """

    text: str
    fates: tuple[Fate, ...]

    @property
    def cut(self) -> bool:
        """Whether some skill is shown without its description or not at all."""
        return "name_only" in self.fates or "omitted" in self.fates

    def count(self, fate: Fate) -> int:
        """How many skills got ``fate``."""
        return self.fates.count(fate)


class _Layout(NamedTuple):
    """One step of the policy: a description cap per shown skill (None: in full;
    ``_NAME_ONLY``: the name only), whether locations are shown, and how many skills follow
    unlisted."""

    caps: Sequence[int | None]
    locations: bool = True
    omitted: int = 0


def render_catalog(
    entries: Iterable[CatalogEntry],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
) -> str:
    """Render the catalog in the given order (callers sort; the repository sorts by name).

    The text of :func:`fit_catalog`; see there.
    """
    return fit_catalog(entries, format=format, budget_chars=budget_chars).text


def fit_catalog(
    entries: Iterable[CatalogEntry],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
) -> CatalogFit:
    """Render the catalog within a budget, by the steps in this module's docstring.

    Args:
        entries: The skills to list, in the order to list them.
        format: ``"xml"`` (skills-ref's ``<available_skills>``) or ``"markdown"``.
        budget_chars: Upper bound on the text's length; None for no bound. The closing
            "N more skills are not listed" line is always kept, even when it alone is longer.

    Raises:
        UsageError: An unknown format or a negative budget.
    """
    if format not in ("xml", "markdown"):
        raise UsageError(f"Unknown catalog format {format!r}; use 'xml' or 'markdown'")
    if budget_chars is not None and budget_chars < 0:
        raise UsageError("budget_chars must be zero or more")
    items = _escaped(entries, format)
    layout = _Layout([None] * len(items))
    text = _render(items, format, layout)
    if budget_chars is not None and len(text) > budget_chars:
        layout = _choose(items, format, budget_chars)
        text = _render(items, format, layout)
    return CatalogFit(text, _fates(items, layout))


def _choose(items: Sequence[CatalogEntry], format: CatalogFormat, budget: int) -> _Layout:
    """The first step of the policy whose layout fits the budget."""
    n = len(items)
    longest = max((len(item.description) for item in items), default=0)
    firsts = [_first_sentence(item.description) for item in items]

    def fits(layout: _Layout) -> bool:
        return len(_render(items, format, layout)) <= budget

    if format == "xml":
        bare = _Layout([None] * n, locations=False)
        if fits(bare):
            return bare
    candidates: list[tuple[Callable[[int], _Layout], int, int]] = [
        # 3. No description below its first sentence; the cap above it grows to fill the budget.
        (lambda cap: _Layout([max(f, cap) for f in firsts], False), 0, longest),
        # 4. Every description to the same cap, down to the minimum.
        (lambda cap: _Layout([cap] * n, False), MIN_DESCRIPTION_CHARS, longest),
        # 5. The first ``k`` skills keep a minimal description, the rest their names.
        (
            lambda k: _Layout([MIN_DESCRIPTION_CHARS] * k + [_NAME_ONLY] * (n - k), False),
            0,
            n,
        ),
    ]
    for make, low, high in candidates:
        if fits(make(low)):
            return make(_largest(low, high, functools.partial(_fits_with, fits, make)))
    # 6. The first names that fit beside the "N more" line.
    shown = _largest(0, n, lambda k: fits(_Layout([_NAME_ONLY] * k, False, n - k)))
    return _Layout([_NAME_ONLY] * shown, False, n - shown)


def _fits_with(fits: Callable[[_Layout], bool], make: Callable[[int], _Layout], value: int) -> bool:
    return fits(make(value))


def _largest(low: int, high: int, ok: Callable[[int], bool]) -> int:
    """The largest value in ``[low, high]`` for which ``ok`` holds (``ok`` is monotone and
    holds at ``low``, or ``low`` is returned)."""
    best = low
    low += 1
    while low <= high:
        mid = (low + high) // 2
        if ok(mid):
            best, low = mid, mid + 1
        else:
            high = mid - 1
    return best


def _first_sentence(text: str) -> int:
    """The cap that keeps ``text``'s first sentence whole (all of it when it has one)."""
    match = _SENTENCE_END.search(text)
    return match.end() + 1 if match and match.end() < len(text) else len(text)


def _fates(items: Sequence[CatalogEntry], layout: _Layout) -> tuple[Fate, ...]:
    fates: list[Fate] = []
    for item, cap in zip(items, layout.caps, strict=False):
        if cap == _NAME_ONLY:
            fates.append("name_only")
        elif cap is None or len(item.description) <= cap:
            fates.append("full")
        else:
            fates.append("trimmed")
    fates.extend(["omitted"] * layout.omitted)
    return tuple(fates)


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


def _trim(text: str, cap: int | None) -> str:
    """``text`` in at most ``cap`` characters, an ellipsis included (a space before it when the
    cut falls after a whole sentence, so the sentence keeps its stop)."""
    if cap is None or len(text) <= cap:
        return text
    head = text[: max(0, cap - 1)].rstrip()
    if head and _SENTENCE_END.fullmatch(head[-1]):
        return f"{head} {_ELLIPSIS}"
    return head + _ELLIPSIS


def _render(items: Sequence[CatalogEntry], format: CatalogFormat, layout: _Layout) -> str:
    if format == "xml":
        return _render_xml(items, layout)
    return _render_markdown(items, layout)


def _render_xml(items: Sequence[CatalogEntry], layout: _Layout) -> str:
    parts = []
    for (name, description, location), cap in zip(items, layout.caps, strict=False):
        if cap == _NAME_ONLY:
            parts.append(f"<skill>\n<name>\n{name}\n</name>\n</skill>")
            continue
        where = f"<location>\n{location}\n</location>\n" if layout.locations else ""
        parts.append(
            f"<skill>\n<name>\n{name}\n</name>\n"
            f"<description>\n{escape_xml(_trim(description, cap))}\n</description>\n"
            f"{where}</skill>"
        )
    if layout.omitted:
        parts.append(f'<omitted count="{layout.omitted}">{_omitted_text(layout.omitted)}</omitted>')
    return "\n".join(["<available_skills>", *parts, "</available_skills>"])


def _render_markdown(items: Sequence[CatalogEntry], layout: _Layout) -> str:
    lines = ["## Available skills", ""]
    names: list[str] = []
    for item, cap in zip(items, layout.caps, strict=False):
        if cap == _NAME_ONLY:
            names.append(f"`{item.name}`")
        else:
            description = " ".join(_trim(item.description, cap).split())
            lines.append(f"- **{item.name}**: {description}")
    if names:
        if len(lines) > 2:
            lines.extend(["", "Also (names only; skill_search shows their descriptions):"])
        lines.append(", ".join(names))
    if layout.omitted:
        if len(lines) > 2:
            lines.append("")
        lines.append(_omitted_text(layout.omitted))
    return "\n".join(lines)


def _omitted_text(omitted: int) -> str:
    noun = "skill is" if omitted == 1 else "skills are"
    return f"{omitted} more {noun} not listed here; call skill_search to find them."

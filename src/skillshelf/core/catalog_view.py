"""Reading back what a request showed of the skills: the inverse of :mod:`skillshelf.core.catalog`.

A model sees the skills in up to three places: the catalog in the system prompt, the catalog in
a ``<system-reminder>`` user message (``catalog_placement="reminder"``), and the block of skills
relevant to the user's message (a ``<system-reminder>`` just before it). Each holds a catalog in
either format, whole, trimmed, by name only or mixed, possibly with a count of skills left out.
:func:`read_view` reads all of them from the request's messages, so whoever must decide from
exactly what a model received — the offline ``baseline:search`` model, an eval reporting whether
the expected skill was visible — reads the same bytes the model did and nothing else.

Which reminder is which follows from where the harness puts them: the catalog is in the system
prompt, or else in the first reminder that holds one; every other reminder with a catalog in it
is a relevant-skills block. Round-trip tests render every budget step with
:func:`~skillshelf.core.catalog.fit_catalog` and read it back.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

__all__ = ["REMINDER_OPEN", "CatalogView", "SeenSkill", "Where", "read_catalog", "read_view"]

Where = Literal["catalog", "relevant"]
"""Where a request showed a skill: the catalog (system prompt or its reminder), or the block of
skills relevant to the user's message."""

REMINDER_OPEN: Final = "<system-reminder>"
_XML_BLOCK: Final = re.compile(r"<available_skills>\n(.*?)</available_skills>", re.DOTALL)
_XML_SKILL: Final = re.compile(
    r"<skill>\n<name>\n(?P<name>.*?)\n</name>\n"
    r"(?:<description>\n(?P<description>.*?)\n</description>\n)?"
    r"(?:<location>\n.*?\n</location>\n)?</skill>",
    re.DOTALL,
)
_XML_OMITTED: Final = re.compile(r'<omitted count="(\d+)">')
_MD_HEADER: Final = "## Available skills"
_MD_ENTRY: Final = re.compile(r"- \*\*(?P<name>[^*\n]+)\*\*: (?P<description>.*)")
_MD_NAMES: Final = re.compile(r"`[^`\n]+`(?:, `[^`\n]+`)*")
_MD_NAME: Final = re.compile(r"`([^`\n]+)`")
_MD_OMITTED: Final = re.compile(r"(\d+) more skills? (?:is|are) not listed here\b.*")
_MD_NAMES_LEAD: Final = "Also ("


@dataclass(frozen=True, slots=True)
class SeenSkill:
    """A skill as the request showed it, at its best sighting.

    Attributes:
        name: The skill's name (unescaped).
        description: What the request showed of its description (unescaped; a trimmed one ends
            with ``…``); None when it was listed by name only.
        where: Where that sighting was.
    """

    name: str
    description: str | None
    where: Where


@dataclass(frozen=True, slots=True)
class CatalogView:
    """Everything a request showed of the skills.

    Attributes:
        skills: One entry per name, in the order first seen; a name seen several times keeps
            its sighting with the longest description (a whole description in the relevant
            block beats a trimmed one in the catalog).
        omitted: Skills the catalog says it left out (``N more skills are not listed``).
        listed: Skills the catalog listed (with a description or by name), so the catalog
            speaks of ``listed + omitted`` skills in all.
        query: The latest user message that is not a ``<system-reminder>``; None when none.
    """

    skills: tuple[SeenSkill, ...] = ()
    omitted: int = 0
    listed: int = 0
    query: str | None = None

    def get(self, name: str) -> SeenSkill | None:
        """The sighting of ``name``, None when the request did not show it."""
        return next((s for s in self.skills if s.name == name), None)

    @property
    def cut(self) -> bool:
        """Whether some skill was shown without a description or left out."""
        return self.omitted > 0 or any(s.description is None for s in self.skills)

    @property
    def described(self) -> int:
        """How many skills were shown with a description."""
        return sum(s.description is not None for s in self.skills)


def read_catalog(text: str) -> tuple[list[tuple[str, str | None]], int]:
    """Every catalog in ``text``, in either format: ``(name, description or None)`` in order,
    and the number of skills they say they left out."""
    entries: list[tuple[str, str | None]] = []
    omitted = 0
    for block in _XML_BLOCK.finditer(text):
        for match in _XML_SKILL.finditer(block[1]):
            description = match["description"]
            entries.append(
                (
                    html.unescape(match["name"]),
                    None if description is None else html.unescape(description),
                )
            )
        omitted += sum(int(m[1]) for m in _XML_OMITTED.finditer(block[1]))
    lines = text.split("\n")
    for start, line in enumerate(lines):
        if line == _MD_HEADER:
            omitted += _read_markdown(lines[start + 1 :], entries)
    return entries, omitted


def _read_markdown(lines: Sequence[str], entries: list[tuple[str, str | None]]) -> int:
    """Read one Markdown catalog from the lines after its header, up to the first line that
    is not part of it; returns the count of skills it left out."""
    omitted = 0
    for line in lines:
        entry = _MD_ENTRY.fullmatch(line)
        if entry is not None:
            entries.append((entry["name"], entry["description"]))
        elif _MD_NAMES.fullmatch(line):
            entries.extend((name, None) for name in _MD_NAME.findall(line))
        elif (counted := _MD_OMITTED.fullmatch(line)) is not None:
            omitted += int(counted[1])
        elif line and not line.startswith(_MD_NAMES_LEAD):
            break
    return omitted


def read_view(messages: Iterable[Mapping[str, Any]]) -> CatalogView:
    """What ``messages`` (a request's, system first, OpenAI chat shape) show of the skills."""
    best: dict[str, SeenSkill] = {}
    listed: set[str] = set()
    omitted = 0
    query: str | None = None
    catalog_seen = False
    for message in messages:
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "system":
            entries, left_out = read_catalog(text)
            where: Where = "catalog"
        elif role == "user" and text.lstrip().startswith(REMINDER_OPEN):
            entries, left_out = read_catalog(text)
            where = "catalog" if not catalog_seen else "relevant"
        else:
            if role == "user":
                query = text
            continue
        if entries or left_out:
            catalog_seen = catalog_seen or where == "catalog"
        if where == "catalog":
            omitted += left_out
            listed.update(name for name, _ in entries)
        for name, description in entries:
            _keep(best, SeenSkill(name, description, where))
    return CatalogView(tuple(best.values()), omitted, len(listed), query)


def _keep(best: dict[str, SeenSkill], seen: SeenSkill) -> None:
    old = best.get(seen.name)
    if old is None or len(seen.description or "") > len(old.description or ""):
        # dict order stays the first sighting's: assigning to a present key keeps its place.
        best[seen.name] = seen


def _text(content: Any) -> str:
    """A message's text: a string, or the text parts of a list of content parts."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text") for p in content if isinstance(p, Mapping)]
        return "\n".join(p for p in parts if isinstance(p, str))
    return ""

"""The catalog tools: ``skill_search`` and ``skill_list``, a page at a time."""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from typing import Any, Final

from skillshelf.core.search import SearchHit
from skillshelf.errors import clip
from skillshelf.skills.skill import Skill
from skillshelf.tools._view import Names, SkillView

__all__ = ["LIST_CHARS", "LIST_PAGE", "list_skills", "search", "visible_hits"]

_DESC_CHARS: Final = 200
# skill_search shows a match's description whole (the spec caps one at 1,024 characters): the
# model searches when the catalog could not show it, so the answer must say what it does.
_SEARCH_DESC_CHARS: Final = 1_024
# skill_list answers a page at a time: at most LIST_PAGE skills and LIST_CHARS characters
# (a page of long tags stops early), then a cursor for the next page. The catalog of a large
# repository is for skill_search; a page keeps every answer, and so every call, the same size
# at 100 skills as at 100,000, and nothing unbounded goes back to the model.
LIST_PAGE: Final = 100
LIST_CHARS: Final = 50_000


def visible_hits(view: SkillView, query: str, limit: int) -> list[SearchHit]:
    """The best ``limit`` matches for ``query`` among the skills the model may load."""
    names = Names(view, by_user=False)
    # Hidden skills are filtered after ranking: fetch more until `limit` are left (the
    # ranking is a total order, so a longer fetch starts with the shorter one).
    fetch = max(limit, 1)
    while True:
        found = view.repo.search(query, limit=fetch)
        hits = [h for h in found if h.name in names][:limit]
        if len(hits) >= limit or len(found) < fetch:
            return hits
        fetch *= 4


def search(view: SkillView, query: str, limit: int) -> tuple[str, dict[str, Any]]:
    """``skill_search``: the best visible matches for ``query``, descriptions whole."""
    hits = visible_hits(view, query, limit)
    if not hits:
        text = f"No skill matches {query!r}. Call skill_list to see every skill."
        return text, {"results": []}
    shown = [(h.name, _short(h.description, _SEARCH_DESC_CHARS)) for h in hits]
    lines = [f"- {name}: {description}" for name, description in shown]
    lines.append("\nTo use one, call skill_load with its name.")
    data = [{"name": name, "description": description} for name, description in shown]
    return "\n".join(lines), {"results": data}


def list_skills(view: SkillView, cursor: str | None) -> tuple[str, dict[str, Any]]:
    """``skill_list``: the page after ``cursor`` (the first with None)."""
    if cursor is None:
        # The first page, the usual call, is kept per scan and shared by every call (to be
        # read, never changed); later pages cost O(page + log N).
        text, data = view.repo.memo(
            ("skill_tools.list", view.visible),
            lambda skills: _list_page(*view.with_names(skills), None),
        )
        return text, dict(data)
    skills, names = view.repo.memo(("skill_tools.visible", view.visible), view.with_names)
    return _list_page(skills, names, cursor)


def _list_page(
    skills: Sequence[Skill], names: Sequence[str], cursor: str | None
) -> tuple[str, dict[str, Any]]:
    """The page of ``skill_list`` after the skill named ``cursor`` (the first page with None)
    among the visible ``skills`` and their ``names``. Names are sorted, so a cursor whose skill
    has gone since still finds its place."""
    start = 0 if cursor is None else bisect.bisect_right(names, cursor)
    page = skills[start : start + LIST_PAGE]
    budget = LIST_CHARS
    text, data = _listing_within(page, budget, total=len(skills), start=start)
    # The slash-command heading and the note on what is left come on top of the lines counted:
    # shrink the room for lines until they fit too (a page always keeps its first skill).
    while len(text) > LIST_CHARS:
        budget -= len(text) - LIST_CHARS
        text, data = _listing_within(page, budget, total=len(skills), start=start)
    if cursor is not None and not page:
        text = f"No more skills after {clip(cursor)!r} ({len(skills)} in all)."
    return text, data


def _listing_within(
    skills: Sequence[Skill], budget: int, *, total: int, start: int
) -> tuple[str, dict[str, Any]]:
    """One page of ``skill_list``: the text and data of ``skills`` (the page's part of the
    ``total`` visible skills, from index ``start``), with at most ``budget`` characters of
    skill lines and slash commands."""
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    used = 0
    for skill in skills:
        line = ""
        if skill.model_invocable:  # user-only skills: listed below as slash commands only
            extras = [f"v{skill.version}"] if skill.version else []
            extras += [f"tags: {', '.join(skill.tags)}"] if skill.tags else []
            suffix = f" ({'; '.join(extras)})" if extras else ""
            line = f"- {skill.name}{suffix}: {_short(skill.description)}"
        command = len(skill.name) + 2 if skill.manifest.user_invocable else 0
        if rows and used + len(line) + 1 + command > budget:
            break
        used += (len(line) + 1 if line else 0) + command
        if line:
            lines.append(line)
        rows.append(
            {
                "name": skill.name,
                "version": skill.version,
                "tags": list(skill.tags),
                "description": _short(skill.description),
                "model_invocable": skill.model_invocable,
            }
        )
    shown = skills[: len(rows)]
    commands = [f"/{s.name}" for s in shown if s.manifest.user_invocable]
    if commands:
        lines.append("\nUser slash commands: " + " ".join(commands))
    left = total - start - len(rows)
    cursor = shown[-1].name if left > 0 and shown else None
    if cursor is not None:
        lines.append(
            f"\n[… {left} more skills after this page ({total} in all). Call skill_list with"
            f" cursor {cursor!r} for the next page, or skill_search with words from the task"
            " to find the right one.]"
        )
    if not lines:
        lines = ["No skills are available."]
    data = {
        "skills": rows,
        "commands": commands,
        "total": total,
        "start": start,
        "truncated": cursor is not None,
        "next_cursor": cursor,
    }
    return "\n".join(lines), data


def _short(text: str, chars: int = _DESC_CHARS) -> str:
    """``text`` on one line, cut to ``chars`` (a listing's description length by default)."""
    text = " ".join(text.split())
    return text if len(text) <= chars else text[: chars - 1] + "…"

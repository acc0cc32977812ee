"""One scan's state and the steps that settle it: a skill placed or skipped, the first of a
name winning, the last good version kept, the trust gate's review, the diff to the last scan."""

from __future__ import annotations

import os
from collections.abc import Hashable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from skillshelf.core.diagnostics import Diagnostic
from skillshelf.repository._findings import Changes, Ignored, Shadowed, Skipped
from skillshelf.skills.discovery import Found
from skillshelf.skills.index_cache import decode_blob
from skillshelf.skills.skill import Skill

if TYPE_CHECKING:
    from skillshelf.core.search import SearchIndex
    from skillshelf.trust.gate import Review

__all__ = ["ScanState", "apply_review", "diff", "keep_last_good", "place", "win"]


@dataclass(slots=True)
class ScanState:
    """What one scan found; a refresh builds a new one and swaps it in whole."""

    skills: dict[str, Skill] = field(default_factory=dict)
    shadowed: list[Shadowed] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)
    ignored: list[Ignored] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    stale: frozenset[str] = frozenset()
    # Built on first search and kept with the skills it indexes, so a refresh in another
    # thread (the watcher) can never leave an index of an older state behind.
    search_index: SearchIndex | None = None
    # Bumped by every refresh: derived values (visible names, enums, schemas) are keyed on it.
    version: int = 0
    memo: dict[Hashable, Any] = field(default_factory=dict)


def place(root: str, found: Found, state: ScanState) -> Skill | None:
    """The skill ``found`` is, or None (then it is recorded as skipped)."""
    directory, _, md_name = found.skill_md.rpartition(os.sep)
    row = found.row
    parsed = found.parsed
    if parsed is None and row[4] is not None:
        skill = Skill.from_row(row, directory, md_name, root, found.real)
    elif parsed is not None and parsed.valid and parsed.manifest is not None:
        skill = Skill(
            parsed.manifest,
            directory,
            md_name,
            root,
            parsed.diagnostics,
            real_directory=found.real,
            stamp=row[:4],
        )
    else:
        diagnostics = parsed.diagnostics if parsed else decode_blob(row)[1]
        state.skipped.append(Skipped(found.skill_md, root, diagnostics))
        return None
    return skill


def win(skill: Skill, state: ScanState, winners: dict[str, Skill]) -> None:
    """The first skill of a name wins; later ones are shadowed by it."""
    winner = winners.get(skill.name)
    if winner is None:
        winners[skill.name] = skill
    else:
        state.shadowed.append(Shadowed(skill, winner.directory))


def keep_last_good(before: dict[str, Skill], state: ScanState, winners: dict[str, Skill]) -> None:
    """Keep a skill edited into an invalid state at its last good version, and say so."""
    by_md = {f"{s.directory}{os.sep}{s.skill_md_name}": s for s in before.values()}
    stale = set()
    for i, skipped in enumerate(state.skipped):
        last_good = by_md.get(skipped.path)
        if last_good is None or last_good.name in winners:
            continue
        winners[last_good.name] = last_good
        stale.add(last_good.name)
        note = Diagnostic(
            "skill.stale",
            "warning",
            f"Skill {last_good.name!r} was edited into an invalid state; its last good "
            "version stays loaded until the error is fixed",
            None,
            skipped.path,
        )
        state.skipped[i] = Skipped(
            skipped.path, skipped.root, (*skipped.diagnostics, note), skipped.name, skipped.held
        )
    state.stale = frozenset(stale)


def diff(before: dict[str, Skill], after: dict[str, Skill]) -> Changes:
    added = tuple(n for n in after if n not in before)
    removed = tuple(n for n in before if n not in after)
    # A skill rebuilt from a SKILL.md with the same stamps is one discovery read again because
    # it changed too recently to trust them (a same-size edit in the same clock tick keeps
    # every stamp): its manifest then tells whether it changed.
    changed = tuple(
        n
        for n, s in after.items()
        if (b := before.get(n)) is not None
        and b is not s
        and ((b.directory, b.stamp) != (s.directory, s.stamp) or b.manifest != s.manifest)
    )
    return Changes(added, changed, removed)


def apply_review(review: Review, state: ScanState, winners: dict[str, Skill]) -> None:
    """Hold back or annotate the winning skills as the trust gate decided."""
    state.diagnostics.extend(review.diagnostics)
    for name, diagnostics in review.held.items():
        skill = winners.pop(name)
        state.skipped.append(
            Skipped(str(skill.skill_md), skill.root, diagnostics, skill.name, held=True)
        )
    for name, notes in review.notes.items():
        skill = winners[name]
        winners[name] = Skill(
            skill.manifest,
            skill.directory,
            skill.skill_md_name,
            skill.root,
            (*skill.diagnostics, *notes),
            real_directory=skill.real_directory,
            stamp=skill.stamp,
        )

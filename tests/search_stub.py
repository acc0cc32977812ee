"""The fields a search index reads from a skill, for index tests that need no files."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Skill:
    name: str
    description: str
    triggers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()

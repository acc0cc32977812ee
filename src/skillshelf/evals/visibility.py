"""Whether the expected skill was visible to the model: read from the first request of a run,
exactly as the model received it (:func:`~skillshelf.core.catalog_view.read_view`).

A run's :class:`Visibility` says how the request showed the expected skill — ``full`` (its
whole description), ``trimmed`` (a shortened one), ``name_only`` or ``absent`` — and where
(the catalog, or the block of skills relevant to the message), plus whether ``skill_search``
and a load tool were offered. A skill neither shown with its description nor findable with
``skill_search`` cannot be chosen for what it does: :attr:`Visibility.hidden`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final, Literal, cast

from skillshelf.core.catalog_view import Where, read_view
from skillshelf.models import ModelRequest

__all__ = ["SHOWN", "Shown", "Visibility", "visibility_of"]

Shown = Literal["full", "trimmed", "name_only", "absent"]
SHOWN: Final[tuple[Shown, ...]] = ("full", "trimmed", "name_only", "absent")
_LOAD_TOOLS: Final = ("skill_load", "Skill")
_ELLIPSIS: Final = "…"


@dataclass(frozen=True, slots=True)
class Visibility:
    """How a run's first request showed the expected skill.

    Attributes:
        shown: ``full``, ``trimmed``, ``name_only`` or ``absent``.
        where: ``catalog`` or ``relevant`` (the block beside the message); None when absent.
        skill_search: Whether ``skill_search`` was offered.
        load_tool: The tool offered to load a skill (``skill_load`` or ``Skill``); None when
            none was.
    """

    shown: Shown
    where: Where | None
    skill_search: bool
    load_tool: str | None

    @property
    def visible(self) -> bool:
        """Shown with its description, whole or trimmed."""
        return self.shown in ("full", "trimmed")

    @property
    def hidden(self) -> bool:
        """Not visible, and no ``skill_search`` to find it with, or no tool to load it with."""
        return self.load_tool is None or (not self.visible and not self.skill_search)

    def label(self) -> str:
        """``trimmed (catalog)``, ``full (relevant)``, ``name only``, ``absent``."""
        shown = self.shown.replace("_", " ")
        return f"{shown} ({self.where})" if self.visible and self.where else shown

    def to_json(self) -> dict[str, Any]:
        return {
            "shown": self.shown,
            "where": self.where,
            "skill_search": self.skill_search,
            "load_tool": self.load_tool,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Visibility | None:
        """The inverse of :meth:`to_json`; None for a value that is not one."""
        shown, where = data.get("shown"), data.get("where")
        load = data.get("load_tool")
        if shown not in SHOWN or where not in ("catalog", "relevant", None):
            return None
        return cls(
            cast(Shown, shown),
            cast("Where | None", where),
            data.get("skill_search") is True,
            load if isinstance(load, str) else None,
        )


def visibility_of(request: ModelRequest, skill: str, description: str) -> Visibility:
    """How ``request`` showed ``skill``, whose whole description is ``description``."""
    offered = {tool.name for tool in request.tools}
    load = next((name for name in _LOAD_TOOLS if name in offered), None)
    seen = read_view(request.messages).get(skill)
    search = "skill_search" in offered
    if seen is None:
        return Visibility("absent", None, search, load)
    if seen.description is None:
        return Visibility("name_only", seen.where, search, load)
    whole = " ".join(description.split())
    shown = " ".join(seen.description.split())
    trimmed = shown != whole and shown.endswith(_ELLIPSIS) and len(shown) < len(whole)
    return Visibility("trimmed" if trimmed else "full", seen.where, search, load)

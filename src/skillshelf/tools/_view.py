"""What one session may see of a repository: the visible skills, the names a call may pass,
and the one lookup of a named skill that every tool goes through.

What covers every visible skill is computed once per repository scan and ``visible``
predicate (:meth:`Repository.memo`); a lookup of one skill checks that skill alone.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterator, Sequence
from contextvars import ContextVar

from skillshelf.core.search import closest_names
from skillshelf.errors import ToolRetry, unknown_skill_message
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk_cache import WalkCache
from skillshelf.tools._spec import UNKNOWN_SKILL_ADVICE

__all__ = ["BY_USER", "Names", "SkillView"]

# True while a declared (user or harness) load runs: it may load user-only skills.
BY_USER: ContextVar[bool] = ContextVar("skillshelf_declared_load", default=False)


class _UnknownSkill(ToolRetry):
    """The skill named is not one this session may use (graded ``unknown_skill``)."""


class SkillView:
    """The skills of ``repo`` that ``visible`` lets through (all with None)."""

    def __init__(self, repo: Repository, visible: Callable[[Skill], bool] | None) -> None:
        self.repo = repo
        self.visible = visible

    def skills(self) -> tuple[Skill, ...]:
        """The visible skills, sorted by name."""
        return self.repo.memo(("skill_tools.skills", self.visible), self.filter)

    def filter(self, skills: Sequence[Skill]) -> tuple[Skill, ...]:
        """Those of ``skills`` that are visible."""
        return tuple(skills) if self.visible is None else tuple(filter(self.visible, skills))

    def with_names(self, all_skills: Sequence[Skill]) -> tuple[tuple[Skill, ...], list[str]]:
        """The visible ones of ``all_skills`` and their names."""
        skills = self.filter(all_skills)
        return skills, [s.name for s in skills]

    def names(self, by_user: bool = False) -> tuple[str, ...]:
        """Names the model may pass (visible and not reserved for the user); with
        ``by_user``, every visible name."""
        return self.repo.memo(
            ("skill_tools.names", self.visible, by_user),
            lambda skills: tuple(
                s.name for s in self.filter(skills) if by_user or s.model_invocable
            ),
        )

    def may_name(self, name: object, by_user: bool) -> bool:
        """Whether ``name`` is in :meth:`names`, without listing them."""
        skill = self.repo.find(name) if isinstance(name, str) else None
        if skill is None or (self.visible is not None and not self.visible(skill)):
            return False
        return by_user or skill.model_invocable

    def walks(self) -> WalkCache:
        """The skill folders' walks, kept per scan while unchanged (tree, links, doc list)."""
        return self.repo.memo("skill_tools.walks", lambda _skills: WalkCache())

    def skill(self, name: str) -> Skill:
        """The visible skill ``name``, which this call may use.

        Raises:
            ToolRetry: No visible skill has that name, or only the user may invoke it.
        """
        skill = self.repo.find(name)
        if skill is None or (self.visible is not None and not self.visible(skill)):
            suggestions = closest_names(name, self.names())
            raise _UnknownSkill(
                f"{unknown_skill_message(name, suggestions)} {UNKNOWN_SKILL_ADVICE}"
            )
        if not skill.model_invocable and not BY_USER.get():
            raise ToolRetry(
                f"Skill {name!r} can only be invoked by the user (as /{name}); "
                "do not load it yourself."
            )
        return skill


class Names(Collection[str]):
    """The names a call may pass, as argument parsing reads them: ``in`` checks the one
    skill named; iterating (repairs, suggestions) uses the list kept per scan."""

    __slots__ = ("_by_user", "_view")

    def __init__(self, view: SkillView, *, by_user: bool) -> None:
        self._view = view
        self._by_user = by_user

    def __contains__(self, name: object) -> bool:
        return self._view.may_name(name, self._by_user)

    def __iter__(self) -> Iterator[str]:
        return iter(self._view.names(self._by_user))

    def __len__(self) -> int:
        return len(self._view.names(self._by_user))

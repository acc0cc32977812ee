"""What the caller controls per conversation and per message, beyond the settings.

* **Switches** (Agent Zero's usage protocol), per conversation and agent, kept in the store:
  a *disabled* skill is gone for the conversation (not shown, not loadable by the model or
  the user; a loaded one is unloaded); a *hidden* one is left out of the catalog and the
  relevant-skills block but stays findable by ``skill_search`` and loadable; *enabled* undoes
  both.
* **Turn options** (trpc-agent-go's per-request model), for one user message: skills loaded
  for it, the skills the model may see, the catalog and guidance text, the skill tools offered.

Both reach every face through :class:`~skillshelf.harness.SkillSession`.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final, Literal

from skillshelf.errors import UsageError
from skillshelf.skills.skill import Skill
from skillshelf.stores import Doc, Entries, SessionStore

__all__ = ["SWITCHES_ENTRY", "SessionFilter", "Switch", "SwitchLog", "TurnOptions"]

SWITCHES_ENTRY: Final = "switches"
Switch = Literal["enabled", "disabled", "hidden"]
_MAX_SWITCHED: Final = 10_000  # names kept per conversation (a store entry stays bounded)


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnOptions:
    """The caller's choices for one user message (None: the settings decide).

    Attributes:
        load: Skills (or ``(skill, docs)``) loaded for this message, as a user's slash
            command would load them; they end with the turn.
        only: The skills the model may see and load for this message.
        catalog: Replaces the catalog text of this message's requests.
        guidance: Replaces the guidance text of this message's requests.
        skill_tools: The skill tools offered for this message (a whitelist).
    """

    load: Sequence[str | tuple[str, Sequence[str]]] = ()
    only: Collection[str] | None = None
    catalog: str | None = None
    guidance: str | None = None
    skill_tools: Collection[str] | None = None

    def __post_init__(self) -> None:
        if isinstance(self.load, str):
            raise UsageError("TurnOptions.load must be a sequence of skill names, not a string")
        if isinstance(self.only, str):
            raise UsageError("TurnOptions.only must be a collection of skill names")
        object.__setattr__(self, "load", tuple(self.load))
        if self.only is not None:
            object.__setattr__(self, "only", frozenset(self.only))
        if self.skill_tools is not None:
            from skillshelf.harness._settings import check_skill_tools

            object.__setattr__(self, "skill_tools", check_skill_tools(self.skill_tools))


@dataclass(frozen=True, slots=True)
class SessionFilter:
    """The visibility of one session: the settings' filter, its switched-off skills and its
    turn's ``only`` (a value: equal filters share the repository's cached views)."""

    base: Callable[[Skill], bool] | None
    disabled: frozenset[str] = frozenset()
    only: frozenset[str] | None = None

    def __call__(self, skill: Skill) -> bool:
        if skill.name in self.disabled:
            return False
        if self.only is not None and skill.name not in self.only:
            return False
        return self.base is None or self.base(skill)

    @property
    def plain(self) -> bool:
        """Whether it adds nothing to the settings' filter."""
        return not self.disabled and self.only is None


class SwitchLog:
    """A conversation's switched skills (disabled and hidden), in one store entry of the
    agent's record; a malformed entry reads as none switched."""

    def __init__(self, store: SessionStore, conversation: str, agent: str) -> None:
        self.store = store
        self.conversation = conversation
        self.agent = agent

    def read(self) -> tuple[frozenset[str], frozenset[str]]:
        """The disabled and the hidden skills."""
        entries = self.store.get_entries(self.conversation, self.agent, [SWITCHES_ENTRY])
        return _names(entries.get(SWITCHES_ENTRY), "disabled"), _names(
            entries.get(SWITCHES_ENTRY), "hidden"
        )

    def set(self, names: Sequence[str], switch: Switch) -> tuple[frozenset[str], frozenset[str]]:
        """Switch ``names``; returns the disabled and hidden skills after it."""
        result: list[tuple[frozenset[str], frozenset[str]]] = []

        def change(entries: Entries) -> dict[str, Doc | None]:
            doc = entries.get(SWITCHES_ENTRY)
            disabled, hidden = set(_names(doc, "disabled")), set(_names(doc, "hidden"))
            for name in names:
                disabled.discard(name)
                hidden.discard(name)
                if switch == "disabled":
                    disabled.add(name)
                elif switch == "hidden":
                    hidden.add(name)
            if len(disabled) + len(hidden) > _MAX_SWITCHED:
                raise UsageError(
                    f"at most {_MAX_SWITCHED:,} skills may be switched per conversation"
                )
            result.append((frozenset(disabled), frozenset(hidden)))
            if not disabled and not hidden:
                return {SWITCHES_ENTRY: None}
            return {SWITCHES_ENTRY: {"disabled": sorted(disabled), "hidden": sorted(hidden)}}

        self.store.update_entries(self.conversation, self.agent, [SWITCHES_ENTRY], change)
        return result[-1]


def _names(doc: Doc | None, key: str) -> frozenset[str]:
    rows = doc.get(key) if isinstance(doc, dict) else None
    if not isinstance(rows, list):
        return frozenset()
    return frozenset(r for r in rows[:_MAX_SWITCHED] if isinstance(r, str))


class Controls:
    """One session's switches and turn options, and what they make of its view."""

    def __init__(
        self,
        store: SessionStore,
        conversation: str,
        agent: str,
        *,
        visible: Callable[[Skill], bool] | None,
        skill_tools: Collection[str] | None,
    ) -> None:
        self.log = SwitchLog(store, conversation, agent)
        self.visible = visible
        self.skill_tools = None if skill_tools is None else frozenset(skill_tools)
        self.turn: TurnOptions | None = None
        self.pending: TurnOptions | None = None
        self.disabled, self.hidden = self.log.read()

    def begin(self, options: TurnOptions | None) -> None:
        """A user message starts: its options (or those set for it ahead), the switches as
        the store holds them now (another worker may have changed them)."""
        self.turn = options if options is not None else self.pending
        self.pending = None
        self.disabled, self.hidden = self.log.read()

    @property
    def active(self) -> bool:
        """Whether anything differs from the shared harness's view."""
        turn = self.turn
        return bool(
            self.disabled
            or self.hidden
            or (
                turn is not None
                and (
                    turn.only is not None
                    or turn.catalog is not None
                    or turn.guidance is not None
                    or turn.skill_tools is not None
                )
            )
        )

    def filter(self) -> Callable[[Skill], bool] | None:
        """The session's visibility: the settings' filter unless something narrows it."""
        only = self.turn.only if self.turn is not None else None
        narrowed = SessionFilter(
            self.visible, self.disabled, None if only is None else frozenset(only)
        )
        return self.visible if narrowed.plain else narrowed

    def offered(self) -> frozenset[str] | None:
        """The skill tools offered: the settings' whitelist and the turn's, both applied."""
        turn = self.turn.skill_tools if self.turn is not None else None
        if turn is None:
            return self.skill_tools
        chosen = frozenset(turn)
        return chosen if self.skill_tools is None else chosen & self.skill_tools

    def listed(self, skills: Sequence[Skill]) -> list[Skill]:
        """Those of the visible ``skills`` the catalog lists (not hidden)."""
        return [s for s in skills if s.name not in self.hidden]

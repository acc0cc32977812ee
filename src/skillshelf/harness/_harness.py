"""What the conversations of one face share: the repository, the settings, the rendered prompt
and the sessions built so far (:class:`Harness`); :class:`HarnessFace` is what a face built on
one reads off it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final

from skillshelf.core.tooldef import ToolDef
from skillshelf.harness._controls import Controls
from skillshelf.harness._prompt import Prompt
from skillshelf.harness._recent import Recent
from skillshelf.harness._relevant import relevant_block
from skillshelf.harness._session import Fork, SkillSession
from skillshelf.harness._settings import SkillSettings, tool_options
from skillshelf.harness._tool_style import styled_definitions
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, open_store
from skillshelf.tools import SkillTools, tool_definitions

__all__ = ["Harness", "HarnessFace"]

# Sessions a harness keeps built; each is a thin handle on the store, so an evicted one is
# rebuilt on the next call with its state intact.
_CACHED_SESSIONS: Final = 256


class Harness:
    """What the conversations of one face share: the repository, the settings and the prompt.

    Args:
        repo: Where the skills come from.
        settings: The options (a ``store`` of None becomes an in-memory store private to
            this harness).
        source: The face, as trace records name it (``agent``, ``serve``, ``pydantic-ai``…).
    """

    def __init__(
        self, repo: Repository, settings: SkillSettings | None = None, *, source: str = "agent"
    ) -> None:
        settings = settings if settings is not None else SkillSettings()
        if settings.store is None:
            settings = settings.replace(store=open_store(None))
        self.repo = repo
        self.settings = settings
        self.source = source
        self.prompt = Prompt(settings)
        self._sessions: Recent[str, SkillSession] = Recent(_CACHED_SESSIONS)
        self._controls: Recent[str, Controls] = Recent(_CACHED_SESSIONS)
        self.probe = SkillTools(repo, **tool_options(settings))  # checks the options now

    @property
    def store(self) -> SessionStore:
        """The settings' store (a private in-memory one when they named none)."""
        store = self.settings.store
        assert store is not None  # given in __init__
        return store

    def session(
        self, conversation: str, *, fork: Fork | None = None, tools: SkillTools | None = None
    ) -> SkillSession:
        """The session of ``conversation`` (built once and kept while recently used).

        Args:
            conversation: Its key in the store.
            fork: Runs ``context: fork`` skills in a sub-agent (None: they load inline).
            tools: The conversation's skill tools, when the face builds them (``serve``: per
                viewer); a session given either is built afresh, not kept.
        """
        if fork is not None or tools is not None:
            return SkillSession(self, conversation, fork=fork, tools=tools)
        return self._sessions.make(conversation, lambda: SkillSession(self, conversation))

    def controls(self, conversation: str) -> Controls:
        """The switches and turn options of ``conversation``, one object for every session
        built for it (kept while recently used; the switches live in the store)."""
        settings = self.settings
        return self._controls.make(
            conversation,
            lambda: Controls(
                self.store,
                conversation,
                settings.agent,
                visible=settings.visible,
                skill_tools=settings.skill_tools,
            ),
        )

    def skill_tools(self, conversation: str, **overrides: Any) -> SkillTools:
        """The skill tools over ``conversation``'s state, as the settings configure them
        (``overrides``: other :class:`SkillTools` options, e.g. a face's own visibility)."""
        options = {**tool_options(self.settings), "store": self.store, **overrides}
        return SkillTools(self.repo, session_id=conversation, **options)

    def visible_skills(self) -> list[Skill]:
        """The skills the model may see (loadable or user-only)."""
        return self.probe.visible_skills()

    def instructions(
        self,
        skills: Sequence[Skill] | None = None,
        *,
        catalog: str | None = None,
        guidance: str | None = None,
    ) -> str:
        """The system prompt: the caller's instructions, the catalog and the guidance (of
        ``skills``, default the visible ones; ``catalog`` and ``guidance`` replace those
        parts)."""
        shown = self.visible_skills() if skills is None else skills
        return self.prompt.system(shown, catalog=catalog, guidance_text=guidance)

    def relevant(
        self, tools: SkillTools, message: str, skills: Sequence[Skill] | None = None
    ) -> str | None:
        """The skills relevant to the user's ``message`` that the catalog (of ``skills``,
        default the visible ones) does not show in full, as a ``<system-reminder>`` (see
        :func:`relevant_block`); None when it shows every skill in full or nothing matches."""
        skills = list(self.visible_skills() if skills is None else skills)
        settings = self.settings
        return relevant_block(
            tools,
            skills,
            self.prompt.fit(skills),
            message,
            count=settings.relevant_skills,
            format=settings.catalog_format,
        )

    def catalog_reminder(self) -> str | None:
        """The catalog as a ``<system-reminder>`` message, with ``catalog_placement="reminder"``."""
        return self.prompt.reminder(self.visible_skills())

    def skill_definitions(
        self, skills: Sequence[Skill] | None = None, tools: SkillTools | None = None
    ) -> list[ToolDef]:
        """The skill tools as the model is offered them (in the settings' tool style), for
        ``skills`` (default the visible ones) and the tools ``tools`` offers (default the
        settings')."""
        visible = self.visible_skills() if skills is None else skills
        names = [s.name for s in visible if s.model_invocable]
        offered = (tools or self.probe).tool_names
        definitions = tool_definitions(
            skill_names=names, tools=offered, enum_limit=self.probe.enum_limit
        )
        cut = self.prompt.fit(visible).cut
        return styled_definitions(definitions, self.settings.tool_style, cut=cut)

    def allowed_tools(self, name: str) -> tuple[str, ...]:
        skill = self.repo.find(name)
        return skill.manifest.allowed_tools if skill is not None else ()

    def record(self, kind: str, session: str, **fields: Any) -> None:
        """One trace record of this face, when the settings have a trace."""
        trace = self.settings.trace
        if trace is not None:
            if self.source != "agent":
                fields.setdefault("source", self.source)
            trace.record(kind, session=session, agent=self.settings.agent, **fields)


class HarnessFace:
    """What a face built on a :class:`Harness` reads off it (the integrations inherit it)."""

    harness: Harness

    @property
    def settings(self) -> SkillSettings:
        return self.harness.settings

    @property
    def store(self) -> SessionStore:
        return self.harness.store

    @property
    def agent(self) -> str:
        """The agent's name: its state's key within each conversation."""
        return self.harness.settings.agent

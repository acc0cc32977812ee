"""The request side of a conversation's harness: what the model is offered on each request
(instructions, relevant skills, tool definitions), the turn's lifecycle, and the caller's
controls (switches per conversation, options per message). :class:`SessionBase` is the
part of :class:`~skillshelf.harness.SkillSession` that runs no tool call.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from skillshelf.core.allowed_tools import call_allowed
from skillshelf.core.session import grade_failure
from skillshelf.core.slash import parse_commands
from skillshelf.core.tooldef import ToolDef
from skillshelf.harness._activations import ActivationLog
from skillshelf.harness._controls import Controls, Switch, TurnOptions
from skillshelf.harness._records import ToolRecord
from skillshelf.harness._settings import SkillSettings
from skillshelf.harness._trace import Trace
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.tools import (
    Activation,
    SkillTools,
    Tool,
    activated_tools,
    failure_signature,
    inactive_tool_message,
    tool_set,
)

__all__ = ["Fork", "Offer", "SessionBase", "Shared"]

Fork = Callable[[Skill, str], Awaitable[str]]
"""Runs a ``context: fork`` skill's task in a sub-agent; returns its final answer."""


@dataclass(frozen=True, slots=True)
class Offer:
    """What one model request offers: the tool definitions, and the user tools by name."""

    definitions: list[ToolDef]
    tools: Mapping[str, Tool]


class Shared(Protocol):
    """What a session reads from its harness (:class:`~skillshelf.harness.Harness`)."""

    repo: Repository
    settings: SkillSettings
    source: str

    def instructions(
        self,
        skills: Sequence[Skill] | None = None,
        *,
        catalog: str | None = None,
        guidance: str | None = None,
    ) -> str: ...

    def skill_tools(self, conversation: str, **overrides: Any) -> SkillTools: ...

    def catalog_reminder(self) -> str | None: ...

    def relevant(
        self, tools: SkillTools, message: str, skills: Sequence[Skill] | None = None
    ) -> str | None: ...

    def skill_definitions(
        self, skills: Sequence[Skill] | None = None, tools: SkillTools | None = None
    ) -> list[ToolDef]: ...

    def allowed_tools(self, name: str) -> tuple[str, ...]: ...

    def controls(self, conversation: str) -> Controls: ...

    def record(self, kind: str, session: str, **fields: Any) -> None: ...


class SessionBase:
    """What a request offers and how a turn goes, for one conversation (see
    :class:`~skillshelf.harness.SkillSession`, which adds the tool calls)."""

    def __init__(
        self,
        harness: Shared,
        conversation: str,
        *,
        fork: Fork | None = None,
        tools: SkillTools | None = None,
    ) -> None:
        self.harness = harness
        self.settings = harness.settings
        self.conversation = conversation
        # A face may build the SkillTools itself (serve: per viewer, its visibility and the
        # file locations it is shown), over the conversation's state.
        self.tools = tools or harness.skill_tools(conversation)
        self._own_tools = tools is None  # rebuilt when the controls narrow the view
        # Shared by every session object of the conversation (an integration builds one per
        # tool call): the switches and the turn's options hold for all of them.
        self.controls = harness.controls(conversation)
        self._fork = fork
        self._declared = False
        self._narrow()
        self._activations = ActivationLog(self.tools.store, conversation, harness.settings.agent)

    @property
    def trace(self) -> Trace | None:
        return self.settings.trace

    # -- what a request offers -----------------------------------------------------------

    def instructions(self) -> str:
        controls = self.controls
        if not controls.active:
            return self.harness.instructions()
        turn = controls.turn
        return self.harness.instructions(
            controls.listed(self.tools.visible_skills()),
            catalog=turn.catalog if turn is not None else None,
            guidance=turn.guidance if turn is not None else None,
        )

    def skill_definitions(self) -> list[ToolDef]:
        """The skill tools as this session offers them (its view and whitelist)."""
        if not self.controls.active:
            return self.harness.skill_definitions()
        return self.harness.skill_definitions(self.tools.visible_skills(), self.tools)

    def relevant(self, message: str) -> str | None:
        """The ``<system-reminder>`` of the skills relevant to the user's ``message`` that
        the catalog could not show in full (see :func:`~skillshelf.harness.relevant_block`);
        None in a sub-agent (its message is a skill's task), for a slash command, or when the
        catalog shows every skill in full."""
        if self.settings.fork_of is not None:
            return None
        if parse_commands(message, [s.name for s in self.tools.visible_skills()]):
            return None  # the user chose the skill
        if not self.controls.active:
            return self.harness.relevant(self.tools, message)
        listed = self.controls.listed(self.tools.visible_skills())
        return self.harness.relevant(self.tools, message, listed)

    def offer(self, extra: Sequence[ToolDef] = ()) -> Offer:
        """The definitions this request offers: the skill tools, then the user tools in force
        (always-offered and activated by a loaded skill), then ``extra``."""
        offered = self.offered_tools()
        definitions = self.skill_definitions() + [t.definition() for t in offered]
        return Offer([*definitions, *extra], {t.name: t for t in offered})

    def offered_tools(self) -> list[Tool]:
        """The user tools in force: the settings' tools and those a loaded skill activates."""
        settings = self.settings
        if not settings.activations:
            return tool_set(list(settings.tools), [])
        loaded = list(self.tools.state().loaded)
        persisted = self._activations.persisted()
        in_force: list[tuple[Activation, Sequence[Tool]]] = []
        for index, activation in enumerate(settings.activations):
            names = list(loaded)
            if activation.lifetime == "session":
                names += [n for i, n in persisted if i == index and n not in loaded]
            for name in names:
                tools = activated_tools(activation, name, self.harness.allowed_tools(name))
                if tools:
                    in_force.append((activation, tools))
        return tool_set(list(settings.tools), in_force)

    def activation_refusal(
        self, activation: Activation, name: str, arguments: Mapping[str, Any] | str | None
    ) -> tuple[str, str] | None:
        """For a face that runs its own tools: None while a loaded skill activates tool
        ``name``; else the graded refusal (status, message) naming the skills that would."""
        loaded = self.tools.state().loaded
        allowed = self.harness.allowed_tools
        if any(activated_tools(activation, n, allowed(n)) for n in loaded):
            return None
        skills = [
            s.name
            for s in self.tools.visible_skills()
            if s.model_invocable and activated_tools(activation, s.name, s.manifest.allowed_tools)
        ]
        count = self.tools.record_failure(failure_signature(name, arguments))
        return grade_failure(name, count, inactive_tool_message(name, skills))

    def allowed_tools_refusal(self, tool: str, arguments: Mapping[str, Any]) -> str | None:
        """With ``enforce_allowed_tools``: why a call to ``tool`` is outside the active (last
        loaded) skill's ``allowed-tools``; None when it is inside, or nothing restricts it."""
        if not self.settings.enforce_allowed_tools:
            return None
        state = self.tools.state()
        if not state.loaded:
            return None
        active = max(state.loaded.values(), key=lambda s: (s.touched, s.name)).name
        allowed = self.harness.allowed_tools(active)
        if not allowed or call_allowed(allowed, tool, arguments):
            return None
        return (
            f"Refused: the active skill {active!r} allows only these tools: "
            f"{' '.join(allowed)}. This call to {tool} is outside them. Use an allowed tool, "
            "or tell the user what you need to do instead."
        )

    # -- the turn ------------------------------------------------------------------------

    def begin_turn(self, options: TurnOptions | None = None) -> list[ToolRecord]:
        """A user message starts: ``turn`` and ``once`` loads of the last one end; the first
        turn loads the settings' declared skills, and ``options`` (or those given to
        :meth:`next_turn`) apply to this message (returns the records of what they loaded)."""
        self.controls.begin(options)
        self._narrow()
        self.tools.begin_turn()
        records = self._turn_loads()
        if self._declared or not self.settings.declared:
            return records
        declaring = self.harness.skill_tools(self.conversation, load_mode="session")
        records = []
        for result in declaring.declare(self.settings.declared):
            if result.data:
                self._on_loaded(str(result.data["skill"]))
            records.append(
                ToolRecord("", "skill_load", result.data, result.status, "", 0.0, source="declared")
            )
        self._declared = True
        return records

    def next_turn(self, options: TurnOptions) -> None:
        """Apply ``options`` to the next user message (for faces whose run starts the turn
        itself: an integration's caller sets them before running)."""
        self.controls.pending = options

    def switch(self, names: Sequence[str], switch: Switch) -> None:
        """Disable, hide or enable skills for this conversation (kept in the store: every
        face and worker reading the conversation sees it from its next turn or call).

        Raises:
            UsageError: A name that is no skill (with the closest ones).
        """
        for name in names:
            self.harness.repo.get(name)  # SkillNotFoundError names the closest ones
        controls = self.controls
        controls.disabled, controls.hidden = controls.log.set(list(names), switch)
        if switch == "disabled":
            loaded = self.tools.state().loaded
            for name in names:
                if name in loaded:
                    self.tools.unload(name)
        self._narrow()

    def disable(self, *names: str) -> None:
        """Disable skills for this conversation: not shown, not loadable (a loaded one is
        unloaded)."""
        self.switch(names, "disabled")

    def hide(self, *names: str) -> None:
        """Hide skills from this conversation's catalog and relevant-skills block; they stay
        findable by ``skill_search`` and loadable."""
        self.switch(names, "hidden")

    def enable(self, *names: str) -> None:
        """Undo :meth:`disable` and :meth:`hide`."""
        self.switch(names, "enabled")

    def _narrow(self) -> None:
        """The session's tools over its current view (the controls' filter and whitelist)."""
        if not self._own_tools:
            return
        controls = self.controls
        visible, offered = controls.filter(), controls.offered()
        if visible is not self.tools.visible or offered != self.tools.offered:
            self.tools = self.harness.skill_tools(
                self.conversation, visible=visible, offered=offered
            )

    def _turn_loads(self) -> list[ToolRecord]:
        """The skills the turn's options load, until the turn ends."""
        turn = self.controls.turn
        if turn is None or not turn.load:
            return []
        loading = self.harness.skill_tools(
            self.conversation, load_mode="turn", visible=self.controls.filter()
        )
        records = []
        for result in loading.declare(turn.load):
            if result.data:
                self._on_loaded(str(result.data["skill"]))
            records.append(
                ToolRecord(
                    "", "skill_load", result.data, result.status, result.content, 0.0, source="turn"
                )
            )
        return records

    def after_request(self) -> None:
        """A model request was made: ``once`` loads it delivered end."""
        self.tools.after_request()

    def _on_loaded(self, name: str) -> None:
        """Remember the session-lifetime activations a load of ``name`` put in force."""
        keep = [
            (index, name)
            for index, activation in enumerate(self.settings.activations)
            if activation.lifetime == "session"
            and activated_tools(activation, name, self.harness.allowed_tools(name))
        ]
        if keep:
            self._activations.add(keep)

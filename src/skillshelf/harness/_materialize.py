"""Building the messages of the next model request from the history and the session state.

Messages use the OpenAI chat shape (``role``, ``content``, ``tool_calls``, ``tool_call_id``);
provider adapters translate them. By default loaded content stays in the ``skill_load`` tool
result that delivered it, so the system prompt is byte-identical across a tool loop (prompt-cache
friendly). A skill that is no longer loaded has its old result replaced by a one-line note. When
the result that delivered a loaded skill is gone from the history (truncated, summarised, or the
skill was declared by the caller), a dedicated system message carries the content instead.
With ``placement="system"`` all loaded content goes into that system message.

:func:`materialize` is :func:`gather_context` (the session store says which skills are loaded;
the skills are read) followed by :func:`assemble`, a pure function of what was gathered.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from skillshelf.core.render import (
    LOADED_CONTEXT_HEADER,
    SkillSnapshot,
    render_loaded_context,
    render_release_note,
)
from skillshelf.core.session import LoadedSkill
from skillshelf.harness._tool_style import LOAD_TOOL_NAMES
from skillshelf.skills.content import gather_load, list_docs
from skillshelf.tools import ArgumentProblem, SkillTools, parse_arguments

__all__ = [
    "LOADED_CONTEXT_HEADER",
    "ContextSnapshot",
    "Placement",
    "assemble",
    "gather_context",
    "materialize",
]

Placement = Literal["tool_result", "system"]
Message = dict[str, Any]


@dataclass(frozen=True, slots=True)
class ContextSnapshot:
    """What the next request is built from, read from the session store and the skills.

    Attributes:
        messages: The conversation as it stands.
        loaded: The visible loaded skills of the session and agent, by name.
        carried: The loaded skills a system message carries, least recently touched first.
        placement: Where loaded content goes (see :func:`materialize`).
    """

    messages: tuple[Message, ...]
    loaded: Mapping[str, LoadedSkill]
    carried: tuple[SkillSnapshot, ...]
    placement: Placement


def materialize(
    messages: Sequence[Message], tools: SkillTools, *, placement: Placement = "tool_result"
) -> list[Message]:
    """Return the messages to send, with loaded skill content placed per ``placement``.

    The input is not modified.
    """
    return assemble(gather_context(messages, tools, placement=placement))


def gather_context(
    messages: Sequence[Message], tools: SkillTools, *, placement: Placement
) -> ContextSnapshot:
    """Read which skills are loaded and, for those a system message must carry, their content."""
    visible = {s.name for s in tools.visible_skills()}
    loaded = {n: s for n, s in tools.state().loaded.items() if n in visible}
    present = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    carried = [
        s
        for s in sorted(loaded.values(), key=lambda s: s.touched)
        if placement == "system" or s.call_id is None or s.call_id not in present
    ]
    snapshots = tuple(_gather_carried(tools, carried))
    return ContextSnapshot(tuple(messages), loaded, snapshots, placement)


def _gather_carried(tools: SkillTools, carried: Sequence[LoadedSkill]) -> Iterator[SkillSnapshot]:
    for loaded in carried:
        skill = tools.repo.find(loaded.name)
        if skill is None:
            continue
        docs = list_docs(skill) if loaded.docs == "*" else list(loaded.docs)
        yield gather_load(skill, skill.body(), docs, max_doc_chars=tools.max_file_chars)


def assemble(snapshot: ContextSnapshot) -> list[Message]:
    """The messages to send, built from ``snapshot`` alone (no store, no files)."""
    loaded = snapshot.loaded
    by_call = {s.call_id: s for s in loaded.values() if s.call_id}
    load_calls = _skill_load_calls(snapshot.messages)
    out: list[Message] = []
    for message in snapshot.messages:
        call_id = message.get("tool_call_id")
        if message.get("role") == "tool" and call_id in load_calls:
            name = load_calls[call_id]
            holder = by_call.get(call_id)
            superseded = holder is None and name in loaded
            message = _rewrite_result(
                message, holder, name, snapshot.placement, superseded=superseded
            )
        out.append(message)
    if snapshot.carried:
        context = render_loaded_context(snapshot.carried)
        _insert_system(out, {"role": "system", "content": context})
    return out


def _skill_load_calls(messages: Sequence[Message]) -> dict[str, str]:
    """Tool call id → skill name, for every ``skill_load`` the assistant made."""
    calls: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            if function.get("name") not in LOAD_TOOL_NAMES:
                continue
            parsed = parse_arguments("skill_load", function.get("arguments") or "{}")
            name = "?" if isinstance(parsed, ArgumentProblem) else parsed.args.skill  # type: ignore[attr-defined]
            calls[str(call.get("id"))] = str(name)
    return calls


def _rewrite_result(
    message: Message,
    loaded: LoadedSkill | None,
    name: str,
    placement: Placement,
    *,
    superseded: bool = False,
) -> Message:
    content = str(message.get("content") or "")
    if not content.startswith("<skill_content"):
        return message  # an error or an "already loaded" stub: leave it as it was
    if loaded is not None and placement == "tool_result":
        return message
    if superseded:
        note = render_release_note(name, "superseded")
    elif loaded is not None:
        note = render_release_note(name, "in_system_message")
    else:
        note = render_release_note(name, "released")
    return {**message, "content": note}


def _insert_system(messages: list[Message], extra: Message) -> None:
    """Put ``extra`` after the leading system message(s), keeping their bytes untouched."""
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        index += 1
    messages.insert(index, extra)

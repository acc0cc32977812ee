"""Building the messages of the next model request from the history and the session state.

Messages use the OpenAI chat shape (``role``, ``content``, ``tool_calls``, ``tool_call_id``);
provider adapters translate them. By default loaded content stays in the ``skill_load`` tool
result that delivered it, so the system prompt is byte-identical across a tool loop (prompt-cache
friendly). A skill that is no longer loaded has its old result replaced by a one-line note. When
the result that delivered a loaded skill is gone from the history (truncated, summarised, or the
skill was declared by the caller), a dedicated system message carries the content instead.
With ``placement="system"`` all loaded content goes into that system message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Final, Literal

from skillshelf.core.session import LoadedSkill
from skillshelf.skills.content import list_docs, render_load
from skillshelf.tools import spec as toolspec
from skillshelf.tools.skill_tools import SkillTools

__all__ = ["LOADED_CONTEXT_HEADER", "Placement", "materialize"]

Placement = Literal["tool_result", "system"]
Message = dict[str, Any]
LOADED_CONTEXT_HEADER: Final = "Loaded skill context:"


def materialize(
    messages: Sequence[Message], tools: SkillTools, *, placement: Placement = "tool_result"
) -> list[Message]:
    """Return the messages to send, with loaded skill content placed per ``placement``.

    The input is not modified.
    """
    visible = {s.name for s in tools.visible_skills()}
    loaded = {n: s for n, s in tools.state().loaded.items() if n in visible}
    by_call = {s.call_id: s for s in loaded.values() if s.call_id}
    load_calls = _skill_load_calls(messages)
    present = {m.get("tool_call_id") for m in messages if m.get("role") == "tool"}
    out: list[Message] = []
    for message in messages:
        call_id = message.get("tool_call_id")
        if message.get("role") == "tool" and call_id in load_calls:
            name = load_calls[call_id]
            holder = by_call.get(call_id)
            superseded = holder is None and name in loaded
            message = _rewrite_result(message, holder, name, placement, superseded=superseded)
        out.append(message)
    carried = [
        s
        for s in sorted(loaded.values(), key=lambda s: s.touched)
        if placement == "system" or s.call_id is None or s.call_id not in present
    ]
    if carried:
        _insert_system(out, _context_message(tools, carried))
    return out


def _skill_load_calls(messages: Sequence[Message]) -> dict[str, str]:
    """Tool call id → skill name, for every ``skill_load`` the assistant made."""
    calls: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or ():
            function = call.get("function") or {}
            if function.get("name") != "skill_load":
                continue
            parsed = toolspec.parse_arguments("skill_load", function.get("arguments") or "{}")
            name = "?" if isinstance(parsed, toolspec.ArgumentProblem) else parsed.args.skill  # type: ignore[attr-defined]
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
        note = f"[Skill {name!r} was loaded again later; see the newer result.]"
    elif loaded is not None:
        note = f"[Skill {name!r} is loaded; its content is in the system message.]"
    else:
        note = (
            f"[Skill {name!r} is no longer loaded; its content was released. "
            "Load it again if needed.]"
        )
    return {**message, "content": note}


def _context_message(tools: SkillTools, carried: Sequence[LoadedSkill]) -> Message:
    parts = [LOADED_CONTEXT_HEADER]
    for loaded in carried:
        skill = tools.repo.find(loaded.name)
        if skill is None:
            continue
        docs = list_docs(skill) if loaded.docs == "*" else list(loaded.docs)
        parts.append(render_load(skill, skill.body(), docs, max_doc_chars=tools.max_file_chars))
    return {"role": "system", "content": "\n\n".join(parts)}


def _insert_system(messages: list[Message], extra: Message) -> None:
    """Put ``extra`` after the leading system message(s), keeping their bytes untouched."""
    index = 0
    while index < len(messages) and messages[index].get("role") == "system":
        index += 1
    messages.insert(index, extra)

"""The tools that put a skill into context: ``skill_load``, ``skill_list_docs`` and
``skill_select_docs``."""

from __future__ import annotations

from collections.abc import Collection, Sequence
from typing import Any, Final

from skillshelf.core.render import render_already_loaded
from skillshelf.core.session import (
    INDEX_ENTRY,
    DocSelection,
    LoadedSkill,
    LoadMode,
    SessionIndex,
    skill_entry,
)
from skillshelf.core.slash import expand
from skillshelf.errors import ToolRetry, clip
from skillshelf.skills.content import list_docs, render_load
from skillshelf.skills.skill import Skill
from skillshelf.stores import Doc, Entries
from skillshelf.tools._read import Locations, skill_uri
from skillshelf.tools._record import SessionRecord
from skillshelf.tools._spec import SkillLoadArgs, SkillSelectDocsArgs
from skillshelf.tools._view import SkillView

__all__ = ["list_skill_docs", "load", "resolve_docs", "select_docs"]

_SHOWN_DOCS: Final = 5


def load(
    view: SkillView,
    record: SessionRecord,
    args: SkillLoadArgs,
    *,
    call_id: str | None,
    history: Collection[str] | None,
    mode: LoadMode,
    max_loaded: int,
    max_doc_chars: int,
    locations: Locations,
) -> tuple[str, dict[str, Any]]:
    """``skill_load``: the skill's body, directory, file tree and selected docs, recorded as
    loaded; a short stub when it is still delivered unchanged (see ``history``)."""
    name, include_all = args.skill, args.include_all_docs
    skill = view.skill(name)
    selected = resolve_docs(view, skill, args.docs, include_all)
    selection: DocSelection = "*" if include_all else selected
    digest = f"{skill.mtime_ns}:{skill.size}"
    before = record.loaded(name)
    wants_docs = include_all or bool(args.docs)
    # Arguments make a fresh invocation: delivered in full, never as the "already loaded" stub.
    fresh = args.args is not None
    if (
        not fresh
        and before is not None
        and _still_delivered(before, digest, selection, wants_docs, history)
    ):
        # Another call may have unloaded it since it was read: then load it in full.
        touch = record.change_loaded(name, lambda i, s: i.select_docs(s, s.docs))
        if touch:
            return render_already_loaded(name), {"skill": name, "already_loaded": True}
    content = _content(view, skill, args.args, selected, max_doc_chars, locations)
    evicted: list[str] = []

    def apply(index: SessionIndex, _entries: Entries) -> dict[str, Doc | None]:
        index, entry, out = index.load(
            name,
            mode=mode,
            docs=selection,
            digest=digest,
            call_id=call_id,
            max_loaded=max_loaded,
        )
        evicted[:] = out
        changes: dict[str, Doc | None] = {skill_entry(n): None for n in out}
        changes |= {INDEX_ENTRY: index.to_doc(), skill_entry(name): entry.to_doc()}
        return changes

    record.change([], apply)
    if evicted:
        content += "\n\n(Unloaded to stay within the limit: " + ", ".join(evicted) + ".)"
    return content, {"skill": name, "docs": selected, "evicted": evicted}


def _content(
    view: SkillView,
    skill: Skill,
    arguments: str | None,
    selected: list[str],
    max_doc_chars: int,
    locations: Locations,
) -> str:
    directory = skill_uri(skill.name) if locations == "uris" else None
    body = skill.body()
    if arguments is not None:
        where = skill_uri(skill.name).rstrip("/") if locations == "uris" else skill.directory
        body = expand(body, arguments, skill_dir=where)
    return render_load(
        skill,
        body,
        selected,
        max_doc_chars=max_doc_chars,
        directory=directory,
        walks=view.walks(),
    )


def select_docs(
    view: SkillView, record: SessionRecord, args: SkillSelectDocsArgs
) -> tuple[str, dict[str, Any]]:
    """``skill_select_docs``: add to, replace or clear a loaded skill's selected docs."""
    name, mode = args.skill, args.mode
    skill = view.skill(name)
    current = record.loaded(name)
    if current is None:
        raise ToolRetry(f"Skill {name!r} is not loaded. Call skill_load first.")
    if mode == "clear":
        selection: DocSelection = []
    elif args.include_all_docs:
        selection = "*"
    else:
        chosen = resolve_docs(view, skill, args.docs, False)
        if mode == "add" and current.docs != "*":
            chosen = list(dict.fromkeys([*current.docs, *chosen]))
        selection = "*" if mode == "add" and current.docs == "*" else chosen
    record.change_loaded(name, lambda i, s: i.select_docs(s, selection))
    shown = list_docs(skill, walks=view.walks()) if selection == "*" else selection
    text = f"Docs selected for {name!r}: " + (", ".join(shown) if shown else "none")
    return text, {"skill": name, "docs": shown}


def list_skill_docs(view: SkillView, name: str) -> tuple[str, dict[str, Any]]:
    """``skill_list_docs``: the skill's document files."""
    docs = list_docs(view.skill(name), walks=view.walks())
    text = "\n".join(docs) if docs else "(this skill has no document files)"
    return text, {"skill": name, "docs": docs}


def resolve_docs(
    view: SkillView, skill: Skill, docs: Sequence[str], include_all: bool
) -> list[str]:
    """The docs of ``skill`` named (every one with ``include_all``), normalised.

    Raises:
        ToolRetry: A doc is not one of the skill's.
    """
    if not docs and not include_all:
        return []  # nothing to check: the skill's folder need not be listed
    available = list_docs(skill, walks=view.walks())
    if include_all:
        return available
    unknown = [d for d in docs if _norm(d) not in available]
    if unknown:
        listing = ", ".join(available) if available else "none"
        # A model may send 50 entries of 10,000 characters: echo a bounded part of them.
        shown = ", ".join(clip(d) for d in unknown[:_SHOWN_DOCS])
        if len(unknown) > _SHOWN_DOCS:
            shown += f" and {len(unknown) - _SHOWN_DOCS} more"
        raise ToolRetry(
            f"Unknown doc(s) for skill {skill.name!r}: {shown}. Available docs: {listing}."
        )
    return list(dict.fromkeys(_norm(d) for d in docs))


def _still_delivered(
    before: LoadedSkill,
    digest: str,
    selection: DocSelection,
    wants_docs: bool,
    history: Collection[str] | None,
) -> bool:
    if before.digest != digest or (wants_docs and before.docs != selection):
        return False
    if history is None or before.call_id is None:
        return True
    return before.call_id in history


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/").removeprefix("./")

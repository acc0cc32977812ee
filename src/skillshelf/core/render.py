"""What a model reads of a loaded skill, rendered from values the edge gathered.

The edge (:mod:`skillshelf.skills.content`) reads the body, walks the tree and reads the
selected documents into a :class:`SkillSnapshot`; everything here is a pure function of such
values. Rendering is deterministic (same snapshot → same bytes), so re-materialising a loaded
skill into a later request never disturbs the prompt cache. Every value that came from a skill
or a path is escaped for the position it lands in (see :mod:`skillshelf.core.markup`), so no
name, path or document can open or close the elements a model relies on.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, assert_never

from skillshelf.core.files import FileText, FileTree
from skillshelf.core.markup import escape_xml, neutralize_tags, one_line

__all__ = [
    "LOADED_CONTEXT_HEADER",
    "DocSnapshot",
    "ReleaseReason",
    "SkillSnapshot",
    "render_already_loaded",
    "render_loaded_context",
    "render_release_note",
    "render_skill_load",
    "render_system_reminder",
]

LOADED_CONTEXT_HEADER: Final = "Loaded skill context:"
_DIRECTORY_HINT: Final = (
    "Relative paths in this skill (scripts/, references/, assets/ …) resolve against that "
    "directory; use the absolute path in later tool calls (skill_read_file takes it, or the "
    "path relative to the directory)."
)
# Over MCP the server's own paths mean nothing to the client (and would disclose its layout).
_URI_HINT: Final = (
    "Relative paths in this skill (scripts/, references/, assets/ …) resolve against that "
    "directory; pass them to skill_read_file as they are (e.g. references/guide.md), or the "
    "full skill:// URI."
)
_OVER_BUDGET: Final = (
    "[not included: the docs budget of this load is used up; read it with skill_read_file]"
)
ReleaseReason = Literal["superseded", "in_system_message", "released"]


@dataclass(frozen=True, slots=True)
class DocSnapshot:
    """A selected document as the edge found it: read, unreadable, or left out.

    Attributes:
        path: The document's path relative to the skill directory, as selected.
        content: The file as read; None when it was not read.
        problem: Why it could not be read; None when it was read or left out. When both
            ``content`` and ``problem`` are None, the load's docs budget was used up.
    """

    path: str
    content: FileText | None = None
    problem: str | None = None

    def text(self) -> str | None:
        """The document's text as shown (before escaping); None when it was left out."""
        if self.content is not None:
            return self.content.render()
        if self.problem is not None:
            return f"[{self.problem}]"
        return None


@dataclass(frozen=True, slots=True)
class SkillSnapshot:
    """Everything a ``skill_load`` result shows of one skill.

    Attributes:
        name: The skill's name.
        directory: The skill directory as the model should use it: an absolute path, or
            a ``skill://name/`` URI where the reader is an MCP client.
        body: The SKILL.md body (after any argument substitution).
        tree: The skill's files.
        missing_links: Relative link targets in the body that name no file of the skill,
            in the order the body mentions them.
        docs: The selected documents, in the order selected.
        details: What the frontmatter says about the skill beyond its name, as (label,
            value) pairs: version, author, license, compatibility, tags, triggers (only
            those it gives).
    """

    name: str
    directory: str
    body: str
    tree: FileTree
    missing_links: tuple[str, ...] = ()
    docs: tuple[DocSnapshot, ...] = ()
    details: tuple[tuple[str, str], ...] = ()


def render_skill_load(snapshot: SkillSnapshot) -> str:
    """The text of a ``skill_load`` result: body, directory, resource tree, selected docs."""
    parts = [
        f'<skill_content name="{_attribute(snapshot.name)}">',
        neutralize_tags(snapshot.body.strip("\n")),
        "</skill_content>",
        "",
        f"Skill directory: {_line(snapshot.directory)}",
        _URI_HINT if snapshot.directory.startswith("skill://") else _DIRECTORY_HINT,
    ]
    if snapshot.details:
        shown = "; ".join(f"{label}: {_line(value)}" for label, value in snapshot.details)
        parts.append(f"Skill details: {shown}")
    if snapshot.missing_links:
        missing = ", ".join(_line(target) for target in snapshot.missing_links)
        parts.append(f"Note: the body links to files that are not in the skill: {missing}")
    parts += ["", "<skill_resources>", snapshot.tree.render(), "</skill_resources>"]
    for doc in snapshot.docs:
        parts += _render_doc(doc)
    return "\n".join(parts)


def _render_doc(doc: DocSnapshot) -> list[str]:
    opening = f'<skill_doc path="{_attribute(doc.path)}">'
    text = doc.text()
    if text is None:
        return [f"{opening}{_OVER_BUDGET}</skill_doc>"]
    return ["", opening, neutralize_tags(text), "</skill_doc>"]


def render_already_loaded(name: str) -> str:
    """The stub a second ``skill_load`` of an unchanged, still delivered skill returns."""
    return (
        f"Skill {_quoted(name)} is already loaded and unchanged; its instructions are "
        "already in this conversation (an earlier skill_load result or the loaded "
        "skill context). Follow them."
    )


def render_loaded_context(snapshots: Sequence[SkillSnapshot]) -> str:
    """The system message that carries loaded skills whose ``skill_load`` result is gone."""
    return "\n\n".join([LOADED_CONTEXT_HEADER, *map(render_skill_load, snapshots)])


def render_release_note(name: str, reason: ReleaseReason) -> str:
    """What replaces a ``skill_load`` result whose content the model must not rely on there.

    Args:
        name: The skill the result delivered.
        reason: ``superseded`` (a newer result of the same skill exists),
            ``in_system_message`` (the content moved to the system message) or ``released``
            (the skill is no longer loaded).
    """
    quoted = _quoted(name)
    if reason == "superseded":
        return f"[Skill {quoted} was loaded again later; see the newer result.]"
    if reason == "in_system_message":
        return f"[Skill {quoted} is loaded; its content is in the system message.]"
    if reason == "released":
        return (
            f"[Skill {quoted} is no longer loaded; its content was released. "
            "Load it again if needed.]"
        )
    assert_never(reason)


def render_system_reminder(text: str) -> str:
    """``text`` (e.g. the skills catalog) as a ``<system-reminder>`` user message, the way
    Claude Code delivers context outside the system prompt; nothing in ``text`` can close it."""
    return f"<system-reminder>\n{neutralize_tags(text)}\n</system-reminder>"


def _attribute(value: str) -> str:
    return escape_xml(one_line(value))


def _line(value: str) -> str:
    return neutralize_tags(one_line(value))


def _quoted(name: str) -> str:
    # repr() already shows quotes and control characters as escapes.
    return neutralize_tags(repr(name))

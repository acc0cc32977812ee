"""Tool shapes of other harnesses, so prompts written for them work unchanged.

The model-facing contract (``skill_load`` and the other skill tools, see docs/design.md) is the
default style, ``skillshelf``. Another style renames and reshapes what the model is offered and
maps the model's calls back to the contract before they run, so traces, evals and the session
state speak of ``skill_load`` whatever the model saw:

* ``claude-code`` — Claude Code's single ``Skill`` tool taking ``skill`` (and optional
  ``args``) in place of ``skill_load``; files are read with ``skill_read_file`` and scripts run
  with ``workspace_exec`` (Claude Code's Read and Bash); the other skill tools are not offered.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import replace
from typing import Final, Literal, assert_never

from skillshelf.core.tooldef import ToolDef
from skillshelf.models import ToolCall

__all__ = [
    "CLAUDE_CODE_GUIDANCE",
    "GUIDANCE",
    "LOAD_TOOL_NAMES",
    "SEARCH_FIRST",
    "TOOL_STYLES",
    "ToolStyle",
    "canonical_call",
    "guidance",
    "styled_definitions",
]

ToolStyle = Literal["skillshelf", "claude-code"]
TOOL_STYLES: Final[tuple[ToolStyle, ...]] = ("skillshelf", "claude-code")
_SKILL_TOOL: Final = "Skill"
# Names under which a call in the history loads a skill (materialisation looks for them).
LOAD_TOOL_NAMES: Final = frozenset({"skill_load", _SKILL_TOOL})
# What the claude-code style keeps besides its Skill tool: reading files and running scripts.
_CLAUDE_CODE_KEEPS: Final = ("skill_read_file", "workspace_exec")

GUIDANCE: Final = (
    "Skills are folders of instructions for specific tasks. The catalog above lists them by "
    "name and description. When a skill's description matches the task, call skill_load with "
    "its name before doing the task, then follow its instructions; read its files with "
    "skill_read_file when they point to one. If none fits, skill_search may find one; if "
    "still none fits, answer without skills."
)
CLAUDE_CODE_GUIDANCE: Final = (
    "When a skill's description in the catalog matches the task, invoke it with the Skill "
    "tool before doing anything else, then follow its instructions; read the files it points "
    "to with skill_read_file. Do not invoke a skill that is already running."
)
SEARCH_FIRST: Final = (
    "The catalog is too large to show every skill's description. Before a task the listed "
    "descriptions do not clearly cover, call skill_search with words from the task."
)
_SKILL_DESCRIPTION: Final = (
    "Execute a skill within the main conversation. When the user's task matches a skill in "
    "the catalog, call this tool with the skill's name (and optional arguments) to load its "
    "instructions, then follow them."
)


def guidance(style: ToolStyle, *, cut: bool = False) -> str:
    """The system prompt's short guidance on the skill tools, for ``style``; with ``cut`` (the
    catalog lists some skill by name only, or not at all), followed by the search-first rule
    (every style offers ``skill_search`` then, see :func:`styled_definitions`)."""
    if style == "skillshelf":
        text = GUIDANCE
    elif style == "claude-code":
        text = CLAUDE_CODE_GUIDANCE
    else:
        assert_never(style)
    return f"{text} {SEARCH_FIRST}" if cut else text


def styled_definitions(
    definitions: Sequence[ToolDef], style: ToolStyle, *, cut: bool = False
) -> list[ToolDef]:
    """The skill tools' definitions (contract shape) as ``style`` offers them; with ``cut``
    (the catalog cannot list every skill), ``skill_search`` is always among them, since the
    catalog and the guidance then point the model at it."""
    if style == "skillshelf":
        return list(definitions)
    if style == "claude-code":
        keeps = (*_CLAUDE_CODE_KEEPS, "skill_search") if cut else _CLAUDE_CODE_KEEPS
        out = []
        for definition in definitions:
            if definition.name == "skill_load":
                out.append(_skill_tool(definition))
            elif definition.name in keeps:
                out.append(definition)
        return out
    assert_never(style)


def _skill_tool(load: ToolDef) -> ToolDef:
    skill = dict(load.parameters["properties"]["skill"])
    skill["description"] = 'The skill name, e.g. "pdf".'
    parameters = {
        "type": "object",
        "properties": {
            "skill": skill,
            "args": {"type": "string", "description": "Optional arguments for the skill."},
        },
        "required": ["skill"],
    }
    return ToolDef(_SKILL_TOOL, _SKILL_DESCRIPTION, parameters)


def canonical_call(call: ToolCall, style: ToolStyle) -> ToolCall:
    """``call`` as the contract names it (``Skill`` → ``skill_load``); other calls unchanged.

    The arguments travel as they are (``skill``, ``args``); a ``skill_load`` that does not take
    ``args`` reports it as ignored, like any unknown argument.
    """
    if style == "skillshelf" or call.name != _SKILL_TOOL:
        return call
    try:
        arguments = json.loads(call.arguments or "{}")
    except ValueError:
        return replace(call, name="skill_load")  # skill_load explains the bad JSON
    if isinstance(arguments, dict) and not arguments.get("args"):
        arguments.pop("args", None)
        return replace(call, name="skill_load", arguments=json.dumps(arguments))
    return replace(call, name="skill_load")

"""The model-facing tools, as types: argument models and the JSON Schemas made from them.

Each tool's arguments are one pydantic model, the single source of its JSON Schema and of its
validation. Nothing here runs a tool. Paths are only checked for shape here; containment in the
skill directory is decided when the tool runs, by :func:`skillshelf.skills.paths.safe_join`.
"""

from __future__ import annotations

import copy
import functools
import json
from collections.abc import Collection, Mapping, Sequence
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from skillshelf.core.tooldef import ToolDef
from skillshelf.errors import UsageError

__all__ = [
    "ALL_TOOLS",
    "ARG_MODELS",
    "CONVERSATION_ADVICE",
    "MAX_NAME",
    "SKILL_TOOLS",
    "STATEFUL_TOOLS",
    "UNKNOWN_SKILL_ADVICE",
    "SkillListArgs",
    "SkillListDocsArgs",
    "SkillLoadArgs",
    "SkillReadFileArgs",
    "SkillSearchArgs",
    "SkillSelectDocsArgs",
    "SkillUnloadArgs",
    "ToolArgs",
    "WorkspaceExecArgs",
    "base_schema",
    "fields_of",
    "names_collection",
    "tool_definitions",
]


# Caps, not guidance (kept out of the schemas): past them a model is looping or pasting, and it
# gets an "invalid" result instead of a huge value reaching the filesystem or a prompt.
MAX_NAME = 256  # skill names are at most 64 characters; leave room for unnormalised input
_MAX_TEXT = 10_000  # paths, globs, commands
_MAX_STDIN = 1_000_000  # input data for a command may be a whole file
_MAX_ENTRIES = 50
# What the model is told after an unknown skill name, whichever tool it called.
UNKNOWN_SKILL_ADVICE: Final = (
    "Call skill_list or skill_search to see the available skills, or ask the user which skill "
    "they mean."
)

_Path = Annotated[str, StringConstraints(min_length=1, max_length=_MAX_TEXT)]
_Skill = Annotated[
    str,
    StringConstraints(max_length=MAX_NAME),
    Field(description="Name of the skill, exactly as listed in the catalog."),
]
_Docs = Annotated[
    list[_Path],
    Field(max_length=_MAX_ENTRIES, description="Document paths relative to the skill directory."),
]
_AllDocs = Annotated[bool, Field(description="Include every document of the skill.")]
_MAX_HANDLE = 200
_Conversation = Annotated[
    str | None,
    StringConstraints(max_length=_MAX_HANDLE),
    Field(
        description=(
            "The conversation handle an earlier result gave you (a line 'conversation: c1.…'). "
            "Pass it back unchanged; only on your first stateful call, whose result gives you "
            'one, omit it or pass "".'
        )
    ),
]
# The tools whose effect lasts beyond their own call; on a protocol without sessions they
# take a server-minted conversation handle (see skillshelf.mcpserver.handles).
STATEFUL_TOOLS: Final = ("skill_load", "skill_select_docs", "skill_unload", "workspace_exec")
CONVERSATION_ADVICE: Final = (
    " Pass the `conversation` handle from an earlier result back in every later call of "
    "skill_load, skill_select_docs, skill_unload and workspace_exec; without it the server "
    "forgets what you loaded."
)


class ToolArgs(BaseModel):
    """Base of the argument models; ``tool_name`` and ``tool_description`` face the model."""

    model_config = ConfigDict(extra="ignore", frozen=True, strict=True)
    tool_name: ClassVar[str]
    tool_description: ClassVar[str]


class SkillSearchArgs(ToolArgs):
    tool_name = "skill_search"
    tool_description = (
        "Search the available skills by keywords; returns the best matches with short "
        "descriptions. Call it when no skill in the catalog clearly fits the task."
    )
    query: Annotated[
        str,
        StringConstraints(strip_whitespace=True, min_length=1, max_length=1000),
        Field(description="What you are looking for, in a few words."),
    ]
    limit: Annotated[int, Field(ge=1, le=50, description="Maximum number of results.")] = 10


class SkillListArgs(ToolArgs):
    tool_name = "skill_list"
    tool_description = (
        "List every available skill with its description, and the user's slash commands; a "
        "long catalog comes in pages (pass the cursor an answer gives for the next one). Call "
        "it when you need the whole catalog, e.g. to say which skills exist."
    )
    cursor: Annotated[
        str | None,
        StringConstraints(strip_whitespace=True, max_length=MAX_NAME),
        Field(
            description="Where the list goes on: the cursor given at the end of the previous "
            "page. Omit it for the first page."
        ),
    ] = None


class SkillLoadArgs(ToolArgs):
    tool_name = "skill_load"
    tool_description = (
        "Load a skill's instructions, its directory and a listing of its files. Load a skill "
        "when its description in the catalog matches the task, before following it."
    )
    skill: _Skill
    docs: _Docs = []
    include_all_docs: _AllDocs = False
    args: Annotated[
        str | None,
        StringConstraints(max_length=_MAX_TEXT),
        Field(
            description="Arguments for the skill, as a user would type them after /skill-name; "
            "they replace $ARGUMENTS (and $0, $1 and so on) in its instructions."
        ),
    ] = None
    conversation: _Conversation = None


class SkillListDocsArgs(ToolArgs):
    tool_name = "skill_list_docs"
    tool_description = "List a skill's document files. Call it before selecting or reading docs."
    skill: _Skill


class SkillSelectDocsArgs(ToolArgs):
    tool_name = "skill_select_docs"
    tool_description = (
        "Add to, replace or clear the documents of a loaded skill kept in context. Call it "
        "when the task needs a skill's reference documents at hand across turns."
    )
    skill: _Skill
    docs: _Docs = []
    include_all_docs: _AllDocs = False
    mode: Annotated[
        Literal["add", "replace", "clear"], Field(description="How to change the selection.")
    ] = "add"
    conversation: _Conversation = None


class SkillReadFileArgs(ToolArgs):
    tool_name = "skill_read_file"
    tool_description = (
        "Read one file of a skill (long files are cut, binary files described). Call it when "
        "a skill's instructions point to a file you need."
    )
    skill: _Skill
    path: Annotated[
        _Path,
        Field(
            description="Path relative to the skill directory, as skill_load lists it "
            "(the skill's absolute directory path or skill:// URI in front also works)."
        ),
    ]


class SkillUnloadArgs(ToolArgs):
    tool_name = "skill_unload"
    tool_description = "Unload a skill to free context. Call it when the task no longer needs it."
    skill: _Skill
    conversation: _Conversation = None


class WorkspaceExecArgs(ToolArgs):
    tool_name = "workspace_exec"
    tool_description = (
        "Run a shell command in this session's isolated workspace; returns the exit code, "
        "output and collected files. Pass skill to run inside that skill's copy, e.g. its scripts."
    )
    command: Annotated[
        str, StringConstraints(max_length=_MAX_TEXT), Field(description="Shell command.")
    ]
    skill: Annotated[_Skill | None, Field(description="Run inside this skill's copy.")] = None
    timeout_s: Annotated[float, Field(gt=0, le=3600, description="Time limit, seconds.")] = 60
    collect: Annotated[
        list[_Path], Field(max_length=_MAX_ENTRIES, description="Globs of output files to return.")
    ] = []
    stdin: Annotated[
        str | None, StringConstraints(max_length=_MAX_STDIN), Field(description="Standard input.")
    ] = None
    conversation: _Conversation = None


ARG_MODELS: dict[str, type[ToolArgs]] = {
    m.tool_name: m
    for m in (
        SkillSearchArgs,
        SkillListArgs,
        SkillLoadArgs,
        SkillListDocsArgs,
        SkillSelectDocsArgs,
        SkillReadFileArgs,
        SkillUnloadArgs,
        WorkspaceExecArgs,
    )
}
ALL_TOOLS: tuple[str, ...] = tuple(ARG_MODELS)
SKILL_TOOLS: tuple[str, ...] = ALL_TOOLS[:-1]  # workspace_exec only when asked for


# OpenAI's strict mode rejects "default", some providers reject string lengths; the defaults
# go into the descriptions instead.
_DROPPED_KEYS = frozenset({"title", "default", "minLength", "maxLength"})


# Up to this many visible skills, skill_load's ``skill`` is an enum of their names: above it
# the schemas would grow with the catalog (an 864-skill enum is ~24,000 tokens a request).
# Every tool checks the name it gets either way, with "did you mean" for a near miss.
ENUM_LIMIT: Final = 32
# The one tool whose schema lists the names: repeating them in every tool multiplies the cost.
_ENUM_TOOLS: Final = frozenset({"skill_load"})


def tool_definitions(
    *,
    skill_names: Sequence[str] | None,
    tools: Sequence[str] | None = None,
    enum_limit: int = ENUM_LIMIT,
    conversation: bool = False,
) -> list[ToolDef]:
    """Definitions of the given tools (default: the seven skill tools), in that order.

    ``skill_load``'s ``skill`` is an enum of the sorted distinct ``skill_names`` when there
    are 1 to ``enum_limit`` of them, else a plain string; the other tools' ``skill`` is
    always a plain string (the names are listed once). With ``conversation`` the stateful tools
    offer the optional ``conversation`` handle argument and say how to use it (for a server
    whose protocol has no sessions); without it the argument is accepted but not advertised.

    Raises:
        UsageError: an unknown tool name, a negative ``enum_limit``, or a bare string as names.
    """
    if enum_limit < 0:
        raise UsageError(f"enum_limit must not be negative, got {enum_limit}")
    names = sorted(set(names_collection(skill_names) or ()))
    enum = names if 1 <= len(names) <= enum_limit else None
    selected = SKILL_TOOLS if tools is None else tuple(dict.fromkeys(tools))
    unknown = [t for t in selected if t not in ARG_MODELS]
    if unknown:
        raise UsageError(f"unknown tools {unknown}; valid: {', '.join(ALL_TOOLS)}")
    return [_definition(name, enum, conversation=conversation) for name in selected]


def _definition(name: str, enum: list[str] | None, *, conversation: bool) -> ToolDef:
    parameters = copy.deepcopy(base_schema(name))
    if enum is not None and name in _ENUM_TOOLS and "skill" in parameters["properties"]:
        parameters["properties"]["skill"]["enum"] = list(enum)
    description = ARG_MODELS[name].tool_description
    if name in STATEFUL_TOOLS and conversation:
        description += CONVERSATION_ADVICE
    else:
        parameters["properties"].pop("conversation", None)
    return ToolDef(name, description, parameters)


@functools.cache
def base_schema(name: str) -> dict[str, Any]:
    model = ARG_MODELS[name]
    raw = model.model_json_schema()
    properties = {key: _property(node) for key, node in raw.get("properties", {}).items()}
    return {
        "type": "object",
        "properties": properties,
        "required": list(raw.get("required", [])),
        "additionalProperties": False,
    }


def _property(node: dict[str, Any]) -> dict[str, Any]:
    if "anyOf" in node:  # X | None: leaving it out means None, so show only X
        branch = next(b for b in node["anyOf"] if b.get("type") != "null")
        node = {**branch, **{k: v for k, v in node.items() if k != "anyOf"}}
    cleaned = _strip(node)
    if node.get("default") not in (None, []):
        cleaned["description"] += f" Default: {json.dumps(node['default'])}."
    return cleaned


def _strip(node: dict[str, Any]) -> dict[str, Any]:
    return {k: _strip(v) if k == "items" else v for k, v in node.items() if k not in _DROPPED_KEYS}


def names_collection(names: Collection[str] | None) -> Collection[str] | None:
    if isinstance(names, str):
        raise UsageError("skill_names must be a collection of names, not one string")
    return names


@functools.lru_cache(maxsize=256)
def fields_of(model: type[BaseModel]) -> Mapping[str, Any]:
    # Read once per model: pydantic's class attribute is a descriptor costing a few µs a read.
    return dict(model.model_fields)

"""The model-facing tools, as types: argument models, JSON Schemas and argument handling.

Each tool's arguments are one pydantic model, the single source of its JSON Schema and of its
validation. Nothing here runs a tool. Paths are only checked for shape here; containment in the
skill directory is decided when the tool runs, by :func:`skillshelf.skills.paths.safe_join`.

:func:`parse_arguments` never raises for bad model input: it returns :class:`ParsedArgs` (with
notes on every slip it forgave) or an :class:`ArgumentProblem` to send back as a tool result.
"""

from __future__ import annotations

import copy
import functools
import json
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Annotated, Any, ClassVar, Final, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError
from pydantic_core import ErrorDetails

from skillshelf.core.search import closest_names
from skillshelf.core.session import call_signature
from skillshelf.errors import UsageError, unknown_skill_message

__all__ = [
    "ALL_TOOLS",
    "CONVERSATION_ADVICE",
    "SKILL_TOOLS",
    "STATEFUL_TOOLS",
    "UNKNOWN_SKILL_ADVICE",
    "ArgumentProblem",
    "ParsedArgs",
    "ParsedModelArgs",
    "SkillListArgs",
    "SkillListDocsArgs",
    "SkillLoadArgs",
    "SkillReadFileArgs",
    "SkillSearchArgs",
    "SkillSelectDocsArgs",
    "SkillUnloadArgs",
    "ToolArgs",
    "ToolDef",
    "WorkspaceExecArgs",
    "failure_signature",
    "normalise_tool_name",
    "parse_arguments",
    "parse_model_arguments",
    "to_anthropic",
    "to_mcp",
    "to_openai",
    "tool_definitions",
]

# Caps, not guidance (kept out of the schemas): past them a model is looping or pasting, and it
# gets an "invalid" result instead of a huge value reaching the filesystem or a prompt.
_MAX_NAME = 256  # skill names are at most 64 characters; leave room for unnormalised input
_MAX_TEXT = 10_000  # paths, globs, commands
_MAX_STDIN = 1_000_000  # input data for a command may be a whole file
_MAX_ENTRIES = 50
_SHOWN_CHARS = 60  # how much of a bad value to echo back
# What the model is told after an unknown skill name, whichever tool it called.
UNKNOWN_SKILL_ADVICE: Final = (
    "Call skill_list or skill_search to see the available skills, or ask the user which skill "
    "they mean."
)

_Path = Annotated[str, StringConstraints(min_length=1, max_length=_MAX_TEXT)]
_Skill = Annotated[
    str,
    StringConstraints(max_length=_MAX_NAME),
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
        StringConstraints(strip_whitespace=True, max_length=_MAX_NAME),
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


_MODELS: dict[str, type[ToolArgs]] = {
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
ALL_TOOLS: tuple[str, ...] = tuple(_MODELS)
SKILL_TOOLS: tuple[str, ...] = ALL_TOOLS[:-1]  # workspace_exec only when asked for


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool as a provider sees it; ``parameters`` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


@dataclass(frozen=True, slots=True)
class ParsedArgs:
    """Valid arguments. ``notes`` says which slips were forgiven; ``ignored`` lists unknown keys."""

    tool: str
    args: ToolArgs
    notes: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Arguments that cannot be used; ``message`` is written for the model."""

    tool: str
    kind: Literal["missing", "invalid", "unknown_skill", "unknown_tool"]
    field: str | None
    message: str
    suggestions: tuple[str, ...] = ()


# ---- schemas ----------------------------------------------------------------------------

# OpenAI's strict mode rejects "default", some providers reject string lengths; the defaults
# go into the descriptions instead.
_DROPPED_KEYS = frozenset({"title", "default", "minLength", "maxLength"})


def tool_definitions(
    *,
    skill_names: Sequence[str] | None,
    tools: Sequence[str] | None = None,
    enum_limit: int = 1000,
    conversation: bool = False,
) -> list[ToolDef]:
    """Definitions of the given tools (default: the seven skill tools), in that order.

    ``skill`` is an enum of the sorted distinct ``skill_names`` when there are 1 to
    ``enum_limit`` of them, else a plain string. With ``conversation`` the stateful tools
    offer the optional ``conversation`` handle argument and say how to use it (for a server
    whose protocol has no sessions); without it the argument is accepted but not advertised.

    Raises:
        UsageError: an unknown tool name, a negative ``enum_limit``, or a bare string as names.
    """
    if enum_limit < 0:
        raise UsageError(f"enum_limit must not be negative, got {enum_limit}")
    names = sorted(set(_names_collection(skill_names) or ()))
    enum = names if 1 <= len(names) <= enum_limit else None
    selected = SKILL_TOOLS if tools is None else tuple(dict.fromkeys(tools))
    unknown = [t for t in selected if t not in _MODELS]
    if unknown:
        raise UsageError(f"unknown tools {unknown}; valid: {', '.join(ALL_TOOLS)}")
    return [_definition(name, enum, conversation=conversation) for name in selected]


def _definition(name: str, enum: list[str] | None, *, conversation: bool) -> ToolDef:
    parameters = copy.deepcopy(_base_schema(name))
    if enum is not None and "skill" in parameters["properties"]:
        parameters["properties"]["skill"]["enum"] = list(enum)
    description = _MODELS[name].tool_description
    if name in STATEFUL_TOOLS and conversation:
        description += CONVERSATION_ADVICE
    else:
        parameters["properties"].pop("conversation", None)
    return ToolDef(name, description, parameters)


@functools.cache
def _base_schema(name: str) -> dict[str, Any]:
    model = _MODELS[name]
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


def to_openai(defs: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """OpenAI chat-completions ``tools`` entries."""
    return [{"type": "function", "function": _entry(d, "parameters")} for d in defs]


def to_anthropic(defs: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """Anthropic messages ``tools`` entries."""
    return [_entry(d, "input_schema") for d in defs]


def to_mcp(defs: Sequence[ToolDef]) -> list[dict[str, Any]]:
    """MCP ``tools/list`` entries."""
    return [_entry(d, "inputSchema") for d in defs]


def _entry(d: ToolDef, schema_key: str) -> dict[str, Any]:
    return {"name": d.name, "description": d.description, schema_key: copy.deepcopy(d.parameters)}


# ---- argument handling ------------------------------------------------------------------

_ALIASES = {
    alias: target
    for target, aliases in (
        ("skill", "skill_name name"),
        ("path", "file_path filepath file filename file_name"),
        ("query", "q search text"),
        ("docs", "doc documents"),
        ("command", "cmd"),
        ("timeout_s", "timeout"),
    )
    for alias in aliases.split()
}
_WRAPPERS = (("**", "**"), ("*", "*"), ("`", "`"), ('"', '"'), ("'", "'"), ("“", "”"), ("‘", "’"))
_OPENERS = frozenset(a[0] for a, _b in _WRAPPERS)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
_MODE_NOISE = re.compile(r"[\s\-_'\"`*]")
_BOOLS = {"true": True, "yes": True, "1": True, "false": False, "no": False, "0": False}
_ASK = {
    "skill": "Ask the user which skill they mean, or call skill_list/skill_search.",
    "query": "Ask the user what they are looking for.",
    "path": "Ask the user which file they mean, or call skill_load to see the skill's files.",
    "command": "Ask the user what to run.",
}


def parse_arguments(
    tool: str,
    raw: Mapping[str, Any] | str | None,
    *,
    skill_names: Collection[str] | None = None,
) -> ParsedArgs | ArgumentProblem:
    """Validate a model's arguments for ``tool``, forgiving common slips.

    Args:
        tool: The tool name as the model sent it (case and ``-`` for ``_`` are forgiven).
        raw: The arguments: a mapping, a JSON string, or None/"" for none.
        skill_names: The visible skill names; when given, ``skill`` must be one of them.

    Raises:
        UsageError: ``tool`` or ``raw`` has a type no model can send, or ``skill_names`` is a str.
    """
    names = _names_collection(skill_names)
    notes: list[str] = []
    name = _resolve_tool(tool, notes)
    if name is None:
        return _unknown_tool(tool)
    data = _load(raw, notes)
    if isinstance(data, str):
        return ArgumentProblem(name, "invalid", None, data)
    model = _MODELS[name]
    if not notes:
        # Nearly every call is well formed: then the forgiving path below would change
        # nothing, and checking that costs a fraction of running it.
        parsed = _as_sent(model, data, names)
        if parsed is not None:
            return ParsedArgs(name, parsed)
    return _forgiving(name, model, data, notes, names)


def _forgiving(
    name: str,
    model: type[ToolArgs],
    data: dict[str, Any],
    notes: list[str],
    names: Collection[str] | None,
) -> ParsedArgs | ArgumentProblem:
    """:func:`parse_arguments` after the tool and the JSON: every slip forgiven and noted."""
    args, ignored = _normalise(model, data, notes, names)
    problem = _missing(name, model, args)
    if problem is None:
        try:
            parsed = model.model_validate(args)
        except ValidationError as exc:
            return _invalid(name, exc, _base_schema(name)["properties"])
        problem = _unknown_skill(name, getattr(parsed, "skill", None), names)
    return problem or ParsedArgs(name, parsed, tuple(notes), ignored)


@dataclass(frozen=True, slots=True)
class ParsedModelArgs:
    """Valid arguments of a caller's tool: the validated ``values`` and the forgiven slips."""

    values: dict[str, Any]
    notes: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


def parse_model_arguments(
    tool: str,
    model: type[BaseModel],
    raw: Mapping[str, Any] | str | None,
    *,
    only_sent: bool = False,
) -> ParsedModelArgs | ArgumentProblem:
    """:func:`parse_arguments` for a caller's tool whose arguments are the pydantic ``model``:
    the same forgiven slips (camelCase keys, wrapped values, numbers and booleans sent as
    text), the same "missing → ask the user" and "invalid → fix it" messages. With
    ``only_sent`` the values leave out the arguments the model did not send.
    """
    notes: list[str] = []
    data = _load(raw, notes)
    if isinstance(data, str):
        return ArgumentProblem(tool, "invalid", None, data)
    args, ignored = _normalise(model, data, notes, None)
    problem = _missing(tool, model, args)
    if problem is not None:
        return problem
    try:
        values = model.model_validate(args).model_dump(exclude_unset=only_sent)
    except ValidationError as exc:
        return _invalid(tool, exc, model.model_json_schema().get("properties", {}))
    return ParsedModelArgs(dict(values), tuple(notes), ignored)


def failure_signature(
    tool: str,
    raw: Mapping[str, Any] | str | None,
    *,
    model: type[BaseModel] | None = None,
    skill_names: Collection[str] | None = None,
) -> str:
    """What the repeated-failure counter counts a call under: the tool and its arguments as
    validation reads them, so a respelt call is the same call — ``{"X": "1"}`` for ``{"x": 1}``,
    keys in another order, other whitespace, an alias, a wrapped value.

    Args:
        tool: The tool name as sent (a slipped skill tool name is read as the tool it means).
        raw: The arguments as sent.
        model: A caller's tool's argument model. Without it a skill tool is read by its own
            model, and any other tool's arguments are taken as the JSON object sent.
        skill_names: The visible skill names, to read a slipped ``skill`` as
            :func:`parse_arguments` does.
    """
    if model is None:
        name = normalise_tool_name(tool, _MODELS) if isinstance(tool, str) else None
        if name is not None:
            tool, model = name, _MODELS[name]
    data = _load(raw, []) if raw is None or isinstance(raw, str | Mapping) else None
    if not isinstance(data, dict):  # not a JSON object: only the very same text is the same
        return call_signature(tool, raw)
    if model is None:
        return call_signature(tool, _folded(data))
    args, ignored = _normalise(model, data, [], _names_collection(skill_names))
    try:
        # What was sent, validated: leaving an argument out is not always sending its
        # default (workspace_exec without timeout_s takes the skill's own limit).
        values: Mapping[str, Any] = model.model_validate(args).model_dump(exclude_unset=True)
    except ValidationError:
        values = args  # invalid: as far as the slips could be read
    # The MCP conversation handle says where the call's state is, not what it asks for: a
    # call is the same with or without it.
    values = {key: value for key, value in values.items() if key != "conversation"}
    return call_signature(tool, {"args": values, "ignored": _folded({k: data[k] for k in ignored})})


def _folded(data: Mapping[str, Any]) -> dict[str, Any]:
    # An unknown key means nothing to the tool in any case: "Verbose" is "verbose".
    return {key.casefold(): value for key, value in sorted(data.items())}


def normalise_tool_name(name: str, known: Collection[str]) -> str | None:
    """The one reading of a tool name a model slipped on (``Skill-Load``, ``skillLoad``,
    ``functions.skill_load`` → ``skill_load``): the name in ``known`` it means, or None."""
    if name in known:
        return name
    key = _tool_key(name)
    matches = [k for k in known if _tool_key(k) == key]
    return matches[0] if len(matches) == 1 else None


def _tool_key(name: str) -> str:
    name = _CAMEL.sub("_", name.strip().rpartition(".")[2])
    return name.casefold().replace("-", "_").replace(" ", "_")


def _names_collection(names: Collection[str] | None) -> Collection[str] | None:
    if isinstance(names, str):
        raise UsageError("skill_names must be a collection of names, not one string")
    return names


def _resolve_tool(tool: str, notes: list[str]) -> str | None:
    if not isinstance(tool, str):
        raise UsageError(f"tool must be a str, got {type(tool).__name__}")
    if tool in _MODELS:
        return tool
    key = normalise_tool_name(tool, _MODELS)
    if key is None:
        return None
    notes.append(f"Read tool name {_shown(tool)} as '{key}'.")
    return key


def _unknown_tool(tool: str) -> ArgumentProblem:
    message = f"Unknown tool {_shown(tool)}. Valid tools: {', '.join(ALL_TOOLS)}."
    suggestions = tuple(closest_names(tool, ALL_TOOLS)) if len(tool) <= _MAX_NAME else ()
    return ArgumentProblem(tool, "unknown_tool", None, message, suggestions)


def _load(raw: Mapping[str, Any] | str | None, notes: list[str]) -> dict[str, Any] | str:
    """The arguments as a dict, or a message saying why they are not a JSON object."""
    if isinstance(raw, Mapping):
        return {str(k): v for k, v in raw.items()}
    if raw is not None and not isinstance(raw, str):
        raise UsageError(f"raw arguments must be a mapping, a str or None, not {type(raw)}")
    value: Any = None
    if raw and raw.strip():
        try:
            value = json.loads(raw)
            if isinstance(value, str) and value.lstrip().startswith("{"):
                value = json.loads(value)
                notes.append("Arguments were JSON-encoded twice; decoded them.")
        except json.JSONDecodeError as e:
            return (
                f"Arguments are not valid JSON: {e.msg} at line {e.lineno}, column {e.colno} "
                f"(character {e.pos}). Send the arguments as one JSON object."
            )
    if value is None:
        return {}
    if not isinstance(value, dict):
        return f"Arguments must be a JSON object, not {_shown(value)}."
    return value


def _normalise(
    model: type[BaseModel], data: dict[str, Any], notes: list[str], names: Collection[str] | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Rename aliased keys and fix slipped values; return them and the ignored keys."""
    fields = _fields(model)
    out: dict[str, Any] = {}
    ignored: list[str] = []
    for key, value in data.items():
        target = _canonical_key(key, fields)
        if target is None or target in out or (target != key and target in data):
            ignored.append(key)
            continue
        if target != key:
            notes.append(f"Read argument '{key}' as '{target}'.")
        fixed = _fix_value(target, value, fields[target].annotation, notes, names)
        info = fields[target]
        # null means "the default"; so does "" where the default is "none" (workspace_exec skill)
        if not info.is_required() and (fixed is None or (fixed == "" and info.default is None)):
            continue
        out[target] = fixed
    return out, tuple(ignored)


@functools.lru_cache(maxsize=256)
def _fields(model: type[BaseModel]) -> Mapping[str, Any]:
    # Read once per model: pydantic's class attribute is a descriptor costing a few µs a read.
    return dict(model.model_fields)


def _canonical_key(key: str, fields: Mapping[str, object]) -> str | None:
    if key in fields:  # the common case: the name the schema gives
        return key
    for candidate in dict.fromkeys((key, _CAMEL.sub("_", key).lower())):
        for target in (candidate, _ALIASES.get(candidate)):
            if target in fields:
                return target
    return None


def _fix_value(
    field: str, value: Any, annotation: Any, notes: list[str], names: Collection[str] | None
) -> Any:
    fixed = value
    if field in ("docs", "collect") and isinstance(value, str):
        fixed = [value]
    if field in ("docs", "path"):
        fixed = [_unwrap_any(v) for v in fixed] if isinstance(fixed, list) else _unwrap_any(fixed)
    elif field == "skill" and isinstance(value, str):
        fixed = _fix_skill(value, names)
    elif field == "mode" and isinstance(value, str):
        mode = _MODE_NOISE.sub("", value).lower()
        fixed = mode if mode in ("add", "replace", "clear") else value
    elif annotation is bool and isinstance(value, str):
        fixed = _BOOLS.get(value.strip().lower(), value)
    elif annotation in (int, float):
        fixed = _number(value, annotation)
    if fixed != value or type(fixed) is not type(value):
        notes.append(f"Read {field} {_shown(value)} as {_shown(fixed)}.")
    return fixed


def _unwrap(text: str) -> str:
    """Strip surrounding whitespace, Markdown emphasis, backticks and quotes."""
    text, before = text.strip(), ""
    if not text or text[0] not in _OPENERS:  # the common case: nothing wrapped
        return text
    while text != before:
        before = text
        for a, b in _WRAPPERS:
            if len(text) > len(a) + len(b) and text.startswith(a) and text.endswith(b):
                text = text[len(a) : -len(b)].strip()
                break
    return text


def _unwrap_any(value: Any) -> Any:
    return _unwrap(value) if isinstance(value, str) else value


def _fix_skill(value: str, names: Collection[str] | None) -> str:
    text = _unwrap(value)
    if text.startswith("/") and len(text) > 1:  # a slash command: "/pdf"
        text = _unwrap(text[1:])
    if names is not None and text not in names:
        key = _name_key(text)
        matches = [n for n in names if _name_key(n) == key]
        if len(matches) == 1:
            return matches[0]
    return text


def _name_key(name: str) -> str:
    return name.casefold().replace("_", "-").replace(" ", "-")


# How the forgiving path treats each field, as far as :func:`_as_sent` needs to know.
_Kind = Literal["skill", "path", "docs", "collect", "mode", "bool", "int", "float", "plain"]
_NAMED_KINDS: Final[Mapping[str, _Kind]] = {
    "skill": "skill",
    "path": "path",
    "docs": "docs",
    "collect": "collect",
    "mode": "mode",
}
_TYPED_KINDS: Final[tuple[tuple[type, _Kind], ...]] = (
    (bool, "bool"),
    (int, "int"),
    (float, "float"),
)


@functools.lru_cache(maxsize=256)
def _kinds(model: type[BaseModel]) -> tuple[Mapping[str, _Kind], frozenset[str]]:
    """Each field's kind, and the required fields."""
    fields = _fields(model)
    kinds = {field: _kind(field, info.annotation) for field, info in fields.items()}
    return kinds, frozenset(f for f, info in fields.items() if info.is_required())


def _kind(field: str, annotation: Any) -> _Kind:
    # The order of _fix_value's branches: by name first, then by type.
    if field in _NAMED_KINDS:
        return _NAMED_KINDS[field]
    return next((kind for cls, kind in _TYPED_KINDS if annotation is cls), "plain")


def _as_sent(
    model: type[ToolArgs], data: dict[str, Any], names: Collection[str] | None
) -> ToolArgs | None:
    """The arguments validated as they are, when :func:`_forgiving` would rename, fix, drop
    and note nothing and find nothing missing, invalid or unknown; else None (take it then).

    Only ever declines more than needed: anything unusual goes the forgiving way.
    """
    kinds, required = _kinds(model)
    for key, value in data.items():
        kind = kinds.get(key)
        if kind is None or not _unchanged(kind, value, names):
            return None
    if not required.issubset(data):
        return None
    try:
        return model.model_validate(data)
    except ValidationError:
        return None


def _unchanged(kind: _Kind, value: Any, names: Collection[str] | None) -> bool:
    """Whether :func:`_fix_value` keeps ``value`` as it is, and no rule drops or misses it."""
    cls = type(value)
    if cls is str:
        # Blank: missing when required, the default when not; wrapped: unwrapped.
        if not value or value.strip() != value or value[0] in _OPENERS:
            return False
        if kind == "skill":
            return value[0] != "/" and (names is None or value in names)
        if kind == "mode":
            return value in ("add", "replace", "clear")
        return kind in ("path", "plain")  # docs/collect as one string, bool/number as text
    if kind == "docs":
        return cls is list and all(type(v) is str and _unwrap(v) == v for v in value)
    if kind == "collect":
        return cls is list
    if kind == "bool":
        return cls is bool
    if kind == "int":
        return cls is int
    if kind == "float":
        return cls is float or cls is int
    # None means the default (dropped); anything else pydantic refuses, the forgiving way.
    return False


def _number(value: Any, annotation: type) -> Any:
    if isinstance(value, float) and annotation is int and value.is_integer():
        return int(value)
    if not isinstance(value, str):
        return value
    try:
        return annotation(value.strip())
    except ValueError:
        return value


def _missing(tool: str, model: type[BaseModel], args: Mapping[str, Any]) -> ArgumentProblem | None:
    """A problem for the first required argument that is absent, null or blank."""
    for field, info in _fields(model).items():
        value = args.get(field)
        if info.is_required() and (value is None or (isinstance(value, str) and not value.strip())):
            ask = _ASK.get(field, "Ask the user for it.")
            message = f"Missing required argument '{field}' for {tool}. {ask}"
            return ArgumentProblem(tool, "missing", field, message)
    return None


def _invalid(tool: str, exc: ValidationError, properties: Mapping[str, Any]) -> ArgumentProblem:
    errors = exc.errors(include_url=False)
    field = str(errors[0]["loc"][0]) if errors[0]["loc"] else None
    text = " ".join(_plain(e, properties) for e in errors[:3])
    return ArgumentProblem(tool, "invalid", field, f"{text} Fix it and call {tool} again.")


def _plain(error: ErrorDetails, properties: Mapping[str, Any]) -> str:
    """One pydantic error, said plainly: which argument, what is wrong, what was sent."""
    loc = error["loc"]
    where = f"{loc[0]}[{loc[1]}]" if len(loc) > 1 else str(loc[0]) if loc else "arguments"
    kind, ctx, got = error["type"], error.get("ctx", {}), error["input"]
    if kind in ("string_too_long", "too_long"):
        unit = "characters" if kind == "string_too_long" else "entries"
        reason, shown = f"must have at most {ctx['max_length']} {unit}", f"{len(got)} {unit}"
        return f"Invalid argument '{where}': {reason} (got {shown})."
    prop = properties.get(str(loc[0])) if loc else None
    if kind in ("greater_than", "greater_than_equal", "less_than", "less_than_equal") and prop:
        reason = _range(prop)
    elif kind in ("string_too_short", "too_short"):
        reason = _too_short(ctx["min_length"], text=kind == "string_too_short")
    else:
        reason = _REASONS.get(kind) or error["msg"][0].lower() + error["msg"][1:]
        if kind == "literal_error":
            reason = f"must be one of {ctx['expected']}"
    return f"Invalid argument '{where}': {reason} (got {_shown(got)})."


def _too_short(minimum: int, *, text: bool) -> str:
    if minimum <= 1:
        return "must not be empty"
    if text:
        return f"must be at least {minimum} characters"
    return f"must have at least {minimum} entries"


_REASONS = {
    **dict.fromkeys(("int_type", "int_parsing", "int_from_float"), "must be a whole number"),
    **dict.fromkeys(("float_type", "float_parsing"), "must be a number"),
    **dict.fromkeys(("bool_type", "bool_parsing"), "must be true or false"),
    "string_type": "must be a string",
    "list_type": "must be a list of strings",
}


def _bound(value: Any) -> str:
    # Some pydantic releases write a float field's bound 0 as 0.0 in the schema: same message.
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _range(prop: Mapping[str, Any]) -> str:
    if "minimum" in prop and "maximum" in prop:
        return f"must be between {_bound(prop['minimum'])} and {_bound(prop['maximum'])}"
    bounds = (
        ("exclusiveMinimum", "more than"),
        ("minimum", "at least"),
        ("exclusiveMaximum", "less than"),
        ("maximum", "at most"),
    )
    parts = [f"{words} {_bound(prop[key])}" for key, words in bounds if key in prop]
    return "must be " + " and ".join(parts) if parts else "is out of range"


def _unknown_skill(
    tool: str, skill: str | None, names: Collection[str] | None
) -> ArgumentProblem | None:
    if names is None or skill is None or skill in names:
        return None
    suggestions = tuple(closest_names(skill, names, limit=3))
    message = f"{unknown_skill_message(skill, suggestions)} {UNKNOWN_SKILL_ADVICE}"
    return ArgumentProblem(tool, "unknown_skill", "skill", message, suggestions)


def _shown(value: Any) -> str:
    """A short JSON rendering of a value the model sent, for messages."""
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return f'{json.dumps(value[:_SHOWN_CHARS], ensure_ascii=False)[:-1]}…" ({len(value)} chars)'
    if isinstance(value, list | dict) and len(value) > 5:
        return f"a {type(value).__name__} of {len(value)} entries"
    text = json.dumps(value, ensure_ascii=False, default=repr, skipkeys=True)
    return text if len(text) <= 2 * _SHOWN_CHARS else text[: 2 * _SHOWN_CHARS] + "…"

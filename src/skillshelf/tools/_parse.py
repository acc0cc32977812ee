"""Reading a model's arguments: validated once, every slip forgiven and noted.

:func:`parse_arguments` never raises for bad model input: it returns :class:`ParsedArgs` (with
notes on every slip it forgave) or an :class:`ArgumentProblem` to send back as a tool result.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from skillshelf.core.session import call_signature
from skillshelf.errors import UsageError
from skillshelf.tools._problems import (
    ArgumentProblem,
    invalid_arguments,
    missing_argument,
    shown_value,
    unknown_skill,
    unknown_tool,
)
from skillshelf.tools._repair import as_sent, normalise, normalise_tool_name
from skillshelf.tools._spec import ARG_MODELS, ToolArgs, base_schema, names_collection

__all__ = [
    "ParsedArgs",
    "ParsedModelArgs",
    "failure_signature",
    "parse_arguments",
    "parse_model_arguments",
]


@dataclass(frozen=True, slots=True)
class ParsedArgs:
    """Valid arguments. ``notes`` says which slips were forgiven; ``ignored`` lists unknown keys."""

    tool: str
    args: ToolArgs
    notes: tuple[str, ...] = ()
    ignored: tuple[str, ...] = ()


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
    names = names_collection(skill_names)
    notes: list[str] = []
    name = _resolve_tool(tool, notes)
    if name is None:
        return unknown_tool(tool)
    data = _load(raw, notes)
    if isinstance(data, str):
        return ArgumentProblem(name, "invalid", None, data)
    model = ARG_MODELS[name]
    if not notes:
        # Nearly every call is well formed: then the forgiving path below would change
        # nothing, and checking that costs a fraction of running it.
        parsed = as_sent(model, data, names)
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
    args, ignored = normalise(model, data, notes, names)
    problem = missing_argument(name, model, args)
    if problem is None:
        try:
            parsed = model.model_validate(args)
        except ValidationError as exc:
            return invalid_arguments(name, exc, base_schema(name)["properties"])
        problem = unknown_skill(name, getattr(parsed, "skill", None), names)
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
    args, ignored = normalise(model, data, notes, None)
    problem = missing_argument(tool, model, args)
    if problem is not None:
        return problem
    try:
        values = model.model_validate(args).model_dump(exclude_unset=only_sent)
    except ValidationError as exc:
        return invalid_arguments(tool, exc, model.model_json_schema().get("properties", {}))
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
        name = normalise_tool_name(tool, ARG_MODELS) if isinstance(tool, str) else None
        if name is not None:
            tool, model = name, ARG_MODELS[name]
    data = _load(raw, []) if raw is None or isinstance(raw, str | Mapping) else None
    if not isinstance(data, dict):  # not a JSON object: only the very same text is the same
        return call_signature(tool, raw)
    if model is None:
        return call_signature(tool, _folded(data))
    args, ignored = normalise(model, data, [], names_collection(skill_names))
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


def _resolve_tool(tool: str, notes: list[str]) -> str | None:
    if not isinstance(tool, str):
        raise UsageError(f"tool must be a str, got {type(tool).__name__}")
    if tool in ARG_MODELS:
        return tool
    key = normalise_tool_name(tool, ARG_MODELS)
    if key is None:
        return None
    notes.append(f"Read tool name {shown_value(tool)} as '{key}'.")
    return key


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
        return f"Arguments must be a JSON object, not {shown_value(value)}."
    return value

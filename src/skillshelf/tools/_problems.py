"""What the model is told when its arguments cannot be used: an :class:`ArgumentProblem`
with a message that says which argument, what is wrong and what to do."""

from __future__ import annotations

import json
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from skillshelf.core.search import closest_names
from skillshelf.errors import unknown_skill_message
from skillshelf.tools._spec import ALL_TOOLS, MAX_NAME, UNKNOWN_SKILL_ADVICE, fields_of

__all__ = [
    "ArgumentProblem",
    "invalid_arguments",
    "missing_argument",
    "shown_value",
    "unknown_skill",
    "unknown_tool",
]


_SHOWN_CHARS = 60  # how much of a bad value to echo back


@dataclass(frozen=True, slots=True)
class ArgumentProblem:
    """Arguments that cannot be used; ``message`` is written for the model."""

    tool: str
    kind: Literal["missing", "invalid", "unknown_skill", "unknown_tool"]
    field: str | None
    message: str
    suggestions: tuple[str, ...] = ()


_ASK = {
    "skill": "Ask the user which skill they mean, or call skill_list/skill_search.",
    "query": "Ask the user what they are looking for.",
    "path": "Ask the user which file they mean, or call skill_load to see the skill's files.",
    "command": "Ask the user what to run.",
}


def unknown_tool(tool: str) -> ArgumentProblem:
    message = f"Unknown tool {shown_value(tool)}. Valid tools: {', '.join(ALL_TOOLS)}."
    suggestions = tuple(closest_names(tool, ALL_TOOLS)) if len(tool) <= MAX_NAME else ()
    return ArgumentProblem(tool, "unknown_tool", None, message, suggestions)


def missing_argument(
    tool: str, model: type[BaseModel], args: Mapping[str, Any]
) -> ArgumentProblem | None:
    """A problem for the first required argument that is absent, null or blank."""
    for field, info in fields_of(model).items():
        value = args.get(field)
        if info.is_required() and (value is None or (isinstance(value, str) and not value.strip())):
            ask = _ASK.get(field, "Ask the user for it.")
            message = f"Missing required argument '{field}' for {tool}. {ask}"
            return ArgumentProblem(tool, "missing", field, message)
    return None


def invalid_arguments(
    tool: str, exc: ValidationError, properties: Mapping[str, Any]
) -> ArgumentProblem:
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
    return f"Invalid argument '{where}': {reason} (got {shown_value(got)})."


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


def unknown_skill(
    tool: str, skill: str | None, names: Collection[str] | None
) -> ArgumentProblem | None:
    if names is None or skill is None or skill in names:
        return None
    suggestions = tuple(closest_names(skill, names, limit=3))
    message = f"{unknown_skill_message(skill, suggestions)} {UNKNOWN_SKILL_ADVICE}"
    return ArgumentProblem(tool, "unknown_skill", "skill", message, suggestions)


def shown_value(value: Any) -> str:
    """A short JSON rendering of a value the model sent, for messages."""
    if isinstance(value, str) and len(value) > _SHOWN_CHARS:
        return f'{json.dumps(value[:_SHOWN_CHARS], ensure_ascii=False)[:-1]}…" ({len(value)} chars)'
    if isinstance(value, list | dict) and len(value) > 5:
        return f"a {type(value).__name__} of {len(value)} entries"
    text = json.dumps(value, ensure_ascii=False, default=repr, skipkeys=True)
    return text if len(text) <= 2 * _SHOWN_CHARS else text[: 2 * _SHOWN_CHARS] + "…"

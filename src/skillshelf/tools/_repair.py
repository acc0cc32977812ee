"""The slips a model makes in its arguments, forgiven: aliased and camelCase keys, wrapped
values, a slipped skill name, numbers and booleans sent as text, a misspelt tool name.

:func:`as_sent` is the fast path: it sees that a call needs none of this.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Collection, Mapping
from typing import Any, Final, Literal

from pydantic import BaseModel, ValidationError

from skillshelf.tools._problems import shown_value
from skillshelf.tools._spec import ToolArgs, fields_of

__all__ = [
    "as_sent",
    "normalise",
    "normalise_tool_name",
]


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


def normalise(
    model: type[BaseModel], data: dict[str, Any], notes: list[str], names: Collection[str] | None
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Rename aliased keys and fix slipped values; return them and the ignored keys."""
    fields = fields_of(model)
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
        notes.append(f"Read {field} {shown_value(value)} as {shown_value(fixed)}.")
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


# How the forgiving path treats each field, as far as :func:`as_sent` needs to know.
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
    fields = fields_of(model)
    kinds = {field: _kind(field, info.annotation) for field, info in fields.items()}
    return kinds, frozenset(f for f, info in fields.items() if info.is_required())


def _kind(field: str, annotation: Any) -> _Kind:
    # The order of _fix_value's branches: by name first, then by type.
    if field in _NAMED_KINDS:
        return _NAMED_KINDS[field]
    return next((kind for cls, kind in _TYPED_KINDS if annotation is cls), "plain")


def as_sent(
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

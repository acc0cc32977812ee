"""The fields beyond the name and description: licence and metadata, and the extensions real
skills use (Claude Code's and Agent Zero's keys and their aliases), each read leniently with a
warning for a value of the wrong type."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Final

from skillshelf.core._manifest_fields import ALIASES, EXTENSION_FIELDS, SPEC_FIELDS, FieldCollector
from skillshelf.core.allowed_tools import is_tool_pattern
from skillshelf.core.frontmatter import YamlValue
from skillshelf.errors import clip

__all__ = ["extensions", "metadata_field", "optional_str", "parse_allowed_tools"]

_TRUE: Final = frozenset({"true", "yes", "on", "y"})
_FALSE: Final = frozenset({"false", "no", "off", "n"})


def parse_allowed_tools(value: str) -> tuple[str, ...]:
    """Split an ``allowed-tools`` string on spaces and commas outside parentheses.

    ``"Bash(git status:*) Read, Grep"`` → ``("Bash(git status:*)", "Read", "Grep")``.
    """
    items: list[str] = []
    current: list[str] = []
    depth = 0
    for char in value:
        if char == "(":
            depth += 1
        elif char == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (char.isspace() or char == ","):
            if current:
                items.append("".join(current))
                current = []
            continue
        current.append(char)
    if current:
        items.append("".join(current))
    return tuple(items)


def optional_str(data: Mapping[str, YamlValue], key: str, out: FieldCollector) -> str | None:
    raw = data.get(key)
    if raw is None:
        return None
    if isinstance(raw, str):
        return raw
    out.add(
        f"{key.replace('-', '_')}.type",
        "warning",
        f"Field '{key}' should be a string; ignored",
        key,
    )
    return None


def _as_text(value: YamlValue) -> str:
    # default=str: callers of the skills-ref drop-in may hand over any Python values.
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, default=str)


def metadata_field(data: Mapping[str, YamlValue], out: FieldCollector) -> dict[str, str]:
    raw = data.get("metadata")
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        out.add(
            "metadata.type", "warning", "Field 'metadata' should be a mapping; ignored", "metadata"
        )
        return {}
    bad = [k for k, v in raw.items() if not isinstance(v, str)]
    if not bad:
        return dict(raw)  # type: ignore[arg-type]
    out.add(
        "metadata.non_string",
        "warning",
        f"Metadata values should be strings; converted to text: {', '.join(bad)}",
        "metadata",
    )
    return {k: _as_text(v) for k, v in raw.items()}


def _str_list(data: Mapping[str, YamlValue], key: str, out: FieldCollector) -> tuple[str, ...]:
    raw = data.get(key)
    if raw is None:
        return ()
    if isinstance(raw, str):
        return tuple(p.strip() for p in raw.split(",") if p.strip())
    if isinstance(raw, list):
        return tuple(_as_text(v).strip() for v in raw if _as_text(v).strip())
    out.add("extension.type", "warning", f"Field '{key}' should be a list of strings; ignored", key)
    return ()


def _bool(data: Mapping[str, YamlValue], key: str, default: bool, out: FieldCollector) -> bool:
    raw = data.get(key)
    if raw is None:
        return default
    if isinstance(raw, str) and raw.strip().lower() in _TRUE:
        return True
    if isinstance(raw, str) and raw.strip().lower() in _FALSE:
        return False
    out.add(
        "extension.type", "warning", f"Field '{key}' should be true or false; using {default}", key
    )
    return default


def _alias_values(data: Mapping[str, YamlValue], canonical: str) -> list[YamlValue]:
    """Values of ``canonical`` and its aliases, in the order the author wrote them."""
    return [v for k, v in data.items() if ALIASES.get(k, k) == canonical]


def _phrases(data: Mapping[str, YamlValue], canonical: str, out: FieldCollector) -> tuple[str, ...]:
    phrases: list[str] = []
    for value in _alias_values(data, canonical):
        if isinstance(value, str):
            phrases.append(value.strip())  # a trigger phrase may itself contain commas
        elif isinstance(value, list):
            phrases.extend(_as_text(v).strip() for v in value)
        else:
            out.add(
                "extension.type",
                "warning",
                f"Field {canonical!r} should be a list; ignored",
                canonical,
            )
    return tuple(p for p in phrases if p)


def _tools(
    data: Mapping[str, YamlValue], out: FieldCollector
) -> tuple[tuple[str, ...], str | None, tuple[str, ...]]:
    """The tool patterns, the string as written, and the entries that are not tools."""
    tools: list[str] = []
    raw: str | None = None
    for value in _alias_values(data, "allowed-tools"):
        if isinstance(value, str):
            raw = value if raw is None else raw
            tools.extend(parse_allowed_tools(value))
        elif isinstance(value, list):
            tools.extend(_as_text(v).strip() for v in value if _as_text(v).strip())
        else:
            out.add(
                "allowed_tools.type",
                "warning",
                "Field 'allowed-tools' should be a string or a list; ignored",
                "allowed-tools",
            )
    entries = list(dict.fromkeys(tools))
    not_tools = tuple(t for t in entries if not is_tool_pattern(t))
    if not_tools:
        key = next(k for k in data if ALIASES.get(k, k) == "allowed-tools")
        out.add(
            "allowed_tools.not_a_tool",
            "warning",
            f"Not tool patterns, so they restrict nothing: {_listed(not_tools)} "
            "(agents a skill works with belong in 'compatibility')",
            key,
        )
    return tuple(t for t in entries if t not in not_tools), raw, not_tools


def _listed(values: tuple[str, ...]) -> str:
    return ", ".join(clip(v, 80, quoted=True) for v in values)


def extensions(data: Mapping[str, YamlValue], out: FieldCollector) -> dict[str, object]:
    tools, tools_raw, not_tools = _tools(data, out)
    known = SPEC_FIELDS | EXTENSION_FIELDS
    return {
        "allowed_tools": tools,
        "allowed_tools_raw": tools_raw,
        "not_tools": not_tools,
        "disable_model_invocation": _bool(data, "disable-model-invocation", False, out),
        "user_invocable": _bool(data, "user-invocable", True, out),
        "argument_hint": optional_str(data, "argument-hint", out),
        "when_to_use": optional_str(data, "when_to_use", out),
        "context": optional_str(data, "context", out),
        "agent": optional_str(data, "agent", out),
        "version": optional_str(data, "version", out),
        "tags": _str_list(data, "tags", out),
        "triggers": _phrases(data, "triggers", out),
        "extra": {k: v for k, v in data.items() if k not in known},
    }

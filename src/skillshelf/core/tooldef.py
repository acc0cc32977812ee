"""A tool as a model provider sees it, and its shape in each provider's API.

Generic on purpose: the skill tools, the caller's own tools and the model adapters all speak
:class:`ToolDef`, so it sits below both ``tools`` and ``models``.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ToolDef", "to_anthropic", "to_mcp", "to_openai"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    """One tool as a provider sees it; ``parameters`` is a JSON Schema object."""

    name: str
    description: str
    parameters: dict[str, Any]


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

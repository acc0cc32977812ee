"""User tools named from outside Python: ``pkg.mod:attr`` specs and schema stubs.

What ``skillshelf chat --tool`` and eval cases' ``tools`` offer the model: a module path whose
attribute is a :class:`~skillshelf.tools.Tool`, a list of them, or a typed function
(made a tool with :meth:`Tool.from_function`); or a stub — a name, a description, a JSON
Schema and a canned result — for measuring whether a model calls a tool right without running
anything.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Mapping
from typing import Any, Final

from skillshelf.errors import UsageError, clip
from skillshelf.tools._user_tools import Tool

__all__ = ["import_tools", "stub_tool"]

_SPEC: Final = re.compile(r"[A-Za-z_][\w.]*:[A-Za-z_]\w*")


def import_tools(spec: str) -> list[Tool]:
    """The tools ``spec`` (``pkg.mod:attr``) names.

    Raises:
        UsageError: A malformed spec, a module that cannot be imported, a missing attribute,
            or one that is neither a tool, a list of tools nor a function.
    """
    if not _SPEC.fullmatch(spec):
        raise UsageError(f"Tool {clip(spec)!r} is not of the form package.module:name")
    module_name, attr = spec.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise UsageError(f"Tool {spec!r}: cannot import {module_name!r} ({exc})") from exc
    value = getattr(module, attr, None)
    if value is None:
        raise UsageError(f"Tool {spec!r}: module {module_name!r} has no attribute {attr!r}")
    if isinstance(value, Tool):
        return [value]
    if isinstance(value, list | tuple) and value and all(isinstance(v, Tool) for v in value):
        return list(value)
    if callable(value):
        return [Tool.from_function(value)]
    raise UsageError(f"Tool {spec!r} is neither a Tool, a list of Tools nor a function")


def stub_tool(
    name: str, description: str, parameters: Mapping[str, Any], result: Any = "ok"
) -> Tool:
    """A tool that checks its arguments against ``parameters`` (required ones present) and
    answers every call with ``result``."""

    def canned(**_arguments: Any) -> Any:
        return result

    schema = dict(parameters) or {"type": "object", "properties": {}}
    return Tool(name, description, schema, canned)

"""The ``allowed-tools`` grammar: whether a tool call is inside a skill's allowed tools.

``Read`` allows any call to Read; ``Bash(git:*)`` allows Bash calls whose command is ``git`` or
starts with ``git `` (and contains no shell control characters); ``Read(*.md)`` matches the
call's primary argument (command, path, url, …) against a glob. Pure: values in, bool out.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["call_allowed", "pattern_tool"]

_PATTERN: Final = re.compile(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
# A prefix rule like Bash(git diff:*) must not let "git diff; rm -rf ~" through.
_SHELL_CONTROL: Final = re.compile(r"[;&|`\n<>]|\$\(")
_PRIMARY_KEYS: Final = ("command", "cmd", "path", "file_path", "url", "pattern", "query")


def pattern_tool(pattern: str) -> str:
    """The tool name of an ``allowed-tools`` entry (``Bash(git:*)`` → ``Bash``)."""
    match = _PATTERN.fullmatch(pattern)
    return match.group(1) if match else pattern.strip()


def call_allowed(allowed: Sequence[str], tool: str, arguments: Mapping[str, Any]) -> bool:
    """Whether a call to ``tool`` with ``arguments`` matches one ``allowed-tools`` entry."""
    return any(_matches(p, tool, arguments) for p in allowed)


def _matches(pattern: str, tool: str, arguments: Mapping[str, Any]) -> bool:
    match = _PATTERN.fullmatch(pattern)
    if match is None or match.group(1) != tool:
        return False
    spec = (match.group(2) or "").strip()
    if spec in ("", "*"):
        return True
    value = _primary(arguments)
    if value is None:
        return False
    if spec.endswith(":*"):
        prefix = spec[:-2].strip()
        if _SHELL_CONTROL.search(value):
            return False
        value = " ".join(value.split())
        return value == prefix or value.startswith(prefix + " ")
    return fnmatch.fnmatchcase(value, spec)


def _primary(arguments: Mapping[str, Any]) -> str | None:
    for key in _PRIMARY_KEYS:
        if isinstance(arguments.get(key), str):
            return str(arguments[key])
    strings = [v for v in arguments.values() if isinstance(v, str)]
    return strings[0] if strings else None

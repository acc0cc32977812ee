"""The ``allowed-tools`` grammar: whether a tool call is inside a skill's allowed tools.

``Read`` allows any call to Read; ``Bash(git:*)`` allows Bash calls whose command is ``git`` or
starts with ``git `` (and contains no shell control characters); ``Read(*.md)`` matches the
call's primary argument (command, path, url, …) against a glob. Pure: values in, bool out.

Only entries in that grammar are tools (:func:`is_tool_pattern`): collections that list the
agents a skill works with under ``tools:`` (``[claude, cursor, gemini]``) do not thereby forbid
every tool.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = ["AGENT_NAMES", "call_allowed", "is_tool_pattern", "pattern_tool"]

_PATTERN: Final = re.compile(r"\s*([^()\s]+)\s*(?:\((.*)\))?\s*", re.DOTALL)
# A tool name: Bash, WebFetch, mcp__github__create_issue, get_weather, skill_read_file.
_TOOL_NAME: Final = re.compile(r"[A-Za-z][A-Za-z0-9_.\-]*")
# Agents and harnesses real collections list under `tools:` (the skill's compatibility, not
# tools it calls); compared case-insensitively.
AGENT_NAMES: Final = frozenset(
    """claude claude-code claudecode cursor gemini gemini-cli codex openai-codex copilot
    github-copilot windsurf cline roo roo-code aider opencode amp goose kiro continue zed junie
    qwen qwen-code agent-zero agentzero openhands trae augment kilo kilocode""".split()  # noqa: SIM905 - a word list reads best as one string
)
# A prefix rule like Bash(git diff:*) must not let "git diff; rm -rf ~" through.
_SHELL_CONTROL: Final = re.compile(r"[;&|`\n<>]|\$\(")
_PRIMARY_KEYS: Final = ("command", "cmd", "path", "file_path", "url", "pattern", "query")


def pattern_tool(pattern: str) -> str:
    """The tool name of an ``allowed-tools`` entry (``Bash(git:*)`` → ``Bash``)."""
    match = _PATTERN.fullmatch(pattern)
    return match.group(1) if match else pattern.strip()


def is_tool_pattern(entry: str) -> bool:
    """Whether an ``allowed-tools`` entry is in the tool grammar: a tool name (not an agent's,
    see :data:`AGENT_NAMES`), optionally with a balanced ``(…)`` argument rule."""
    match = _PATTERN.fullmatch(entry)
    if match is None or entry.count("(") != entry.count(")"):
        return False
    name = match.group(1)
    return _TOOL_NAME.fullmatch(name) is not None and name.casefold() not in AGENT_NAMES


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

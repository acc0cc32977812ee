"""The command-line form of the harness's settings: each :class:`~skillshelf.SkillSettings`
field that has a flag is declared here once, and ``chat``, ``eval`` and ``serve`` take theirs
from this table.

A flag's choices and default come from the settings themselves (:meth:`SkillSettings.choices`
and the field's default), so a new load mode or a changed default reaches every command.
:func:`settings_options` adds a command's flags; :func:`settings_values` turns what click
parsed into ``SkillSettings`` keyword arguments.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

import click

from skillshelf.cli._common import F
from skillshelf.harness import MAX_RELEVANT_SKILLS, SkillSettings
from skillshelf.tools import ALL_TOOLS

__all__ = ["FLAGS", "settings_options", "settings_values"]


@dataclass(frozen=True, slots=True)
class _Flag:
    """One setting's flag: its declarations (the click parameter is the field's name), help
    and other click keywords. ``default`` False: the flag shows no default (repeatable and
    on/off flags, and settings whose default is an object the flag builds)."""

    decls: tuple[str, ...]
    help: str
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    default: bool = True


FLAGS: Final[Mapping[str, _Flag]] = {
    "instructions": _Flag(
        ("--instructions",),
        "Your part of the system prompt; the skills catalog and tool guidance follow.",
    ),
    "agent": _Flag(
        ("--agent-name",),
        "The agent's name: its skill state is kept under it in the session.",
    ),
    "store": _Flag(
        ("--store",),
        "Session store: memory: (default), sqlite:PATH or redis://HOST:PORT/DB.",
        {"metavar": "URL"},
        default=False,
    ),
    "load_mode": _Flag(
        ("--load-mode",),
        "How long a skill the model loads stays loaded: the next request, until the next user "
        "message, or the whole session.",
    ),
    "max_loaded": _Flag(
        ("--max-loaded",),
        "Skills kept loaded at once; one more evicts the least recently used.",
        {"type": click.IntRange(1)},
    ),
    "declared": _Flag(
        ("--declare",),
        "Load SKILL (with these docs) for the whole session before the first request; repeatable.",
        {"multiple": True, "metavar": "SKILL[:DOC,…]"},
        default=False,
    ),
    "visible": _Flag(
        ("--only",),
        "Show the model only these skills (repeatable; default: all).",
        {"multiple": True, "metavar": "SKILL"},
        default=False,
    ),
    "tools": _Flag(
        ("--tool",),
        "Offer your own tool: a Tool, a list of Tools or a typed function, imported from "
        "MODULE (in the working directory or on the Python path); repeatable.",
        {"multiple": True, "metavar": "MODULE:NAME"},
        default=False,
    ),
    "tool_timeout_s": _Flag(
        ("--tool-timeout",),
        "Seconds a user tool's call may take before the model is told it timed out.",
        {"type": click.FloatRange(0, min_open=True)},
    ),
    "tool_retries": _Flag(
        ("--tool-retries",),
        "Identical failing calls of a user tool the model may retry before it is told to stop.",
        {"type": click.IntRange(0)},
    ),
    "catalog_format": _Flag(("--catalog-format",), "How the catalog lists the skills."),
    "catalog_budget": _Flag(
        ("--catalog-budget",),
        "Characters the catalog may take (descriptions are trimmed to fit); 0: no limit.",
        {"type": click.IntRange(0)},
    ),
    "catalog_placement": _Flag(
        ("--catalog-placement",),
        "Put the catalog in the system prompt, or in a <system-reminder> user message before "
        "the conversation (as Claude Code does).",
    ),
    "relevant_skills": _Flag(
        ("--relevant-skills",),
        "When the budget leaves some skill without its description, show the model this many "
        "best matches for each user message beside it, descriptions whole; 0: none.",
        {"type": click.IntRange(0, MAX_RELEVANT_SKILLS), "metavar": "N"},
    ),
    "guidance": _Flag(
        ("--guidance",),
        "Replace the built-in guidance on the skill tools that follows the catalog.",
        {"metavar": "TEXT"},
        default=False,
    ),
    "skill_tools": _Flag(
        ("--skill-tool",),
        "Offer only these skill tools (repeatable: skill_load, skill_search, …; default: all).",
        {"multiple": True, "type": click.Choice(ALL_TOOLS), "metavar": "TOOL"},
        default=False,
    ),
    "placement": _Flag(
        ("--placement",),
        "Where loaded skills reach the model: in the tool results that loaded them (the "
        "system prompt stays cacheable), or in a system message.",
    ),
    "tool_style": _Flag(
        ("--tool-style",),
        "How the skill tools are offered: skillshelf's contract (skill_load, …) or "
        "claude-code (one Skill tool taking skill and args).",
    ),
    "enforce_allowed_tools": _Flag(
        ("--enforce-allowed-tools",),
        "While the active skill declares allowed-tools, refuse calls outside them.",
        {"is_flag": True},
        default=False,
    ),
    "trace": _Flag(
        ("--trace",),
        "Append a JSONL decision record of each tool call (and turn) to FILE.",
        {"type": click.Path(dir_okay=False), "metavar": "FILE"},
        default=False,
    ),
}
_DEFAULTS: Final = SkillSettings()


def settings_options(*fields: str, defaults: Mapping[str, Any] | None = None) -> Callable[[F], F]:
    """Add the flags of ``fields`` (in that order), defaulting as :class:`SkillSettings` does
    unless ``defaults`` says otherwise (``chat``'s short persona as its instructions)."""
    unknown = [f for f in fields if f not in FLAGS]
    if unknown:
        raise ValueError(f"no flag for the settings {unknown}")  # a programming error

    def decorate(func: F) -> F:
        for name in reversed(fields):
            flag = FLAGS[name]
            kwargs: dict[str, Any] = dict(flag.kwargs)
            choices = SkillSettings.choices(name)
            if choices:
                kwargs["type"] = click.Choice(choices)
            if flag.default:
                value = (defaults or {}).get(name, getattr(_DEFAULTS, name))
                kwargs.update(default=0 if value is None else value, show_default=True)
            func = click.option(*flag.decls, name, help=flag.help, **kwargs)(func)
        return func

    return decorate


def settings_values(
    values: dict[str, Any], fields: tuple[str, ...], *, state_ttl_s: float | None = None
) -> dict[str, Any]:
    """Pop the flags of ``fields`` from ``values``: ``SkillSettings`` keyword arguments. The
    store is opened (its state living ``state_ttl_s`` after last use, when given) and the
    trace file too; the caller closes both.

    Raises:
        click.UsageError: A bad ``--tool``.
    """
    out: dict[str, Any] = {}
    for name in fields:
        value = values.pop(name)
        if name == "store":
            from skillshelf.stores import open_store

            value = open_store(value, ttl_s=state_ttl_s)
        elif name in _CONVERT:
            value = _CONVERT[name](value)
        out[name] = value
    return out


def _visible(names: tuple[str, ...]) -> Callable[[Any], bool] | None:
    shown = frozenset(names)
    return (lambda skill: skill.name in shown) if shown else None


def _tools(specs: tuple[str, ...]) -> list[Any]:
    from skillshelf.errors import UsageError
    from skillshelf.tools import import_tools

    # As uvicorn does for its app: MODULE may be a file in the working directory (an
    # installed ``skillshelf`` script does not put it on the path); eval cases' tools too.
    if specs and os.getcwd() not in sys.path:
        sys.path.insert(0, os.getcwd())
    try:
        return [tool for spec in specs for tool in import_tools(spec)]
    except UsageError as exc:
        raise click.UsageError(f"--tool: {exc}") from None


def _declared(specs: tuple[str, ...]) -> list[str | tuple[str, list[str]]]:
    out: list[str | tuple[str, list[str]]] = []
    for spec in specs:
        name, _, docs = spec.partition(":")
        out.append((name, [d for d in docs.split(",") if d]) if docs else name)
    return out


def _trace(path: str | None) -> Any:
    from skillshelf.harness import Trace

    return Trace(path) if path else None


_CONVERT: Final[Mapping[str, Callable[[Any], Any]]] = {
    "visible": _visible,
    "tools": _tools,
    "declared": _declared,
    "catalog_budget": lambda budget: budget or None,
    "skill_tools": lambda names: tuple(names) or None,
    "trace": _trace,
}

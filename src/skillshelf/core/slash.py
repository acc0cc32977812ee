"""Slash commands: ``/skill-name args`` in a user message invokes a skill directly.

Pure functions. A message that starts with ``/name`` names one or more stacked commands: each
``/name`` token (at the start, or after whitespace) that is a known skill starts a command, and
the text up to the next one is its arguments. A name is any skill's name, whatever its script
(``/目录浏览``, ``/résumé``), matched after NFKC normalisation as names are, so a decomposed
accent or a full-width ``／`` typed by an input method still finds the skill. The body then
has ``$ARGUMENTS`` (all of them), ``$ARGUMENTS[N]`` and ``$N`` (the N-th, from 0, split like a
shell would) and ``${SKILL_DIR}`` substituted; when it uses no argument placeholder the
arguments are appended, as Claude Code does.
"""

from __future__ import annotations

import re
import shlex
import unicodedata
from collections.abc import Collection
from dataclasses import dataclass
from typing import Final

from skillshelf.core.manifest import MAX_NAME_LENGTH, is_name_shaped
from skillshelf.core.search import closest_names
from skillshelf.errors import SkillshelfError, unknown_skill_message

__all__ = ["SlashCommand", "SlashCommandError", "expand", "parse_commands"]

# "／" (U+FF0F) is what a CJK input method in full-width mode types for "/"; NFKC reads it as "/".
_TOKEN: Final = re.compile(r"(?:^|(?<=\s))[/／]([^\s/／]+)(?=\s|$)")
_PLACEHOLDER: Final = re.compile(
    r"\$ARGUMENTS\[(\d+)\]|\$ARGUMENTS\b|\$(\d+)\b|\$\{(?:CLAUDE_)?SKILL_DIR\}"
)


_MAX_INDEX_DIGITS: Final = 6  # $ARGUMENTS[N] / $N: no argument text has a millionth word


class SlashCommandError(SkillshelfError):
    """A slash command names no skill, or one the user may not invoke."""


@dataclass(frozen=True, slots=True)
class SlashCommand:
    """One command: the skill and the raw argument text after it."""

    skill: str
    arguments: str


def parse_commands(message: str, names: Collection[str]) -> list[SlashCommand]:
    """The commands at the start of ``message`` ([] when it does not start with ``/name``).

    Raises:
        SlashCommandError: The message starts with ``/name`` and no skill has that name.
    """
    text = message.lstrip()
    first = _TOKEN.match(text)
    if first is None:
        return []
    word = _word(first)
    if word not in names:
        # Only a word that could be a name is a mistyped command; "/*", "/-v" or "/?" is the
        # user's text (a path such as "/usr/bin" is no token at all).
        if not (word[:1].isalnum() and is_name_shaped(word)):
            return []
        # No name is longer; difflib over a pasted paragraph would cost seconds.
        close = closest_names(word, list(names)) if len(word) <= MAX_NAME_LENGTH else []
        raise SlashCommandError(unknown_skill_message(word, close, prefix="/"))
    starts = [(m, w) for m in _TOKEN.finditer(text) if (w := _word(m)) in names]
    commands = []
    for index, (match, word) in enumerate(starts):
        end = starts[index + 1][0].start() if index + 1 < len(starts) else len(text)
        commands.append(SlashCommand(word, text[match.end() : end].strip()))
    return commands


def _word(match: re.Match[str]) -> str:
    """The name a ``/word`` token means: NFKC-normalised, as the manifest normalises names."""
    return unicodedata.normalize("NFKC", match.group(1))


def expand(body: str, arguments: str, *, skill_dir: str) -> str:
    """Substitute the placeholders of a skill body for one invocation.

    The one substitution for every face: a slash command in chat and the skill as an MCP
    prompt render the same text. ``$ARGUMENTS`` is the whole argument text, ``$ARGUMENTS[N]``
    and ``$N`` the N-th word from 0 (shell quoting respected; missing words are empty),
    ``${SKILL_DIR}`` and ``${CLAUDE_SKILL_DIR}`` the skill's directory. A body that uses no
    argument placeholder gets ``ARGUMENTS: …`` appended when there are arguments.
    """
    try:
        positional = shlex.split(arguments)
    except ValueError:  # unbalanced quotes: split on whitespace rather than refuse
        positional = arguments.split()
    used = False

    def replace(match: re.Match[str]) -> str:
        nonlocal used
        index = match.group(1) or match.group(2)
        if match.group(0).startswith("${"):
            return skill_dir
        used = True
        if index is None:
            return arguments
        # A position past the words is empty; so is one too long to be a word's (a
        # 5,000-digit index would not even convert to an int).
        if len(index) > _MAX_INDEX_DIGITS:
            return ""
        return positional[int(index)] if int(index) < len(positional) else ""

    out = _PLACEHOLDER.sub(replace, body)
    if not used and arguments.strip():
        out = out.rstrip("\n") + f"\n\nARGUMENTS: {arguments}\n"
    return out

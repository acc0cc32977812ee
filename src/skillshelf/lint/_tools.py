"""Does the body ask for tools that the skill's ``allowed-tools`` does not grant?

Runs only when ``allowed-tools`` is declared. The heuristic, tuned for few false alarms:

* **Bash**: every simple command in a ``bash``/``sh``/``shell``/``zsh``/``console`` fence
  (pipelines and ``&&`` lists are split, continuation lines joined, heredoc bodies and comments
  skipped; in ``console`` fences only ``$``-prompted lines count), and inline code right after
  "run", "execute" or "invoke" unless the sentence negates it ("do not run `git commit`").
  Each command is matched with the harness's own rule matcher, so ``Bash(git diff:*)`` grants
  ``git diff --cached`` and not ``git push``. Harmless shell builtins (``cd``, ``echo``, …) are
  not reported when Bash is granted for some commands.
* **Write/Edit**: a sentence that starts with create/write/save/edit/modify/update/… and names
  a file (the word "file" or a path with an extension). Tables and fences are not read.
* **WebFetch**: a sentence that starts with fetch/download/retrieve/open/visit/browse and holds
  an http(s) URL, or names WebFetch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from skillshelf.core.allowed_tools import call_allowed, pattern_tool
from skillshelf.lint._markdown import SHELL_LANGUAGES, Fence, Scanned, scan, sentences
from skillshelf.lint._model import LintFinding, LintSubject, finding

__all__ = ["check_tools", "shell_commands"]

_HARMLESS: Final = frozenset(
    {"cd", "echo", "export", "set", "true", "false", "exit", "printf", "pwd", ":", "unset"}
)
_KEYWORDS: Final = frozenset(
    {"then", "do", "else", "elif", "fi", "done", "esac", "{", "}", "(", ")", "!", "time"}
)
_BLOCK_STARTS: Final = frozenset({"if", "for", "while", "until", "case", "function", "select"})
_KNOWN_PROGRAMS: Final = frozenset(
    """python python3 node npm npx pnpm yarn git make pytest bash sh uv pip pip3 cargo go
    docker curl wget gh jq ruff mypy tsc deno bun""".split()  # noqa: SIM905 - a word list reads best as one string
)
_ASSIGNMENT: Final = re.compile(r"^[A-Za-z_]\w*=\S*\s+")
_HEREDOC: Final = re.compile(r"<<-?\s*['\"]?(\w+)['\"]?")
_RUN_INLINE: Final = re.compile(r"\b(?:run|execute|invoke)\s+(?:the\s+command\s+)?`([^`]+)`", re.I)
_NEGATION: Final = re.compile(
    r"\b(?:do not|don't|never|avoid|instead of|rather than|not)\b", re.IGNORECASE
)
_WRITE_SENTENCE: Final = re.compile(
    r"^(?:then,?\s+|now,?\s+|finally,?\s+|first,?\s+|next,?\s+)?"
    r"(?:create|write|save|edit|modify|update|overwrite|append|rewrite)\b",
    re.IGNORECASE,
)
_FILE_OBJECT: Final = re.compile(r"\bfiles?\b|`[^`\s]+\.[A-Za-z0-9]{1,5}`")
_FETCH_SENTENCE: Final = re.compile(
    r"^(?:then,?\s+|first,?\s+|next,?\s+)?(?:fetch|download|retrieve|open|visit|browse)\b",
    re.IGNORECASE,
)
_URL: Final = re.compile(r"https?://")
_WRITE_TOOLS: Final = frozenset({"Write", "Edit", "MultiEdit", "NotebookEdit"})


@dataclass(frozen=True, slots=True)
class _Need:
    tool: str
    what: str  # the command or sentence that needs it
    line: int


def shell_commands(fence: Fence) -> list[tuple[int, str]]:
    """The simple commands of a shell fence, as ``(line, command)``."""
    commands: list[tuple[int, str]] = []
    pending = ""
    start = 0
    heredoc: str | None = None
    for number, raw in fence.lines:
        if heredoc is not None:
            heredoc = None if raw.strip() == heredoc else heredoc
            continue
        line = raw.strip()
        if fence.language in ("console", "shell-session"):
            if not line.startswith("$ ") and not pending:
                continue
            line = line.removeprefix("$ ")
        if not pending:
            start = number
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        full, pending = (pending + line).strip(), ""
        if not full or full.startswith("#"):
            continue
        if marker := _HEREDOC.search(full):
            heredoc = marker.group(1)
        commands += [(start, c) for c in _split(full)]
    return commands


def _split(command: str) -> list[str]:
    """Split a command line on unquoted ``|``, ``||``, ``&&``, ``;`` and ``&``."""
    parts: list[str] = []
    current: list[str] = []
    quote = ""
    for char in command:
        if quote:
            quote = "" if char == quote else quote
        elif char in "'\"":
            quote = char
        elif char in "|;&":
            parts.append("".join(current))
            current = []
            continue
        elif char == "#" and (not current or current[-1].isspace()):
            break  # a comment runs to the end of the line
        current.append(char)
    parts.append("".join(current))
    return [c for c in (_simple(p) for p in parts) if c]


def _simple(part: str) -> str:
    words = part.strip()
    while True:
        stripped = _ASSIGNMENT.sub("", words)
        first = stripped.split(" ", 1)[0] if stripped else ""
        if first in _KEYWORDS:
            stripped = stripped[len(first) :].strip()
        if stripped == words:
            break
        words = stripped
    first = words.split(" ", 1)[0] if words else ""
    return "" if first in _BLOCK_STARTS else words


def _bash_needs(scanned: Scanned) -> list[_Need]:
    needs = [
        _Need("Bash", command, number)
        for fence in scanned.fences
        if fence.language in SHELL_LANGUAGES
        for number, command in shell_commands(fence)
    ]
    for number, line in scanned.prose:
        for sentence in sentences(line):
            for match in _RUN_INLINE.finditer(sentence):
                command = match.group(1).strip()
                if _NEGATION.search(sentence[: match.start()]) or command.startswith("-"):
                    continue
                if " " in command or command in _KNOWN_PROGRAMS:
                    needs.append(_Need("Bash", command, number))
    return needs


def _other_needs(scanned: Scanned) -> list[_Need]:
    needs: list[_Need] = []
    for number, line in scanned.prose:
        if line.lstrip().startswith("|"):
            continue  # a table row describes options, it does not instruct
        for sentence in sentences(line.replace("**", "")):
            if _WRITE_SENTENCE.match(sentence) and _FILE_OBJECT.search(sentence):
                needs.append(_Need("Write", sentence, number))
            fetch = _FETCH_SENTENCE.match(sentence) and _URL.search(sentence)
            if fetch or "WebFetch" in sentence:
                needs.append(_Need("WebFetch", sentence, number))
    return needs


def check_tools(subject: LintSubject) -> list[LintFinding]:
    """Instructions in the body that the declared ``allowed-tools`` does not cover, and
    entries of it that are not tools."""
    out = [_not_a_tool(subject, subject.not_tools)] if subject.not_tools else []
    if subject.allowed_tools is None or subject.body is None:
        return out
    return out + _not_granted(subject, subject.allowed_tools)


def _not_a_tool(subject: LintSubject, entries: Sequence[str]) -> LintFinding:
    shown = ", ".join(f"`{_clip(e)}`" for e in entries)
    return finding(
        "tools.not_a_tool",
        subject,
        f"{shown} under allowed-tools/tools: not tools, so they restrict nothing",
        "list agents the skill works with in 'compatibility'; keep only tools "
        "(Bash(git:*), Read, …) under allowed-tools",
    )


def _not_granted(subject: LintSubject, allowed: tuple[str, ...]) -> list[LintFinding]:
    assert subject.body is not None
    granted = {pattern_tool(p) for p in allowed}
    scanned = scan(subject.body, first_line=subject.body_line)
    out: list[LintFinding] = []
    by_program: dict[str, list[_Need]] = {}
    for need in _bash_needs(scanned):
        program = need.what.split(" ", 1)[0]
        if "Bash" in granted and program in _HARMLESS:
            continue
        if not call_allowed(allowed, "Bash", {"command": need.what}):
            by_program.setdefault(program, []).append(need)
    for program, needs in by_program.items():
        out.append(_bash_finding(subject, program, needs, allowed))
    reported: set[str] = set()
    for need in _other_needs(scanned):
        if need.tool in reported:
            continue
        ok = granted & _WRITE_TOOLS if need.tool == "Write" else need.tool in granted
        if not ok:
            reported.add(need.tool)
            out.append(_other_finding(subject, need))
    return out


def _bash_finding(
    subject: LintSubject, program: str, needs: Sequence[_Need], allowed: Sequence[str]
) -> LintFinding:
    first = needs[0]
    more = f" (and {len(needs) - 1} more like it)" if len(needs) > 1 else ""
    bash_rules = [p for p in allowed if p.startswith("Bash")]
    grants = f"grants only {' '.join(bash_rules)}" if bash_rules else "does not grant Bash"
    return finding(
        "tools.not_granted",
        subject,
        f"The body runs `{_clip(first.what)}`{more}, but allowed-tools {grants}",
        f"add Bash({program}:*) to allowed-tools, or drop the instruction",
        line=first.line,
    )


def _other_finding(subject: LintSubject, need: _Need) -> LintFinding:
    tool = "Write or Edit" if need.tool == "Write" else need.tool
    action = "writes or edits files" if need.tool == "Write" else "fetches a URL"
    return finding(
        "tools.not_granted",
        subject,
        f"The body {action} ({_clip(need.what)!r}), but allowed-tools does not grant {tool}",
        f"add {need.tool} to allowed-tools, or drop the instruction",
        line=need.line,
    )


def _clip(text: str, limit: int = 80) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"

"""Just enough Markdown for the lint checks: fences, prose, links and mentioned paths.

Pure functions over text. Line numbers are 1-based in the file the text came from (the caller
gives the line the text starts on).
"""

from __future__ import annotations

import posixpath
import re
from dataclasses import dataclass, replace
from typing import Final, Literal
from urllib.parse import unquote

__all__ = [
    "SHELL_LANGUAGES",
    "Fence",
    "Link",
    "Mention",
    "Scanned",
    "link_target",
    "links",
    "mentions",
    "resolve",
    "scan",
    "sentences",
]

Line = tuple[int, str]
SHELL_LANGUAGES: Final = frozenset({"bash", "sh", "shell", "zsh", "console", "shell-session"})
_FENCE_OPEN: Final = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*([\w+#.-]*)")
_CODE_SPAN: Final = re.compile(r"(`+)(.+?)\1")
_LINK: Final = re.compile(r"(!?)\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?[^)\n]*\)")
_REF_DEFINITION: Final = re.compile(r"^ {0,3}\[[^\]]+\]:\s*<?([^\s>]+)>?")
_SCHEME: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*:")
_TEMPLATE_CHARS: Final = frozenset("{}<>$*|")
_SEGMENT: Final = r"[\w@+-][\w.@+-]*"
# A path may start with ./ or with a placeholder for the skill folder: <skill-dir>/, $DIR/, {dir}/
_PREFIX: Final = r"(?P<pre><[^<>\s/]+>/|\$\{?[A-Za-z_]\w*\}?/|\{[A-Za-z_]\w*\}/|\./)?"
_RESOURCE_DIRS: Final = "scripts|bin|references|reference|assets|templates"
_SCRIPT_EXTS: Final = frozenset({"py", "js", "mjs", "cjs", "ts", "sh", "bash", "rb", "pl", "ps1"})
_EXTS: Final = "py|js|mjs|cjs|ts|sh|bash|rb|pl|ps1"
_RESOURCE: Final = re.compile(
    rf"(?<![\w./$}}>-]){_PREFIX}(?P<path>(?:{_RESOURCE_DIRS})/(?:{_SEGMENT}/)*(?:{_SEGMENT})?)"
)
_INTERPRETED: Final = re.compile(
    r"\b(?:python3?|node|bash|sh|zsh|ruby|perl|tsx|ts-node|bun|deno run|uv run)\s+"
    rf"(?:-[\w-]+\s+)*[\"']?{_PREFIX}(?P<path>(?:{_SEGMENT}/)+{_SEGMENT}\.(?:{_EXTS}))\b"
)
_DOT_SLASH: Final = re.compile(
    rf"(?<![\w./-])(?P<pre>\./)(?P<path>(?:{_SEGMENT}/)*{_SEGMENT}\.(?:{_EXTS}))\b"
)
# Prose that shows a hypothetical layout rather than this skill's files.
_HYPOTHETICAL: Final = re.compile(
    r"\be\.g\.|\bfor (?:example|instance)\b|\bsuch as\b|\bwould\b|\bexamples?\**\s*:",
    re.IGNORECASE,
)
_PLACEHOLDER_WORDS: Final = re.compile(
    r"(?:^|/)(?:path/to|your[_-]|my[_-]|example[_-]|script[_-]?name\.|file[_-]?name\.|foo\.|xxx)"
)
# Right after a path these mean it was cut short: a glob (scripts/*.py), a template
# (scripts/gen_{name}.py), an ellipsis. What was matched is not a path of the skill.
_CUT_SHORT: Final = ("{", "[", "<", "…", "...", "$")
# A placeholder prefix that names the skill's own folder ({baseDir}, $SKILL_DIR, <skill-dir>);
# any other (${PLUGIN_ROOT}, <project>, $REPO) leads somewhere else.
_SKILL_DIR_PLACEHOLDER: Final = re.compile(r"skill|base_?dir|this", re.IGNORECASE)
_CERTAIN_DIRS: Final = frozenset({"scripts", "references", "reference", "assets", "templates"})
_SENTENCE_END: Final = re.compile(r"(?<=[.!?])\s+(?=[A-Z`*\"(])")
_LIST_MARKER: Final = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")


@dataclass(frozen=True, slots=True)
class Fence:
    """A fenced code block.

    Attributes:
        language: The info string's first word, lowercased ("" when none).
        lines: The lines inside the fences, as ``(line number, text)``.
    """

    language: str
    lines: tuple[Line, ...]


@dataclass(frozen=True, slots=True)
class Scanned:
    """A Markdown text split into prose lines (code spans kept) and fenced blocks."""

    prose: tuple[Line, ...]
    fences: tuple[Fence, ...]


@dataclass(frozen=True, slots=True)
class Link:
    """A Markdown link or image with a relative target (URLs and anchors are left out).

    Attributes:
        target: The target with ``#fragment`` and ``?query`` removed and %-escapes decoded.
        line: Its line.
        image: True for ``![alt](target)``.
    """

    target: str
    line: int
    image: bool


@dataclass(frozen=True, slots=True)
class Mention:
    """A path named in the text (not as a link) that should exist in the skill.

    Attributes:
        path: The path relative to the skill folder (a trailing ``/`` means a folder).
        line: Its line.
        kind: ``script`` (something to run) or ``resource`` (a document or asset).
        certain: Written as a path of this skill (``scripts/x.py``, ``{baseDir}/scripts/x.py``)
            rather than one that may lead elsewhere (``./x.sh`` run from the working
            folder, ``${PLUGIN_ROOT}/…``, ``src/app.ts``) and not in a context that makes it
            another tree's (see :func:`mentions`).
    """

    path: str
    line: int
    kind: Literal["script", "resource"]
    certain: bool = True


def scan(text: str, *, first_line: int = 1) -> Scanned:
    """Split Markdown into prose lines and fenced blocks (an unclosed fence runs to the end)."""
    if "```" not in text and "~~~" not in text:  # no fence can open: every line is prose
        return Scanned(tuple(enumerate(text.split("\n"), start=first_line)), ())
    prose: list[Line] = []
    fences: list[Fence] = []
    fence: tuple[str, str, list[Line]] | None = None  # marker, language, lines
    for number, line in enumerate(text.split("\n"), start=first_line):
        if fence is None:
            opened = _FENCE_OPEN.match(line) if "`" in line or "~" in line else None
            if opened and not (opened.group(1)[0] == "`" and "`" in line[opened.end() :]):
                fence = (opened.group(1), opened.group(2).lower(), [])
            else:
                prose.append((number, line))
        elif _closes(line, fence[0]):
            fences.append(Fence(fence[1], tuple(fence[2])))
            fence = None
        else:
            fence[2].append((number, line))
    if fence is not None:
        fences.append(Fence(fence[1], tuple(fence[2])))
    return Scanned(tuple(prose), tuple(fences))


def _closes(line: str, marker: str) -> bool:
    stripped = line.strip()
    return len(stripped) >= len(marker) and stripped == marker[0] * len(stripped)


def _mask_code(line: str) -> str:
    return _CODE_SPAN.sub(lambda m: " " * len(m.group(0)), line)


def link_target(raw: str) -> str | None:
    """The file part of a link target, or None for URLs, anchors and templated targets."""
    raw = raw.strip()
    if not raw or raw.startswith(("#", "//")) or _SCHEME.match(raw):
        return None
    if any(char in _TEMPLATE_CHARS for char in raw):
        return None
    path = unquote(raw.split("#", 1)[0].split("?", 1)[0])
    return path or None


def links(scanned: Scanned) -> list[Link]:
    """Relative links and images in the prose (inside code spans and fences they are examples)."""
    found: list[Link] = []
    for number, line in scanned.prose:
        if "](" not in line and "]:" not in line:
            continue  # both patterns need one; masking code spans never makes one
        masked = _mask_code(line)
        for match in _LINK.finditer(masked):
            target = link_target(match.group(2))
            if target is not None:
                found.append(Link(target, number, bool(match.group(1))))
        definition = _REF_DEFINITION.match(masked)
        if definition and (target := link_target(definition.group(1))) is not None:
            found.append(Link(target, number, False))
    return found


def resolve(linking_file: str, target: str) -> str | None:
    """Resolve ``target`` against the folder of ``linking_file`` (both relative to the skill).

    Returns:
        The normalised POSIX path relative to the skill folder ("." for the folder itself),
        or None when it is absolute or its ``..`` leads outside the skill folder.
    """
    target = target.replace("\\", "/")
    if target.startswith("/") or target.startswith("~"):
        return None
    parts: list[str] = []
    for part in posixpath.join(posixpath.dirname(linking_file), target).split("/"):
        if part == "..":
            if not parts:
                return None
            parts.pop()
        elif part not in ("", "."):
            parts.append(part)
    return "/".join(parts) or "."


def _kind(path: str) -> Literal["script", "resource"]:
    first = path.split("/", 1)[0]
    extension = path.rsplit(".", 1)[-1] if "." in path.rsplit("/", 1)[-1] else ""
    return "script" if first in ("scripts", "bin") or extension in _SCRIPT_EXTS else "resource"


def _line_mentions(number: int, line: str, *, in_code: bool) -> list[Mention]:
    found: dict[str, Mention] = {}
    for pattern in (_INTERPRETED, _DOT_SLASH, _RESOURCE):
        for match in pattern.finditer(line):
            path = match["path"].rstrip(".")
            if path.endswith("/") and path.count("/") == 1:
                continue  # a conventional folder named in passing ("put scripts in scripts/")
            if _PLACEHOLDER_WORDS.search(path) or path in found:
                continue
            if _cut_short(line, match.end(), path):
                continue
            # In plain prose, "assets/code" is as likely English as a path: want an extension.
            if not in_code and "." not in path.rsplit("/", 1)[-1] and not path.endswith("/"):
                continue
            found[path] = Mention(path, number, _kind(path), _as_skill_path(path, match["pre"]))
    return list(found.values())


def _cut_short(line: str, end: int, path: str) -> bool:
    if line.startswith(_CUT_SHORT, end):
        return True
    # scripts/gen_*.py and scripts/**/x.py are globs; scripts/x.sh** closes bold text.
    return line.startswith("*", end) and (path.endswith("/") or not line.startswith("**", end))


def _as_skill_path(path: str, prefix: str | None) -> bool:
    """Whether ``path`` is written as a file of this skill, not of the working folder."""
    if path.split("/", 1)[0] not in _CERTAIN_DIRS:
        return False
    return prefix is None or (prefix != "./" and bool(_SKILL_DIR_PLACEHOLDER.search(prefix)))


# After a clone or a download the body's paths may be the fetched tree's (cd firmadyne &&
# ./scripts/getArch.sh); after a `cd` in a shell block, that block's paths are relative to it.
_FETCH: Final = re.compile(r"\bgit\s+clone\b|\b(?:wget|curl)\b.*\.(?:tar|tgz|zip|git)\b")
_CD: Final = re.compile(r"(?:^|[;&|(]\s*)cd\s+(?!-|~|\.\s|\.$)(?P<to>\S+)")
# A path after one of these is made by the body itself (cat > x.sh, "Create scripts/x.py").
_WRITE: Final = re.compile(
    r"(?:>>?|\btee(?:\s+-a)?|\btouch|\b(?:create|write|save|generate)s?\b(?:\s+(?:a|an|the|it|file|script|as|to|in|at))*)\s*[`\"']?"
    r"(?P<path>(?:\./)?[\w@+-][\w.@+/-]*\.\w+)",
    re.IGNORECASE,
)
# Paths written from a collection's top (skills/x/scripts/run.py, plugins/p/…): the body's
# other relative paths may be written from there too, not from the skill folder.
_FROM_TOP: Final = re.compile(r"(?<![\w./~$}-])(?:skills|plugins)/[\w{<$-][\w.{}<>$-]*/")


def mentions(scanned: Scanned) -> list[Mention]:
    """Paths the body tells the model to use: in code spans, shell fences and plain prose.

    Left out, to keep false alarms rare: non-shell fences (they show files of other
    projects), lines that give examples ("e.g.", "such as", "Example:", "would"),
    placeholder paths (``path/to/…``, ``your_…``, ``script_name.py``), globs and templates
    cut short (``scripts/*.py``), and files the body makes before it uses them (``cat >
    run.sh``, "Create ``scripts/x.py``"). A script is :attr:`Mention.certain` only when
    written as this skill's file and not after a ``git clone`` or download, not after a
    ``cd`` in the same shell block, and not in a body that writes paths from a collection's
    top (``skills/<name>/…``).
    """
    found: list[Mention] = []
    for number, line in scanned.prose:
        # Every path pattern needs a "/", and neither the code spans nor the text around
        # them gain one: most lines are left without running a pattern.
        if "/" not in line or _HYPOTHETICAL.search(line):
            continue
        code = " ".join(m.group(2) for m in _CODE_SPAN.finditer(line))
        plain = _LINK.sub(" ", _REF_DEFINITION.sub(" ", _mask_code(line)))
        found += _line_mentions(number, code, in_code=True)
        found += _line_mentions(number, plain, in_code=False)
    moved: set[int] = set()
    for fence in scanned.fences:
        if fence.language in SHELL_LANGUAGES:
            elsewhere = False
            for number, line in fence.lines:
                if line.lstrip().startswith("#"):
                    continue
                if not elsewhere and "cd" in line:
                    cd = _CD.search(line)
                    elsewhere = cd is not None and not _SKILL_DIR_PLACEHOLDER.search(cd["to"])
                if elsewhere:
                    moved.add(number)
                if "/" in line:
                    found += _line_mentions(number, line, in_code=True)
    if not found:
        return []
    return _weigh(scanned, found, moved)


def _weigh(scanned: Scanned, found: list[Mention], moved: set[int]) -> list[Mention]:
    """Drop the mentions of files the body makes; mark doubtful ones not :attr:`certain`."""
    lines = sorted([*scanned.prose, *(ln for fence in scanned.fences for ln in fence.lines)])
    # Each literal test is what the pattern after it cannot match without.
    fetched = min(
        (n for n, text in lines if _may_fetch(text) and _FETCH.search(text)), default=None
    )
    from_top = any(
        ("skills/" in text or "plugins/" in text) and _FROM_TOP.search(text) for _, text in lines
    )
    made: dict[str, int] = {}
    for number, text in lines:
        if "." in text:  # a path _WRITE takes has an extension
            for match in _WRITE.finditer(text):
                made.setdefault(match["path"].removeprefix("./"), number)
    kept: list[Mention] = []
    for mention in found:
        if made.get(mention.path, mention.line + 1) <= mention.line:
            continue
        doubtful = from_top or mention.line in moved or (fetched or mention.line) < mention.line
        kept.append(replace(mention, certain=False) if doubtful else mention)
    return kept


def _may_fetch(text: str) -> bool:
    return "clone" in text or "wget" in text or "curl" in text


def sentences(line: str) -> list[str]:
    """A prose line without its list marker, split into sentences."""
    return [s for s in _SENTENCE_END.split(_LIST_MARKER.sub("", line).strip()) if s]

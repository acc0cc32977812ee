"""Checks of one skill at a time: description, name, body size, links and mentioned files.

Pure: each check reads a :class:`LintSubject` and returns findings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from skillshelf.core.words import count_words
from skillshelf.lint._markdown import Link, Scanned, links, mentions, resolve, scan
from skillshelf.lint._model import LintFinding, LintSubject, finding

__all__ = [
    "CHARS_PER_TOKEN",
    "MAX_BODY_LINES",
    "MAX_BODY_TOKENS",
    "MAX_DESCRIPTION_CHARS",
    "MIN_DESCRIPTION_WORDS",
    "check_body_size",
    "check_description",
    "check_files",
    "check_name",
]

# Fewer words than this cannot say both what a skill does and when to use it; the shortest
# good descriptions in the shared corpus have 12.
MIN_DESCRIPTION_WORDS: Final = 10
# Every description rides along in every request; past ~700 characters (~175 tokens) one entry
# costs as much as five typical ones and is first to be cut by a catalog budget. It also leaves
# 30% headroom below the spec's hard 1,024, so a warning comes before the validation error.
MAX_DESCRIPTION_CHARS: Final = 700
# Anthropic's authoring guidance: keep the SKILL.md body under 500 lines, split the rest out.
MAX_BODY_LINES: Final = 500
# The Agent Skills specification recommends a body under 5,000 tokens.
MAX_BODY_TOKENS: Final = 5000
# The usual rule of thumb for English text and code; the count is reported as an estimate.
CHARS_PER_TOKEN: Final = 4

# "When to use" wording. A bare purpose ("Toolkit for styling artifacts") says what, not when,
# so "for …ing" counts only after use/useful/ideal/….
_TRIGGER: Final = re.compile(
    r"\b(?:use[ds]?|useful|helpful|ideal|intended|designed)\b[^.;!?]{0,40}?"
    r"\b(?:when|whenever|if|for|before|after|during|while|once|to\s+\w+|on)\b"
    r"|\b(?:invoke[ds]?|load(?:s|ed)?|activate[ds]?)\b[^.;!?]{0,40}?\b(?:when|whenever|if|before)\b"
    r"|\bwhen(?:ever)?\s+(?:the\s+|a\s+|an\s+|any\s+)?"
    r"(?:user|users|you|someone|people|asked|asking|claude|codex|agent|\w+ing)\b"
    r"|\btrigger(?:s|ed)?\b",
    re.IGNORECASE,
)
# The same wording in Chinese, Japanese and Korean: "当用户……时", "用于", "在……时使用",
# "…する場合に使用", "…할 때 사용".
_CJK_TRIGGER: Final = re.compile(
    r"(?:当|在|如果|若|每当|遇到)[^。；！？.;!?]{0,40}?(?:时|時|的时候|之后|之前)"
    r"|(?:时|時|的时候)(?:使用|调用|启用|加载)|用于|适用于|适合|用来|使用场景|触发"
    r"|(?:とき|時|場合|際)に?(?:使用|使う|使います|利用)|ときに"
    r"|(?:때|경우)(?:에)?\s*(?:사용|쓰)"
)
# For ASCII text: the same wording matched on the lowercased text, which is what IGNORECASE
# does to ASCII, at half the cost (the pattern's literals are all lowercase).
_TRIGGER_LOWERCASE: Final = re.compile(_TRIGGER.pattern)
_FIRST_PERSON: Final = re.compile(r"\b(?:I|I'm|I'll|I've|I'd)\b|\b(?:me|my)\b")
_SECOND_PERSON: Final = re.compile(r"\byou\s+(?:can|could|should|will|may|must)\b", re.IGNORECASE)
# Quoted requests ("make me a GIF") are the user's words, not the description's voice.
_QUOTED: Final = re.compile(r"\"[^\"]*\"|“[^”]*”")
# Names made only of these say nothing about what the skill does.
_GENERIC_WORDS: Final = frozenset(
    """helper helpers util utils utility utilities tool tools toolkit toolbox data manager misc
    miscellaneous stuff general common core lib library service services handler processor
    assistant thing things skill skills main base default documents docs files content info
    information various generic other new""".split()  # noqa: SIM905 - a word list reads best as one string
)
# A name ending in one of these names a bag of code, not an action on an object (pdf-tools).
_VAGUE_SUFFIXES: Final = frozenset(
    """helper helpers util utils utility utilities tool tools toolkit toolbox manager misc stuff
    handler assistant things""".split()  # noqa: SIM905 - a word list reads best as one string
)


def check_description(subject: LintSubject) -> list[LintFinding]:
    """Trigger wording, length and grammatical person of the description."""
    text = subject.description
    line = subject.description_line
    out: list[LintFinding] = []
    wording = f"{text} {subject.when_to_use or ''}"
    if not _says_when(wording):
        out.append(
            finding(
                "description.no_trigger",
                subject,
                "The description says what the skill is but not when to use it",
                'add a sentence such as "Use when the user asks to …" naming the requests, '
                "file types or situations that should load it",
                line=line,
            )
        )
    words = count_words(text)
    if words < MIN_DESCRIPTION_WORDS:
        out.append(
            finding(
                "description.too_short",
                subject,
                f"The description has {words} words; a model cannot tell from it when the "
                "skill applies",
                f"write at least {MIN_DESCRIPTION_WORDS} words: what the skill does, then when "
                "to use it",
                line=line,
            )
        )
    if len(text) > MAX_DESCRIPTION_CHARS:
        out.append(
            finding(
                "description.too_long",
                subject,
                f"The description has {len(text):,} characters (lint limit "
                f"{MAX_DESCRIPTION_CHARS}, spec limit 1,024); it rides along in every request",
                "keep the what and the when in the description and move details into the body",
                line=line,
            )
        )
    unquoted = _QUOTED.sub(" ", text)
    person = _FIRST_PERSON.search(unquoted) or _SECOND_PERSON.search(unquoted)
    if person:
        out.append(
            finding(
                "description.person",
                subject,
                f"The description speaks in first or second person ({person.group(0)!r}); "
                "it is read as part of the system prompt",
                'write in third person: "Extracts tables from PDFs. Use when …"',
                line=line,
            )
        )
    return out


def _says_when(text: str) -> bool:
    if text.isascii():  # and every _CJK_TRIGGER wording holds a CJK character
        return _TRIGGER_LOWERCASE.search(text.lower()) is not None
    return _TRIGGER.search(text) is not None or _CJK_TRIGGER.search(text) is not None


def check_name(subject: LintSubject) -> list[LintFinding]:
    """A name that is a generic noun (``helper``, ``data``, ``pdf-tools``)."""
    parts = [p for p in subject.name.split("-") if p]
    if not parts:
        return []
    all_generic = all(p in _GENERIC_WORDS for p in parts)
    if not all_generic and parts[-1] not in _VAGUE_SUFFIXES:
        return []
    obj = "-".join(p for p in parts if p not in _GENERIC_WORDS)
    # Without an object in the name there is nothing to build on: give a plain example.
    example = (
        f"'{obj}-editing' or 'processing-{obj}'" if obj else "'pdf-editing' or 'processing-pdfs'"
    )
    return [
        finding(
            "name.abstract",
            subject,
            f"The name {subject.name!r} is a generic noun; it does not say what the skill does",
            f"name the action and its object, e.g. {example}",
        )
    ]


def check_body_size(subject: LintSubject) -> list[LintFinding]:
    """A body over :data:`MAX_BODY_LINES` lines or about :data:`MAX_BODY_TOKENS` tokens."""
    body = subject.body
    if body is None:
        return []
    out: list[LintFinding] = []
    lines = len(body.rstrip("\n").split("\n")) if body.strip() else 0
    if lines > MAX_BODY_LINES:
        out.append(
            finding(
                "body.too_many_lines",
                subject,
                f"The body has {lines:,} lines (recommended: at most {MAX_BODY_LINES})",
                "move details into reference files linked from SKILL.md and say when to read each",
                line=subject.body_line + MAX_BODY_LINES,
            )
        )
    tokens = len(body) // CHARS_PER_TOKEN
    if tokens > MAX_BODY_TOKENS:
        out.append(
            finding(
                "body.too_many_tokens",
                subject,
                f"The body has about {tokens:,} tokens (characters / {CHARS_PER_TOKEN}; "
                f"recommended: under {MAX_BODY_TOKENS:,}); all of it enters the context on load",
                "keep the workflow in SKILL.md and move reference material into separate files",
            )
        )
    return out


def check_files(subject: LintSubject) -> list[LintFinding]:
    """Links and mentioned paths that lead nowhere or outside; references nested too deep."""
    if subject.body is None or subject.files is None:
        return []
    scanned = scan(subject.body, first_line=subject.body_line)
    direct: set[str] = set()
    out = _check_links(subject, subject.skill_md, links(scanned), direct)
    out += _check_mentions(subject, scanned, direct)
    for doc in sorted(d for d in direct if d in subject.docs):
        doc_links = links(scan(subject.docs[doc]))
        reached: set[str] = set()
        out += _check_links(subject, doc, doc_links, reached)
        out += _too_deep(subject, doc, doc_links, reached - direct)
    return out


def _escapes(subject: LintSubject, resolved: str) -> bool:
    parts = resolved.split("/")
    return any("/".join(parts[: i + 1]) in subject.escaping for i in range(len(parts)))


def _check_links(
    subject: LintSubject, file: str, found: Iterable[Link], reached: set[str]
) -> list[LintFinding]:
    assert subject.files is not None
    out: list[LintFinding] = []
    seen: set[str] = set()
    for link in found:
        if link.target in seen:
            continue
        seen.add(link.target)
        kind = "image" if link.image else "link"
        resolved = resolve(file, link.target)
        if resolved is None or _escapes(subject, resolved):
            out.append(
                finding(
                    "link.outside",
                    subject,
                    f"The {kind} to {link.target!r} leads outside the skill folder; it breaks "
                    "when the skill is installed on its own, and skill_read_file refuses it",
                    "copy the file into the skill (e.g. references/) and link it there",
                    file=file,
                    line=link.line,
                )
            )
        elif resolved != "." and resolved not in subject.files:
            out.append(
                finding(
                    "link.broken",
                    subject,
                    f"The {kind} to {link.target!r} points to {resolved!r}, which the skill "
                    "does not have",
                    "fix the path (it is relative to the file that links it) or add the file",
                    file=file,
                    line=link.line,
                )
            )
        else:
            reached.add(resolved)
    return out


def _check_mentions(subject: LintSubject, scanned: Scanned, reached: set[str]) -> list[LintFinding]:
    assert subject.files is not None
    out: list[LintFinding] = []
    seen: set[str] = set()
    for mention in mentions(scanned):
        path = mention.path.rstrip("/")
        if path in seen:
            continue
        seen.add(path)
        if path in subject.files:
            reached.add(path)
            continue
        if mention.kind == "resource":
            code = "file.missing"
        else:
            code = "script.missing" if mention.certain else "script.unverified"
        hint = (
            "add the file, correct the path (relative to the skill folder), or remove the "
            "instruction"
        )
        if code == "script.unverified":
            hint = (
                "if it is the skill's own script, add it under scripts/ and write the path as "
                "scripts/…; if it comes from elsewhere (a clone, a download, the user's "
                "project), say where"
            )
        out.append(
            finding(
                code,
                subject,
                f"The body mentions {mention.path!r}, which the skill does not have",
                hint,
                line=mention.line,
            )
        )
    return out


def _too_deep(
    subject: LintSubject, doc: str, doc_links: Iterable[Link], deeper: set[str]
) -> list[LintFinding]:
    out: list[LintFinding] = []
    reported: set[str] = set()
    for link in doc_links:
        target = resolve(doc, link.target)
        if target is None or target not in deeper or target in reported:
            continue
        if target not in subject.docs or target == doc:
            continue
        reported.add(target)
        out.append(
            finding(
                "references.too_deep",
                subject,
                f"{doc} links to {target}, which SKILL.md does not link: a model may read "
                f"{doc} only in part and never reach it",
                f"link {target} from SKILL.md directly (keep references one level deep), or "
                f"fold it into {doc}",
                file=doc,
                line=link.line,
            )
        )
    return out

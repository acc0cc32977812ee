"""A load-time content scanner for skills from untrusted roots.

A skill is instructions a model will follow plus code it may run, so a skill from a URL, an
archive or a colleague's repository is read before it is loaded. The scanner looks for
prompt injection aimed at the harness (including instructions hidden in HTML comments or
invisible characters), pipelines that fetch and execute, encoded execution, reads of credential
files and secrets, exfiltration endpoints, and oversized or binary files posing as text.

Each finding has a stable code (``scan.*``) and a severity: ``block`` findings quarantine the
skill under the ``block`` policy; ``warn`` findings load it with the finding shown.
The checks are pure functions of file bytes; only :func:`scan_skill` reads the disk.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Final, Literal

from skillshelf.core.diagnostics import Diagnostic, Severity
from skillshelf.skills.walk import Entry, SkillWalk, read_chunks, walk_skill

__all__ = [
    "Finding",
    "FindingSeverity",
    "ScanAction",
    "ScanPolicy",
    "scan_skill",
    "scan_text",
    "scan_walk",
]

FindingSeverity = Literal["block", "warn"]
ScanAction = Literal["block", "warn"]

# A text file in a skill bigger than this is not instructions anyone reviewed.
MAX_TEXT_BYTES: Final = 1024 * 1024
# Only so much of each file is scanned (an oversized file is reported, not read whole).
_READ_BYTES: Final = MAX_TEXT_BYTES + 1
_TEXT_SUFFIXES: Final = frozenset(
    {"md", "markdown", "txt", "rst", "py", "sh", "bash", "zsh", "js", "mjs", "cjs", "ts"}
    | {"json", "yaml", "yml", "toml", "ini", "cfg", "html", "htm", "xml", "csv", "ps1", "rb"}
    | {"pl", "lua", "sql", "env"}
)
_SKILL_MD_NAMES: Final = ("SKILL.md", "skill.md")
_EXECUTABLE_MAGIC: Final = (b"\x7fELF", b"MZ", b"\xcf\xfa\xed\xfe", b"\xca\xfe\xba\xbe")


@dataclass(frozen=True, slots=True)
class Finding:
    """One thing the scanner found.

    Attributes:
        code: Stable code, e.g. ``"scan.fetch_exec"``.
        severity: ``"block"`` (quarantine under the block policy) or ``"warn"``.
        message: What was found, for people.
        path: The file, relative to the skill folder.
        line: 1-based line, when known.
    """

    code: str
    severity: FindingSeverity
    message: str
    path: str
    line: int | None = None

    def to_diagnostic(self, directory: str, *, quarantined: bool) -> Diagnostic:
        """This finding as a diagnostic on the file (an error when it quarantined the skill)."""
        severity: Severity = "error" if quarantined and self.severity == "block" else "warning"
        return Diagnostic(
            self.code,
            severity,
            f"{self.message} (scanner: {self.severity})",
            None,
            os.path.join(directory, self.path),
            self.line,
        )

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready mapping."""
        return {
            "code": self.code,
            "severity": self.severity,
            "message": self.message,
            "path": self.path,
            "line": self.line,
        }


@dataclass(frozen=True, slots=True)
class ScanPolicy:
    """Which roots are scanned and what a ``block`` finding does.

    Archive and URL roots are always untrusted. Folder roots are trusted unless listed in
    ``untrusted_roots`` (project roots are opt-in).

    Attributes:
        action: ``"block"`` quarantines a skill with a block finding; ``"warn"`` loads every
            skill and shows the findings.
        untrusted_roots: Folder roots (as given to the repository) to scan as well.
    """

    action: ScanAction = "block"
    untrusted_roots: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class _Rule:
    code: str
    severity: FindingSeverity
    pattern: re.Pattern[str]
    message: str
    scripts_only: bool = False


def _rx(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.IGNORECASE)


_RULES: Final = (
    _Rule(
        "scan.injection",
        "block",
        _rx(
            r"\b(?:ignore|disregard|forget)\s+(?:all\s+|any\s+)?(?:of\s+)?(?:the\s+|your\s+)?"
            r"(?:previous|prior|above|earlier|system)\s+(?:instructions|prompts?|rules)"
            r"|\byou\s+are\s+now\s+in\s+(?:developer|jailbreak|god)\s+mode"
            r"|\bdo\s+not\s+(?:tell|inform|reveal\s+to)\s+the\s+user\b"
        ),
        "Prompt-injection phrase aimed at the harness",
    ),
    _Rule(
        "scan.fetch_exec",
        "block",
        _rx(
            r"\b(?:curl|wget|fetch|iwr|Invoke-WebRequest)\b[^\n|;]*\|\s*(?:sudo\s+)?"
            r"(?:ba|z|k|da)?sh\b|\b(?:curl|wget)\b[^\n|;]*\|\s*(?:sudo\s+)?python[0-9.]*\b"
            r"|\b(?:ba)?sh\s+<\(\s*(?:curl|wget)\b"
        ),
        "Downloads a script and pipes it straight into a shell",
    ),
    _Rule(
        "scan.encoded_exec",
        "block",
        _rx(
            r"base64\s+(?:-d|--decode|-D)\b[^\n]*\|\s*(?:sudo\s+)?(?:ba|z)?sh\b"
            r"|\b(?:exec|eval)\s*\(\s*(?:base64\.b64decode|codecs\.decode|atob|Buffer\.from)"
            r"|\bpowershell[^\n]*-enc(?:odedcommand)?\s"
        ),
        "Executes base64-decoded (hidden) code",
    ),
    _Rule(
        "scan.credential_read",
        "block",
        _rx(
            r"~/\.ssh/id_|\.ssh/id_(?:rsa|ed25519|ecdsa)\b|\.aws/credentials\b|/etc/shadow\b"
            r"|\.git-credentials\b|\.netrc\b|\.docker/config\.json\b|\.kube/config\b"
            r"|\.config/gcloud/|\.npmrc\b|\.pypirc\b"
        ),
        "Reads a credential file",
        scripts_only=True,
    ),
    _Rule(
        "scan.credential_read",
        "warn",
        _rx(r"~/\.ssh/id_|\.aws/credentials\b|/etc/shadow\b|\.git-credentials\b"),
        "Mentions a credential file",
    ),
    _Rule(
        "scan.env_secret",
        "warn",
        _rx(
            r"(?:os\.environ|os\.getenv|process\.env|ENV)\s*[\[.(]\s*['\"]?"
            r"[A-Z0-9_]*(?:SECRET|TOKEN|PASSWORD|API_KEY|PRIVATE_KEY)"
            r"|\bprintenv\b[^\n]*\||\benv\s*\|\s*(?:curl|nc|wget)\b"
        ),
        "Reads secrets from the environment",
        scripts_only=True,
    ),
    _Rule(
        "scan.exfil_endpoint",
        "block",
        _rx(
            r"\b(?:webhook\.site|requestbin\.(?:com|net)|[a-z0-9-]+\.pipedream\.net"
            r"|[a-z0-9-]+\.ngrok(?:-free)?\.(?:io|app|dev)|interact\.sh|oast\.(?:fun|me|pro)"
            r"|burpcollaborator\.net|canarytokens\.com|transfer\.sh|pastebin\.com/api"
            r"|discord(?:app)?\.com/api/webhooks)\b"
        ),
        "Sends data to a known exfiltration endpoint",
    ),
)

_COMMENT = re.compile(r"<!--(.*?)-->", re.DOTALL)
_HIDDEN_HINT = _rx(
    r"\b(?:instruction|ignore|assistant|system prompt|you must|do not tell|secretly|the model)\b"
)
# Bidirectional overrides and Unicode tag characters hide text from a reviewer; zero-width
# spaces may. U+200D (joiner) is left alone: emoji sequences use it.
_BLOCK_CHARS = re.compile("[\u202a-\u202e\u2066-\u2069\U000e0000-\U000e007f]")
_WARN_CHARS = re.compile("[\u200b\u200c\u2060\u180e]|(?<!^)\ufeff")


def scan_text(path: str, text: str, *, script: bool) -> list[Finding]:
    """Scan the text of one file; ``path`` is only used to label findings."""
    findings: list[Finding] = []
    for rule in _RULES:
        if rule.scripts_only and not script:
            continue
        if not script and rule.severity == "warn" and _found(findings, rule.code):
            continue
        match = rule.pattern.search(text)
        if match is not None:
            findings.append(
                Finding(rule.code, rule.severity, rule.message, path, _line(text, match.start()))
            )
    for comment in _COMMENT.finditer(text):
        if _HIDDEN_HINT.search(comment.group(1)):
            findings.append(
                Finding(
                    "scan.hidden_comment",
                    "block",
                    "Instructions hidden in an HTML comment",
                    path,
                    _line(text, comment.start()),
                )
            )
            break
    findings.extend(_hidden_chars(path, text))
    return _dedupe(findings)


def _hidden_chars(path: str, text: str) -> list[Finding]:
    match = _BLOCK_CHARS.search(text)
    if match is not None:
        message = f"Invisible control character U+{ord(match.group()):04X} hides text"
        return [Finding("scan.hidden_chars", "block", message, path, _line(text, match.start()))]
    match = _WARN_CHARS.search(text)
    if match is not None:
        message = f"Zero-width character U+{ord(match.group()):04X} in text"
        return [Finding("scan.hidden_chars", "warn", message, path, _line(text, match.start()))]
    return []


def _found(findings: list[Finding], code: str) -> bool:
    return any(f.code == code for f in findings)


def _dedupe(findings: list[Finding]) -> list[Finding]:
    # A block finding makes a warn finding of the same code redundant.
    blocked = {f.code for f in findings if f.severity == "block"}
    return [f for f in findings if f.severity == "block" or f.code not in blocked]


def _line(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


def scan_bytes(path: str, data: bytes, size: int) -> list[Finding]:
    """Scan one file given its first bytes and its full size (pure)."""
    suffix = os.path.splitext(path)[1].lower()
    name = path.rsplit("/", 1)[-1]
    # A file without an extension is read as text unless its start says binary (a payload
    # named ``run`` must not escape the text checks).
    untyped = "." not in name.lstrip(".") and b"\0" not in data[:8192]
    is_text_name = suffix[1:] in _TEXT_SUFFIXES or name.upper() == "SKILL.MD" or untyped
    script = path.startswith("scripts/") or suffix in (".py", ".sh", ".bash", ".js", ".ps1")
    if data.startswith(_EXECUTABLE_MAGIC) and (is_text_name or script):
        return [Finding("scan.disguised_binary", "block", "Executable disguised as text", path)]
    if is_text_name and b"\0" in data[:8192]:
        message = "Binary content in a file named as text"
        return [Finding("scan.disguised_binary", "block", message, path)]
    if not is_text_name and not script:
        return []
    findings = []
    if size > MAX_TEXT_BYTES:
        message = f"Text file of {size:,} bytes (over {MAX_TEXT_BYTES:,}); only its start scanned"
        findings.append(Finding("scan.oversized", "warn", message, path))
    text = data[:MAX_TEXT_BYTES].decode("utf-8", "replace")
    findings.extend(scan_text(path, text, script=script))
    return findings


def scan_skill(directory: str | os.PathLike[str]) -> list[Finding]:
    """Scan every file of the skill folder ``directory``; findings sorted by path."""
    return scan_walk(walk_skill(directory))


def scan_walk(walk: SkillWalk) -> list[Finding]:
    """Scan the files of one walk of a skill folder (the file set the lockfile digests).

    Regular files are read (their first bytes, in chunks); FIFOs and devices are reported and
    never opened; a regular file with more than one hard link blocks (``scan.hard_link``); a
    walk cut short by the walker's caps blocks, since what it did not see could be served or
    staged.
    """
    findings: list[Finding] = []
    if walk.capped is not None:
        message = f"Not every file could be scanned: {walk.capped}"
        findings.append(Finding("scan.too_large", "block", message, "."))
    for entry in walk.entries:
        if entry.special:
            message = f"A {entry.kind}, not a file: never opened, served or staged"
            findings.append(Finding("scan.special_file", "warn", message, entry.path))
        elif entry.kind == "file":
            if entry.nlink > 1:
                findings.append(_hard_link(entry))
            findings.extend(_scan_file(walk, entry))
        elif entry.path in _SKILL_MD_NAMES and entry.target_kind == "file" and entry.target:
            # A linked SKILL.md is served as its target: scan those bytes as the SKILL.md,
            # whatever the target is named.
            findings.extend(_scan_file(walk, entry, read=entry.target))
    return findings


def _hard_link(entry: Entry) -> Finding:
    # Extraction of archives and URLs writes fresh files (one name each), so another name
    # means the file was planted: its bytes may be a file outside the skill, and every
    # reader would serve them.
    message = (
        f"Hard link ({entry.nlink} names): the same bytes have a name elsewhere, possibly "
        "outside the skill; not served from an untrusted root"
    )
    return Finding("scan.hard_link", "block", message, entry.path)


def _scan_file(walk: SkillWalk, entry: Entry, *, read: str | None = None) -> list[Finding]:
    if entry.path.endswith(".pyc"):
        # Python runs a matching .pyc instead of the reviewed source next to it.
        message = "Compiled Python bytecode: it runs instead of the source a reviewer reads"
        return [Finding("scan.bytecode", "block", message, entry.path)]
    try:
        data = b"".join(read_chunks(walk.root, read or entry.path, limit=_READ_BYTES))
    except OSError:
        return []  # vanished or swapped since the walk; the digest records it as unreadable
    return scan_bytes(entry.path, data, max(entry.size, len(data)))

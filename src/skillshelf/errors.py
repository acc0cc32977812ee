"""Every error skillshelf raises, in three families kept apart on purpose.

**1. Library errors** — :class:`SkillshelfError` and its subclasses. Something about the skills,
the files, the environment or a provider is wrong; a caller may catch these and report them
(the CLI prints ``error: message`` and exits 1)::

    SkillshelfError
    ├── ConfigError                   a bad store URL, model spec or environment variable (exit 2)
    │   └── MissingExtraError         an optional extra is not installed (exit 2, names the extra)
    ├── SkillNotFoundError            no visible skill has that name
    ├── FileAccessError               a file in a skill is refused, missing or unreadable
    ├── core.yaml_loader.YamlError            a YAML text cannot be read as plain data
    │   └── YamlSyntaxError, YamlTooDeepError, YamlTooComplexError
    ├── core.frontmatter.FrontmatterError     SKILL.md frontmatter cannot be parsed
    ├── core.description_edit.DescriptionEditError  a description cannot be replaced alone
    ├── core.slash.SlashCommandError          /name invokes an unknown or model-only skill
    ├── skills.archive.ArchiveError           an archive or URL root cannot be used
    ├── trust.lockfile.LockfileError          the lockfile cannot be read or written
    ├── stores.StoreError                     a session store failed (down, corrupt document)
    │   └── stores.StoreConflictError         an update kept colliding with other writers
    ├── exec.runner.SandboxUnavailableError   no sandbox can run commands here
    ├── exec.workspace.StagingRefused         a skill differs from its pin or is too big to stage
    ├── tools.DeclaredLoadError               a declared load names an unknown skill or doc
    ├── models.ModelError                     the model provider failed
    │   ├── models.ModelAuthError             the provider rejected the credentials
    │   └── models.TransientModelError        worth retrying (HTTP 5xx/429, connection)
    ├── agent.results.AgentError              a run ended without a final answer
    │   ├── MaxStepsError, RepeatedToolFailureError, EmptyResponseError
    ├── agent.history.HistoryError            a stored conversation cannot be read
    ├── evals: CasesError, BaselineError, OutputDirError, EvalAbortedError, ImproveError,
    │   ProposerError
    ├── reports.tracereport.TraceReadError    a decision trace cannot be read
    ├── mcpserver.files.UriError              a skill:// URI names nothing servable
    └── compat.skills_ref.SkillError          skills-ref's own names (ParseError, ValidationError)

One more is public but outside the tree: ``skills.skill.DanglingSkillMdError``, a
:class:`FileNotFoundError` for a SKILL.md that is a link to nothing (so ``except OSError``
code handles it as the missing file it is).

Subclasses live beside the code that raises them (a layer may not import one above it); each
derives from a class here, so ``except SkillshelfError`` catches them all.

**2. Developer misuse** — :class:`UsageError`. The calling code passed something that can never
work (a negative budget, an unknown schema format, a closed store). Fix the code, don't catch it.
It is not a :class:`SkillshelfError`. Bad *user* input (a store URL, a model spec) is a
:class:`ConfigError`, and a command the model sent is answered with a signal, never either.

**3. Signals meant for the model** — :class:`ToolRetry` and :class:`ToolFailed` (both
:class:`ToolError`). Raised inside a model-facing tool — the skill tools, the workspace's policy
and your own :class:`~skillshelf.tools.Tool` functions — and turned into a graded tool
result, never a crash: ``ToolRetry`` is *recoverable* (the model may fix its arguments and try
again), ``ToolFailed`` is *fatal* (stop retrying; tell the user).
"""

from __future__ import annotations

import functools
import json
import shlex
from collections.abc import Sequence
from typing import Final, Literal

__all__ = [
    "ConfigError",
    "FileAccessError",
    "MissingExtraError",
    "SkillNotFoundError",
    "SkillshelfError",
    "ToolError",
    "ToolFailed",
    "ToolRetry",
    "UsageError",
    "clip",
    "install_hint",
    "unknown_skill_message",
]

# Top-level module → the extra that installs it (pyproject's [project.optional-dependencies]).
EXTRA_OF_MODULE: Final = {
    "openai": "openai",
    "anthropic": "anthropic",
    "mcp": "mcp",
    "mcp_types": "mcp",
    "redis": "redis",
    "httpx": "remote",
    "watchfiles": "watch",
    "tiktoken": "tokens",
    "tiktoken_ext": "tokens",
    "bpe_openai": "tokens",
    "jsonschema": "evals",
}


class SkillshelfError(Exception):
    """Base class of every error skillshelf raises about skills, files or the environment."""


class ConfigError(SkillshelfError):
    """The configuration cannot work: a bad store URL, model spec or environment variable."""


class MissingExtraError(ConfigError):
    """An optional extra is needed and not installed.

    Attributes:
        extra: The extra that brings it (see :func:`install_hint` for the command).
        module: The module that could not be imported.
    """

    def __init__(self, extra: str, *, module: str, feature: str) -> None:
        self.extra = extra
        self.module = module
        super().__init__(
            f"{feature} needs the {module!r} package, from the {extra!r} extra: "
            f"{install_hint(extra)}"
        )

    @classmethod
    def from_import_error(cls, exc: ImportError, *, feature: str) -> MissingExtraError | None:
        """The error for a failed import of an optional extra's module; None for any other."""
        module = (exc.name or "").partition(".")[0]
        extra = EXTRA_OF_MODULE.get(module)
        return None if extra is None else cls(extra, module=module, feature=feature)


@functools.cache
def install_hint(extra: str) -> str:
    """The command that installs ``extra`` for skillshelf as it is installed here.

    skillshelf is installed from its repository, not from a package index, so
    ``pip install 'skillshelf[X]'`` finds nothing. From a checkout (an editable install) the
    hint reinstalls the checkout with the extra; from a wheel it names the extra's own
    requirements, read from the installed metadata.
    """
    import importlib.metadata  # only when a hint is needed: not on every start-up

    try:
        dist = importlib.metadata.distribution("skillshelf")
    except importlib.metadata.PackageNotFoundError:
        return f"pip install -e '.[{extra}]' in the skillshelf checkout"
    checkout = _editable_checkout(dist.read_text("direct_url.json"))
    if checkout is not None:
        return f"pip install -e {shlex.quote(f'{checkout}[{extra}]')}"
    wanted = {f'extra == "{extra}"', f"extra == '{extra}'"}
    requirements = [
        spec.strip()
        for spec, _, marker in (r.partition(";") for r in dist.requires or ())
        if marker.strip() in wanted
    ]
    if not requirements:
        return f"pip install -e '.[{extra}]' in the skillshelf checkout"
    return "pip install " + " ".join(shlex.quote(r.replace(" ", "")) for r in requirements)


def _editable_checkout(direct_url: str | None) -> str | None:
    """The folder of an editable install, from its ``direct_url.json`` (PEP 610)."""
    if not direct_url:
        return None
    try:
        data = json.loads(direct_url)
    except ValueError:
        return None
    url = data.get("url") if isinstance(data, dict) else None
    info = data.get("dir_info") if isinstance(data, dict) else None
    if not isinstance(url, str) or not url.startswith("file://") or not isinstance(info, dict):
        return None
    from urllib.parse import unquote

    return unquote(url.removeprefix("file://")) if info.get("editable") else None


class SkillNotFoundError(SkillshelfError):
    """No visible skill has the requested name.

    Attributes:
        name: The name that was asked for.
        suggestions: The closest visible names, best first.
    """

    def __init__(
        self, name: str, suggestions: Sequence[str] | None = None, *, prefix: str = ""
    ) -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        super().__init__(unknown_skill_message(name, self.suggestions, prefix=prefix))


# A requested name is echoed back; past this many characters it is cut (a real name is <= 64).
_SHOWN_NAME_CHARS: Final = 80
# Any other value a message echoes (a URI, a path, a tool or prompt name) is cut past this.
ECHO_CHARS: Final = 200


def clip(value: str, limit: int = ECHO_CHARS, *, quoted: bool = False, prefix: str = "") -> str:
    """``value`` as an error message may echo it: cut past ``limit`` characters, saying so.

    Every message that repeats what a client or model sent goes through here, so a 50 MB
    URI or name costs a 50 MB read, not a 50 MB answer (or log line). ``quoted`` shows the
    (cut) value as a JSON string, so it cannot forge the text around it; ``prefix`` goes
    before it (inside the quotes) and does not count.
    """
    head = prefix + value[:limit]
    shown = json.dumps(head, ensure_ascii=False) if quoted else head
    if len(value) <= limit:
        return shown
    return f"{shown}{'' if quoted else '…'} (cut, {len(value)} characters)"


def unknown_skill_message(name: str, suggestions: Sequence[str], *, prefix: str = "") -> str:
    """The one "unknown skill" sentence every face says (CLI, tools, MCP, slash commands, evals).

    The name is quoted as JSON and clipped (:func:`clip`), so a hostile or huge name cannot
    forge text or flood the reader; ``prefix`` is put before each name (``"/"`` for slash
    commands).
    """
    shown = clip(name, _SHOWN_NAME_CHARS, quoted=True, prefix=prefix)
    hint = ", ".join(prefix + s for s in suggestions)
    return f"Unknown skill {shown}." + (f" Did you mean: {hint}?" if hint else "")


class FileAccessError(SkillshelfError):
    """A file inside a skill could not be read: refused (escapes the skill), missing, or unreadable.

    Attributes:
        reason: ``"refused"``, ``"missing"`` or ``"unreadable"``.
    """

    def __init__(
        self, message: str, *, reason: Literal["refused", "missing", "unreadable"]
    ) -> None:
        self.reason = reason
        super().__init__(message)


class UsageError(ValueError):
    """The caller used the API in a way that cannot work (a programming error, not bad data)."""


class ToolError(Exception):
    """A failure to report to the model as a tool result rather than raise.

    Prefer the two subclasses, which say which grade they carry.

    Attributes:
        recoverable: True when the model may retry with different arguments.
    """

    def __init__(self, message: str, *, recoverable: bool = True) -> None:
        self.recoverable = recoverable
        super().__init__(message)


class ToolRetry(ToolError):
    """Recoverable: the model may fix its arguments and call again (at most twice)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, recoverable=True)


class ToolFailed(ToolError):
    """Fatal: retrying cannot help; the model should stop and tell the user."""

    def __init__(self, message: str) -> None:
        super().__init__(message, recoverable=False)

"""Errors raised by skillshelf.

Three families, kept apart on purpose:

* **Library errors** — :class:`SkillshelfError` and its subclasses. Something about the
  skills, the files or the environment is wrong; a caller may catch these and report them.
* **Developer misuse** — :class:`UsageError`. The calling code passed something that can
  never work (a negative budget, an unknown format). Fix the code, don't catch it.
* **Signals meant for the model** — :class:`ToolError`. Raised inside a model-facing tool
  and turned into a graded tool result, never a crash. ``recoverable`` tells the model
  whether retrying with other arguments can help.
"""

from __future__ import annotations

from typing import Literal

__all__ = [
    "FileAccessError",
    "SkillNotFoundError",
    "SkillshelfError",
    "ToolError",
    "UsageError",
]


class SkillshelfError(Exception):
    """Base class of every error skillshelf raises about skills, files or the environment."""


class SkillNotFoundError(SkillshelfError):
    """No visible skill has the requested name.

    Attributes:
        name: The name that was asked for.
        suggestions: The closest visible names, best first.
    """

    def __init__(self, name: str, suggestions: list[str] | None = None) -> None:
        self.name = name
        self.suggestions = list(suggestions or [])
        hint = f" Did you mean: {', '.join(self.suggestions)}?" if self.suggestions else ""
        super().__init__(f"Unknown skill {name!r}.{hint}")


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

    Attributes:
        recoverable: True when the model may retry with different arguments.
    """

    def __init__(self, message: str, *, recoverable: bool = True) -> None:
        self.recoverable = recoverable
        super().__init__(message)

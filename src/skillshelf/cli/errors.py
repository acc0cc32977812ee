"""The one place the CLI turns exceptions into exit codes.

=============================================  =====  ==========================================
raised by the library                          exit   stderr
=============================================  =====  ==========================================
:class:`MissingExtraError` (or an extra's       2     ``error: … pip install …`` (what installs
module failing to import)                              it here, see ``install_hint``) — one line
:class:`UsageError`, :class:`ConfigError`        2     click's usage error (usage line + message)
:class:`SkillshelfError`, :class:`ToolError`     1     ``error: message``
=============================================  =====  ==========================================

Anything else is a bug and keeps its traceback. :class:`ShelfGroup` applies the mapping to every
command added to it, so no command repeats it; a command handles an error itself only to
exit differently (``eval``'s cases file) or to carry on (an interactive chat turn).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, NoReturn

import click

from skillshelf.errors import (
    ConfigError,
    MissingExtraError,
    SkillshelfError,
    ToolError,
    UsageError,
)

__all__ = ["EXIT_FAILED", "EXIT_USAGE", "ShelfGroup", "translate_errors"]

EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2


def translate_errors(callback: Callable[..., Any], *, command: str) -> Callable[..., Any]:
    """``callback`` with skillshelf's exceptions turned into exit codes and messages."""

    @functools.wraps(callback)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return callback(*args, **kwargs)
        except MissingExtraError as exc:
            _missing_extra(exc)
        except ImportError as exc:  # an extra imported at module level (mcp, by the server)
            missing = MissingExtraError.from_import_error(exc, feature=f"skillshelf {command}")
            if missing is None:
                raise
            _missing_extra(missing)
        except (UsageError, ConfigError) as exc:
            raise click.UsageError(str(exc)) from None
        except (SkillshelfError, ToolError) as exc:
            click.echo(f"error: {exc}", err=True)
            raise SystemExit(EXIT_FAILED) from None

    return wrapper


def _missing_extra(exc: MissingExtraError) -> NoReturn:
    click.echo(f"error: {exc}", err=True)
    raise SystemExit(EXIT_USAGE) from None


class ShelfGroup(click.Group):
    """A group whose commands all map errors to exit codes the same way."""

    def add_command(self, cmd: click.Command, name: str | None = None) -> None:
        if cmd.callback is not None:
            cmd.callback = translate_errors(cmd.callback, command=name or cmd.name or "")
        super().add_command(cmd, name)

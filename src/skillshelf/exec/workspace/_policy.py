"""What a command run in a workspace may do: the policy, and the checks that apply it."""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final

from skillshelf.errors import ToolRetry, UsageError, clip
from skillshelf.exec.bwrap_profile import RESERVED_PATHS
from skillshelf.exec.runner import DEFAULT_OUTPUT_CAP, Limits

__all__ = ["ExecPolicy", "check_allowed", "check_ro_path", "shell_command"]

_SHELL_CONTROL: Final = re.compile(r"[;&|`\n<>]|\$\(")


@dataclass(frozen=True, slots=True)
class ExecPolicy:
    """What commands may do, per agent or per call.

    Attributes:
        allowed_commands: Program names (``argv[0]``'s basename, e.g. ``python3``) that may be
            started; None allows any. A shell string from the model is checked by its first word
            and refused when it chains commands (``;``, ``&&``, pipes, ``$(…)``).
        default_timeout_s: Time limit when the call gives none.
        max_timeout_s: Upper bound on any call's time limit.
        allow_network: Whether a call may ask for network access.
        env_passthrough: Names of the caller's environment variables passed to the command.
        limits: Resource limits.
        output_cap: Bytes kept per output stream.
        extra_ro_paths: Host paths (absolute) a sandbox shows read-only at the same path,
            besides its own set (e.g. a runtime some skills need, ``/opt/node``); each must
            exist when a command runs. See docs/security.md for what is mounted already.

    Raises:
        UsageError: An extra read-only path is relative, ``/``, or where the sandbox puts
            something of its own (the workspace, ``/proc``, ``/dev``, ``/tmp``).
    """

    allowed_commands: tuple[str, ...] | None = None
    default_timeout_s: float = 60.0
    max_timeout_s: float = 600.0
    allow_network: bool = False
    env_passthrough: tuple[str, ...] = ()
    limits: Limits = field(default_factory=Limits)
    output_cap: int = DEFAULT_OUTPUT_CAP
    extra_ro_paths: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for path in self.extra_ro_paths:
            check_ro_path(path)


def check_ro_path(path: str) -> None:
    """Refuse an extra read-only path a sandbox cannot show as asked.

    Raises:
        UsageError: ``path`` is relative, ``/``, or where the sandbox puts something of its own.
    """
    shown = clip(path)
    normal = os.path.normpath(path) if path else ""
    if not os.path.isabs(normal) or normal == "/":
        raise UsageError(f"extra read-only path {shown!r}: give an absolute path other than /")
    for reserved in RESERVED_PATHS:
        if normal == reserved or normal.startswith(reserved + "/"):
            raise UsageError(
                f"extra read-only path {shown!r}: {reserved} is the sandbox's own, not the host's"
            )


def shell_command(command: str) -> list[str]:
    """How a model's ``command`` string runs: ``/bin/sh -c command``, inside the sandbox."""
    return ["/bin/sh", "-c", command]


def check_allowed(policy: ExecPolicy, argv: Sequence[str]) -> None:
    """Refuse a command the policy does not allow.

    Raises:
        ToolRetry: The program (or, for ``sh -c``, the first word) is not allowed.
    """
    if policy.allowed_commands is None:
        return
    program = argv[0] if argv else ""
    if list(argv[:2]) == ["/bin/sh", "-c"] and len(argv) == 3:
        if _SHELL_CONTROL.search(argv[2]):
            raise ToolRetry(
                "Refused: the command chains programs; the policy allows single commands only."
            )
        words = argv[2].split()
        program = words[0] if words else ""
    if os.path.basename(program) not in policy.allowed_commands:
        allowed = ", ".join(policy.allowed_commands) or "none"
        raise ToolRetry(
            f"Refused: {clip(program)!r} is not an allowed command (allowed: {allowed})."
        )

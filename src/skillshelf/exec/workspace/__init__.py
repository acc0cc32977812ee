"""Per-session workspaces: staged skill copies, the run environment, output collection.

A workspace is one directory per session::

    skills/<name>/   writable copy of each skill used (out/ work/ inputs/ link to the folders below)
    work/  out/  inputs/
    runs/<run-id>/   one per command

The original skill folder is never written: the copy is made on first use and made again when
the source's content digest changes. The copy is exactly the file set of the one walker
(:mod:`skillshelf.skills.walk`) — the set the lockfile digests and the scanner reads — copied in
bounded chunks and hashed as it is copied; links inside the skill become relative links in the
copy, links leading out, FIFOs and devices are not staged. With a pinned (locked) digest,
content that differs is refused rather than staged. :func:`execute` runs a command there
through an executor from :mod:`skillshelf.exec.runner` and collects output files by glob.

This package's face is this module: its implementation modules are private.
"""

from skillshelf.exec.workspace._collect import INLINE_TEXT_BYTES, CollectedFile, escape_name
from skillshelf.exec.workspace._execute import ExecResult, execute
from skillshelf.exec.workspace._manager import (
    MAX_LIVE_WORKSPACES,
    WORKSPACE_IDLE_TTL_S,
    WorkspaceManager,
)
from skillshelf.exec.workspace._policy import (
    ExecPolicy,
    check_allowed,
    check_ro_path,
    shell_command,
)
from skillshelf.exec.workspace._workspace import StagingRefused, Workspace

__all__ = [
    "INLINE_TEXT_BYTES",
    "MAX_LIVE_WORKSPACES",
    "WORKSPACE_IDLE_TTL_S",
    "CollectedFile",
    "ExecPolicy",
    "ExecResult",
    "StagingRefused",
    "Workspace",
    "WorkspaceManager",
    "check_allowed",
    "check_ro_path",
    "escape_name",
    "execute",
    "shell_command",
]

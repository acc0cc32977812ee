"""The workspaces of many sessions: one per owner, ended on close, idle time or eviction."""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Final, Literal

from skillshelf.core.quota import fair_victim
from skillshelf.errors import SkillshelfError, UsageError
from skillshelf.exec.workspace._workspace import Workspace

__all__ = ["MAX_LIVE_WORKSPACES", "WORKSPACE_IDLE_TTL_S", "Retention", "WorkspaceManager"]

Retention = Literal["delete", "keep"]
# A workspace unused this long is removed (its owner has most likely gone away).
WORKSPACE_IDLE_TTL_S: Final = 3600.0
# Workspaces kept at once per manager; the longest idle is removed to make room.
MAX_LIVE_WORKSPACES: Final = 64
_UNSAFE: Final = re.compile(r"[^A-Za-z0-9_.-]+")


class WorkspaceManager:
    """Creates one :class:`Workspace` per owner (a session) under ``base``, and removes them.

    A workspace lives while its owner does: :meth:`close` ends it, and so do an idle time over
    ``idle_ttl_s`` and, when more than ``max_live`` exist, eviction (never of one a command
    is running in; see :meth:`use`): the longest idle workspace of the client holding the most
    idle ones, so one client opening many sessions evicts its own before anyone else's.
    :meth:`close_all` ends them all.

    Args:
        base: Parent directory (default: ``skillshelf-ws-<uid>`` in the temp dir, refused
            when it is a link or another user's).
        retention: ``delete`` removes a workspace when it ends; ``keep`` leaves it on disk.
        idle_ttl_s: Seconds a workspace may stay unused before it is removed (checked
            whenever a workspace is opened, and by :meth:`reap`).
        max_live: Workspaces kept at once.
        client_of: The client a session belongs to, for fair eviction (default: each session
            is its own client, so the longest idle goes first). A server sets it once it
            knows its clients.
    """

    def __init__(
        self,
        base: Path | None = None,
        *,
        retention: Retention = "delete",
        idle_ttl_s: float = WORKSPACE_IDLE_TTL_S,
        max_live: int = MAX_LIVE_WORKSPACES,
        client_of: Callable[[str], str] | None = None,
    ) -> None:
        if idle_ttl_s <= 0 or max_live < 1:
            raise UsageError("idle_ttl_s must be positive and max_live at least 1")
        self._shared_tmp = base is None
        default = Path(tempfile.gettempdir(), f"skillshelf-ws-{os.getuid()}")
        self.base = base if base is not None else default
        self.retention: Retention = retention
        self.idle_ttl_s = idle_ttl_s
        self.max_live = max_live
        self.client_of: Callable[[str], str] = client_of or (lambda session_id: session_id)
        self._lock = threading.Lock()
        self._last_used: dict[str, float] = {}  # owner → monotonic time of last use
        self._busy: dict[str, int] = {}  # owner → commands running in it now

    def _dir(self, session_id: str) -> Path:
        tag = hashlib.sha256(session_id.encode()).hexdigest()[:10]
        return self.base / f"{_UNSAFE.sub('_', session_id)[:40]}-{tag}"

    @property
    def live(self) -> list[str]:
        """The owners whose workspaces exist now, longest idle first."""
        with self._lock:
            return sorted(self._last_used, key=self._last_used.__getitem__)

    def open(self, session_id: str) -> Workspace:
        """The session's workspace, created on first use; expired and surplus ones go first.

        Raises:
            SkillshelfError: The default base folder is a link or another user's, or
                ``max_live`` workspaces are all running commands.
        """
        self.base.mkdir(parents=True, exist_ok=True, mode=0o700)
        if self._shared_tmp and not _private(self.base):
            # Anyone can create this name in a shared temp dir first: never use theirs, nor
            # one others may write to (they could swap a workspace for a link).
            raise SkillshelfError(
                f"{self.base} is not a private directory of this user (a link, another "
                "user's, or group/world-writable); remove it"
            )
        with self._lock:
            ended = self._expired(time.monotonic())
            if session_id not in self._last_used:
                ended += self._make_room(self.client_of(session_id))
            self._last_used[session_id] = time.monotonic()
        for owner in ended:
            self._remove(owner)
        return Workspace(self._dir(session_id))

    @contextlib.contextmanager
    def use(self, session_id: str) -> Iterator[Workspace]:
        """:meth:`open`, held busy (never expired or evicted) until the block ends."""
        with self._lock:
            self._busy[session_id] = self._busy.get(session_id, 0) + 1
        try:
            yield self.open(session_id)
        finally:
            with self._lock:
                left = self._busy.pop(session_id) - 1
                if left:
                    self._busy[session_id] = left
                if session_id in self._last_used:
                    self._last_used[session_id] = time.monotonic()

    def reap(self) -> list[str]:
        """Remove the workspaces idle longer than ``idle_ttl_s``; their owners."""
        with self._lock:
            ended = self._expired(time.monotonic())
        for owner in ended:
            self._remove(owner)
        return ended

    def close(self, session_id: str) -> None:
        """End the session: its workspace is deleted unless retention is ``keep``."""
        with self._lock:
            self._last_used.pop(session_id, None)
        self._remove(session_id)

    def close_all(self) -> None:
        """End every workspace this manager made (at shutdown)."""
        with self._lock:
            owners = list(self._last_used)
            self._last_used.clear()
        for owner in owners:
            self._remove(owner)

    def _expired(self, now: float) -> list[str]:
        # Called with the lock held.
        ended = [
            owner
            for owner, used in self._last_used.items()
            if now - used > self.idle_ttl_s and owner not in self._busy
        ]
        for owner in ended:
            del self._last_used[owner]
        return ended

    def _make_room(self, asking: str) -> list[str]:
        # Called with the lock held: evict until one more fits, each time the longest idle
        # workspace of the client with the most idle ones (fair_victim).
        ended: list[str] = []
        idle: dict[str, list[str]] = {}  # client → its idle workspaces, longest idle first
        for owner in sorted(self._last_used, key=self._last_used.__getitem__):
            if owner not in self._busy:
                idle.setdefault(self.client_of(owner), []).append(owner)
        while len(self._last_used) >= self.max_live:
            client = fair_victim({c: len(owners) for c, owners in idle.items()}, asking)
            if client is None:
                raise SkillshelfError(
                    f"{self.max_live} workspaces are running commands (the limit); try again later"
                )
            owner = idle[client].pop(0)
            del self._last_used[owner]
            ended.append(owner)
        return ended

    def _remove(self, session_id: str) -> None:
        if self.retention == "delete":
            root = self._dir(session_id)
            shutil.rmtree(root, ignore_errors=True)
            shutil.rmtree(root.parent / f".{root.name}.staged", ignore_errors=True)


def _private(folder: Path) -> bool:
    """``folder`` is a real folder of this user that no one else may write to."""
    info = folder.lstat()
    return (
        stat.S_ISDIR(info.st_mode)
        and info.st_uid == os.getuid()
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )

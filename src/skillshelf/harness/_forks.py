"""How far ``context: fork`` sub-agents may go: a depth and a count per task.

A sub-agent runs a forked skill's task; it may load a fork skill itself, and two fork skills
that load each other would nest sub-agents without end, each level a paid model request. Every
sub-agent of one top-level load shares one :class:`ForkTree`: past :data:`MAX_FORK_DEPTH`
levels, or once :data:`MAX_FORK_AGENTS` sub-agents have started under that load, a fork skill
loads inline (its body delivered to the loading agent, as any other skill).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Final

__all__ = ["MAX_FORK_AGENTS", "MAX_FORK_DEPTH", "ForkTree"]

MAX_FORK_DEPTH: Final = 3  # a sub-agent's sub-agent's sub-agent, no deeper
MAX_FORK_AGENTS: Final = 8  # sub-agents started under one top-level load


@dataclass(slots=True)
class _Spent:
    started: int = 1  # the top-level load's own sub-agent
    lock: threading.Lock = field(default_factory=threading.Lock)


@dataclass(frozen=True, slots=True)
class ForkTree:
    """Where a sub-agent stands among the sub-agents of one top-level load."""

    depth: int = 1
    _spent: _Spent = field(default_factory=_Spent, compare=False, repr=False)

    def take(self) -> bool:
        """Whether this sub-agent may start one more (one deeper); counts it when it may."""
        if self.depth >= MAX_FORK_DEPTH:
            return False
        with self._spent.lock:
            if self._spent.started >= MAX_FORK_AGENTS:
                return False
            self._spent.started += 1
            return True

    def child(self) -> ForkTree:
        """The tree of a sub-agent this one starts."""
        return ForkTree(self.depth + 1, self._spent)

    @property
    def started(self) -> int:
        """Sub-agents started under the top-level load so far."""
        return self._spent.started

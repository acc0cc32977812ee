"""Limits a skill declares for its own scripts, capped by the operator's :class:`ExecPolicy`.

A skill declares them as ``metadata`` entries (strings, as the specification wants metadata
values)::

    metadata:
      skillshelf.timeout_s: "30"     # time limit of a command run in this skill's copy
      skillshelf.memory_mb: "512"    # virtual memory per process (RLIMIT_AS)
      skillshelf.cpu_s: "20"         # CPU seconds per process (RLIMIT_CPU)

They apply when ``workspace_exec`` runs with that skill's ``skill`` argument (the command then
runs in the skill's staged copy; :class:`~skillshelf.tools.SkillTools` applies
them). The policy is the ceiling: a skill can lower a limit, never
raise one above the policy's (``timeout_s`` may raise the *default* time limit up to the
policy's ``max_timeout_s``). A value that is not a positive number is ignored, with a note.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Final

from skillshelf.errors import clip
from skillshelf.exec.workspace import ExecPolicy

__all__ = ["METADATA_PREFIX", "SkillLimits", "apply_skill_limits", "read_skill_limits"]

METADATA_PREFIX: Final = "skillshelf."
_KEYS: Final = ("timeout_s", "memory_mb", "cpu_s")


@dataclass(frozen=True, slots=True)
class SkillLimits:
    """A skill's declared limits (None: not declared) and notes on values that were ignored."""

    timeout_s: float | None = None
    memory_mb: int | None = None
    cpu_s: int | None = None
    problems: tuple[str, ...] = ()

    @property
    def declared(self) -> bool:
        """Whether the skill declares any limit."""
        return any(v is not None for v in (self.timeout_s, self.memory_mb, self.cpu_s))


def read_skill_limits(metadata: Mapping[str, str]) -> SkillLimits:
    """The limits in a skill's ``metadata`` (pure)."""
    values: dict[str, float] = {}
    problems: list[str] = []
    for key in _KEYS:
        raw = metadata.get(METADATA_PREFIX + key)
        if raw is None:
            continue
        try:
            number = float(str(raw).strip())
        except ValueError:
            number = math.nan
        if not (math.isfinite(number) and number > 0):
            shown = clip(str(raw), 40, quoted=True)
            problems.append(
                f"ignored metadata {METADATA_PREFIX}{key}={shown} (not a positive number)"
            )
            continue
        values[key] = number
    memory, cpu = values.get("memory_mb"), values.get("cpu_s")
    return SkillLimits(
        timeout_s=values.get("timeout_s"),
        memory_mb=max(1, int(memory)) if memory is not None else None,
        cpu_s=max(1, math.ceil(cpu)) if cpu is not None else None,
        problems=tuple(problems),
    )


def apply_skill_limits(policy: ExecPolicy, limits: SkillLimits) -> tuple[ExecPolicy, list[str]]:
    """``policy`` narrowed by ``limits`` (never widened), and a note for the model saying
    which limits were applied."""
    notes = list(limits.problems)
    if not limits.declared:
        return policy, notes
    applied: list[str] = []
    if limits.timeout_s is not None:
        cap = min(policy.max_timeout_s, limits.timeout_s)
        policy = replace(policy, max_timeout_s=cap, default_timeout_s=cap)
        applied.append(f"time limit {cap:g} s")
    rlimits = policy.limits
    if limits.memory_mb is not None:
        rlimits = replace(rlimits, address_space=min(rlimits.address_space, limits.memory_mb << 20))
        applied.append(f"memory {rlimits.address_space >> 20} MB")
    if limits.cpu_s is not None:
        rlimits = replace(rlimits, cpu_s=min(rlimits.cpu_s, limits.cpu_s))
        applied.append(f"CPU {rlimits.cpu_s} s")
    notes.append("The skill's own limits apply (capped by the operator's): " + ", ".join(applied))
    return replace(policy, limits=rlimits), notes

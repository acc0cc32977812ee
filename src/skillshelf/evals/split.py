"""A deterministic, stratified train/held-out split of eval cases.

Within each expected skill (and the null cases), cases are ordered by a hash of the seed and
their id, and the first ``holdout`` share of them is held out — so every skill with two or more
cases has some on each side, and the split changes only when the cases, the seed or the share
do. A group of one case goes to the side its hash falls on.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from skillshelf.errors import UsageError
from skillshelf.evals.improve_result import Split

if TYPE_CHECKING:
    from skillshelf.evals.cases import EvalCase

__all__ = ["DEFAULT_HOLDOUT", "split_cases"]

DEFAULT_HOLDOUT: Final = 0.5


def split_cases(
    cases: Sequence[EvalCase], *, holdout: float = DEFAULT_HOLDOUT, seed: str = ""
) -> dict[str, Split]:
    """Each case id → its split (see the module docstring).

    Raises:
        UsageError: ``holdout`` is not strictly between 0 and 1.
    """
    if not 0 < holdout < 1:
        raise UsageError(f"holdout must be between 0 and 1 (exclusive), got {holdout:g}")
    groups: dict[str | None, list[EvalCase]] = {}
    for case in cases:
        groups.setdefault(case.expected_skill, []).append(case)
    split: dict[str, Split] = {}
    for group in groups.values():
        ranked = sorted(group, key=lambda c: _hash(seed, c.id))
        if len(ranked) == 1:
            held = 1 if _hash(seed, ranked[0].id) < holdout * 2**64 else 0
        else:
            held = min(len(ranked) - 1, max(1, round(holdout * len(ranked))))
        for index, case in enumerate(ranked):
            split[case.id] = "held-out" if index < held else "train"
    return split


def _hash(seed: str, case_id: str) -> int:
    digest = hashlib.sha256(f"{seed}\0{case_id}".encode()).digest()
    return int.from_bytes(digest[:8], "big")

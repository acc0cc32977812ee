"""The before/after report of ``skillshelf improve`` as tab-separated text (pure).

Skill names and descriptions come from SKILL.md files and are shown with
:func:`~skillshelf.core.markup.one_line`, so a line break in one cannot start a row of its own.
"""

from __future__ import annotations

import os
from typing import Any

from skillshelf.core.markup import one_line
from skillshelf.evals.improve_result import SPLITS, ImproveResult, skill_rows

__all__ = ["render_text"]


def render_text(result: ImproveResult, *, relative_to: str | os.PathLike[str] | None = None) -> str:
    """Summary, per-skill scores on both splits, proposals, then the diff."""
    lines = ["# Split"]
    lines.append("split\tcases\tcases expecting a skill")
    for side in SPLITS:
        ids = [i for i, s in result.split.items() if s == side]
        expecting = sum(c.case.expected_skill is not None for c in result.before[side].cases)
        lines.append(f"{side}\t{len(ids)}\t{expecting}")
    lines += ["", "# Summary (before → after)", "metric\ttrain\theld-out"]
    for label, key in (
        ("macro recall", "macro_recall"),
        ("macro precision", "macro_precision"),
        ("macro F1", "macro_f1"),
        ("false-trigger rate", "false_trigger_rate"),
    ):
        cells = [
            _change(
                getattr(result.before[s].summary, key),
                getattr(result.after[s].summary, key),
            )
            for s in SPLITS
        ]
        lines.append("\t".join([label, *cells]))
    lines += ["", "# Per skill (before → after)"]
    lines.append("skill\ttrain recall\ttrain F1\theld-out recall\theld-out F1\tchanged")
    for row in skill_rows(result):
        cells = [one_line(row["skill"])]
        for side in SPLITS:
            for metric in ("recall", "f1"):
                cells.append(
                    _change(_get(row, side, "before", metric), _get(row, side, "after", metric))
                )
        cells.append("yes" if row["changed"] else "no")
        lines.append("\t".join(cells))
    lines += ["", "# Proposals"]
    if not result.proposals:
        lines.append("none: no skill failed on the training split")
    else:
        lines.append("skill\tattempt\tverdict\theld-out F1\ttrain F1\treason\tdescription")
        for p in result.proposals:
            f1 = [_change(*p.f1[s]) if s in p.f1 else "–" for s in ("held-out", "train")]
            lines.append(
                "\t".join(
                    [
                        one_line(p.skill),
                        str(p.attempt),
                        "kept" if p.kept else "rejected",
                        *f1,
                        one_line(p.reason),
                        one_line(p.description or "–"),
                    ]
                )
            )
    lines += ["", "# Diff"]
    diff = result.diff(relative_to=relative_to)
    lines.append(diff.rstrip("\n") if diff else "no change kept")
    return "\n".join(lines) + "\n"


def _get(row: dict[str, Any], side: str, when: str, metric: str) -> float | None:
    score = row.get(f"{side}.{when}")
    return None if score is None else score[metric]


def _show(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"


def _change(before: float | None, after: float | None) -> str:
    if before == after:
        return _show(before)
    return f"{_show(before)} → {_show(after)}"

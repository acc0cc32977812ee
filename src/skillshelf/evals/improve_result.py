"""What ``skillshelf improve`` found: proposals, kept edits, the reports of both splits."""

from __future__ import annotations

import difflib
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from skillshelf.errors import SkillshelfError
from skillshelf.evals.report import EvalReport

__all__ = [
    "SPLITS",
    "Change",
    "ImproveError",
    "ImproveResult",
    "Proposal",
    "Split",
    "read_text",
    "skill_rows",
    "write_text",
]

Split = Literal["train", "held-out"]
SPLITS: Final[tuple[Split, ...]] = ("train", "held-out")


class ImproveError(SkillshelfError):
    """The optimiser cannot run (no usable split, a SKILL.md it cannot edit, a file changed
    under it)."""


# -- results ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Proposal:
    """One candidate description and its verdict.

    Attributes:
        skill: The skill.
        attempt: 1 for the first proposal for this skill, then 2, ….
        description: The proposed text; None when the reply held none.
        kept: Whether it was kept.
        reason: Why it was kept or rejected.
        f1: The skill's F1 ``{split: (before, after)}``; empty when it was never evaluated.
        lowered: Other skills whose held-out F1 it lowered.
    """

    skill: str
    attempt: int
    description: str | None
    kept: bool
    reason: str
    f1: Mapping[Split, tuple[float | None, float | None]] = field(default_factory=dict)
    lowered: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "skill": self.skill,
            "attempt": self.attempt,
            "description": self.description,
            "kept": self.kept,
            "reason": self.reason,
            "f1": {s: {"before": b, "after": a} for s, (b, a) in self.f1.items()},
            "lowered": list(self.lowered),
        }


@dataclass(frozen=True, slots=True)
class Change:
    """A kept edit of one SKILL.md.

    Attributes:
        skill: The skill.
        path: Its SKILL.md under the roots.
        before: The file's text as read.
        after: The text with the new description.
        old_description: The description before.
        new_description: The description after.
    """

    skill: str
    path: Path
    before: str
    after: str
    old_description: str
    new_description: str

    def diff(self, *, label: str | None = None) -> str:
        """A unified diff of the file (``a/…`` and ``b/…`` headers)."""
        name = label or str(self.path)
        return "".join(
            difflib.unified_diff(
                self.before.splitlines(keepends=True),
                self.after.splitlines(keepends=True),
                fromfile=f"a/{name.lstrip('/')}",
                tofile=f"b/{name.lstrip('/')}",
            )
        )


@dataclass(frozen=True, slots=True)
class ImproveResult:
    """What :func:`improve_descriptions` found.

    Attributes:
        split: Each case id → its split.
        before: The reports before any change, by split.
        after: The reports with every kept change, by split.
        proposals: Every proposal, in the order made.
        changes: The kept edits, by skill name.
        model: The evaluated model's name.
        proposer: The proposer model's name.
    """

    split: Mapping[str, Split]
    before: Mapping[Split, EvalReport]
    after: Mapping[Split, EvalReport]
    proposals: tuple[Proposal, ...]
    changes: tuple[Change, ...]
    model: str
    proposer: str

    def diff(self, *, relative_to: str | os.PathLike[str] | None = None) -> str:
        """Every kept edit as one unified diff; paths relative to ``relative_to`` if inside."""
        return "".join(c.diff(label=_label(c.path, relative_to)) for c in self.changes)

    def write(self) -> list[Path]:
        """Write the kept edits to the SKILL.md files, each only if unchanged since read.

        Raises:
            ImproveError: A file changed since it was read (nothing more is written then).
        """
        for change in self.changes:
            if read_text(change.path) != change.before:
                raise ImproveError(
                    f"{change.path} changed since it was read; not written (run improve again)"
                )
        written = []
        for change in self.changes:
            write_text(change.path, change.after)
            written.append(change.path)
        return written

    def to_json(self, *, relative_to: str | os.PathLike[str] | None = None) -> dict[str, Any]:
        splits = SPLITS
        return {
            "model": self.model,
            "proposer": self.proposer,
            "split": {s: sorted(i for i, v in self.split.items() if v == s) for s in splits},
            "skills": skill_rows(self),
            "summary": {
                s: {
                    "before": self.before[s].summary.to_json(),
                    "after": self.after[s].summary.to_json(),
                }
                for s in splits
            },
            "proposals": [p.to_json() for p in self.proposals],
            "changes": [
                {
                    "skill": c.skill,
                    "path": str(c.path),
                    "before": c.old_description,
                    "after": c.new_description,
                }
                for c in self.changes
            ],
            "diff": self.diff(relative_to=relative_to),
        }


def skill_rows(result: ImproveResult) -> list[dict[str, Any]]:
    """Per skill: precision, recall and F1 on each split, before and after."""
    names = sorted(
        {s.skill for r in (*result.before.values(), *result.after.values()) for s in r.skills}
    )
    rows = []
    for name in names:
        row: dict[str, Any] = {
            "skill": name,
            "changed": any(c.skill == name for c in result.changes),
        }
        for split in SPLITS:
            for when, report in (("before", result.before), ("after", result.after)):
                score = next((s for s in report[split].skills if s.skill == name), None)
                row[f"{split}.{when}"] = (
                    {
                        "runs": score.runs,
                        "precision": score.precision,
                        "recall": score.recall,
                        "f1": score.f1,
                    }
                    if score is not None
                    else None
                )
        rows.append(row)
    return rows


def _label(path: Path, relative_to: str | os.PathLike[str] | None) -> str:
    if relative_to is not None:
        try:
            return (
                Path(os.path.relpath(path, relative_to)).as_posix()
                if _inside(path, relative_to)
                else str(path)
            )
        except ValueError:  # another drive on Windows
            return str(path)
    return str(path)


def _inside(path: Path, folder: str | os.PathLike[str]) -> bool:
    return os.path.abspath(path).startswith(os.path.abspath(folder) + os.sep)


# SKILL.md files are read and written back as they are: line ends untouched (newline=""), and
# bytes that are not UTF-8 carried through (surrogateescape; an edit of such a file is refused).


def read_text(path: Path) -> str:
    """A SKILL.md's text, line ends and undecodable bytes kept."""
    with open(path, encoding="utf-8", errors="surrogateescape", newline="") as handle:
        return handle.read()


def write_text(path: Path, text: str) -> None:
    """Write what :func:`read_text` read (or an edit of it) back, byte for byte."""
    with open(path, "w", encoding="utf-8", errors="surrogateescape", newline="") as handle:
        handle.write(text)

"""Comparing a report with an earlier one (``--baseline PREVIOUS.json``).

What changed, for a description edit or a model upgrade: per-skill precision, recall and F1
before and after, the macro recall and the false-trigger rate, and the cases that flipped
from passing to not passing (worse) or the other way (better). Cases are matched by id.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from skillshelf.errors import SkillshelfError
from skillshelf.evals.report import EvalReport

__all__ = ["BaselineError", "CaseFlip", "Previous", "ReportDiff", "SkillDelta", "diff_reports"]


class BaselineError(SkillshelfError):
    """The baseline file is missing, unreadable or not an eval report."""


class _Loose(BaseModel):
    model_config = ConfigDict(extra="ignore")


class _PreviousSkill(_Loose):
    skill: str
    precision: float | None = None
    recall: float | None = None
    f1: float | None = None


class _PreviousCase(_Loose):
    id: str
    status: str


class _PreviousSummary(_Loose):
    macro_recall: float | None = None
    false_trigger_rate: float | None = None


class Previous(_Loose):
    """The parts of an earlier ``report.json`` a comparison needs."""

    version: int
    model: str = "?"
    summary: _PreviousSummary
    skills: list[_PreviousSkill]
    cases: list[_PreviousCase]

    @classmethod
    def load(cls, path: str | Path) -> Previous:
        """Read an earlier report.

        Raises:
            BaselineError: It cannot be read or is not a skillshelf eval report.
        """
        try:
            data: Any = json.loads(Path(path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, ValueError) as exc:
            raise BaselineError(f"cannot read the baseline {str(path)!r}: {exc}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the top level"
            raise BaselineError(
                f"the baseline {str(path)!r} is not a skillshelf eval report.json "
                f"({where}: {first['msg']})"
            ) from None


@dataclass(frozen=True, slots=True)
class SkillDelta:
    """One skill's precision, recall and F1, before and after (None: undefined or absent)."""

    skill: str
    before: tuple[float | None, float | None, float | None]
    after: tuple[float | None, float | None, float | None]

    @property
    def changed(self) -> bool:
        return self.before != self.after

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"skill": self.skill}
        for index, metric in enumerate(("precision", "recall", "f1")):
            old, new = self.before[index], self.after[index]
            out[metric] = {"before": old, "after": new, "delta": _delta(old, new)}
        return out


@dataclass(frozen=True, slots=True)
class CaseFlip:
    """A case whose status changed across the pass line."""

    case_id: str
    before: str
    after: str

    def to_json(self) -> dict[str, str]:
        return {"id": self.case_id, "before": self.before, "after": self.after}


@dataclass(frozen=True, slots=True)
class ReportDiff:
    """What got better and worse since the baseline."""

    baseline_model: str
    skills: tuple[SkillDelta, ...]
    macro_recall: tuple[float | None, float | None]
    false_trigger_rate: tuple[float | None, float | None]
    better: tuple[CaseFlip, ...]
    worse: tuple[CaseFlip, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "baseline_model": self.baseline_model,
            "macro_recall": _pair(self.macro_recall),
            "false_trigger_rate": _pair(self.false_trigger_rate),
            "skills": [s.to_json() for s in self.skills if s.changed],
            "better": [c.to_json() for c in self.better],
            "worse": [c.to_json() for c in self.worse],
        }


def diff_reports(previous: Previous, current: EvalReport) -> ReportDiff:
    """Compare ``current`` with ``previous`` (pure)."""
    old_skills = {s.skill: (s.precision, s.recall, s.f1) for s in previous.skills}
    new_skills = {s.skill: (s.precision, s.recall, s.f1) for s in current.skills}
    missing = (None, None, None)
    skills = tuple(
        SkillDelta(name, old_skills.get(name, missing), new_skills.get(name, missing))
        for name in sorted(old_skills.keys() | new_skills.keys())
    )
    old_cases = {c.id: c.status for c in previous.cases}
    flips = [
        CaseFlip(c.case.id, old_cases[c.case.id], c.status)
        for c in current.cases
        if c.case.id in old_cases and (old_cases[c.case.id] == "pass") != (c.status == "pass")
    ]
    return ReportDiff(
        baseline_model=previous.model,
        skills=skills,
        macro_recall=(previous.summary.macro_recall, current.summary.macro_recall),
        false_trigger_rate=(
            previous.summary.false_trigger_rate,
            current.summary.false_trigger_rate,
        ),
        better=tuple(f for f in flips if f.after == "pass"),
        worse=tuple(f for f in flips if f.before == "pass"),
    )


def _delta(old: float | None, new: float | None) -> float | None:
    return None if old is None or new is None else new - old


def _pair(values: tuple[float | None, float | None]) -> dict[str, float | None]:
    old, new = values
    return {"before": old, "after": new, "delta": _delta(old, new)}

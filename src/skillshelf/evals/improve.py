"""The description optimiser behind ``skillshelf improve``.

1. The cases are split, deterministically, into a *training* and a *held-out* split
   (:func:`~skillshelf.evals.split.split_cases`: by a hash, within each expected skill).
2. Every case runs through the real agent loop (:func:`~skillshelf.evals.runner.run_cases`)
   against a private copy of the visible skills, so nothing under the roots is touched while
   candidates are tried and every candidate is judged as the bytes ``--write`` would write —
   and as the agent would show them: the caller's agent options (catalog format, budget and
   placement, relevant skills, guidance, skill tools, tool style) apply to every evaluation,
   before and after.
3. For each skill with failures on the training split (worst F1 first), the proposer model
   is shown those failures (never a held-out request) and proposes a new description. The
   candidate is written into the copy's SKILL.md (:mod:`~skillshelf.core.description_edit`:
   only the value changes), must validate, and all cases run again. It is **kept** only when
   that skill's F1 on the held-out split rises and no other skill's held-out F1 falls (a
   skill neither expected nor loaded counts as 1.0: nothing wrong). A rejected candidate may
   be retried ``attempts`` times, the proposer then seeing what was rejected and why.
4. The result holds the reports of both splits before and after, every proposal with its
   verdict, and the edits as a unified diff;
   :meth:`~skillshelf.evals.improve_result.ImproveResult.write` applies them.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from skillshelf.core.description_edit import DescriptionEditError, replace_description
from skillshelf.errors import SkillshelfError, UsageError, clip, unknown_skill_message
from skillshelf.evals.improve_result import (
    SPLITS,
    Change,
    ImproveError,
    ImproveResult,
    Proposal,
    Split,
    read_text,
    write_text,
)
from skillshelf.evals.proposer import MAX_DESCRIPTION_CHARS, Example, ProposalRequest, propose
from skillshelf.evals.report import EvalReport, build_report, run_passes
from skillshelf.evals.runner import RunOutcome, run_cases
from skillshelf.evals.split import DEFAULT_HOLDOUT, split_cases

if TYPE_CHECKING:
    from skillshelf.evals.cases import EvalCase
    from skillshelf.models import Model
    from skillshelf.repository import Repository

__all__ = ["improve_descriptions"]

_EPSILON: Final = 1e-9


# -- the working copy ------------------------------------------------------------------------


@dataclass(slots=True)
class _Entry:
    skill: str
    source: Path  # the SKILL.md under the roots
    copy: Path  # the SKILL.md in the working copy
    original: str
    current: str
    description: str
    body: str


class _Workspace:
    """A private copy of every visible skill, one root, one folder per name."""

    def __init__(self, repo: Repository, folder: Path) -> None:
        self.root = folder / "skills"
        self.mode = repo.options.mode
        self.entries: dict[str, _Entry] = {}
        for skill in repo.skills:
            target = self.root / skill.name
            shutil.copytree(skill.directory, target, symlinks=True, ignore_dangling_symlinks=True)
            text = read_text(skill.skill_md)
            self.entries[skill.name] = _Entry(
                skill.name,
                skill.skill_md,
                target / skill.skill_md_name,
                text,
                text,
                skill.description,
                _body(skill),
            )

    def open(self) -> Repository:
        from skillshelf.repository import Repository

        repo = Repository([self.root], mode=self.mode, cache_dir=False, lockfile=False)
        missing = sorted(set(self.entries) - set(repo.names()))
        if missing:
            raise ImproveError(f"the working copy lost skills: {', '.join(missing)}")
        return repo

    def write(self, name: str, text: str) -> None:
        write_text(self.entries[name].copy, text)

    def check(self, name: str, description: str) -> str | None:
        """None when the copy's SKILL.md is valid with ``description``, else why not."""
        from skillshelf.skills.skill import parse_skill_md

        parsed = parse_skill_md(self.entries[name].copy, mode=self.mode)
        if (
            parsed.valid
            and parsed.manifest is not None
            and parsed.manifest.description == description
        ):
            return None
        errors = [d.message for d in parsed.diagnostics if d.severity == "error"]
        return "invalid: " + ("; ".join(errors) or "the description did not read back")


def _body(skill: Any) -> str:
    try:
        return str(skill.body())
    except SkillshelfError:
        return ""


# -- the loop --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Settings:
    model: Model
    proposer: Model
    runs: int
    concurrency: int
    max_steps: int | None
    on_run: Callable[[RunOutcome], None] | None
    agent_options: Mapping[str, Any] | None


async def improve_descriptions(
    cases: Sequence[EvalCase],
    repo: Repository,
    model: Model,
    *,
    proposer: Model | None = None,
    holdout: float = DEFAULT_HOLDOUT,
    seed: str = "",
    skills: Iterable[str] | None = None,
    attempts: int = 1,
    runs: int = 1,
    concurrency: int = 4,
    max_steps: int | None = None,
    on_run: Callable[[RunOutcome], None] | None = None,
    agent_options: Mapping[str, Any] | None = None,
) -> ImproveResult:
    """Propose, judge and keep better descriptions (see the module docstring).

    Args:
        cases: Validated cases (checked against ``repo``).
        repo: The skills; nothing under its roots is written.
        model: The model evaluated (the one the descriptions are for).
        proposer: The model that writes descriptions (default: ``model``).
        holdout: The share of each skill's cases held out to judge proposals.
        seed: Changes which cases are held out.
        skills: Only these skills may be changed (default: every skill with a training failure).
        attempts: Proposals per skill before giving up on it.
        runs: Runs per case and evaluation.
        concurrency: Runs in flight at once.
        max_steps: Model requests per run.
        on_run: Called after each run.
        agent_options: More :class:`~skillshelf.agent.loop.Agent` keyword arguments for every
            run, before and after each proposal (``catalog_format``, ``catalog_budget``,
            ``relevant_skills``, ``tool_style``, …), as for
            :func:`~skillshelf.evals.runner.run_cases`.

    Raises:
        UsageError: No cases, an empty split, an unknown skill in ``skills``, bad numbers.
        ProposerError: The proposer model failed.
        EvalAbortedError, ModelAuthError: As :func:`~skillshelf.evals.runner.run_cases`.
    """
    if not cases:
        raise UsageError("no cases: improve needs eval cases to learn from and to judge by")
    if attempts < 1:
        raise UsageError("attempts must be at least 1")
    split = split_cases(cases, holdout=holdout, seed=seed)
    for side in SPLITS:
        if side not in split.values():
            raise UsageError(
                f"the {side} split is empty: add cases (two or more per skill) or change the "
                f"holdout share ({holdout})"
            )
    allowed = _allowed(skills, repo)
    settings = _Settings(
        model, proposer or model, runs, concurrency, max_steps, on_run, agent_options
    )
    with tempfile.TemporaryDirectory(prefix="skillshelf-improve-") as folder:
        workspace = _Workspace(repo, Path(folder))
        return await _optimise(cases, split, workspace, allowed, attempts, settings)


def _allowed(skills: Iterable[str] | None, repo: Repository) -> set[str] | None:
    if skills is None:
        return None
    chosen = set(skills)
    for name in sorted(chosen):
        if name not in repo:
            from skillshelf.core.search import closest_names

            raise UsageError(unknown_skill_message(name, closest_names(name, repo.names())))
    return chosen


async def _optimise(
    cases: Sequence[EvalCase],
    split: Mapping[str, Split],
    workspace: _Workspace,
    allowed: set[str] | None,
    attempts: int,
    settings: _Settings,
) -> ImproveResult:
    outcomes = await _evaluate(cases, workspace, settings)
    before = _reports(cases, split, outcomes, settings.model.name)
    current = before
    proposals: list[Proposal] = []
    for name in _targets(current["train"], workspace, allowed):
        rejected: list[tuple[str, str]] = []
        for attempt in range(1, attempts + 1):
            request = _request(name, workspace, cases, split, outcomes, rejected)
            description = await propose(settings.proposer, request)
            proposal, result = await _judge(
                name, attempt, description, cases, split, workspace, current, settings
            )
            proposals.append(proposal)
            if proposal.kept and result is not None:
                outcomes, current = result
                break
            rejected.append((proposal.description or "(no description)", proposal.reason))
    changes = tuple(
        Change(e.skill, e.source, e.original, e.current, e.description, _description_of(e))
        for e in workspace.entries.values()
        if e.current != e.original
    )
    return ImproveResult(
        split,
        before,
        current,
        tuple(proposals),
        changes,
        settings.model.name,
        settings.proposer.name,
    )


def _description_of(entry: _Entry) -> str:
    """The description the copy's SKILL.md holds now."""
    if entry.current == entry.original:
        return entry.description
    from skillshelf.core.frontmatter import parse_frontmatter

    # Only edits that read back (core.description_edit checked it) get here.
    text = entry.current.replace("\r\n", "\n").removeprefix("\ufeff")
    return str(parse_frontmatter(text).data["description"])


async def _evaluate(
    cases: Sequence[EvalCase], workspace: _Workspace, settings: _Settings
) -> list[RunOutcome]:
    return await run_cases(
        cases,
        workspace.open(),
        settings.model,
        runs=settings.runs,
        concurrency=settings.concurrency,
        max_steps=settings.max_steps,
        on_run=settings.on_run,
        agent_options=settings.agent_options,
    )


def _reports(
    cases: Sequence[EvalCase],
    split: Mapping[str, Split],
    outcomes: Sequence[RunOutcome],
    model: str,
) -> dict[Split, EvalReport]:
    reports: dict[Split, EvalReport] = {}
    for side in SPLITS:
        chosen = [c for c in cases if split[c.id] == side]
        ids = {c.id for c in chosen}
        reports[side] = build_report(
            chosen,
            [o for o in outcomes if o.case_id in ids],
            model=model,
            runs_per_case=max((o.run for o in outcomes), default=1),
        )
    return reports


def _targets(train: EvalReport, workspace: _Workspace, allowed: set[str] | None) -> list[str]:
    """Skills with a training failure (FN or FP), worst F1 first."""
    failing = [
        s
        for s in train.skills
        if (s.fn or s.fp)
        and s.skill in workspace.entries
        and (allowed is None or s.skill in allowed)
    ]
    failing.sort(key=lambda s: (s.f1 if s.f1 is not None else 0.0, s.skill))
    return [s.skill for s in failing]


def _request(
    name: str,
    workspace: _Workspace,
    cases: Sequence[EvalCase],
    split: Mapping[str, Split],
    outcomes: Sequence[RunOutcome],
    rejected: Sequence[tuple[str, str]],
) -> ProposalRequest:
    entry = workspace.entries[name]
    by_id = {c.id: c for c in cases if split[c.id] == "train"}
    missed: list[Example] = []
    wrong: list[Example] = []
    right: list[Example] = []
    for outcome in outcomes:
        case = by_id.get(outcome.case_id)
        if case is None or outcome.error is not None:
            continue
        example = Example(case.query, case.expected_skill, outcome.predicted)
        if case.expected_skill == name:
            (right if run_passes(case, outcome) else missed).append(example)
        elif outcome.predicted == name:
            wrong.append(example)
    others = [
        (other.skill, _description_of(other))
        for other in workspace.entries.values()
        if other.skill != name
    ]
    return ProposalRequest(
        name,
        _description_of(entry),
        entry.body,
        others,
        _unique(missed),
        _unique(wrong),
        _unique(right),
        tuple(rejected),
    )


def _unique(examples: list[Example]) -> list[Example]:
    return list(dict.fromkeys(examples))


async def _judge(
    name: str,
    attempt: int,
    description: str | None,
    cases: Sequence[EvalCase],
    split: Mapping[str, Split],
    workspace: _Workspace,
    current: Mapping[Split, EvalReport],
    settings: _Settings,
) -> tuple[Proposal, tuple[list[RunOutcome], dict[Split, EvalReport]] | None]:
    entry = workspace.entries[name]
    if description is None:
        return Proposal(
            name, attempt, None, False, "the proposer's reply held no description"
        ), None
    if description == _description_of(entry):
        return Proposal(name, attempt, description, False, "unchanged"), None
    if len(description) > MAX_DESCRIPTION_CHARS:
        reason = f"invalid: {len(description)} characters, over the {MAX_DESCRIPTION_CHARS} limit"
        return Proposal(name, attempt, description, False, reason), None
    try:
        text = replace_description(entry.current, description)
    except DescriptionEditError as exc:
        reason = f"not applied: cannot edit this SKILL.md safely ({exc})"
        return Proposal(name, attempt, description, False, reason), None
    workspace.write(name, text)
    problem = workspace.check(name, description)
    if problem is not None:
        workspace.write(name, entry.current)
        return Proposal(name, attempt, description, False, clip(problem, 300)), None
    outcomes = await _evaluate(cases, workspace, settings)
    after = _reports(cases, split, outcomes, settings.model.name)
    keep, reason, lowered = _verdict(name, current["held-out"], after["held-out"])
    f1 = {s: (_f1(current[s], name), _f1(after[s], name)) for s in SPLITS}
    proposal = Proposal(name, attempt, description, keep, reason, f1, lowered)
    if not keep:
        workspace.write(name, entry.current)
        return proposal, None
    entry.current = text
    return proposal, (outcomes, after)


def _f1(report: EvalReport, name: str) -> float | None:
    return next((s.f1 for s in report.skills if s.skill == name), None)


def _verdict(name: str, before: EvalReport, after: EvalReport) -> tuple[bool, str, tuple[str, ...]]:
    """Keep when ``name``'s held-out F1 rises and no other skill's held-out F1 falls."""
    old, new = _f1(before, name), _f1(after, name)
    names = {s.skill for s in before.skills} | {s.skill for s in after.skills}
    lowered = tuple(
        sorted(
            other
            for other in names - {name}
            if _or_one(_f1(after, other)) < _or_one(_f1(before, other)) - _EPSILON
        )
    )
    if old is None:
        return False, "no held-out case expects or loaded this skill: nothing to judge by", lowered
    if lowered:
        return False, f"lowers the held-out F1 of {', '.join(lowered)}", lowered
    # None after a defined F1: the skill stopped triggering wrongly and has no case of its own.
    if _or_one(new) <= old + _EPSILON:
        return False, f"held-out F1 did not rise ({_show(old)} → {_show(new)})", lowered
    return True, f"held-out F1 {_show(old)} → {_show(new)}", lowered


def _or_one(value: float | None) -> float:
    return 1.0 if value is None else value


def _show(value: float | None) -> str:
    return "–" if value is None else f"{value:.2f}"

"""Catalog-quality lint: findings about skills that change how a model uses them.

A model picks skills from names and descriptions alone, then follows the body. This package
checks what makes it pick wrongly or fail: descriptions without a "when to use", near-duplicate
descriptions, generic names, bodies too long to load whole, links and scripts that lead nowhere,
references nested too deep, and instructions that ``allowed-tools`` does not permit.

:func:`lint_subjects` is pure (values in, findings out); :func:`lint_repository` reads the
skills of a :class:`~skillshelf.repository.Repository` and calls it. Every rule has a stable code
and a severity (:data:`RULES`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Sequence
from typing import TYPE_CHECKING, Final

from skillshelf.errors import SkillshelfError, UsageError
from skillshelf.lint._checks import (
    check_body_size,
    check_description,
    check_files,
    check_name,
)
from skillshelf.lint._imports import check_imports, check_unparsable
from skillshelf.lint._model import (
    RULES,
    LintFinding,
    LintReport,
    LintSubject,
    Rule,
    ScriptImport,
    sort_key,
)
from skillshelf.lint._similar import (
    DEFAULT_SIMILARITY,
    MAX_CANDIDATE_CHECKS,
    description_clusters,
    similar_name_groups,
    varying_words,
)
from skillshelf.lint._tools import check_tools

if TYPE_CHECKING:
    from skillshelf.repository import Repository
    from skillshelf.skills.skill import Skill

__all__ = [
    "DEFAULT_SIMILARITY",
    "RULES",
    "LintFinding",
    "LintReport",
    "LintSubject",
    "Rule",
    "ScriptImport",
    "lint_repository",
    "lint_subjects",
    "rule_filter",
    "subject_from_skill",
]

_PER_SKILL: Final = (
    check_description,
    check_name,
    check_body_size,
    check_files,
    check_tools,
    check_imports,
    check_unparsable,
)
# Rules that read only names and descriptions: selecting only these skips all file reading.
_CATALOG_ONLY: Final = ("description.", "name.")


def rule_filter(
    select: Iterable[str] | None = None, ignore: Iterable[str] = ()
) -> Callable[[str], bool]:
    """A predicate on rule codes from ``--select``/``--ignore`` style lists.

    An entry is a code (``link.broken``) or a group, the part before the dot (``description``).

    Raises:
        UsageError: An entry names no rule.
    """
    chosen = None if select is None else _expand(select)
    dropped = _expand(ignore)
    return lambda code: (chosen is None or code in chosen) and code not in dropped


def _expand(entries: Iterable[str]) -> frozenset[str]:
    codes: set[str] = set()
    for entry in (e.strip() for e in entries):
        if not entry:
            continue
        matched = {c for c in RULES if c == entry or c.split(".", 1)[0] == entry.rstrip(".*")}
        if not matched:
            known = ", ".join(sorted(RULES))
            raise UsageError(f"Unknown lint rule {entry!r}. Known rules: {known}")
        codes |= matched
    return frozenset(codes)


def lint_subjects(
    subjects: Sequence[LintSubject],
    *,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    similarity: float = DEFAULT_SIMILARITY,
    only: Collection[str] | None = None,
    budget: int = MAX_CANDIDATE_CHECKS,
) -> LintReport:
    """Lint skills given as values.

    Args:
        subjects: Every skill of the catalog (duplicates are looked for among all of them).
        select: Rule codes or groups to run (default: all).
        ignore: Rule codes or groups to leave out.
        similarity: Jaccard similarity of content words from which two descriptions count as
            near-duplicates, in (0, 1].
        only: Names of the skills to report on (default: all of ``subjects``).
        budget: Postings scanned plus candidates compared, at most, by the near-duplicate
            check (look-alike names need no budget: their work is linear).

    Raises:
        UsageError: An unknown rule, or ``similarity`` outside (0, 1].
    """
    if not 0 < similarity <= 1:
        raise UsageError(f"similarity must be greater than 0 and at most 1, got {similarity}")
    wanted = rule_filter(select, ignore)
    reported = [s for s in subjects if only is None or s.name in only]
    findings = [f for s in reported for check in _PER_SKILL for f in check(s)]
    notes: list[str] = []
    if wanted("description.duplicate"):
        findings += _duplicates(subjects, similarity, budget, notes, only)
    if wanted("name.similar"):
        findings += _look_alikes(subjects, only)
    kept = [f for f in findings if wanted(f.code) and (only is None or f.skill in only)]
    return LintReport(tuple(sorted(kept, key=sort_key)), len(reported), tuple(notes))


# A group's finding names this many members and what sets each apart; the rest are counted
# (every member is still in ``related``), so one finding stays readable at 864 members.
_SHOWN_MEMBERS: Final = 8
_SHOWN_WORDS: Final = 4
_TEMPLATE_CHARS: Final = 160


def _duplicates(
    subjects: Sequence[LintSubject],
    similarity: float,
    budget: int,
    notes: list[str],
    only: Collection[str] | None,
) -> list[LintFinding]:
    from skillshelf.errors import clip
    from skillshelf.lint._model import finding

    clusters, exhausted = description_clusters(
        [s.description for s in subjects], threshold=similarity, budget=budget
    )
    if exhausted:
        notes.append(
            f"description.duplicate stopped after {budget:,} comparisons; some groups may be "
            "missing (the descriptions share unusually many words)"
        )
    out: list[LintFinding] = []
    for cluster in clusters:
        members = sorted((subjects[i] for i in cluster.members), key=lambda s: s.name)
        template, varying = varying_words([m.description for m in members])
        shown = []
        for member, words in list(zip(members, varying, strict=True))[:_SHOWN_MEMBERS]:
            differs = " ".join(words[:_SHOWN_WORDS]) + (" …" if len(words) > _SHOWN_WORDS else "")
            shown.append(f"{member.name} ({differs or 'identical'})")
        more = len(members) - len(shown)
        listed = ", ".join(shown) + (f" and {more:,} more" if more > 0 else "")
        first = next((m for m in members if only is None or m.name in only), members[0])
        out.append(
            finding(
                "description.duplicate",
                first,
                f"{len(members):,} skills have nearly the same description (at least "
                f"{cluster.score:.0%} of content words shared): "
                f"{clip(template, _TEMPLATE_CHARS, quoted=True)}; they differ only in: {listed}. "
                "A model choosing among them has only those words to go on",
                "start each description with what sets it apart (the app, input or situation "
                "above), or merge them into one skill that takes it as an argument",
                line=first.description_line,
                related=tuple(m.name for m in members if m is not first),
            )
        )
    return out


def _look_alikes(
    subjects: Sequence[LintSubject], only: Collection[str] | None
) -> list[LintFinding]:
    from skillshelf.lint._model import finding

    out: list[LintFinding] = []
    # One finding per chain of look-alikes (skill-1 … skill-9 is one group, not 36 pairs).
    for group in similar_name_groups([s.name for s in subjects]):
        members = sorted((subjects[i] for i in group), key=lambda s: s.name)
        first = next((m for m in members if only is None or m.name in only), members[0])
        others = tuple(m.name for m in members if m is not first)
        shown = ", ".join(repr(n) for n in others[:_SHOWN_MEMBERS])
        more = len(others) - _SHOWN_MEMBERS
        out.append(
            finding(
                "name.similar",
                first,
                f"The name is one edit away from {shown}"
                + (f" and {more:,} more" if more > 0 else "")
                + "; people and models may confuse them",
                "choose names that differ in meaning, not in a letter",
                related=others,
            )
        )
    return out


def subject_from_skill(skill: Skill) -> LintSubject:
    """Read what the checks need about a discovered skill: body, file list, documents.

    Raises:
        SkillshelfError: SKILL.md can no longer be read or parsed.
    """
    from skillshelf.lint._gather import subject_from_skill as gather

    return gather(skill)


def lint_repository(
    repo: Repository,
    *,
    names: Sequence[str] | None = None,
    select: Iterable[str] | None = None,
    ignore: Iterable[str] = (),
    similarity: float = DEFAULT_SIMILARITY,
    budget: int = MAX_CANDIDATE_CHECKS,
) -> LintReport:
    """Lint the skills of a repository: every visible skill, or only those in ``names``.

    Duplicates are still looked for across every visible skill. A SKILL.md that does not load
    is one ``skill.invalid`` finding (``skillshelf validate`` tells why in detail).

    Raises:
        SkillNotFoundError: A name in ``names`` is not a visible skill.
        UsageError: An unknown rule, or ``similarity`` outside (0, 1].
    """
    from skillshelf.lint._gather import subject_from_skill as gather

    wanted = rule_filter(select, ignore)
    only = None if names is None else {repo.get(n).name for n in names}
    catalog_only = all(code.startswith(_CATALOG_ONLY) for code in RULES if wanted(code))
    subjects: list[LintSubject] = []
    invalid: list[LintFinding] = []
    known: dict[str, bool] = {}  # whether a module imports here, asked once per run
    for skill in repo.skills:
        if catalog_only or (only is not None and skill.name not in only):
            subjects.append(LintSubject(skill.name, skill.description, skill.directory))
            continue
        try:
            subjects.append(gather(skill, known=known))
        except SkillshelfError as exc:
            subjects.append(LintSubject(skill.name, skill.description, skill.directory))
            invalid.append(_invalid(skill.name, str(skill.skill_md), str(exc), None))
    report = lint_subjects(
        subjects, select=select, ignore=ignore, similarity=similarity, only=only, budget=budget
    )
    if only is None:
        invalid += [_skipped(s.path, s.diagnostics, s.reason) for s in repo.skipped]
    extra = [f for f in invalid if wanted(f.code)]
    if not extra:
        return report
    findings = tuple(sorted([*report.findings, *extra], key=sort_key))
    return LintReport(findings, report.skills_checked + len(extra), report.notes)


def _skipped(path: str, diagnostics: Sequence[object], reason: str) -> LintFinding:
    import os

    from skillshelf.core.diagnostics import Diagnostic

    line = next(
        (d.line for d in diagnostics if isinstance(d, Diagnostic) and d.severity == "error"), None
    )
    name = os.path.basename(os.path.dirname(path)) or path
    return _invalid(name, path, reason, line)


def _invalid(name: str, path: str, reason: str, line: int | None) -> LintFinding:
    return LintFinding(
        "skill.invalid",
        RULES["skill.invalid"].severity,
        name,
        f"SKILL.md does not load: {reason}",
        f"run `skillshelf validate {path}` for every problem, then fix them",
        path,
        line,
    )

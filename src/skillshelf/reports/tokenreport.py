"""The token report of a skills repository: what progressive disclosure costs up front.

:func:`token_report` is pure: it takes the texts :func:`gather_skill_texts` read and a
:class:`~skillshelf.reports.tokens.TokenCounter`, and compares what progressive disclosure puts
up front (the catalog, as the agent renders it within its budget) with injecting every body and
document.
"""

from __future__ import annotations

import gc
import os
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal

from skillshelf.core.catalog import CatalogEntry, CatalogFormat, fit_catalog, render_catalog
from skillshelf.errors import FileAccessError
from skillshelf.reports.tokens import (
    CountCache,
    EncodingName,
    TokenCounter,
    get_counter,
    split_at_safe_cuts,
)

if TYPE_CHECKING:
    from skillshelf.core.files import FileTree
    from skillshelf.repository import Repository
    from skillshelf.skills.skill import Skill
    from skillshelf.skills.walk import SkillWalk

__all__ = [
    "BudgetEffect",
    "CatalogFate",
    "SkillTexts",
    "SkillTokens",
    "TokenReport",
    "catalog_fates",
    "gather_skill_texts",
    "report_for_repository",
    "token_report",
]

CatalogFate = Literal["full", "trimmed", "name_only", "omitted", "user_only"]


# -- the report's inputs -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillTexts:
    """What a skill puts in front of a model, as text (read by :func:`gather_skill_texts`).

    Attributes:
        entry: Its catalog entry.
        model_invocable: False when only the user may invoke it (it is not in the catalog).
        body: The SKILL.md body.
        on_load: What ``skill_load`` returns without docs (body and load framing).
        docs: ``(path, text)`` of every text document ``skill_load`` can include.
        binary_files: Files skipped because they are binary (or unreadable).
        other_files: Text files that are not documents (scripts, …): never inlined.
    """

    entry: CatalogEntry
    model_invocable: bool
    body: str
    on_load: str
    docs: tuple[tuple[str, str], ...] = ()
    binary_files: int = 0
    other_files: int = 0

    @property
    def name(self) -> str:
        """The skill's name."""
        return self.entry.name


# Large enough to read any document whole: "inject everything" means all of it.
_WHOLE_FILE_CHARS: Final = 50_000_000


def gather_skill_texts(
    skills: Iterable[Skill], *, on_skill: Callable[[str], None] | None = None
) -> list[SkillTexts]:
    """Read each skill's body, load text and documents; ``on_skill(name)`` after each one.

    Raises:
        SkillshelfError: A SKILL.md vanished or no longer parses.
    """
    # Reading 10,000 skills allocates a great many long-lived objects and no cycles; the
    # cyclic collector would only re-traverse them (as in Repository.refresh).
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        return _gather(skills, on_skill)
    finally:
        if gc_was_enabled:
            gc.enable()


def _gather(skills: Iterable[Skill], on_skill: Callable[[str], None] | None) -> list[SkillTexts]:
    from skillshelf.skills.content import list_docs, render_load
    from skillshelf.skills.paths import file_tree
    from skillshelf.skills.walk import walk_skill

    gathered: list[SkillTexts] = []
    for skill in skills:
        body = skill.body()
        docs: list[tuple[str, str]] = []
        binary = other = 0
        walk = walk_skill(skill.directory)  # one walk serves the doc list and both trees
        doc_paths = set(list_docs(skill, walk=walk))
        shown = file_tree(skill.path, walk=walk)  # what skill_load lists
        # Every file is classified: the listing serves unless its caps left some out.
        tree = shown if not shown.omitted else _whole_tree(skill, walk)
        for entry in tree.entries:
            if entry.is_dir or entry.path == skill.skill_md_name:
                continue
            document = entry.path in doc_paths
            try:
                text = _read(skill, entry.path, document=document, size=entry.size)
            except FileAccessError:
                binary += 1
                continue
            if text is None:
                binary += 1
            elif document:
                docs.append((entry.path, text))
            else:
                other += 1
        gathered.append(
            SkillTexts(
                CatalogEntry.of(skill),
                skill.model_invocable,
                body,
                render_load(skill, body, (), walk=walk, tree=shown),
                tuple(sorted(docs)),
                binary,
                other,
            )
        )
        if on_skill is not None:
            on_skill(skill.name)
    return gathered


def _whole_tree(skill: Skill, walk: SkillWalk) -> FileTree:
    from skillshelf.skills.paths import file_tree

    return file_tree(skill.path, max_depth=64, max_entries=100_000, walk=walk)


def _read(skill: Skill, relative: str, *, document: bool, size: int | None) -> str | None:
    """A walked file's text, whole for a document; None when it is binary.

    A regular file is opened below the skill's canonical folder following no link and
    classified by the one MIME table on its first bytes, as ``read_skill_file`` does; a
    link (or anything that changed since the walk) is read by ``read_skill_file`` itself.

    Raises:
        FileAccessError: It cannot be read.
    """
    from skillshelf.core.mime import SNIFF_BYTES, guess_mime, is_binary
    from skillshelf.skills.walk import open_beneath

    try:
        fd = open_beneath(skill.real_directory, relative, follow_root=False)
    except OSError:
        return _read_checked(skill, relative, document=document, size=size)
    try:
        with os.fdopen(fd, "rb") as handle:
            data = handle.read() if document else handle.read(SNIFF_BYTES)
    except OSError as exc:
        raise FileAccessError(f"{relative!r} cannot be read", reason="unreadable") from exc
    if is_binary(guess_mime(relative.rpartition("/")[2], data), data):
        return None
    return data.decode("utf-8-sig", errors="replace") if document else ""


def _read_checked(skill: Skill, relative: str, *, document: bool, size: int | None) -> str | None:
    from skillshelf.skills.paths import read_skill_file

    if not document:
        content = read_skill_file(skill.path, relative, max_chars=1)
        return None if content.binary else ""
    # A document has at most as many characters as bytes: its size as the cap reads it whole
    # without a buffer sized for the largest document there could be.
    limit = _WHOLE_FILE_CHARS if size is None else size + 1
    content = read_skill_file(skill.path, relative, max_chars=limit)
    if content.truncated and limit < _WHOLE_FILE_CHARS:  # it grew since the walk
        content = read_skill_file(skill.path, relative, max_chars=_WHOLE_FILE_CHARS)
    return None if content.binary else content.text


# -- the report ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillTokens:
    """One skill's token costs.

    Attributes:
        name: The skill.
        catalog_entry: Its catalog entry, unbudgeted (0 when it is not in the catalog).
        catalog_fate: What the catalog budget did to it: ``full``, ``trimmed`` (description
            cut), ``name_only``, ``omitted``, or ``user_only`` (never in the catalog).
        body: The SKILL.md body.
        on_load: What one ``skill_load`` without docs costs (body and framing).
        docs: All its text documents together.
        doc_files: How many text documents.
        binary_files: Files skipped as binary or unreadable.
        other_files: Text files that are not documents (scripts, …).
    """

    name: str
    catalog_entry: int
    catalog_fate: CatalogFate
    body: int
    on_load: int
    docs: int
    doc_files: int
    binary_files: int
    other_files: int

    @property
    def everything(self) -> int:
        """Body and all documents: this skill's share of injecting everything."""
        return self.body + self.docs


@dataclass(frozen=True, slots=True)
class BudgetEffect:
    """What the catalog budget did.

    Attributes:
        budget_chars: The budget (None: none).
        full: Skills listed with their whole description.
        trimmed: Skills whose description was cut.
        name_only: Skills listed by name only.
        omitted: Skills left out (counted in a closing line).
        tokens: Catalog tokens within the budget.
        tokens_unbudgeted: Catalog tokens without a budget.
        chars: Catalog characters within the budget.
        chars_unbudgeted: Catalog characters without a budget.
    """

    budget_chars: int | None
    full: int
    trimmed: int
    name_only: int
    omitted: int
    tokens: int
    tokens_unbudgeted: int
    chars: int
    chars_unbudgeted: int


@dataclass(frozen=True, slots=True)
class TokenReport:
    """Token costs of a repository's skills, progressive disclosure against everything.

    Attributes:
        encoding: The encoding counted in.
        backend: ``tiktoken``, ``bpe_openai`` or ``estimate``.
        exact: False when the counts are estimates.
        format: The catalog format.
        skills: One row per skill, sorted by name.
        budget: The catalog budget's effect.
        progressive: Tokens up front with progressive disclosure: the catalog as rendered
            within the budget, wrapper included.
        everything: Tokens when every body and document is injected.
        on_load: The sum of every skill's on-load cost.
    """

    encoding: str
    backend: str
    exact: bool
    format: CatalogFormat
    skills: tuple[SkillTokens, ...]
    budget: BudgetEffect
    progressive: int
    everything: int
    on_load: int

    @property
    def ratio(self) -> float | None:
        """``everything / progressive`` (None with an empty catalog)."""
        return self.everything / self.progressive if self.progressive else None

    def to_dict(self) -> dict[str, Any]:
        """Every number, for ``--json``."""
        data = asdict(self)
        data["ratio"] = None if self.ratio is None else round(self.ratio, 3)
        data["skills"] = [{**asdict(s), "everything": s.everything} for s in self.skills]
        return data


def token_report(
    texts: Sequence[SkillTexts],
    counter: TokenCounter,
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
    cache: CountCache | None = None,
) -> TokenReport:
    """Count what each skill costs and compare progressive disclosure with everything.

    Args:
        texts: The skills (the catalog lists the model-invocable ones in this order).
        counter: Counts the tokens.
        format: Catalog format.
        budget_chars: The catalog budget the agent uses (None: none).
        cache: Exact counts kept from earlier runs (see ``CountCache``); None: none.

    Raises:
        UsageError: An unknown format or a negative budget.
    """
    entries = [t.entry for t in texts if t.model_invocable]
    unbudgeted = render_catalog(entries, format=format)
    fit = fit_catalog(entries, format=format, budget_chars=budget_chars)
    budgeted = fit.text
    if not entries:  # with no skills to list, the agent leaves the catalog out altogether
        unbudgeted = budgeted = ""
    empty = render_catalog([], format=format)
    entry_texts = {e.name: _entry_text(e, format, empty) for e in entries}
    fates: dict[str, CatalogFate] = {
        e.name: fate for e, fate in zip(entries, fit.fates, strict=True)
    }
    ordered = sorted(texts, key=lambda t: t.name)
    # Every text is counted in one call, so the counter can batch and reuse counts; the
    # unbudgeted catalog is given as its entries, so each is counted once.
    wanted: list[str | tuple[str, ...]] = [budgeted, _as_parts(unbudgeted, entry_texts)]
    for t in ordered:
        body, on_load = _body_and_load(t.body, t.on_load)
        wanted += [entry_texts.get(t.name, ""), body, on_load, *(text for _, text in t.docs)]
    counts = iter(counter.count_many(wanted, cache=cache))
    catalog_tokens, catalog_unbudgeted = next(counts), next(counts)
    rows = tuple(_row(t, counts, fates) for t in ordered)
    tally = Counter(fates.values())
    effect = BudgetEffect(
        budget_chars,
        full=tally["full"],
        trimmed=tally["trimmed"],
        name_only=tally["name_only"],
        omitted=tally["omitted"],
        tokens=catalog_tokens,
        tokens_unbudgeted=catalog_unbudgeted,
        chars=len(budgeted),
        chars_unbudgeted=len(unbudgeted),
    )
    return TokenReport(
        counter.encoding,
        counter.backend,
        counter.exact,
        format,
        rows,
        effect,
        progressive=effect.tokens,
        everything=sum(r.everything for r in rows),
        on_load=sum(r.on_load for r in rows),
    )


def _body_and_load(body: str, on_load: str) -> tuple[str | tuple[str, ...], str | tuple[str, ...]]:
    """The body and its load text, sharing the body's middle as a part when the load text
    quotes it (the counter checks every cut, so the sums stay exact)."""
    head, middle, tail = split_at_safe_cuts(body)
    at = on_load.find(middle) if middle else -1
    if at < 0:
        return body, on_load
    return (head, middle, tail), (on_load[:at], middle, on_load[at + len(middle) :])


def _as_parts(catalog: str, entry_texts: dict[str, str]) -> str | tuple[str, ...]:
    """``catalog`` as its header, entries and footer when it is exactly that, else whole."""
    joined = "".join(entry_texts.values())
    start = catalog.find(joined) if joined else -1
    if start < 0:
        return catalog
    return (catalog[:start], *entry_texts.values(), catalog[start + len(joined) :])


def _row(texts: SkillTexts, counts: Iterator[int], fates: dict[str, CatalogFate]) -> SkillTokens:
    """One skill's row; ``counts`` yields its entry's, body's, load's and each doc's tokens."""
    return SkillTokens(
        texts.name,
        next(counts),
        fates.get(texts.name, "user_only"),
        next(counts),
        next(counts),
        sum(next(counts) for _ in texts.docs),
        len(texts.docs),
        texts.binary_files,
        texts.other_files,
    )


def _entry_text(entry: CatalogEntry, format: CatalogFormat, empty: str) -> str:
    """The text ``entry`` adds to a catalog: rendered alone, minus the ``empty`` catalog."""
    alone = render_catalog([entry], format=format)
    same = next(
        (i for i, (a, b) in enumerate(zip(empty, alone, strict=False)) if a != b), len(empty)
    )
    prefix = empty.rfind("\n", 0, same) + 1  # whole lines only
    rest = empty[prefix:]
    suffix = len(rest) if alone.endswith(rest) else 0
    return alone[prefix : len(alone) - suffix]


def catalog_fates(
    entries: Sequence[CatalogEntry],
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
) -> dict[str, CatalogFate]:
    """What a catalog of ``entries`` within ``budget_chars`` shows of each skill, by name."""
    fit = fit_catalog(entries, format=format, budget_chars=budget_chars)
    return {entry.name: fate for entry, fate in zip(entries, fit.fates, strict=True)}


def report_for_repository(
    repo: Repository,
    *,
    encoding: EncodingName = "o200k_base",
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
    counter: TokenCounter | None = None,
    on_skill: Callable[[str], None] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> TokenReport:
    """The token report of every skill in ``repo``.

    Args:
        repo: The skills.
        encoding: Used when ``counter`` is None.
        format: Catalog format.
        budget_chars: The catalog budget (the agent's default is 12,000 characters).
        counter: Counts tokens (default: :func:`get_counter` for ``encoding``).
        on_skill: Called with each skill's name once its files are read (progress).
        cache_dir: A folder where exact counts are kept between runs (the CLI uses
            skillshelf's cache folder), so unchanged text is not encoded again; None: none.

    Raises:
        UsageError: An unknown encoding or format, or a negative budget.
        SkillshelfError: A SKILL.md vanished or no longer parses.
    """
    texts = gather_skill_texts(repo.skills, on_skill=on_skill)
    cache = None if cache_dir is None else CountCache(Path(cache_dir))
    report = token_report(
        texts,
        counter or get_counter(encoding),
        format=format,
        budget_chars=budget_chars,
        cache=cache,
    )
    if cache is not None:
        cache.save()
    return report

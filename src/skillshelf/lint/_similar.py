"""Near-duplicate descriptions and look-alike names across a catalog, without comparing all pairs.

Descriptions use prefix filtering (the "All-Pairs" similarity join): each record's tokens are
sorted rarest first, and two records can reach the threshold only if they share a token among
the first few of each. Only those prefix tokens are indexed, so common words never generate
candidates and a catalog of 10,000 skills costs a few candidate checks per skill. Lint groups
them (:func:`description_clusters`): a family of 864 near-copies is one group found with one
check per member, never 373,000 pairs. Names are grouped through deletion neighbourhoods
without comparing any pair. A budget caps the description work on pathological input;
running out of it is reported, never silent.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

from skillshelf.core.words import split_words
from skillshelf.lint._clusters import Cluster, cluster_sets

__all__ = [
    "DEFAULT_SIMILARITY",
    "MAX_CANDIDATE_CHECKS",
    "MIN_SIMILAR_NAME_LENGTH",
    "Cluster",
    "Pair",
    "description_clusters",
    "description_tokens",
    "one_edit_apart",
    "similar_descriptions",
    "similar_name_groups",
    "varying_words",
]

# Jaccard similarity of content words. Two descriptions sharing 60% of their vocabulary
# describe the same job in nearly the same words; the closest pair of distinct skills in the
# shared corpus (executing-plans / subagent-driven-development) scores 0.25.
DEFAULT_SIMILARITY: Final = 0.6
# Postings scanned plus pairs verified per check before giving up (a few seconds of work).
MAX_CANDIDATE_CHECKS: Final = 5_000_000
# Names one edit apart read as the same name (csv-report / csv-reports, pdf-tool / pdf-tools);
# short ones differ by a letter by nature (docx / docs), so they are left alone.
MIN_SIMILAR_NAME_LENGTH: Final = 5

# Two records reaching the threshold share at least this many tokens among their prefixes
# when each prefix is that much longer (the l-prefix lemma of AdaptJoin): fewer candidates.
_SHARED_PREFIX_TOKENS: Final = 3

_WORD: Final = re.compile(r"[^\W_]+")
# Function words and the boilerplate every description shares ("Use when the user asks").
_STOPWORDS: Final = frozenset(
    """a about after all also an and any are as asks at be before by can do does for from has
    have how if in into is it its of on or so such that the their them then these this those
    to up use used uses using user users via want wants was what when whenever where which
    while who will with without you your skill skills claude codex agent""".split()  # noqa: SIM905 - a word list reads best as one string
)


@dataclass(frozen=True, slots=True)
class Pair:
    """Two records that are alike: indexes into the input and the similarity found."""

    first: int
    second: int
    score: float


def description_tokens(text: str) -> frozenset[str]:
    """Content words of a description: case-folded, stopwords dropped, plural ``s`` removed.

    Words come from the one tokenizer (:func:`skillshelf.core.words.split_words`), so a Chinese,
    Japanese or Korean description is compared by its bigrams, not as one unsplittable run.
    """
    tokens: set[str] = set()
    for word in set(split_words(text)) - _STOPWORDS:  # each distinct word once
        if len(word) > 3 and word[-1] == "s" and word[-2] != "s":
            tokens.add(word[:-1])
        elif len(word) >= 2:
            tokens.add(word)
    return frozenset(tokens)


def _join(
    records: Sequence[Collection[str]],
    *,
    prefix: Callable[[int], tuple[int, int]],
    admissible: Callable[[int, int], bool],
    verify: Callable[[int, int], float | None],
    budget: int,
) -> tuple[list[Pair], bool]:
    """Pairs whose ``verify`` score is not None; True as well when the budget ran out.

    ``prefix(i)`` gives record ``i``'s prefix length and how many prefix tokens a partner
    must share with it. Records are taken smallest first, so each meets only smaller ones.
    The budget counts postings scanned plus pairs verified.
    """
    frequency = Counter(token for record in records for token in record)
    index: defaultdict[str, list[int]] = defaultdict(list)
    pairs: list[Pair] = []
    work = 0
    for i in sorted(range(len(records)), key=lambda r: len(records[r])):
        tokens = sorted(records[i], key=lambda t: (frequency[t], t))
        length, need = prefix(i)
        shared: Counter[int] = Counter()
        for token in tokens[:length]:
            postings = index[token]
            work += len(postings)
            shared.update(postings)
            postings.append(i)
        candidates = [j for j, n in shared.items() if n >= need and admissible(j, i)]
        work += len(candidates)
        if work > budget:
            return pairs, True
        for j in sorted(candidates):
            score = verify(j, i)
            if score is not None:
                pairs.append(Pair(min(i, j), max(i, j), score))
    return pairs, False


def similar_descriptions(
    descriptions: Sequence[str], *, threshold: float, budget: int = MAX_CANDIDATE_CHECKS
) -> tuple[list[Pair], bool]:
    """Pairs of descriptions whose content-word Jaccard similarity is at least ``threshold``.

    Returns:
        The pairs (each once, ``first < second``) and whether the budget ran out first.
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    sets = [description_tokens(d) for d in descriptions]
    floor = threshold - 1e-9  # 0.6 * 5 must be 3, not 3.0000000000000004

    def prefix(i: int) -> tuple[int, int]:
        size = len(sets[i])
        overlap = math.ceil(threshold * size - 1e-9)  # least overlap with a smaller partner
        need = min(_SHARED_PREFIX_TOKENS, overlap)
        return size - overlap + need, need

    def admissible(smaller: int, larger: int) -> bool:
        return len(sets[smaller]) >= floor * len(sets[larger])

    def verify(a: int, b: int) -> float | None:
        shared = len(sets[a] & sets[b])
        score = shared / (len(sets[a]) + len(sets[b]) - shared)
        return score if score >= floor else None

    return _join(sets, prefix=prefix, admissible=admissible, verify=verify, budget=budget)


def description_clusters(
    descriptions: Sequence[str], *, threshold: float, budget: int = MAX_CANDIDATE_CHECKS
) -> tuple[list[Cluster], bool]:
    """Groups of descriptions each within ``threshold`` (Jaccard) of the group's leader.

    Leader clustering (:mod:`skillshelf.lint._clusters`): records are taken smallest first;
    one that reaches the threshold with an earlier leader joins the most similar one, any
    other becomes a leader itself. Every leader that could reach the threshold is compared,
    so the groups do not depend on how the candidates are found.

    Returns:
        The groups of two or more (ordered by their first member) and whether the budget
        ran out first (records after that point are left ungrouped).
    """
    if not 0 < threshold <= 1:
        raise ValueError(f"threshold must be in (0, 1], got {threshold}")
    sets = [description_tokens(d) for d in descriptions]
    return cluster_sets(sets, threshold=threshold, budget=budget)


def varying_words(texts: Sequence[str]) -> tuple[str, list[tuple[str, ...]]]:
    """What a group of near-identical texts shares and what sets each apart.

    Returns:
        A template (the first text with the words not shared by all replaced by ``…``) and,
        per text, its words that are not in every text (first spelling, in text order).
    """
    words = [_WORD.findall(text) for text in texts]
    common = set.intersection(*({w.lower() for w in ws} for ws in words)) if words else set()
    varying: list[tuple[str, ...]] = []
    for ws in words:
        seen: dict[str, str] = {}
        for word in ws:
            if word.lower() not in common:
                seen.setdefault(word.lower(), word)
        varying.append(tuple(seen.values()))
    template = _WORD.sub(lambda m: m.group(0) if m.group(0).lower() in common else "…", texts[0])
    return re.sub(r"…(?:[\s\W]*?…)+", "…", template), varying


def one_edit_apart(a: str, b: str) -> bool:
    """True when ``b`` is ``a`` with one character inserted, deleted or replaced."""
    if a == b or abs(len(a) - len(b)) > 1:
        return False
    if len(a) > len(b):
        a, b = b, a
    p = 0
    while p < len(a) and a[p] == b[p]:
        p += 1
    return a[p + 1 :] == b[p + 1 :] if len(a) == len(b) else a[p:] == b[p + 1 :]


def similar_name_groups(names: Sequence[str]) -> list[list[int]]:
    """Groups of names linked by chains of single edits: indexes into ``names``.

    Two names are linked when one is the other with one character inserted, deleted or
    replaced, both at least :data:`MIN_SIMILAR_NAME_LENGTH` long (:func:`one_edit_apart`);
    the groups are the connected parts of that graph (``skill-1`` … ``skill-9`` is one group),
    in order of their first member, members in input order. Repeated names count as one.

    Deletion neighbourhoods, as SymSpell uses them, without comparing names: two names of
    equal length one replacement apart become the same string with the same position deleted,
    and a name one insertion away from another is that name with a character deleted. So
    each name is filed under its ``len`` deletions (with their positions) and joined to what
    is filed there and to the name a deletion spells: linear in the total length of the
    names, however many look alike (10,000 names ``skill-00000``… are 225,000 linked pairs,
    one group). A suffix every name has (``gmail-automation``, ``slack-automation``) makes
    no links.
    """
    copies: dict[str, list[int]] = {}
    for i, name in enumerate(names):
        if len(name) >= MIN_SIMILAR_NAME_LENGTH:
            copies.setdefault(name, []).append(i)
    distinct = list(copies)
    number = {name: k for k, name in enumerate(distinct)}
    parent = list(range(len(distinct)))

    def root(k: int) -> int:
        while parent[k] != k:
            parent[k] = parent[parent[k]]
            k = parent[k]
        return k

    linked: set[int] = set()

    def link(a: int, b: int) -> None:
        linked.update((a, b))
        parent[root(a)] = root(b)

    filed: dict[tuple[str, int], int] = {}
    for k, name in enumerate(distinct):
        for cut in range(len(name)):
            deleted = name[:cut] + name[cut + 1 :]
            same = filed.setdefault((deleted, cut), k)
            if same != k:
                link(same, k)  # equal but for the character at ``cut``
            shorter = number.get(deleted)
            if shorter is not None:
                link(shorter, k)  # ``name`` is ``deleted`` with one character inserted
    groups: dict[int, list[int]] = {}
    for k in sorted(linked):
        groups.setdefault(root(k), []).extend(copies[distinct[k]])
    return sorted((sorted(g) for g in groups.values()), key=lambda g: g[0])

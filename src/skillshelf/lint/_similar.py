"""Near-duplicate descriptions and look-alike names across a catalog, without comparing all pairs.

Both use prefix filtering (the "All-Pairs" similarity join): each record's tokens are sorted
rarest first, and two records can reach the threshold only if they share a token among the
first few of each. Only those prefix tokens are indexed, so common words never generate
candidates and a catalog of 10,000 skills costs a few candidate checks per skill. A budget
caps the work on pathological input; running out of it is reported, never silent.
"""

from __future__ import annotations

import math
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = [
    "DEFAULT_SIMILARITY",
    "MAX_CANDIDATE_CHECKS",
    "MAX_NAME_EDITS",
    "MIN_SIMILAR_NAME_LENGTH",
    "Pair",
    "allowed_edits",
    "description_tokens",
    "edit_distance",
    "similar_descriptions",
    "similar_names",
]

# Jaccard similarity of content words. Two descriptions sharing 60% of their vocabulary
# describe the same job in nearly the same words; the closest pair of distinct skills in the
# shared corpus (executing-plans / subagent-driven-development) scores 0.25.
DEFAULT_SIMILARITY: Final = 0.6
# Candidate pairs verified per check before giving up (about a second of work).
MAX_CANDIDATE_CHECKS: Final = 1_000_000
# Names this many edits apart or closer read as the same name (csv-tool / csv-tools).
MAX_NAME_EDITS: Final = 2
# Short names differ by a letter or two by nature (pdf / pptx); leave them alone.
MIN_SIMILAR_NAME_LENGTH: Final = 5
# Below this length a single edit already changes a name's meaning more often than not.
_ONE_EDIT_BELOW: Final = 10

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
    """Content words of a description: lowercased, stopwords dropped, plural ``s`` removed."""
    tokens: set[str] = set()
    for word in _WORD.findall(text.lower()):
        if len(word) < 2 or word in _STOPWORDS:
            continue
        if len(word) > 3 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        tokens.add(word)
    return frozenset(tokens)


def _join(
    records: Sequence[Collection[str]],
    *,
    prefix: Callable[[int], int],
    admissible: Callable[[int, int], bool],
    verify: Callable[[int, int], float | None],
    budget: int,
) -> tuple[list[Pair], bool]:
    """Pairs whose ``verify`` score is not None; True as well when the budget ran out."""
    frequency = Counter(token for record in records for token in record)
    index: defaultdict[str, list[int]] = defaultdict(list)
    pairs: list[Pair] = []
    checks = 0
    for i in sorted(range(len(records)), key=lambda r: len(records[r])):
        tokens = sorted(records[i], key=lambda t: (frequency[t], t))
        candidates: set[int] = set()
        for token in tokens[: prefix(len(tokens))]:
            postings = index[token]
            candidates.update(j for j in postings if admissible(j, i))
            postings.append(i)
        checks += len(candidates)
        if checks > budget:
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

    def prefix(size: int) -> int:
        return size - math.ceil(threshold * size - 1e-9) + 1

    def admissible(smaller: int, larger: int) -> bool:
        return len(sets[smaller]) >= floor * len(sets[larger])

    def verify(a: int, b: int) -> float | None:
        shared = len(sets[a] & sets[b])
        score = shared / (len(sets[a]) + len(sets[b]) - shared)
        return score if score >= floor else None

    return _join(sets, prefix=prefix, admissible=admissible, verify=verify, budget=budget)


def _grams(name: str) -> list[str]:
    """Padded character bigrams, numbered so that repeats count (a multiset as a set)."""
    padded = f"^{name}$"
    seen: Counter[str] = Counter()
    grams = []
    for gram in (padded[k : k + 2] for k in range(len(padded) - 1)):
        grams.append(f"{gram}{seen[gram]}")
        seen[gram] += 1
    return grams


def allowed_edits(name: str, other: str) -> int:
    """How many edits apart two names may be and still count as look-alikes."""
    return 1 if min(len(name), len(other)) < _ONE_EDIT_BELOW else MAX_NAME_EDITS


def edit_distance(a: str, b: str, *, limit: int) -> int | None:
    """Levenshtein distance of ``a`` and ``b`` when it is at most ``limit``, else None."""
    if abs(len(a) - len(b)) > limit:
        return None
    previous = list(range(len(b) + 1))
    for i, char in enumerate(a, start=1):
        current = [i]
        for j, other in enumerate(b, start=1):
            current.append(
                min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (char != other))
            )
        if min(current) > limit:
            return None
        previous = current
    return previous[-1] if previous[-1] <= limit else None


def similar_names(
    names: Sequence[str], *, budget: int = MAX_CANDIDATE_CHECKS
) -> tuple[list[Pair], bool]:
    """Pairs of names within :func:`allowed_edits` edits; ``score`` is the edit distance.

    An edit changes at most two padded bigrams, so names ``k`` edits apart share all but
    ``2k`` of the shorter one's bigrams; with lengths at most ``k`` apart, the rarest
    ``3k + 1`` bigrams of each must meet (the q-gram count filter as a prefix filter).
    """
    records = [_grams(n) if len(n) >= MIN_SIMILAR_NAME_LENGTH else [] for n in names]

    def prefix(size: int) -> int:
        return 3 * MAX_NAME_EDITS + 1

    def admissible(a: int, b: int) -> bool:
        return abs(len(names[a]) - len(names[b])) <= MAX_NAME_EDITS

    def verify(a: int, b: int) -> float | None:
        limit = allowed_edits(names[a], names[b])
        distance = edit_distance(names[a], names[b], limit=limit)
        return None if distance is None or distance == 0 else float(distance)

    return _join(records, prefix=prefix, admissible=admissible, verify=verify, budget=budget)

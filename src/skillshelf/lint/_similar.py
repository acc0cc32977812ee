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
    "MIN_SIMILAR_NAME_LENGTH",
    "Pair",
    "description_tokens",
    "one_edit_apart",
    "similar_descriptions",
    "similar_names",
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


def _halves(length: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(start, size) of a name's two halves, the longer half last."""
    first = length // 2
    return (0, first), (first, length - first)


def similar_names(
    names: Sequence[str], *, budget: int = MAX_CANDIDATE_CHECKS
) -> tuple[list[Pair], bool]:
    """Pairs of names one edit apart (``score`` 1.0), each once with ``first < second``.

    Partition filter (PassJoin): one edit leaves one half of a name intact in the other,
    shifted by at most one place. Halves are indexed by (name length, which half, text), and
    each name looks up its own substrings near each half's place: a dozen look-ups per name
    instead of a comparison with every other name.
    """
    index: defaultdict[tuple[int, int, str], list[int]] = defaultdict(list)
    for i, name in enumerate(names):
        if len(name) >= MIN_SIMILAR_NAME_LENGTH:
            for half, (start, size) in enumerate(_halves(len(name))):
                index[(len(name), half, name[start : start + size])].append(i)
    pairs: list[Pair] = []
    work = 0
    for i, name in enumerate(names):
        if len(name) < MIN_SIMILAR_NAME_LENGTH:
            continue
        candidates: set[int] = set()
        for length in (len(name) - 1, len(name), len(name) + 1):
            for half, (start, size) in enumerate(_halves(length)):
                for shift in range(max(0, start - 1), min(len(name) - size, start + 1) + 1):
                    found = index.get((length, half, name[shift : shift + size]), ())
                    work += len(found)
                    candidates.update(j for j in found if j > i)
        if work > budget:
            return pairs, True
        pairs += [Pair(i, j, 1.0) for j in sorted(candidates) if one_edit_apart(name, names[j])]
    return pairs, False

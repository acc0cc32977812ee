"""Groups of near-duplicate descriptions: leader clustering over an exact prefix filter.

Records are taken smallest first; one that reaches the threshold with an earlier leader joins
the most similar one, any other becomes a leader itself. Only leaders are indexed, so 864
near-copies of one template cost one candidate each, and the output is one group, not every
pair.

Which leaders could reach the threshold is decided exactly, by the ℓ-prefix lemma (AdaptJoin,
Wang et al. 2012): with every record's tokens in one global order (rarest first), two records
sharing at least α tokens share at least ℓ ≤ α among their first ``size - α + ℓ``. A probe's
α is at least ``⌈t·size⌉`` (its partner is no larger); a leader's, since only larger records
probe it, at least ``⌈2t/(1+t)·size⌉``, so leaders index shorter prefixes than probes read.
A larger ℓ means longer prefixes but far fewer candidates: at ℓ = 3, 10,000 descriptions
drawn from a 234-word vocabulary leave 3.5 million candidates to verify; at ℓ = 8, about a
thousand. Counting shared prefix tokens per leader is then the cost, so a token most leaders
share keeps its leaders as a bitset (bit = leader rank) and the counts are added as binary
numbers sliced by bit, many leaders per machine word; a rare token keeps a short list. Every
leader that can reach the threshold is a candidate and every candidate is verified, so the
groups are those of comparing each record with every earlier leader.
"""

from __future__ import annotations

import bisect
import math
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

__all__ = ["Cluster", "cluster_sets"]

# The ℓ of the lemma (capped by α): see the module docstring.
_SHARED_PREFIX_TOKENS: Final = 8
# A token's leaders become a bitset once a list of them would hold this many, or 1/256 of the
# records if that is more (a bitset of n leaders takes n/8 bytes: at most 32 bytes per listed
# leader it replaces, so memory stays linear in the postings).
_DENSE_FROM: Final = 16
# Budget units: a listed leader scanned, or a candidate verified, is one; adding a bitset
# costs one per this many leaders it spans (word operations run far faster than Python steps).
_LEADERS_PER_UNIT: Final = 1024


@dataclass(frozen=True, slots=True)
class Cluster:
    """Records alike enough to be one group: indexes into the input, in input order.

    Attributes:
        members: At least two indexes.
        score: The lowest similarity of a member to the group's first record (its leader).
    """

    members: tuple[int, ...]
    score: float


class _Leaders:
    """Leader ranks by prefix token, and how many of a probe's tokens each leader shares."""

    def __init__(self, records: int) -> None:
        self._dense_from = max(_DENSE_FROM, records // 256)
        self._lists: dict[str, list[int]] = {}
        self._bits: dict[str, int] = {}

    def add(self, token: str, rank: int) -> None:
        bits = self._bits.get(token)
        if bits is not None:
            self._bits[token] = bits | (1 << rank)
            return
        ranks = self._lists.setdefault(token, [])
        ranks.append(rank)
        if len(ranks) >= self._dense_from:
            bits = 0
            for r in ranks:
                bits |= 1 << r
            self._bits[token] = bits
            del self._lists[token]

    def sharing(self, tokens: Sequence[str], need: int, lowest: int) -> tuple[list[int], int]:
        """Ranks from ``lowest`` on of the leaders indexed under ``need`` or more of ``tokens``.

        Returns:
            The ranks, ascending, and the work done in budget units.
        """
        if need <= 0:
            return [], 0  # an empty description is like nothing (and shares no token)
        listed: Counter[int] = Counter()
        slices: list[int] = []  # slices[k]: leaders whose count from bitsets has bit k set
        work = 0
        for token in tokens:
            ranks = self._lists.get(token)
            if ranks is not None:
                listed.update(ranks)
                work += len(ranks)
                continue
            bits = self._bits.get(token)
            if bits is not None:
                work += 1 + bits.bit_length() // _LEADERS_PER_UNIT
                _add_sliced(slices, bits)
        found = set(_ranks(_at_least(slices, need) >> lowest, lowest))
        if listed:
            found.update(_made_up(listed, slices, need, lowest))
        return sorted(found), work


def _made_up(listed: Counter[int], slices: list[int], need: int, lowest: int) -> list[int]:
    """Listed leaders from ``lowest`` on whose listed and bitset counts reach ``need``."""
    most = max(listed.values())
    out = [r for r, n in listed.items() if n >= need and r >= lowest] if most >= need else []
    if not slices:
        return out
    # The others lack ``need - count``: only a leader whose bitset count is at least the
    # smallest shortfall can make it up. Visit those, or the listed ones, whichever are fewer.
    if most >= need:
        most = max((n for n in listed.values() if n < need), default=0)
    possible = _at_least(slices, need - most) >> lowest if most else 0
    if not possible:
        return out
    shortfalls = _Shortfalls(slices)
    if possible.bit_count() < len(listed):
        pairs: Iterable[tuple[int, int]] = (
            (rank, listed.get(rank, 0)) for rank in _ranks(possible, lowest)
        )
    else:
        pairs = ((r, n) for r, n in listed.items() if r >= lowest)
    out += [r for r, n in pairs if 0 < n < need and shortfalls.covers(r, need - n)]
    return out


class _Shortfalls:
    """Whether a leader's bitset count reaches a number, read as bytes (no shift per leader)."""

    def __init__(self, slices: list[int]) -> None:
        self._slices = slices
        self._masks: dict[int, bytes] = {}

    def covers(self, rank: int, shortfall: int) -> bool:
        mask = self._masks.get(shortfall)
        if mask is None:
            bits = _at_least(self._slices, shortfall)
            mask = self._masks[shortfall] = bits.to_bytes(bits.bit_length() // 8 + 1, "little")
        byte = rank >> 3
        return byte < len(mask) and bool(mask[byte] >> (rank & 7) & 1)


def _ranks(bits: int, offset: int) -> Iterator[int]:
    """The set bits of ``bits``, lowest first, plus ``offset``."""
    while bits:
        low = bits & -bits
        yield low.bit_length() - 1 + offset
        bits ^= low


def _add_sliced(slices: list[int], bits: int) -> None:
    """Add one to the count of every leader in ``bits`` (a ripple-carry add, slice by slice)."""
    for k, value in enumerate(slices):
        slices[k] = value ^ bits
        bits &= value
        if not bits:
            return
    slices.append(bits)


def _at_least(slices: Sequence[int], need: int) -> int:
    """Leaders whose sliced count is at least ``need`` (> 0), as a bitset."""
    if need >> len(slices):
        return 0  # more than the slices can count
    above, equal = 0, -1  # -1: every bit set (equal so far, from the top slice down)
    for k in reversed(range(len(slices))):
        if need >> k & 1:
            equal &= slices[k]
        else:
            above |= equal & slices[k]
            equal &= ~slices[k]
    return above | equal


def cluster_sets(
    sets: Sequence[frozenset[str]], *, threshold: float, budget: int
) -> tuple[list[Cluster], bool]:
    """Leader clustering of token sets at Jaccard ``threshold`` (see the module docstring).

    Returns:
        The groups of two or more (ordered by their first member) and whether the budget
        ran out first (records after that point are left ungrouped).
    """
    floor = threshold - 1e-9  # 0.6 * 5 must be 3, not 3.0000000000000004
    frequency = Counter(token for record in sets for token in record)
    # The global order, rarest first (ties by the token), as one number per token.
    order = {t: k for k, t in enumerate(sorted(frequency, key=lambda t: (frequency[t], t)))}
    index = _Leaders(len(sets))
    leaders: list[int] = []  # rank -> record
    sizes: list[int] = []  # rank -> size, ascending
    groups: dict[int, list[tuple[int, float]]] = {}
    work = 0
    for i in sorted(range(len(sets)), key=lambda r: (len(sets[r]), r)):
        size = len(sets[i])
        ordered = sorted(sets[i], key=order.__getitem__)
        least = math.ceil(threshold * size - 1e-9)  # overlap with a partner no larger
        need = min(_SHARED_PREFIX_TOKENS, least)
        lowest = bisect.bisect_left(sizes, floor * size)  # shorter leaders cannot reach it
        ranks, spent = index.sharing(ordered[: size - least + need], need, lowest)
        work += spent + len(ranks)
        best, best_score = -1, 0.0
        for rank in ranks:
            j = leaders[rank]
            common = len(sets[j] & sets[i])
            score = common / (len(sets[j]) + size - common)
            if score >= floor and (score, -j) > (best_score, -best):
                best, best_score = j, score
        if work > budget:
            return _clusters(groups), True
        if best >= 0:
            groups[best].append((i, best_score))
            continue
        groups[i] = [(i, 1.0)]
        rank = len(leaders)
        leaders.append(i)
        sizes.append(size)
        # Later probes are no smaller: the overlap they need is at least 2t/(1+t) of this size.
        alpha = math.ceil(2 * floor / (1 + floor) * size - 1e-9)
        for token in ordered[: size - alpha + min(_SHARED_PREFIX_TOKENS, alpha)]:
            index.add(token, rank)
    return _clusters(groups), False


def _clusters(groups: dict[int, list[tuple[int, float]]]) -> list[Cluster]:
    found = [
        Cluster(tuple(sorted(i for i, _ in group)), min(score for _, score in group))
        for group in groups.values()
        if len(group) > 1
    ]
    return sorted(found, key=lambda c: c.members)

"""The search index's storage and its early-stopping top-k retrieval.

Postings, doc lists and the name trigram index are flat :mod:`array` arrays (a few bytes an
entry, where dicts of lists or dicts held about a hundred). :func:`top_k` is Fagin's
threshold algorithm over impact-ordered postings; it returns exactly what scoring every
matching skill returns. See docs/search.md, "Top-k retrieval".
"""

from __future__ import annotations

import bisect
import heapq
from array import array
from collections import defaultdict
from collections.abc import Iterable, Sequence
from itertools import compress

__all__ = ["PROBE", "TIER_STEP", "DocLists", "NameGrams", "Postings", "Ranked", "top_k"]

# BM25 per query term is below idf * (k1 + 1) (< 50 even for a billion skills), times at most
# 64 terms: a tier step of a million can never be bridged by BM25.
TIER_STEP = 1_000_000.0
# What scoring one skill on one term costs (a bisection), in postings summed by the
# exhaustive path (a dict update each); measured at about 8.
PROBE = 8
# (doc, score, tier)
Ranked = tuple[int, float, int]


class DocLists:
    """Key -> doc numbers, in two flat arrays: a dict of lists held about 100 bytes a key."""

    def __init__(self, table: dict[str, list[int]]) -> None:
        self._ids = dict(zip(table, range(len(table)), strict=True))
        self._start, self._docs = array("i", [0]), array("i")
        for docs in table.values():
            self._docs.extend(docs)
            self._start.append(len(self._docs))

    def size(self, key: str) -> int:
        at = self._ids.get(key)
        return 0 if at is None else self._start[at + 1] - self._start[at]

    def get(self, key: str) -> Sequence[int]:
        at = self._ids.get(key)
        return () if at is None else self._docs[self._start[at] : self._start[at + 1]]


class NameGrams:
    """Which names contain a string: candidates from a trigram index, checked by ``in``.

    A cost in proportion to the rarest trigram's names, not to every name (a scan of all
    names joined took 0.7 ms at 100,000 skills).
    """

    def __init__(self, keys: list[str]) -> None:
        self._keys = keys
        grams: dict[str, list[int]] = defaultdict(list)
        ends: dict[str, list[int]] = defaultdict(list)
        for doc, key in enumerate(keys):
            for gram in {key[i : i + 3] for i in range(len(key) - 2)}:
                grams[gram].append(doc)
            ends[key[-2:]].append(doc)
        self._grams = {gram: array("i", docs) for gram, docs in grams.items()}
        self._ends = {end: array("i", docs) for end, docs in ends.items()}
        # Two-character strings: found as the start of a trigram, or at a name's end.
        self._by_prefix: dict[str, list[str]] = defaultdict(list)
        for gram in self._grams:
            self._by_prefix[gram[:2]].append(gram)

    def containing(self, key: str, cap: int | None) -> set[int] | None:
        """Docs whose name key contains ``key``; ``None`` past ``cap`` candidates."""
        if len(key) < 2:  # one letter is inside nearly every name
            return set()
        if len(key) == 2:  # every candidate matches: each list holds the key
            lists = [self._grams[gram] for gram in self._by_prefix.get(key, ())]
            lists.append(self._ends.get(key, array("i")))
            if cap is not None and sum(map(len, lists)) > cap:
                return None
            return set().union(*lists)
        shortest = min((self._grams.get(key[i : i + 3], ()) for i in range(len(key) - 2)), key=len)
        if cap is not None and len(shortest) > cap:
            return None
        keys = self._keys
        return {doc for doc in shortest if key in keys[doc]}


class Postings:
    """Every token's BM25F term scores, in flat arrays, by doc number and by impact.

    Token ``t`` (``ids[token]``) owns positions ``start[t]:start[t + 1]`` of ``docs`` and
    ``scores`` (ascending doc numbers: random access by bisection) and of ``ranked`` (the same
    docs by descending score, equal scores by doc number), and runs
    ``run_start[t]:run_start[t + 1]`` of ``runs``: the position in ``ranked`` where each run
    of equal scores starts, with its score in ``run_scores``. A few bytes a posting, where a
    dict of dicts took about 150.
    """

    def __init__(self, table: dict[str, dict[int, float]]) -> None:
        self.ids: dict[str, int] = dict(zip(table, range(len(table)), strict=True))
        self.start, self.run_start = array("i", [0]), array("i", [0])
        self.docs, self.ranked, self.runs = array("i"), array("i"), array("i")
        self.scores, self.run_scores = array("d"), array("d")
        docs, scores, ranked, runs, run_scores = (
            self.docs,
            self.scores,
            self.ranked,
            self.runs,
            self.run_scores,
        )
        for token in self.ids:
            posting = table.pop(token)  # freed as it goes: the build peaks lower
            base = len(docs)
            docs.extend(posting)  # built in doc order
            values = posting.values()
            scores.extend(values)
            if len(posting) == 1 or min(values) == max(values):
                ranked.extend(posting)
                runs.append(base)
                run_scores.append(scores[base])
            else:  # a stable sort keeps equal scores in doc order
                order = sorted(posting, key=posting.__getitem__, reverse=True)
                ranked.extend(order)
                previous = -1.0
                for offset, doc in enumerate(order):
                    if (score := posting[doc]) != previous:
                        runs.append(base + offset)
                        run_scores.append(score)
                        previous = score
            self.start.append(len(docs))
            self.run_start.append(len(runs))

    def length(self, term: int) -> int:
        return self.start[term + 1] - self.start[term]

    def items(self, term: int) -> Iterable[tuple[int, float]]:
        lo, hi = self.start[term], self.start[term + 1]
        return zip(self.docs[lo:hi], self.scores[lo:hi], strict=True)

    def bm25(self, terms: list[int], count: int) -> dict[int, float]:
        """Doc -> BM25 score, for the docs holding any of ``terms``, summed in their order."""
        if len(terms) <= 3:  # copy the longest list in C, add the others into it
            scores = dict(self.items(terms[0])) if terms else {}
            get = scores.get
            for term in terms[1:]:
                for doc, weight in self.items(term):
                    scores[doc] = get(doc, 0.0) + weight
            return scores
        totals = [0.0] * count  # many lists: a flat list is the fastest accumulator
        for term in terms:
            for doc, weight in self.items(term):
                totals[doc] += weight
        if sum(map(self.length, terms)) < count // 4:
            docs = self.docs
            touched = set().union(*(docs[self.start[t] : self.start[t + 1]] for t in terms))
            return dict(zip(touched, map(totals.__getitem__, touched), strict=True))
        # Most docs touched: picking the non-zero totals out of the flat list is cheaper.
        return dict(zip(compress(range(len(totals)), totals), filter(None, totals), strict=True))

    def bounds(self, term: int, position: int) -> tuple[float, float]:
        """The score at ``position`` of ``term``'s impact order, and the next lower one (or 0)."""
        end = self.run_start[term + 1]
        run = bisect.bisect_right(self.runs, position, self.run_start[term], end) - 1
        return self.run_scores[run], self.run_scores[run + 1] if run + 1 < end else 0.0


def top_k(
    postings: Postings,
    terms: list[int],
    tiers: dict[int, int],
    phrase: str | None,
    descriptions: list[str],
    limit: int,
    budget: int,
) -> list[Ranked] | None:
    """The ``limit`` best docs, read in impact order until no unread doc can reach them.

    Fagin's threshold algorithm: read every term's postings best first, a batch at a time;
    score each new doc exactly (its terms by bisection, summed in the exhaustive path's
    order, so the floats are the same); stop once the ``limit``-th best beats every doc not
    yet read. ``None`` once ``budget`` is spent (a posting read costs 1, a skill scored
    ``PROBE`` a term): then summing every posting is cheaper.
    """
    docs, scores, ranked = postings.docs, postings.scores, postings.ranked
    spans = [(postings.start[t], postings.start[t + 1]) for t in terms]
    seen: dict[int, tuple[float, int]] = {}
    best: list[tuple[float, int]] = []  # min-heap of (score, -doc): best[0] is the limit-th

    def offer(doc: int, tier: int) -> None:
        total = 0.0
        for lo, hi in spans:
            at = bisect.bisect_left(docs, doc, lo, hi)
            if at < hi and docs[at] == doc:
                total += scores[at]
        score = tier * TIER_STEP + total if tier else total
        seen[doc] = (score, tier)
        if len(best) < limit:
            heapq.heappush(best, (score, -doc))
        elif (score, -doc) > best[0]:
            heapq.heapreplace(best, (score, -doc))

    probe = PROBE * max(len(terms), 1)
    budget -= probe * len(tiers)
    if budget < 0:
        return None
    for doc, tier in tiers.items():
        offer(doc, tier)
    cursors = [lo for lo, _ in spans]
    batch = max(limit, 8)
    while True:
        for i, (_, hi) in enumerate(spans):
            lo, cursors[i] = cursors[i], min(hi, cursors[i] + batch)
            fresh = [doc for doc in ranked[lo : cursors[i]] if doc not in seen]
            budget -= cursors[i] - lo + probe * len(fresh)
            if budget < 0:
                return None
            for doc in fresh:
                offer(doc, 1 if phrase is not None and phrase in descriptions[doc] else 0)
        live = [
            (*postings.bounds(term, at), ranked[at])
            for term, at, (_, hi) in zip(terms, cursors, spans, strict=True)
            if at < hi
        ]
        if not live or (len(best) == limit and _settled(best[0], live, lazy=phrase is not None)):
            break
        batch *= 2
    return [(-neg, score, seen[-neg][1]) for score, neg in sorted(best, reverse=True)]


def _settled(kth: tuple[float, int], live: list[tuple[float, float, int]], *, lazy: bool) -> bool:
    """Whether no unread doc can rank above ``kth``, the ``limit``-th best (score, -doc).

    ``live`` holds, per unfinished term, the score at its cursor, the next lower score (or
    0) and the doc at its cursor. An unread doc either sits in the cursor's run of every
    term (then it scores at most the cursors' sum, and its number is at least every cursor
    doc's, which decides a tie), or falls below the cursor's run in some term (then it scores
    at most the sum with that term's next lower score). Float addition is monotonic, so these
    sums bound the exact sums; a lazily checked phrase may still lift an unread doc a tier.
    """
    kth_score, kth_doc = kth[0], -kth[1]
    top = 0.0
    for score, _, _ in live:
        top += score
    drop = 0.0
    for i in range(len(live)):
        total = 0.0
        for j, (score, lower, _) in enumerate(live):
            total += lower if i == j else score
        drop = max(drop, total)
    if lazy:
        top, drop = TIER_STEP + top, TIER_STEP + drop
    if drop >= kth_score:
        return False
    return top < kth_score or (top == kth_score and max(doc for _, _, doc in live) > kth_doc)

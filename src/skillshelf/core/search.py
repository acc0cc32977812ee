"""Rank skills against a free-text query, and suggest names for typos.

Text in any script is split by :func:`skillshelf.core.words.split_words` (CJK runs as
overlapping bigrams). A skill's best tier adds a constant no BM25F score can bridge; BM25F
orders skills within a tier:

1. ``"exact name"``: the query is the name (case, spaces, ``_`` and ``-`` are ignored).
2. ``"trigger phrase"``: the query is, or contains as whole words, one of the skill's triggers.
3. ``"name contains"``: the name contains the query, or the query contains the name's words.
4. ``"description"``: the description contains the whole query as a phrase (whole words).
5. ``"bm25"``: BM25F over name (x3), triggers (x2), description (x1) and tags (x1, each token
   once), saturated once per word, so neither a tag nor a repeated word outweighs relevance.

Equal scores are ordered by name, whatever the input order.
"""

from __future__ import annotations

import difflib
import functools
import heapq
import math
import typing
from collections import Counter, defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import compress, filterfalse
from typing import Protocol

from skillshelf.core.postings import PROBE, TIER_STEP, DocLists, NameGrams, Postings, Ranked, top_k
from skillshelf.core.words import split_words
from skillshelf.errors import UsageError

__all__ = ["SearchHit", "SearchIndex", "Searchable", "closest_names"]

_K1 = 1.2
# BM25F field weights (descriptions weigh 1) and length normalisation per field. A tag counts
# once per skill however often tags repeat it, and weighs no more than a description word: one
# generic tag ("Writing") cannot outrank a description about the task.
_NAME_WEIGHT, _TRIGGER_WEIGHT, _TAG_WEIGHT = 3.0, 2.0, 1.0
_NAME_B, _TRIGGER_B, _DESCRIPTION_B = 0.5, 0.5, 0.75
# Long queries (a pasted paragraph) cost time but add no ranking signal past this many words.
_MAX_QUERY_WORDS = 64
# CJK text has no spaces to cut at: a pasted page is one "word" until it is split. No query
# needs more characters than this for 64 words, so longer ones are cut before splitting.
_MAX_QUERY_CHARS = 4096

# closest_names: difflib ratio plus a bonus, kept when at least _MIN_SIMILARITY.
_PREFIX_BONUS, _SUBSTRING_BONUS, _MIN_SIMILARITY = 0.3, 0.2, 0.6

# Joins a description's words so a phrase check is one substring search on whole words.
_SEP = "\x1f"
_STOP_WORDS = frozenset(
    (  # noqa: SIM905 - a long word list reads best as one string
        "a an and are as at be by can do does for from how i in into is it me my of on or "
        "our please so that the their this to use using via was we what when where which "
        "with you your"
    ).split()
)


@dataclass(frozen=True, slots=True)
class SearchHit:
    """One ranked result.

    Attributes:
        name: The skill's name.
        score: Tier constant plus BM25F; only meaningful relative to other hits of one search.
        description: The full description (callers truncate for display).
        reason: Why it matched: ``"exact name"``, ``"trigger phrase"``, ``"name contains"``,
            ``"description"`` or ``"bm25"``.
    """

    name: str
    score: float
    description: str
    reason: str


@dataclass(frozen=True, slots=True)
class _Fields:
    """A skill's BM25F tokens: counts per text field, and its set of tag tokens."""

    name: Counter[str]
    triggers: Counter[str]
    description: Counter[str]
    tags: set[str]

    def tokens(self) -> set[str]:
        return self.tags.union(self.name, self.triggers, self.description)


_NO_TOKENS: Counter[str] = Counter()  # shared, never modified: most skills declare no triggers


class Searchable(Protocol):
    """What :class:`SearchIndex` needs from a skill manifest."""

    @property
    def name(self) -> str: ...
    @property
    def description(self) -> str: ...
    @property
    def triggers(self) -> tuple[str, ...]: ...
    @property
    def tags(self) -> tuple[str, ...]: ...


@functools.lru_cache(maxsize=65_536)
def _stem(word: str) -> str:
    """Strip one common English suffix so "parses", "parsing" and "parsed" meet."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    for suffix, keep in (("ing", 4), ("ed", 3)):
        if word.endswith(suffix) and len(word) - len(suffix) >= keep and not word.endswith("eed"):
            stem = word[: -len(suffix)]
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in "lsz":  # running -> run
                stem = stem[:-1]
            return stem
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        word = word[:-1]
    if len(word) > 4 and word.endswith("e"):  # parse -> pars, like parsing
        word = word[:-1]
    return word


def _stems(words: list[str]) -> list[str]:
    """BM25 tokens of ``_words`` output, for queries and skills alike: stop words dropped."""
    return list(map(_stem, filterfalse(_STOP_WORDS.__contains__, words)))


class SearchIndex:
    """An immutable index over skills, built once and searched many times.

    A search costs time in proportion to the postings it reads, not to how many skills match:
    each word's postings are kept in impact order, and the best ``limit`` skills are picked
    by a threshold algorithm that stops once no unread skill can reach them. The result is
    exactly the exhaustive ranking's (same skills, scores and order).

    Args:
        items: The skills to index (anything with name, description, triggers and tags).
    """

    def __init__(self, items: Iterable[Searchable]) -> None:
        # Sorted, doc numbers follow names: scores, and so result order, ignore input order.
        self._items = sorted(items, key=lambda i: (i.name, i.description, i.triggers, i.tags))
        tables: _Tables = (defaultdict(list), defaultdict(list), defaultdict(list))
        # Each description's words joined by _SEP, for whole-word phrase checks in any script.
        self._descriptions: list[str] = []
        self._name_keys: list[str] = []
        fields = [self._index_item(doc, item, tables) for doc, item in enumerate(self._items)]
        by_name, by_trigger, by_word = tables
        for table in (by_name, by_trigger):
            table.pop("", None)  # all punctuation or stop words: matches nothing
        self._name_spans = {key.count("-") + 1 for key in by_name}
        self._trigger_spans = {key.count("-") + 1 for key in by_trigger}
        self._by_name, self._by_trigger = DocLists(by_name), DocLists(by_trigger)
        self._description_index = DocLists(by_word)
        self._names = NameGrams(self._name_keys)
        self._postings = Postings(_bm25f_postings(fields))

    def _index_item(self, doc: int, item: Searchable, tables: _Tables) -> _Fields:
        """Index ``item``'s exact-match keys; return its BM25F term counts per field."""
        by_name, by_trigger, by_word = tables
        name_words = split_words(item.name)
        self._name_keys.append("-".join(name_words))
        by_name[self._name_keys[-1]].append(doc)
        description_words = split_words(item.description)
        self._descriptions.append(_SEP + _SEP.join(description_words) + _SEP)
        for word in set(description_words):
            by_word[word].append(doc)
        triggers: list[str] = []
        for trigger in item.triggers:
            trigger_words = split_words(trigger)
            if trigger_tokens := _stems(trigger_words):  # "how to" alone would match anything
                by_trigger["-".join(trigger_words)].append(doc)
                triggers += trigger_tokens
        tags = {token for tag in item.tags for token in _stems(split_words(tag))}
        return _Fields(
            Counter(_stems(name_words)),
            Counter(triggers) if triggers else _NO_TOKENS,
            Counter(_stems(description_words)),
            tags,
        )

    def __len__(self) -> int:
        return len(self._items)

    def search(self, query: str, *, limit: int = 10, exhaustive: bool = False) -> list[SearchHit]:
        """Rank the indexed skills against ``query``, best first.

        Only skills that match somehow are returned; an empty or whitespace query matches none.
        Queries longer than 64 words (a CJK bigram counts as a word) are cut to their
        first 64.

        Args:
            query: Free text, in any script.
            limit: How many hits at most.
            exhaustive: Score every matching skill instead of stopping early (the reference
                the fast path is tested against; the results are the same).

        Raises:
            UsageError: ``limit`` is below 1.
        """
        if limit < 1:
            raise UsageError(f"limit must be at least 1, got {limit}")
        query = " ".join(query.split()[:_MAX_QUERY_WORDS])[:_MAX_QUERY_CHARS]
        words = split_words(query)[:_MAX_QUERY_WORDS]
        tokens = list(dict.fromkeys(_stems(words)))
        postings = self._postings
        # Summing order depends only on the query and the corpus (longest postings first,
        # then query order), so every path and every build gives the same floats.
        terms = [postings.ids[token] for token in tokens if token in postings.ids]
        terms.sort(key=postings.length, reverse=True)
        ranked = None
        # The exhaustive path costs about one unit a posting of the query's terms; the
        # threshold algorithm gets that budget, scoring a skill costs PROBE units a term.
        budget = max(sum(map(postings.length, terms)), PROBE * _EAGER_TIER_DOCS)
        if not exhaustive and (tiers := self._tiers(words, tokens, cap=budget)):
            doc_tiers, phrase = tiers
            ranked = top_k(postings, terms, doc_tiers, phrase, self._descriptions, limit, budget)
        if ranked is None:  # a feature that rules out stopping early: score every match
            ranked = self._exhaustive(terms, self._tiers(words, tokens, cap=None), limit)
        items = self._items
        return [
            SearchHit(items[doc].name, score, items[doc].description, _REASONS[tier])
            for doc, score, tier in ranked
        ]

    @typing.overload
    def _tiers(self, words: list[str], tokens: list[str], *, cap: int) -> _Tiers | None: ...
    @typing.overload
    def _tiers(self, words: list[str], tokens: list[str], *, cap: None) -> _Tiers: ...
    def _tiers(self, words: list[str], tokens: list[str], *, cap: int | None) -> _Tiers | None:
        """Doc -> its strongest tier, and the description phrase when it is checked lazily.

        ``None`` when more than ``cap`` skills would have to be checked or scored one by one.
        """
        tiers: dict[int, int] = {}
        named = self._names.containing("-".join(words), cap)
        phrase, described = self._description_phrase(words, tokens, cap)
        if named is None:
            return None
        for docs, tier in (  # strongest first; a doc keeps its first (strongest) tier
            (self._by_name.get("-".join(words)), 4),
            (_window_matches(words, self._by_trigger, self._trigger_spans), 3),
            (_window_matches(words, self._by_name, self._name_spans) | named, 2),
            (described, 1),
        ):
            for doc in docs:
                tiers.setdefault(doc, tier)
        if cap is not None and len(tiers) > cap:
            return None
        return tiers, phrase

    def _description_phrase(
        self, words: list[str], tokens: list[str], cap: int | None
    ) -> tuple[str | None, Iterable[int]]:
        """The docs whose description holds ``words`` in a row, or the phrase to check lazily.

        Lazily (when each word is in more than ``cap`` descriptions), the phrase is returned
        for the threshold algorithm to check on the skills it meets; every such skill is in
        the postings of a query token, so none is missed.
        """
        if not tokens:  # only stop words: a phrase like "how to" is no evidence
            return None, ()
        index = self._description_index
        # A description holding the phrase holds each of its words: check the rarest's docs.
        rarest = min(set(words), key=index.size)
        phrase = _SEP + _SEP.join(words) + _SEP
        if cap is not None and index.size(rarest) > _EAGER_TIER_DOCS:
            return phrase, ()
        shortest = index.get(rarest)
        if len(words) == 1:
            return None, shortest
        texts = self._descriptions
        return None, [doc for doc in shortest if phrase in texts[doc]]

    def _exhaustive(self, terms: list[int], tiers: _Tiers, limit: int) -> list[Ranked]:
        """Score every doc that matches: the reference the threshold algorithm must equal."""
        scores = self._postings.bm25(terms, len(self._items))
        doc_tiers = tiers[0]
        for doc, tier in doc_tiers.items():
            scores[doc] = tier * TIER_STEP + scores.get(doc, 0.0)
        return [(doc, scores[doc], doc_tiers.get(doc, 0)) for doc in _best(scores, limit)]


# (doc -> tier, the lazily checked description phrase or None)
_Tiers = tuple[dict[int, int], "str | None"]
_REASONS = ("bm25", "description", "name contains", "trigger phrase", "exact name")
# Tier sets up to this size are always scored doc by doc (larger ones when the query's terms
# have many postings); a description phrase whose rarest word is in more descriptions than
# this is checked lazily, on the skills the threshold algorithm meets.
_EAGER_TIER_DOCS = 512


# Index-time tables: name key, trigger key and description word -> doc numbers.
_Tables = tuple[dict[str, list[int]], dict[str, list[int]], dict[str, list[int]]]


def _window_matches(words: list[str], table: DocLists, spans: set[int]) -> set[int]:
    """Docs whose key (words joined by ``-``) is a run of consecutive query words."""
    found: set[int] = set()
    for span in spans:
        for start in range(len(words) - span + 1):
            found.update(table.get("-".join(words[start : start + span])))
    return found


def _best(scores: dict[int, float], limit: int) -> list[int]:
    """The ``limit`` best docs, best first; equal scores by doc number, which is name order."""
    chosen: Iterable[int] = scores
    if len(scores) > limit:  # only scores at or above the limit-th best, picked out in C
        cutoff = heapq.nlargest(limit, scores.values())[-1]
        chosen = compress(scores, map(cutoff.__le__, scores.values()))
    return sorted(chosen, key=lambda doc: (-scores[doc], doc))[:limit]


def _bm25f_postings(docs: list[_Fields]) -> dict[str, dict[int, float]]:
    """Token -> {doc: BM25F term score}; the corpus never changes, so the scores are final.

    BM25F (Robertson, Zaragoza & Taylor 2004): each field's term count is length-normalised
    against that field's average length and weighted, the weighted sum is saturated once by
    ``k1`` — so a word repeated across fields or stuffed into a description gains little —
    and multiplied by the word's idf over skills.
    """
    count = len(docs)
    lengths = [(d.name.total(), d.triggers.total(), d.description.total()) for d in docs]
    # Average over the skills that have the field: triggers are rare, and an average diluted
    # by empty fields would read every declared trigger list as unusually long.
    averages = [_average_length(column) for column in zip(*lengths, strict=True)] or [1.0] * 3
    frequency: Counter[str] = Counter()
    for fields in docs:
        frequency.update(fields.tokens())
    # idf * (k1 + 1), the per-token factor of every term score.
    scale = {
        token: math.log(1.0 + (count - seen + 0.5) / (seen + 0.5)) * (_K1 + 1.0)
        for token, seen in frequency.items()
    }
    postings: dict[str, dict[int, float]] = {token: {} for token in frequency}
    for doc, (fields, (name_len, trigger_len, description_len)) in enumerate(
        zip(docs, lengths, strict=True)
    ):
        norm = 1.0 / (1.0 - _DESCRIPTION_B + _DESCRIPTION_B * description_len / averages[2])
        # Most tokens are description words: start from them, add the other fields' few.
        weighted = {token: tf * norm for token, tf in fields.description.items()}
        for terms, weight, b, length, average in (
            (fields.name, _NAME_WEIGHT, _NAME_B, name_len, averages[0]),
            (fields.triggers, _TRIGGER_WEIGHT, _TRIGGER_B, trigger_len, averages[1]),
        ):
            norm = weight / (1.0 - b + b * length / average)
            for token, tf in terms.items():
                weighted[token] = weighted.get(token, 0.0) + tf * norm
        for token in fields.tags:
            weighted[token] = weighted.get(token, 0.0) + _TAG_WEIGHT
        for token, pseudo_tf in weighted.items():
            postings[token][doc] = scale[token] * pseudo_tf / (pseudo_tf + _K1)
    return postings


def _average_length(lengths: Iterable[int]) -> float:
    present = [length for length in lengths if length]
    return max(sum(present) / len(present), 1.0) if present else 1.0


def closest_names(name: str, names: Iterable[str], *, limit: int = 3) -> list[str]:
    """Best "did you mean" suggestions for ``name`` among ``names``, best first.

    Similarity is difflib's ratio (case-insensitive), raised for prefix and substring matches;
    weak matches are dropped. Equal scores are ordered by name, so results are deterministic.

    Raises:
        UsageError: ``limit`` is below 1.
    """
    if limit < 1:
        raise UsageError(f"limit must be at least 1, got {limit}")
    wanted = name.strip().casefold()
    if not wanted:
        return []
    matcher = difflib.SequenceMatcher(autojunk=False)
    matcher.set_seq2(wanted)  # difflib caches details about seq2
    scored = []
    for candidate in set(names):
        folded = candidate.casefold()
        bonus = 0.0
        if min(len(folded), len(wanted)) >= 2:  # "a" is a prefix of too much to mean anything
            if folded.startswith(wanted) or wanted.startswith(folded):
                bonus = _PREFIX_BONUS
            elif wanted in folded or folded in wanted:
                bonus = _SUBSTRING_BONUS
        matcher.set_seq1(folded)
        # The quick ratios are cheap upper bounds of ratio(): hopeless names stop early.
        if (
            matcher.real_quick_ratio() + bonus >= _MIN_SIMILARITY
            and matcher.quick_ratio() + bonus >= _MIN_SIMILARITY
            and (score := matcher.ratio() + bonus) >= _MIN_SIMILARITY
        ):
            scored.append((-score, candidate))
    return [candidate for _, candidate in heapq.nsmallest(limit, scored)]

"""On the shipped skills, early-stopping search returns exactly the exhaustive ranking."""

from __future__ import annotations

import json
import random

import pytest

from corpus_paths import SEARCH_QUERIES, SEARCH_ROOTS
from skillshelf.core.search import SearchIndex
from skillshelf.repository import Repository

QUERIES = SEARCH_QUERIES
ROOTS = SEARCH_ROOTS


@pytest.fixture(scope="module")
def index() -> SearchIndex:
    return SearchIndex(Repository(list(ROOTS), cache_dir=False).skills)


def _queries() -> list[str]:
    labelled = [json.loads(line)["query"] for line in QUERIES.read_text("utf-8").splitlines()]
    rng = random.Random(19)
    words = [word for query in labelled for word in query.split()]
    mixes = [" ".join(rng.choices(words, k=rng.randint(1, 5))) for _ in range(150)]
    return [*labelled, *mixes, "", "skill", "pdf", "会议", "的", "\x00\x1f", "a" * 300]


@pytest.mark.parametrize("limit", [1, 3, 10, 40])
def test_labelled_and_random_queries_rank_as_the_exhaustive_search(
    index: SearchIndex, limit: int
) -> None:
    for query in _queries():
        fast = index.search(query, limit=limit)
        assert fast == index.search(query, limit=limit, exhaustive=True), query

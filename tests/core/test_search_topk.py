"""Top-k search reads postings best first and stops early, yet equals the exhaustive ranking."""

from __future__ import annotations

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from search_stub import Skill
from skillshelf.core import postings
from skillshelf.core.search import SearchIndex

_COMMON = [
    "pdf",
    "excel",
    "chart",
    "review",
    "test",
    "deploy",
    "report",
    "invoice",
    "convert",
    "merge",
    "data",
    "files",
]
_RARE = ["kubernetes", "grafana", "zephyr", "quokka", "marimba", "obsidian", "tundra", "velvet"]
_CJK = ["会议纪要", "翻译", "文档", "表格", "图片", "周报", "数据分析"]
_FILLER = ["the", "a", "for", "with", "when", "user", "asks", "about", "into", "and", "use", "of"]


def _generated(count: int, seed: int) -> list[Skill]:
    """Skills sharing a small vocabulary (many ties, many matches per word) plus a few rare
    words, CJK runs, triggers and tags; every tenth is a "task N" skill of equal length."""
    rng = random.Random(seed)
    skills = []
    for i in range(count):
        if i % 10 == 0:
            description = (
                f"Handles task {i} of the benchmark. Use when the user asks about task {i}."
            )
            skills.append(Skill(f"skill-{i:05d}", description))
            continue
        vocabulary = _COMMON * 4 + _FILLER * 3 + _RARE + _CJK
        words = rng.choices(vocabulary, k=rng.randint(2, 30))
        triggers = tuple(" ".join(rng.sample(_COMMON, 2)) for _ in range(rng.randint(0, 2)))
        tags = tuple(rng.sample(_COMMON + _RARE, rng.randint(0, 2)))
        name = f"{rng.choice(_COMMON + _RARE)}-{rng.choice(_COMMON)}-{i}"
        skills.append(Skill(name, " ".join(words).capitalize() + ".", triggers, tags))
    return skills


def _queries(skills: list[Skill], rng: random.Random) -> list[str]:
    words = [w for skill in skills for w in skill.description.split()]
    names = [skill.name for skill in skills]
    out = ["", "   ", "?!", "zzqqx", "task", "task 7", "skill", "sk", "-", "的", "会议纪要"]
    out += [f"task {rng.randrange(len(skills))}" for _ in range(10)]
    out += [" ".join(rng.choices(words, k=rng.randint(1, 6))) for _ in range(60)]
    out += [f"{rng.choice(_COMMON)} {rng.choice(_RARE)}" for _ in range(20)]  # common + rare
    out += [" ".join(rng.choices(_COMMON + _FILLER, k=30)) for _ in range(5)]
    out += [rng.choice(names) for _ in range(10)]
    out += [rng.choice(names)[: rng.randint(2, 6)] for _ in range(10)]  # part of a name
    out += ["".join(rng.choices(_CJK, k=2)) for _ in range(10)]
    out += [f"请帮我{rng.choice(_CJK)}的{rng.choice(_CJK)} pdf" for _ in range(5)]
    return out


@pytest.fixture(scope="module")
def generated() -> SearchIndex:
    return SearchIndex(_generated(3000, seed=7))


@pytest.mark.parametrize("limit", [1, 3, 10, 50])
def test_top_k_equals_the_exhaustive_ranking_on_a_generated_repository(
    generated: SearchIndex, limit: int
) -> None:
    skills = _generated(3000, seed=7)
    for query in _queries(skills, random.Random(limit)):
        fast = generated.search(query, limit=limit)
        assert fast == generated.search(query, limit=limit, exhaustive=True), query


@settings(max_examples=200, deadline=None)
@given(
    query=st.lists(
        st.sampled_from([*_COMMON, *_RARE, *_CJK, *_FILLER, "task", "7", "skill", "pdf-chart"]),
        max_size=8,
    ).map(" ".join)
    | st.text(max_size=40),
    limit=st.integers(1, 40),
)
def test_any_query_and_limit_give_the_exhaustive_ranking(query: str, limit: int) -> None:
    index = _SMALL
    assert index.search(query, limit=limit) == index.search(query, limit=limit, exhaustive=True)


_SMALL = SearchIndex(_generated(400, seed=3))


def test_equal_scores_keep_name_order_when_the_search_stops_early() -> None:
    index = SearchIndex(_generated(2000, seed=1))
    hits = index.search("task 30", limit=4)
    assert [hit.name for hit in hits] == [
        "skill-00030",
        "skill-00000",
        "skill-00010",
        "skill-00020",
    ]
    assert len({hit.score for hit in hits[1:]}) == 1  # a tie, broken by name


def test_a_query_matching_every_skill_does_not_sum_every_posting(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    index = SearchIndex(
        Skill(f"skill-{i:05d}", f"Handles task {i}. Use when the user asks about task {i}.")
        for i in range(5000)
    )

    def refuse(*_args: object) -> dict[int, float]:
        raise AssertionError("summed every posting")

    monkeypatch.setattr(postings.Postings, "bm25", refuse)
    assert [hit.name for hit in index.search("task 1234", limit=3)] == [
        "skill-01234",
        "skill-00000",
        "skill-00001",
    ]
    assert index.search("task", limit=2)[0].reason == "description"
    assert [hit.name for hit in index.search("user", limit=2)] == ["skill-00000", "skill-00001"]


def test_a_name_part_shared_by_many_names_still_ranks_exactly() -> None:
    # "skill-0" is inside every name: every one is scored (the documented fallback).
    index = SearchIndex(
        Skill(f"skill-{i:05d}", f"Handles task {i}. Use when the user asks about task {i}.")
        for i in range(5000)
    )
    fast = index.search("skill 0", limit=5)
    assert fast == index.search("skill 0", limit=5, exhaustive=True)
    assert [hit.reason for hit in fast] == ["name contains"] * 5
    assert fast[0].name == "skill-00000"  # "task 0" adds its BM25 score

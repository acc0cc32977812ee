"""Benchmark skillshelf.core.search: index build time and search latency percentiles.

Usage: ``PYTHONPATH=src python bench/search.py [--n 10000] [--queries 200] [--seed 0]``.
Prints figures only; it asserts nothing about them.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from skillshelf.core.search import SearchIndex

_ROOTS = (  # noqa: SIM905 - a long word list reads best as one string
    "pdf excel word slide chart image audio video email calendar git docker kube sql csv "
    "json yaml html css react python rust go java test lint format deploy cloud storage "
    "queue cache log metric trace alert secret token auth user team invoice report "
    "budget tax contract translate summarise review search crawl scrape index embed "
    "vector model prompt agent tool form table page print scan sign merge split compress "
    "encrypt backup restore sync upload download schedule remind note task ticket issue "
    "branch commit release version package build"
).split()
_VERBS = (  # noqa: SIM905 - a long word list reads best as one string
    "create edit convert extract parse render generate validate analyse inspect fix "
    "debug optimise migrate refactor document annotate classify filter sort group merge "
    "compare monitor measure plan draft publish share archive import export transform "
    "clean"
).split()
_FILLER = (  # noqa: SIM905 - a long word list reads best as one string
    "the a for with and into from when user asks about files data reports quickly safely "
    "large small many each every new existing local remote team project workflow "
    "pipeline step output input result error warning format style rule check guide "
    "helper support using tools documents records entries values fields columns rows "
    "pages sections"
).split()
_VOCABULARY = _ROOTS + _VERBS + _FILLER


@dataclass(frozen=True, slots=True)
class _Skill:
    name: str
    description: str
    triggers: tuple[str, ...]
    tags: tuple[str, ...]


def make_skills(n: int, rng: random.Random) -> list[_Skill]:
    """``n`` synthetic skills with unique names and ~40-word descriptions."""
    skills = []
    for i in range(n):
        root, verb = rng.choice(_ROOTS), rng.choice(_VERBS)
        name = f"{root}-{verb}-{i}"
        words = [verb, root, *rng.choices(_VOCABULARY, k=38)]
        skills.append(
            _Skill(
                name=name,
                description=" ".join(words).capitalize() + ".",
                triggers=(f"{verb} {root}", f"{root} {rng.choice(_VERBS)}"),
                tags=tuple(rng.sample(_ROOTS, k=2)),
            )
        )
    return skills


def make_queries(skills: list[_Skill], count: int, rng: random.Random) -> list[tuple[str, str]]:
    """``(kind, query)`` pairs: exact names, words, phrases, 30-word queries and misses."""
    makers: list[tuple[str, Callable[[], str]]] = [
        ("exact name", lambda: rng.choice(skills).name),
        ("one word", lambda: rng.choice(_VOCABULARY)),
        ("2-4 words", lambda: " ".join(rng.choices(_VOCABULARY, k=rng.randint(2, 4)))),
        ("phrase", lambda: " ".join(rng.choice(skills).description.split()[:3])),
        ("30 words", lambda: " ".join(rng.choices(_VOCABULARY, k=30))),
        ("miss", lambda: f"zz{rng.randint(0, 10**6)} qq{rng.randint(0, 10**6)}"),
    ]
    return [(kind, make()) for kind, make in (makers[i % len(makers)] for i in range(count))]


def _percentile(samples: list[float], pct: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[pct - 1]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--n", type=int, default=10_000, help="number of synthetic skills")
    parser.add_argument("--queries", type=int, default=200, help="number of queries to time")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()

    rng = random.Random(args.seed)
    skills = make_skills(args.n, rng)
    queries = make_queries(skills, args.queries, rng)

    start = time.perf_counter()
    index = SearchIndex(skills)
    build_ms = (time.perf_counter() - start) * 1000

    timings: dict[str, list[float]] = defaultdict(list)
    hits = 0
    for kind, query in queries:
        start = time.perf_counter()
        results = index.search(query, limit=10)
        timings[kind].append((time.perf_counter() - start) * 1000)
        hits += bool(results)

    every = [ms for samples in timings.values() for ms in samples]
    print(f"skills: {len(index)}  queries: {len(every)}  queries with hits: {hits}")
    print(f"build: {build_ms:.1f} ms")
    print(
        f"search: p50 {_percentile(every, 50):.3f} ms  p95 {_percentile(every, 95):.3f} ms  "
        f"p99 {_percentile(every, 99):.3f} ms  max {max(every):.3f} ms"
    )
    for kind, samples in timings.items():
        print(f"  {kind:<11} p50 {statistics.median(samples):.3f} ms  max {max(samples):.3f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Benchmark skillshelf.core.search at several sizes: build time, index memory, query medians.

Per size (default 100, 1,000, 10,000; ``--large`` adds 100,000) it builds two indexes and
times each kind of query, cycling through ``--queries`` of each, with the early-stopping
search and with ``exhaustive=True`` (every matching skill scored: the ranking before top-k
retrieval), and prints the medians and their growth against the smallest size:

* ``tasks``: skills described like ``bench/hotpaths.py``'s tree ("Handles task N of the
  benchmark. Use when the user asks about task N."), queried with ``task N`` (the worst
  case: "task" is in every description, all with equal scores) and ``task`` alone;
* ``generated``: ~40-word descriptions over a 150-word vocabulary (each word is in about a
  quarter of the skills), queried with exact names, one word, 2-4 words, a description's
  first words, 30 words, misses, and 1-4 words drawn from the labelled queries of
  ``bench/data/search_queries.jsonl`` (a realistic mix).

Build time is the median of ``--builds`` builds; memory is what :mod:`tracemalloc` sees
held by one index. Usage: ``PYTHONPATH=src python bench/search.py [--sizes 100,1000,10000]
[--large] [--queries 60] [--seed 0]``. Prints figures only; it asserts nothing about them.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import random
import statistics
import time
import tracemalloc
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

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


_LABELLED = Path(__file__).resolve().parent / "data" / "search_queries.jsonl"


def make_tasks(n: int) -> list[_Skill]:
    """``bench/hotpaths.py``'s skills: every description has "task" twice, all of one length."""
    return [
        _Skill(
            f"skill-{i:05d}",
            f"Handles task {i} of the benchmark. Use when the user asks about task {i}.",
            (),
            (),
        )
        for i in range(n)
    ]


def labelled_words() -> list[str]:
    lines = _LABELLED.read_text(encoding="utf-8").splitlines()
    return [word for line in lines for word in json.loads(line)["query"].split()]


def _median_us(index: SearchIndex, queries: list[str], *, exhaustive: bool) -> float:
    samples = []
    for query in queries:
        start = time.perf_counter()
        index.search(query, limit=10, exhaustive=exhaustive)
        samples.append(time.perf_counter() - start)
    return statistics.median(samples) * 1e6


def _build(skills: list[_Skill], builds: int) -> tuple[SearchIndex, float, int]:
    times = []
    for _ in range(builds):
        gc.collect()
        start = time.perf_counter()
        SearchIndex(skills)
        times.append(time.perf_counter() - start)
    gc.collect()
    tracemalloc.start()
    before = tracemalloc.get_traced_memory()[0]
    index = SearchIndex(skills)
    held = tracemalloc.get_traced_memory()[0] - before
    tracemalloc.stop()
    return index, statistics.median(times) * 1000, held


def measure(n: int, count: int, seed: int, builds: int) -> dict[str, float]:
    """Medians (µs) per query kind, fast and exhaustive, plus build ms and index bytes."""
    rng = random.Random(seed)
    out: dict[str, float] = {}
    tasks, build_ms, held = _build(make_tasks(n), builds)
    out |= {"build ms (tasks)": build_ms, "index MiB (tasks)": held / 2**20}
    kinds = {
        "task N": [f"task {rng.randrange(n)}" for _ in range(count)],
        "task": ["task"] * count,
    }
    for kind, queries in kinds.items():
        out[f"tasks: {kind}"] = _median_us(tasks, queries, exhaustive=False)
        out[f"tasks: {kind} [exhaustive]"] = _median_us(tasks, queries, exhaustive=True)
    del tasks
    skills = make_skills(n, rng)
    generated, build_ms, held = _build(skills, builds)
    out |= {"build ms (generated)": build_ms, "index MiB (generated)": held / 2**20}
    by_kind: dict[str, list[str]] = {}
    for kind, query in make_queries(skills, count * 6, rng):
        by_kind.setdefault(kind, []).append(query)
    words = labelled_words()
    by_kind["labelled words"] = [
        " ".join(rng.choices(words, k=rng.randint(1, 4))) for _ in range(count)
    ]
    for kind, queries in by_kind.items():
        out[f"generated: {kind}"] = _median_us(generated, queries, exhaustive=False)
        out[f"generated: {kind} [exhaustive]"] = _median_us(generated, queries, exhaustive=True)
    return out


def _cell(label: str, value: float) -> str:
    if label.startswith("index"):
        return f"{value:.1f} MiB"
    if label.startswith("build"):
        return f"{value:.0f} ms"
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.0f} µs"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--sizes", default="100,1000,10000", help="comma-separated skill counts")
    parser.add_argument("--large", action="store_true", help="add 100,000 skills")
    parser.add_argument("--queries", type=int, default=60, help="queries of each kind")
    parser.add_argument("--builds", type=int, default=3, help="index builds timed per size")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    sizes = sorted({int(s) for s in args.sizes.split(",")} | ({100_000} if args.large else set()))
    rows = {n: measure(n, args.queries, args.seed, args.builds) for n in sizes}
    print(
        f"skillshelf search, limit 10, medians (load average {os.getloadavg()[0]:.1f}); "
        "[exhaustive]: every matching skill scored"
    )
    head = "".join(f"{n:>11,}" for n in sizes)
    growth = "".join(f"{'×' + format(n, ','):>9}" for n in sizes[1:])
    print(f"{'':<40}{head}   growth vs {sizes[0]:,}:{growth}")
    for label in rows[sizes[0]]:
        values = [rows[n][label] for n in sizes]
        cells = "".join(f"{_cell(label, v):>11}" for v in values)
        ratios = "".join(f"{v / values[0]:>8.2f}×" for v in values[1:])
        print(f"{label:<40}{cells}{'':17}{ratios}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

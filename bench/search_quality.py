"""Search quality on labelled queries: top-1, top-3 and MRR, overall and per language.

Usage: ``PYTHONPATH=src python bench/search_quality.py [--old REV] [--jieba] [--misses]``.

The queries (``bench/data/search_queries.jsonl``: query, lang, expected) are requests as a user
would type them, each labelled with the skill a careful person would pick, over the skills the
repository ships: ``examples/skills``, ``examples/skills-zh`` and the three collections in
``tests/corpus`` (first root wins a duplicated name, as everywhere).

``--old REV`` adds the scorer of ``src/skillshelf/core/search.py`` at git revision REV (needs
git; e.g. ``9fbf1bc``, the last commit before BM25F and CJK bigrams). ``--jieba`` adds the
current scorer with CJK runs segmented by jieba instead of bigrams (``pip install jieba``).
Prints figures only; ``tests/repository/test_search_quality.py`` holds the floor.
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import subprocess
import sys
import types
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from skillshelf.core import search as search_module
from skillshelf.core import words as words_module
from skillshelf.repository import Repository

Builder = Callable[[list[Any]], Any]
_REPO = Path(__file__).resolve().parent.parent
QUERIES = _REPO / "bench" / "data" / "search_queries.jsonl"
_OPENAI = _REPO / "tests" / "corpus" / "openai-skills" / "skills"
ROOTS = (
    _REPO / "examples" / "skills",
    _REPO / "examples" / "skills-zh",
    _REPO / "tests" / "corpus" / "anthropic-skills" / "skills",
    _REPO / "tests" / "corpus" / "obra-superpowers" / "skills",
    _OPENAI / ".curated",
    _OPENAI / ".experimental",
    _OPENAI / ".system",
)


@dataclass(frozen=True, slots=True)
class Query:
    query: str
    lang: str
    expected: str


@dataclass(frozen=True, slots=True)
class Scores:
    count: int
    top1: float
    top3: float
    mrr: float


def load_queries(path: Path = QUERIES) -> list[Query]:
    """The labelled queries, one JSON object a line."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return [Query(**json.loads(line)) for line in lines if line.strip()]


def score(ranked: list[list[str]], queries: list[Query]) -> Scores:
    """Top-1, top-3 and mean reciprocal rank of each query's expected name in ``ranked``."""
    ranks = [
        names.index(q.expected) + 1 if q.expected in names else 0
        for names, q in zip(ranked, queries, strict=True)
    ]
    return Scores(
        count=len(ranks),
        top1=sum(r == 1 for r in ranks) / len(ranks),
        top3=sum(1 <= r <= 3 for r in ranks) / len(ranks),
        mrr=statistics.fmean(1 / r if r else 0.0 for r in ranks),
    )


def _old_index_class(revision: str) -> Builder:
    """``SearchIndex`` of ``core/search.py`` at a git revision, loaded as a throwaway module."""
    source = subprocess.run(
        ["git", "show", f"{revision}:src/skillshelf/core/search.py"],
        cwd=_REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    module = types.ModuleType(f"old_search_{revision}")
    sys.modules[module.__name__] = module  # dataclasses look their module up
    exec(compile(source, f"search.py@{revision}", "exec"), module.__dict__)
    return module.SearchIndex  # type: ignore[no-any-return]


@contextmanager
def _jieba_words() -> Iterator[None]:
    """Swap CJK bigrams for jieba's segmentation (search-engine mode) inside the block."""
    import jieba

    jieba.setLogLevel(60)
    cjk = re.compile(f"[{words_module._CJK}]+")
    bigrams = words_module.split_words

    def segmented(text: str) -> list[str]:
        out: list[str] = []
        position = 0
        folded = text.casefold()
        for match in cjk.finditer(folded):
            out += bigrams(folded[position : match.start()])
            out += [w for w in jieba.cut_for_search(match[0]) if w.strip()]
            position = match.end()
        return out + bigrams(folded[position:])

    setattr(search_module, "split_words", segmented)  # noqa: B010 - swapped for the block
    try:
        yield
    finally:
        setattr(search_module, "split_words", bigrams)  # noqa: B010


def _rank(build: Builder, skills: list[Any], queries: list[Query]) -> list[list[str]]:
    index = build(skills)
    return [[h.name for h in index.search(q.query, limit=10)] for q in queries]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--old", metavar="REV", help="also measure the scorer at this git revision")
    parser.add_argument("--jieba", action="store_true", help="also measure jieba segmentation")
    parser.add_argument("--misses", action="store_true", help="list queries whose top-1 is wrong")
    args = parser.parse_args()

    queries = load_queries()
    repo = Repository([str(root) for root in ROOTS])
    skills: list[Any] = [skill.manifest for skill in repo]
    variants: list[tuple[str, Builder]] = [("BM25F + CJK bigrams", search_module.SearchIndex)]
    if args.jieba:
        variants.append(("BM25F + jieba", search_module.SearchIndex))
    if args.old:
        variants.append((f"old scorer @{args.old}", _old_index_class(args.old)))

    langs = sorted({q.lang for q in queries})
    print(f"skills: {len(skills)}  queries: {len(queries)} ({', '.join(langs)})")
    print(f"{'scorer':<24} {'set':<4} {'n':>4} {'top-1':>6} {'top-3':>6} {'MRR':>6}")
    for label, build in variants:
        with _jieba_words() if "jieba" in label else _nothing():
            ranked = _rank(build, skills, queries)
        by_lang: dict[str, list[int]] = defaultdict(list)
        for i, q in enumerate(queries):
            by_lang[q.lang].append(i)
        for name, picks in [("all", list(range(len(queries)))), *sorted(by_lang.items())]:
            s = score([ranked[i] for i in picks], [queries[i] for i in picks])
            print(f"{label:<24} {name:<4} {s.count:>4} {s.top1:>6.3f} {s.top3:>6.3f} {s.mrr:>6.3f}")
        if args.misses:
            for names, q in zip(ranked, queries, strict=True):
                if names[:1] != [q.expected]:
                    print(f"    miss [{q.lang}] {q.query!r}: want {q.expected}, got {names[:3]}")
    return 0


@contextmanager
def _nothing() -> Iterator[None]:
    yield


if __name__ == "__main__":
    raise SystemExit(main())

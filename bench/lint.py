"""Benchmark skillshelf lint at catalog scale: the cross-skill checks and a whole repository.

Usage: ``python bench/lint.py [--n 10000] [--runs 5] [--seed 0] [--no-disk]``.

Generates N synthetic skills whose ~40-word descriptions draw content words from a Zipf
distribution over a 6,000-word vocabulary (a few words very common, most rare, as in real
catalogs), with 1% planted near-duplicates (a copy with two words swapped). Times, ``--runs``
times each, reporting the median:

- catalog: :func:`lint_subjects` over names and descriptions only (description, name,
  near-duplicate and look-alike checks), and how many planted pairs it found;
- naive: every description pair compared, on a 1,000-skill sample, scaled by (N/1000)² — what
  the inverted index avoids;
- family: ``--family`` (default 1,000) skills made from one template ("Automate X tasks via
  Rube MCP (Composio)…", as ComposioHQ's collection is) linted on disk with every check: the
  findings (one per group expected) and the time, beside the pairs the old pairwise report
  would have printed (:func:`similar_descriptions`, timed in the same run);
- disk: :func:`lint_repository` on the N skills written to a temporary folder (every check,
  SKILL.md bodies and file lists read), unless ``--no-disk``.

The runs on disk report wall-clock and CPU seconds beside a floor timed in the same run
(every file of every skill read with the stdlib) and the CPU ratio to it: on a shared machine
the ratio is the figure to compare.

Prints figures only; it asserts nothing about them.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from skillshelf.lint import LintReport, LintSubject, lint_repository, lint_subjects
from skillshelf.lint._similar import (
    DEFAULT_SIMILARITY,
    description_tokens,
    similar_descriptions,
)
from skillshelf.repository import Repository
from skillshelf.testing import make_skill

_VOCABULARY_SIZE = 6000
_SYLLABLES = "ka lo mi su re ta no vi pe do ga zu ri be fo la ne xi co mu".split()  # noqa: SIM905
_FRAME = "Use when the user asks to {verb} {obj} files, or wants a report about {obj}."
_VERBS = "convert extract merge validate summarise render audit plan draft index".split()  # noqa: SIM905


def _vocabulary(rng: random.Random) -> list[str]:
    words: set[str] = set()
    while len(words) < _VOCABULARY_SIZE:
        words.add("".join(rng.choices(_SYLLABLES, k=rng.randint(2, 4))))
    return sorted(words)


def make_descriptions(n: int, rng: random.Random) -> tuple[list[str], int]:
    """``n`` descriptions, the last 1% near-copies of earlier ones; returns them and the count."""
    vocabulary = _vocabulary(rng)
    weights = [1 / rank for rank in range(1, len(vocabulary) + 1)]
    planted = n // 100
    descriptions: list[str] = []
    for _ in range(n - planted):
        words = rng.choices(vocabulary, weights=weights, k=28)
        frame = _FRAME.format(verb=rng.choice(_VERBS), obj=rng.choice(vocabulary))
        descriptions.append(" ".join(words).capitalize() + ". " + frame)
    for _ in range(planted):
        words = rng.choice(descriptions).split(" ")
        for _ in range(2):
            words[rng.randrange(len(words))] = rng.choice(vocabulary)
        descriptions.append(" ".join(words))
    return descriptions, planted


def make_names(n: int, rng: random.Random) -> list[str]:
    """``n`` distinct verb-object names (``merge-kalomi-sure``), 1% plural look-alikes."""
    vocabulary = _vocabulary(rng)
    names: set[str] = set()
    while len(names) < n - n // 100:
        names.add(f"{rng.choice(_VERBS)}-{rng.choice(vocabulary)}-{rng.choice(vocabulary)}")
    singular = sorted(names)
    while len(names) < n:
        names.add(rng.choice(singular) + "s")
    return sorted(names)


def _median(runs: int, fn: Callable[[], object]) -> tuple[float, object]:
    seconds, _, result = _timed(runs, fn)
    return seconds, result


def _timed(runs: int, fn: Callable[[], object]) -> tuple[float, float, object]:
    """Median wall-clock and CPU seconds of ``runs`` calls, and the last result."""
    times: list[float] = []
    cpu: list[float] = []
    result: object = None
    for _ in range(runs):
        start, start_cpu = time.perf_counter(), time.process_time()
        result = fn()
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    return statistics.median(times), statistics.median(cpu), result


def _read_every_file(root: Path) -> int:
    """The floor of linting a tree on disk: every file of every skill read with the stdlib."""
    total = 0
    for folder, _, files in os.walk(root):
        for name in files:
            with open(os.path.join(folder, name), "rb") as handle:
                total += len(handle.read().decode("utf-8", errors="replace"))
    return total


def _disk_lines(label: str, repo: Repository, root: Path, runs: int) -> list[str]:
    """``lint_repository`` on a tree beside its read floor, in the same run: wall, CPU, ratio."""
    floor_s, floor_cpu, _ = _timed(runs, lambda: _read_every_file(root))
    seconds, cpu, report = _timed(runs, lambda: lint_repository(repo))
    assert isinstance(report, LintReport)
    return [
        f"{label}: median {seconds:.3f} s wall, {cpu:.3f} s CPU "
        f"= {cpu / floor_cpu:.1f}x the read floor ({floor_s:.3f} s wall, {floor_cpu:.3f} s CPU: "
        "every file of every skill read with the stdlib); notes: "
        f"{list(report.notes)}"
    ]


def _naive(descriptions: list[str], threshold: float) -> int:
    sets = [description_tokens(d) for d in descriptions]
    found = 0
    for i, a in enumerate(sets):
        for b in sets[i + 1 :]:
            shared = len(a & b)
            found += shared / (len(a) + len(b) - shared) >= threshold
    return found


def make_family(n: int, rng: random.Random) -> list[tuple[str, str]]:
    """``n`` (name, description) pairs from one template, differing only in the app name."""
    apps: set[str] = set()
    while len(apps) < n:
        apps.add("".join(rng.choices(_SYLLABLES, k=4)))
    return [
        (
            f"{app}-automation",
            f"Automate {app.title()} tasks via Rube MCP (Composio): manage records, sync "
            f"contacts and run workflows in {app.title()}. Always search tools first for current "
            f"schemas. Use when the user asks to automate {app.title()}.",
        )
        for app in sorted(apps)
    ]


def family_run(n: int, runs: int, rng: random.Random) -> None:
    """Lint a near-duplicate family on disk; print findings and time beside the pair count."""
    family = make_family(n, rng)
    pair_s, found = _median(
        runs,
        lambda: similar_descriptions([d for _, d in family], threshold=DEFAULT_SIMILARITY)[0],
    )
    assert isinstance(found, list)
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for name, description in family:
            make_skill(root, name, description, body="Search tools first.\n")
        repo = Repository([root], cache_dir=False, max_dirs=10 * n)
        report = lint_repository(repo)
        print(
            "\n".join(_disk_lines(f"near-duplicate family, {n:,} skills on disk", repo, root, runs))
        )
    groups = sum(f.code == "description.duplicate" for f in report.findings)
    print(f"  findings: {len(report.findings)} ({groups} description.duplicate groups)")
    print(
        f"  the pairwise report would print {2 * len(found):,} findings "
        f"(pair join alone {pair_s:.3f} s)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=10_000)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-disk", action="store_true", help="Skip the on-disk repository run.")
    parser.add_argument("--family", type=int, default=1000, help="Near-duplicate family size.")
    args = parser.parse_args()
    rng = random.Random(args.seed)
    family_run(args.family, args.runs, random.Random(args.seed))
    descriptions, planted = make_descriptions(args.n, rng)
    names = make_names(args.n, rng)
    subjects = [LintSubject(nm, d) for nm, d in zip(names, descriptions, strict=True)]

    seconds, cpu, report = _timed(args.runs, lambda: lint_subjects(subjects))
    assert isinstance(report, LintReport)
    groups = [f for f in report.findings if f.code == "description.duplicate"]
    dupes = sum(len(f.related) for f in groups)  # a group of k members holds k - 1 copies
    alike = sum(f.code == "name.similar" for f in report.findings)
    print(
        f"catalog checks, {args.n:,} skills: median {seconds:.3f} s wall, {cpu:.3f} s CPU "
        f"over {args.runs} runs"
    )
    print(f"  near-duplicate groups: {len(groups)} holding {dupes} copies ({planted} planted)")
    print(f"  look-alike name groups: {alike} ({args.n // 100} planted); notes: {report.notes}")

    sample = descriptions[:1000]
    naive_s, _ = _median(1, lambda: _naive(sample, DEFAULT_SIMILARITY))
    scale = (args.n / len(sample)) ** 2
    estimate = naive_s * scale
    print(f"naive all-pairs, 1,000 skills: {naive_s:.3f} s → about {estimate:.0f} s at {args.n:,}")

    if args.no_disk:
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        for subject in subjects:
            make_skill(root, subject.name, subject.description, files={"references/a.md": "# A\n"})
        repo = Repository([root], cache_dir=False, max_dirs=10 * args.n)
        label = f"lint_repository, {args.n:,} skills on disk"
        print("\n".join(_disk_lines(label, repo, root, args.runs)))


if __name__ == "__main__":
    main()

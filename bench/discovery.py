"""Benchmark skillshelf discovery: cold and warm open, refresh, search, against skills-ref.

Usage: ``python bench/discovery.py [--n 10000] [--repeat 5] [--skip-reference] [--json]``.

Generates N synthetic skills (``skill-00000/SKILL.md`` of ~1.5 KB plus ``references/guide.md``;
not timed), then times, ``--repeat`` times each and reporting the median and minimum:

- cold: ``Repository(...)`` with a new, empty index cache, then ``.catalog()`` (XML);
- cold, no cache: the same with ``cache_dir=False`` (no index written);
- warm: a new ``Repository(...)`` over the unchanged tree with a populated cache, then
  ``.catalog()``;
- refresh: ``repo.refresh()`` on an open repository, nothing changed;
- floor: ``open(path, "rb").read(4096)`` of every SKILL.md (paths known in advance), and the
  same plus a minimal parse (split off the frontmatter, ``key: value`` lines into a dict);
- tokens: ``report_for_repository`` (every body, load text and document read and counted)
  beside its floor: every file of every skill read with the stdlib and all that text counted
  once with tiktoken's batch encoder, and again with one ``encode_ordinary`` per text (the
  lower floor: the batch call spends a future per text); then the same report with its
  count cache filled by an earlier run (``--skip-heavy`` leaves tokens and lint out);
- lint: ``lint_repository`` beside its floor: every file of every skill read with the stdlib;
- search: ~200 mixed queries (p50 / p95), after the index is built by a first search;
- reference: skills-ref's ``to_prompt`` over the sorted skill folders, once, and whether its
  output is byte-identical to skillshelf's catalog.

Every measure reports wall-clock seconds and the process's CPU seconds (user + system, all
threads): on a shared machine the wall clock mostly measures the other jobs, and the ratio
to a floor measured in the same run is the figure to compare. Prints figures and the targets
of issues 2 and 17; it asserts nothing.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Any, Literal

import yaml

from skillshelf.repository import Repository

# Targets from issue 2 ("Performance"), at N = 10,000 on a 2-core machine.
TARGET_COLD_S = 0.5
TARGET_WARM_S = 0.1
TARGET_SEARCH_P50_MS = 5.0
SKILL_MD_BYTES = 1500
DESCRIPTION_WORDS = 40
QUERY_COUNT = 200

_TOPICS = (  # noqa: SIM905 - a long word list reads best as one string
    "pdf excel word slide chart image audio video email calendar git docker kubernetes sql "
    "csv json yaml html css react python rust go java typescript test lint format deploy "
    "cloud storage queue cache log metric trace alert secret token auth user team invoice "
    "report budget tax contract translation summary review search crawler scraper index "
    "embedding vector model prompt agent tool form table page print scan signature archive "
    "backup restore sync upload download schedule reminder note task ticket issue branch "
    "commit release version package build terraform ansible nginx postgres redis kafka "
    "spark pandas numpy notebook dashboard webhook api graphql grpc oauth certificate dns "
    "firewall network latency benchmark profile memory thread socket font color icon logo "
    "diagram slideshow spreadsheet database migration schema fixture snapshot changelog "
    "readme license dependency lockfile container cluster node pod volume bucket endpoint"
).split()
_VERBS = (  # noqa: SIM905 - a long word list reads best as one string
    "create edit convert extract parse render generate validate analyse inspect fix debug "
    "optimise migrate refactor document annotate classify filter sort group merge compare "
    "monitor measure plan draft publish share archive import export transform clean "
    "summarise translate review audit upgrade bundle deploy rotate encrypt decrypt compress "
    "split tag label route"
).split()
_FILLER = (  # noqa: SIM905 - a long word list reads best as one string
    "the a for with and into from over across about through each every many new existing "
    "local remote large small quickly safely reliably carefully project workflow pipeline "
    "step output input result error warning style rule check guide helper support tools "
    "documents records entries values fields columns rows pages sections files data "
    "reports teams people customers partners drafts batches jobs runs servers clients "
    "requests responses events messages threads plans goals notes details summaries "
    'R&D Q&A <tags> "quoted" it\'s A/B'
).split()
_VOCABULARY = _TOPICS + _VERBS + _FILLER


# -- generation --------------------------------------------------------------------------------


def skill_name(i: int) -> str:
    """The name (and folder name) of synthetic skill ``i``."""
    return f"skill-{i:05d}"


def _words(rng: random.Random, count: int) -> str:
    return " ".join(rng.choices(_VOCABULARY, k=count))


def _sentence(rng: random.Random, count: int) -> str:
    text = _words(rng, count)
    return f"{text[:1].upper()}{text[1:]}."


def make_description(rng: random.Random) -> str:
    """A ~40-word description ending with a "Use when …" sentence."""
    verb, topic = rng.choice(_VERBS), rng.choice(_TOPICS)
    use_when = f"Use when the user asks to {verb} {topic} {rng.choice(_TOPICS)} files."
    lead = f"{verb.capitalize()} {topic} {_words(rng, DESCRIPTION_WORDS - 12)}."
    return f"{lead} {use_when}"


def make_skill_md(i: int, rng: random.Random) -> str:
    """A ~1.5 KB SKILL.md: frontmatter (name, description, license, metadata) and a body."""
    name = skill_name(i)
    head = (
        "---\n"
        f"name: {name}\n"
        f"description: {make_description(rng)}\n"
        "license: Apache-2.0\n"
        "metadata:\n"
        "  author: skillshelf-bench\n"
        f'  version: "1.{i % 10}"\n'
        "---\n\n"
        f"# {name.replace('-', ' ').title()}\n\n"
        "## Steps\n\n"
        f"1. {_words(rng, 10)}.\n"
        f"2. {_words(rng, 10)}.\n"
        "3. See [the guide](references/guide.md) for details.\n\n"
        "## Notes\n\n"
    )
    body: list[str] = []
    while len(head) + sum(len(p) + 2 for p in body) < SKILL_MD_BYTES:
        body.append(_sentence(rng, 16))
    return head + "\n\n".join(body) + "\n"


def make_guide(i: int, rng: random.Random) -> str:
    """A small reference file."""
    return f"# Guide for {skill_name(i)}\n\n{_sentence(rng, 60)}\n"


def count_skills(root: Path) -> int:
    """How many ``skill-*/SKILL.md`` files ``root`` holds."""
    return sum(1 for _ in root.glob("skill-*/SKILL.md"))


def generate_tree(root: Path, n: int, seed: int, *, guides: bool = True) -> None:
    """Write ``n`` synthetic skills under ``root``; each with a ``references/guide.md`` unless
    ``guides`` is false (only what the catalog and search read: half the files to write)."""
    rng = random.Random(seed)
    for i in range(n):
        folder = root / skill_name(i)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "SKILL.md").write_text(make_skill_md(i, rng), encoding="utf-8")
        if guides:
            (folder / "references").mkdir(exist_ok=True)
            (folder / "references" / "guide.md").write_text(make_guide(i, rng), encoding="utf-8")


def ensure_tree(root: Path, n: int, seed: int) -> bool:
    """Make sure ``root`` holds exactly ``n`` synthetic skills; True if they were written now.

    Raises:
        SystemExit: ``root`` holds a different number of skills or other entries.
    """
    root.mkdir(parents=True, exist_ok=True)
    existing = count_skills(root)
    if existing == n:
        return False
    if existing or any(root.iterdir()):
        raise SystemExit(f"{root} holds {existing} skills, not {n}; pass an empty or new --dir")
    generate_tree(root, n, seed)
    return True


# -- timing --------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Timing:
    """Wall-clock seconds of repeated runs, in run order, and their CPU seconds."""

    runs: tuple[float, ...]
    cpu_runs: tuple[float, ...] = ()

    @property
    def cpu(self) -> float:
        return statistics.median(self.cpu_runs) if self.cpu_runs else float("nan")

    @property
    def median(self) -> float:
        return statistics.median(self.runs)

    @property
    def min(self) -> float:
        return min(self.runs)

    @property
    def first(self) -> float:
        return self.runs[0]

    def summary(self) -> dict[str, float]:
        """Median, min and first run, for the JSON report."""
        return {
            "median_s": self.median,
            "min_s": self.min,
            "first_s": self.first,
            "cpu_median_s": self.cpu,
        }


@dataclass(frozen=True, slots=True)
class SearchStats:
    """Search latency over a query mix."""

    build_ms: float
    queries: int
    with_hits: int
    p50_ms: float
    p95_ms: float
    max_ms: float


def timed(action: Callable[[], object]) -> tuple[float, object]:
    """Run ``action`` after a full collection; return its wall time and its result."""
    wall, _, result = timed_cpu(action)
    return wall, result


def timed_cpu(action: Callable[[], object]) -> tuple[float, float, object]:
    """Run ``action`` after a full collection; return its wall and CPU time and its result."""
    gc.collect()
    cpu = time.process_time()
    start = time.perf_counter()
    result = action()
    return time.perf_counter() - start, time.process_time() - cpu, result


def repeat_timed(action: Callable[[], object], repeat: int) -> Timing:
    """Time ``action`` ``repeat`` times."""
    runs = [timed_cpu(action)[:2] for _ in range(repeat)]
    return Timing(tuple(w for w, _ in runs), tuple(c for _, c in runs))


@contextmanager
def scratch_dirs() -> Iterator[Callable[[], Path]]:
    """Yield a factory of new, empty folders, all removed on exit."""
    with tempfile.TemporaryDirectory(prefix="skillshelf-bench-cache-") as parent:
        counter = iter(range(1_000_000))

        def fresh() -> Path:
            path = Path(parent, f"cache-{next(counter)}")
            path.mkdir()
            return path

        yield fresh


def open_catalog(root: Path, n: int, cache_dir: Path | Literal[False]) -> tuple[Repository, str]:
    """Open a repository over ``root`` and render its XML catalog."""
    repo = Repository([root], max_dirs=n * 2, cache_dir=cache_dir)
    return repo, repo.catalog(format="xml")


def time_cold(root: Path, n: int, repeat: int, fresh: Callable[[], Path]) -> Timing:
    """Open + catalog with a new, empty index cache each time."""
    return repeat_timed(lambda: open_catalog(root, n, fresh()), repeat)


def time_uncached(root: Path, n: int, repeat: int) -> Timing:
    """Open + catalog with no index cache at all (``cache_dir=False``)."""
    return repeat_timed(lambda: open_catalog(root, n, False), repeat)


def time_warm(root: Path, n: int, repeat: int, cache_dir: Path) -> Timing:
    """Open + catalog with an index cache populated by an earlier open of the same tree."""
    open_catalog(root, n, cache_dir)
    return repeat_timed(lambda: open_catalog(root, n, cache_dir), repeat)


def time_warm_open(root: Path, n: int, repeat: int, cache_dir: Path) -> Timing:
    """Open only (no catalog) with a populated index cache: the issue's "warm re-open"."""
    Repository([root], max_dirs=n * 2, cache_dir=cache_dir)
    return repeat_timed(lambda: Repository([root], max_dirs=n * 2, cache_dir=cache_dir), repeat)


def time_refresh(repo: Repository, repeat: int) -> Timing:
    """``refresh()`` of an open repository whose tree has not changed."""
    return repeat_timed(repo.refresh, repeat)


def time_floor(paths: list[str], repeat: int) -> Timing:
    """Read the first 4 KB of every SKILL.md with plain ``open().read()``."""

    def read_all() -> int:
        total = 0
        for path in paths:
            with open(path, "rb") as fh:
                total += len(fh.read(4096))
        return total

    return repeat_timed(read_all, repeat)


def time_floor_parse(paths: list[str], repeat: int) -> Timing:
    """The floor plus a minimal parse: frontmatter split off, ``key: value`` lines to a dict."""

    def parse_all() -> int:
        names = 0
        for path in paths:
            with open(path, "rb") as fh:
                text = fh.read(4096).decode("utf-8", errors="replace")
            end = text.find("\n---", 3)
            fields = dict(line.partition(": ")[::2] for line in text[4:end].split("\n"))
            names += "name" in fields
        return names

    return repeat_timed(parse_all, repeat)


def _read_every_file(skill_dirs: list[Path]) -> list[str]:
    texts: list[str] = []
    for directory in skill_dirs:
        for folder, _, files in os.walk(directory):
            for name in files:
                with open(os.path.join(folder, name), "rb") as fh:
                    texts.append(fh.read().decode("utf-8", errors="replace"))
    return texts


def time_heavy(root: Path, n: int, repeat: int, skill_dirs: list[Path]) -> dict[str, Timing]:
    """``tokens`` and ``lint`` on the whole tree, each beside its stdlib floor."""
    from skillshelf.lint import lint_repository
    from skillshelf.reports.tokenreport import report_for_repository
    from skillshelf.reports.tokens import get_counter

    counter = get_counter("o200k_base")
    repo = Repository([root], max_dirs=n * 2, cache_dir=False)
    encoder = _tiktoken_encoder()

    def count_floor() -> int:
        texts = _read_every_file(skill_dirs)
        if encoder is None:
            return len(texts)
        return sum(len(t) for t in encoder.encode_ordinary_batch(texts))

    def count_floor_loop() -> int:
        # tiktoken's batch call makes a future per text, which costs more CPU than the
        # encoding itself on short texts: one encode_ordinary per text is the lower floor.
        texts = _read_every_file(skill_dirs)
        if encoder is None:
            return len(texts)
        return sum(len(encoder.encode_ordinary(t)) for t in texts)

    def tokens(cache_dir: str | None = None) -> object:
        return report_for_repository(
            repo, counter=counter, budget_chars=12_000, cache_dir=cache_dir
        )

    with tempfile.TemporaryDirectory(prefix="skillshelf-bench-tokens-") as cache_dir:
        tokens(cache_dir)  # fills the count cache
        return {
            "floor_read": repeat_timed(lambda: _read_every_file(skill_dirs), repeat),
            "floor_count": repeat_timed(count_floor, repeat),
            "floor_count_loop": repeat_timed(count_floor_loop, repeat),
            "tokens": repeat_timed(tokens, repeat),
            "tokens_cached": repeat_timed(lambda: tokens(cache_dir), repeat),
            "lint": repeat_timed(lambda: lint_repository(repo), repeat),
        }


def _tiktoken_encoder() -> Any:
    try:
        import tiktoken
    except ImportError:
        return None
    return tiktoken.get_encoding("o200k_base")


def make_queries(repo: Repository, count: int, rng: random.Random) -> list[str]:
    """Exact names, single words, short phrases, description openings, long text, misses."""
    skills = repo.skills
    makers: tuple[Callable[[], str], ...] = (
        lambda: rng.choice(skills).name,
        lambda: rng.choice(_VOCABULARY),
        lambda: f"{rng.choice(_VERBS)} {rng.choice(_TOPICS)}",
        lambda: " ".join(rng.choice(skills).description.split()[:4]),
        lambda: _words(rng, 30),
        lambda: f"zz{rng.randint(0, 10**6)} qq{rng.randint(0, 10**6)}",
    )
    return [makers[i % len(makers)]() for i in range(count)]


def _percentile(samples: list[float], pct: int) -> float:
    return statistics.quantiles(samples, n=100, method="inclusive")[pct - 1]


def time_search(repo: Repository, queries: list[str]) -> SearchStats:
    """Build the search index with a first search, then time every query."""
    build_s, _ = timed(lambda: repo.search("warm up the index"))
    samples: list[float] = []
    with_hits = 0
    for query in queries:
        start = time.perf_counter()
        hits = repo.search(query)
        samples.append((time.perf_counter() - start) * 1000)
        with_hits += bool(hits)
    return SearchStats(
        build_ms=build_s * 1000,
        queries=len(queries),
        with_hits=with_hits,
        p50_ms=_percentile(samples, 50),
        p95_ms=_percentile(samples, 95),
        max_ms=max(samples),
    )


def time_reference(skill_dirs: list[Path]) -> tuple[float, str]:
    """skills-ref's ``to_prompt`` over the given folders, once."""
    from skills_ref import to_prompt

    seconds, text = timed(lambda: to_prompt(skill_dirs))
    return seconds, str(text)


# -- report --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Report:
    """Everything measured in one run."""

    n: int
    repeat: int
    tree: str
    generated_now: bool
    skills_loaded: int
    skipped: int
    root_diagnostics: list[str]
    catalog_chars: int
    cold: Timing
    uncached: Timing
    warm: Timing
    warm_open: Timing
    refresh: Timing
    floor: Timing
    floor_parse: Timing
    search: SearchStats
    heavy: dict[str, Timing] = field(default_factory=dict)
    reference_s: float | None = None
    identical: bool | None = None
    machine: dict[str, Any] = field(default_factory=dict)


def machine_info() -> dict[str, Any]:
    """CPU count, Python, library versions, load average."""
    return {
        "cpu_count": os.cpu_count(),
        "cpus_usable": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "skillshelf": metadata.version("skillshelf"),
        "skills_ref": _version_or_none("skills-ref"),
        "pyyaml": yaml.__version__,
        "libyaml": bool(getattr(yaml, "__with_libyaml__", False)),
        "loadavg_start": list(os.getloadavg()),
    }


def _version_or_none(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _status(value: float, target: float, n: int) -> str:
    verdict = "pass" if value <= target else "MISS"
    return verdict if n == 10_000 else f"{verdict} (target is for N=10,000)"


def _ratio(numerator: float | None, denominator: float) -> str:
    return "-" if numerator is None else f"{numerator / denominator:,.0f}x"


def format_table(r: Report) -> str:
    """The human-readable report."""
    m = r.machine
    rows = [
        ("skillshelf cold: open+validate+XML, empty cache", r.cold, TARGET_COLD_S),
        ("skillshelf cold, cache_dir=False (no index write)", r.uncached, None),
        ("skillshelf warm re-open, populated cache", r.warm_open, TARGET_WARM_S),
        ("skillshelf warm re-open + XML catalog", r.warm, None),
        ("skillshelf refresh(), nothing changed", r.refresh, None),
        ("floor: open().read(4096) of every SKILL.md", r.floor, None),
        ("floor + minimal parse (split, key: value lines)", r.floor_parse, None),
    ]
    out = [
        f"skillshelf discovery benchmark: N={r.n:,} skills, {r.repeat} repeats "
        f"(median / min / first run, seconds)",
        f"machine: {m['cpu_count']} CPUs ({m['cpus_usable']} usable), "
        f"{m['implementation']} {m['python']}, {m['platform']}",
        f"versions: skillshelf {m['skillshelf']}, skills-ref {m['skills_ref']}, "
        f"PyYAML {m['pyyaml']} (libyaml: {'yes' if m['libyaml'] else 'no'})",
        f"load average: start {_load(m['loadavg_start'])}, end {_load(m['loadavg_end'])}",
        f"tree: {r.tree} ({'generated now' if r.generated_now else 'reused'}); "
        f"loaded {r.skills_loaded:,}, skipped {r.skipped}, catalog {r.catalog_chars:,} chars",
        "",
        f"{'measure':<52}{'median':>9}{'min':>9}{'first':>9}{'CPU':>9}{'CPU/floor':>10}  target",
    ]
    floor_cpu = r.floor_parse.cpu
    for label, timing, target in rows:
        verdict = f"<= {target:g} s  {_status(timing.median, target, r.n)}" if target else ""
        out.append(
            f"{label:<52}{timing.median:>9.3f}{timing.min:>9.3f}{timing.first:>9.3f}"
            f"{timing.cpu:>9.3f}{timing.cpu / floor_cpu:>9.2f}x  {verdict}"
        )
    out += _heavy_lines(r)
    s = r.search
    out += [
        "",
        f"search: {s.queries} queries ({s.with_hits} with hits), index build {s.build_ms:.0f} ms",
        f"  p50 {s.p50_ms:.3f} ms  p95 {s.p95_ms:.3f} ms  max {s.max_ms:.3f} ms   "
        f"target p50 <= {TARGET_SEARCH_P50_MS:g} ms  "
        f"{_status(s.p50_ms, TARGET_SEARCH_P50_MS, r.n)}",
        "",
    ]
    out += _reference_lines(r)
    out += [
        "",
        "notes: 'cold' is cold for skillshelf's own index cache (a new empty cache folder each "
        "run);",
        "  the OS page cache is warm for every run (the tree was just written, or read by the",
        "  previous run). 'first' is the first run in this process (includes first-use costs).",
    ]
    if r.root_diagnostics:
        out.append("root diagnostics: " + "; ".join(r.root_diagnostics))
    return "\n".join(out)


def _heavy_lines(r: Report) -> list[str]:
    if not r.heavy:
        return ["(tokens and lint: skipped, --skip-heavy)"]
    h = r.heavy
    rows = [
        ("floor: read every file of every skill (stdlib)", h["floor_read"], None),
        ("floor: ... + one tiktoken batch count of it all", h["floor_count"], None),
        ("floor: ... + tiktoken encode_ordinary per text", h["floor_count_loop"], None),
        ("tokens: report_for_repository (o200k_base)", h["tokens"], h["floor_count"]),
        ("tokens: again, counts cached (cache_dir)", h["tokens_cached"], h["floor_count"]),
        ("lint: lint_repository (every check)", h["lint"], h["floor_read"]),
    ]
    out = [""]
    for label, timing, floor in rows:
        ratio = f"{timing.cpu / floor.cpu:>9.2f}x" if floor is not None else f"{'':>10}"
        if floor is h["floor_count"]:
            ratio += f"  {timing.cpu / h['floor_count_loop'].cpu:.2f}x per-text floor"
            ratio += f"  {timing.cpu / h['floor_read'].cpu:.2f}x read floor"
        out.append(
            f"{label:<52}{timing.median:>9.3f}{timing.min:>9.3f}{timing.first:>9.3f}"
            f"{timing.cpu:>9.3f}{ratio}"
        )
    out.append("  (CPU/floor: tokens against the batch count floor (then the per-text count floor")
    out.append("  and the read floor), lint against the read floor)")
    return out


def _load(values: list[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


def _reference_lines(r: Report) -> list[str]:
    if r.reference_s is None:
        return ["skills-ref to_prompt: skipped (--skip-reference)"]
    return [
        f"skills-ref to_prompt(sorted dirs), one run: {r.reference_s:.3f} s",
        f"  skills-ref / skillshelf cold: {_ratio(r.reference_s, r.cold.median)}   "
        f"skills-ref / skillshelf warm: {_ratio(r.reference_s, r.warm.median)}",
        f"  identical: {'yes' if r.identical else 'no'} "
        "(skills-ref's XML vs skillshelf's .catalog(), byte for byte)",
    ]


def to_json(r: Report) -> dict[str, Any]:
    """The machine-readable report."""
    data = asdict(r)
    for key in ("cold", "uncached", "warm", "warm_open", "refresh", "floor", "floor_parse"):
        timing: Timing = getattr(r, key)
        data[key] = {**timing.summary(), "runs_s": list(timing.runs)}
    data["heavy"] = {k: {**t.summary(), "runs_s": list(t.runs)} for k, t in r.heavy.items()}
    data["ratios"] = {
        "reference_over_cold": None if r.reference_s is None else r.reference_s / r.cold.median,
        "reference_over_warm": None if r.reference_s is None else r.reference_s / r.warm.median,
    }
    data["targets"] = {
        "cold_s": {"target": TARGET_COLD_S, "pass": r.cold.median <= TARGET_COLD_S},
        "warm_s": {"target": TARGET_WARM_S, "pass": r.warm_open.median <= TARGET_WARM_S},
        "search_p50_ms": {
            "target": TARGET_SEARCH_P50_MS,
            "pass": r.search.p50_ms <= TARGET_SEARCH_P50_MS,
        },
    }
    return data


# -- main ----------------------------------------------------------------------------------------


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000, help="number of synthetic skills")
    parser.add_argument("--repeat", type=int, default=5, help="runs per measure (median)")
    parser.add_argument("--dir", type=Path, help="tree to (re)use instead of a temp folder")
    parser.add_argument("--seed", type=int, default=0, help="seed for the generated text")
    parser.add_argument("--skip-reference", action="store_true", help="do not run skills-ref")
    parser.add_argument("--skip-heavy", action="store_true", help="do not time tokens and lint")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead")
    args = parser.parse_args(argv)
    if args.n < 1 or args.repeat < 1:
        parser.error("--n and --repeat must be at least 1")
    return args


def measure(root: Path, args: argparse.Namespace, generated_now: bool) -> Report:
    """Run every measure over the tree at ``root``."""
    n, repeat = args.n, args.repeat
    machine = machine_info()
    with scratch_dirs() as fresh:
        cold = time_cold(root, n, repeat, fresh)
        uncached = time_uncached(root, n, repeat)
        warm = time_warm(root, n, repeat, fresh())
        warm_open = time_warm_open(root, n, repeat, fresh())
        repo, catalog = open_catalog(root, n, fresh())
    refresh = time_refresh(repo, repeat)
    skill_dirs = sorted(Path(s.directory) for s in repo.skills)
    floor = time_floor([str(d / "SKILL.md") for d in skill_dirs], repeat)
    floor_parse = time_floor_parse([str(d / "SKILL.md") for d in skill_dirs], repeat)
    heavy = {} if args.skip_heavy else time_heavy(root, n, repeat, skill_dirs)
    search = time_search(repo, make_queries(repo, QUERY_COUNT, random.Random(args.seed)))
    report = Report(
        n=n,
        repeat=repeat,
        tree=str(root),
        generated_now=generated_now,
        skills_loaded=len(repo),
        skipped=len(repo.skipped),
        root_diagnostics=[f"{d.code}: {d.message}" for d in repo.diagnostics],
        catalog_chars=len(catalog),
        cold=cold,
        uncached=uncached,
        warm=warm,
        warm_open=warm_open,
        refresh=refresh,
        floor=floor,
        floor_parse=floor_parse,
        search=search,
        heavy=heavy,
        machine=machine,
    )
    if not args.skip_reference:
        report.reference_s, reference = time_reference(skill_dirs)
        report.identical = reference == catalog
    machine["loadavg_end"] = list(os.getloadavg())
    return report


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="skillshelf-bench-tree-") as tmp:
        root = Path(os.path.realpath(args.dir or tmp))
        generated_now = ensure_tree(root, args.n, args.seed)
        report = measure(root, args, generated_now)
    if args.json:
        json.dump(to_json(report), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(report))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

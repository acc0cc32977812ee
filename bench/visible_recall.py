"""Visible recall: does the first request the model receives show the right skill with its
description? On real collections, on each padded to 10,000 skills, and the fixed request cost.

Usage: ``PYTHONPATH=src python bench/visible_recall.py [--collection NAME] [--skip-padded]
[--misses] [--json]``.

For every labelled request of ``tests/corpus/collections/requests.yaml`` (a user request and
the one skill of its collection that fits it) the real agent loop (:class:`skillshelf.Agent`
over ``Repository([root])`` of the materialised collection, default settings) sends the
request to a scripted model that records what it receives and answers at once; the first
request's messages and tool definitions are what is judged. A request is **visible** when the
expected skill appears with a description (whole or shortened, not its name alone) in the
system prompt's catalog or in a ``<system-reminder>`` message (the per-message block of
relevant skills). Each figure comes with its reference measured in the same run: the same
agent with ``relevant_skills=0``, i.e. what the catalog alone shows.

Sizes: each collection as it is, and padded with the 10,000 generated skills of
``bench/discovery.py`` beside it (10,130 to 10,840 skills in all, one tree shared by every
collection). The **fixed request cost** is the system prompt plus
the tool schemas as JSON (OpenAI's shape, as ``skillshelf tokens`` counts them), in characters,
on generated trees of 10, 100, 1,000 and 10,000 skills and on every collection; issue 29's
target is at most 32,000 with the default budget. Timings are medians per request (the whole
``send``: relevant block, prompt, tool definitions, the scripted reply).

Prints figures; ``tests/harness/test_visible_recall.py`` holds the floors.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

ROOT: Final = Path(__file__).resolve().parents[1]
if __name__ == "__main__":  # run as a script: import bench.* from the repository's root
    sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != ROOT / "bench"]
    sys.path.insert(0, str(ROOT))

from bench.discovery import generate_tree  # noqa: E402
from bench.real_collections import (  # noqa: E402
    LabelledRequest,
    collection_names,
    materialise,
    read_requests,
)
from skillshelf import Agent, Repository, SkillSettings  # noqa: E402
from skillshelf.core.catalog_view import read_catalog  # noqa: E402
from skillshelf.core.tooldef import to_openai  # noqa: E402
from skillshelf.harness import RELEVANT_QUERY_CHARS  # noqa: E402
from skillshelf.models import ModelRequest  # noqa: E402
from skillshelf.testing import ScriptedModel  # noqa: E402

PAD_TO: Final = 10_000
COST_SIZES: Final = (10, 100, 1_000, 10_000)
TARGET_RECALL: Final = 0.95
TARGET_COST_CHARS: Final = 32_000
SEED: Final = 0
_RANKED: Final = 50  # search hits looked at to say where a missed skill ranks

Seen = Literal["catalog", "relevant"]
# Where the catalog-alone reference was not measured (``measure(reference=False)``).
Unmeasured = Literal["unmeasured"]

# A skill shown with its description: skills-ref's XML form, or the Markdown form's bullet.


# -- what the model receives ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class FirstRequest:
    """The first request of a conversation, as the model received it.

    Attributes:
        system: The system messages' text.
        reminders: The ``<system-reminder>`` user messages before the user's own.
        schemas: The tool definitions as JSON (OpenAI's function-tool shape, compact).
    """

    system: str
    reminders: tuple[str, ...]
    schemas: str

    @property
    def fixed_chars(self) -> int:
        """What every request repeats: the system prompt and the tool schemas."""
        return len(self.system) + len(self.schemas)

    def seen(self, name: str) -> Seen | None:
        """Where ``name`` is shown with a description: the catalog, else the relevant block."""
        if name in described_skills(self.system):
            return "catalog"
        if any(name in described_skills(text) for text in self.reminders):
            return "relevant"
        return None


def described_skills(text: str) -> set[str]:
    """The names ``text`` shows with a description, in either catalog form (read back by
    :func:`skillshelf.core.catalog_view.read_catalog`, as evals and baseline:search read it)."""
    entries, _ = read_catalog(text)
    return {name for name, description in entries if description is not None}


def of_request(request: ModelRequest) -> FirstRequest:
    """The parts of ``request`` that are judged."""
    messages = request.messages
    system = "\n\n".join(str(m.get("content") or "") for m in messages if m["role"] == "system")
    reminders = tuple(
        str(m["content"])
        for m in messages[:-1]  # the last is the user's own message
        if m["role"] == "user" and str(m.get("content") or "").startswith("<system-reminder>")
    )
    tools = json.dumps(to_openai(request.tools), ensure_ascii=False, separators=(",", ":"))
    return FirstRequest(system, reminders, tools)


class Recorder:
    """An agent over ``repo`` whose scripted model answers at once and keeps the request."""

    def __init__(self, repo: Repository, settings: SkillSettings) -> None:
        self.model = ScriptedModel(lambda _request: "Done.")
        self.agent = Agent(self.model, repo, settings=settings)

    def first_request(self, message: str) -> FirstRequest:
        """Send ``message`` in a new conversation; what the model received first."""
        self.model.requests.clear()
        self.agent.conversation().send_sync(message)
        return of_request(self.model.requests[0])

    def fate(self, name: str) -> str:
        """What the catalog's budget left of skill ``name`` (full, trimmed, name_only,
        omitted), or ``hidden`` when it is not a loadable visible skill."""
        harness = self.agent.harness
        skills = harness.visible_skills()
        loadable = [s.name for s in skills if s.model_invocable]
        fates = harness.prompt.fit(skills).fates
        return fates[loadable.index(name)] if name in loadable else "hidden"

    def rank(self, message: str, name: str) -> int | None:
        """Where skill ``name`` ranks (1-based) for ``message`` in the project's search, as
        the relevant block queries it; None past the first results."""
        hits = self.agent.harness.probe.matches(message[:RELEVANT_QUERY_CHARS].strip(), _RANKED)
        names = [hit.name for hit in hits]
        return names.index(name) + 1 if name in names else None


# -- measuring -----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Outcome:
    """One labelled request: where the expected skill was seen (None: not with a
    description), and without the relevant block; for a miss, what the catalog's budget left
    of it and where the block's search ranked it (None: past the first 50)."""

    request: str
    expected: str
    seen: Seen | None
    seen_catalog_only: Seen | Unmeasured | None
    ms: float
    fate: str | None = None
    rank: int | None = None


@dataclass(slots=True)
class Measure:
    """One catalog (a collection, padded or not) over its labelled requests."""

    collection: str
    skills: int
    padded: bool
    fixed_chars: int
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def visible(self) -> int:
        return sum(o.seen is not None for o in self.outcomes)

    @property
    def recall(self) -> float:
        return self.visible / len(self.outcomes)

    @property
    def reference(self) -> float | None:
        """Visible recall of the catalog alone (``relevant_skills=0``), when measured."""
        if any(o.seen_catalog_only == "unmeasured" for o in self.outcomes):
            return None
        return sum(o.seen_catalog_only is not None for o in self.outcomes) / len(self.outcomes)

    @property
    def median_ms(self) -> float:
        return statistics.median(o.ms for o in self.outcomes)

    @property
    def misses(self) -> list[Outcome]:
        return [o for o in self.outcomes if o.seen is None]


def measure(
    collection: str,
    repo: Repository,
    requests: Sequence[LabelledRequest],
    *,
    padded: bool = False,
    settings: SkillSettings | None = None,
    reference: bool = True,
) -> Measure:
    """Send each of ``requests`` to an agent over ``repo`` with ``settings`` (default: the
    defaults) and judge the first request the model receives; with ``reference``, again with
    ``relevant_skills=0``.

    Raises:
        ValueError: A request expects a skill the model may not load in ``repo``.
    """
    settings = settings or SkillSettings()
    default = Recorder(repo, settings)
    alone = Recorder(repo, settings.replace(relevant_skills=0)) if reference else None
    loadable = {s.name for s in default.agent.harness.visible_skills() if s.model_invocable}
    result = Measure(collection, len(loadable), padded, 0)
    for labelled in requests:
        expected = labelled.expected
        if expected not in loadable:
            raise ValueError(f"{collection}: no loadable skill {expected!r}")
        start = time.perf_counter()
        first = default.first_request(labelled.request)
        ms = (time.perf_counter() - start) * 1000
        result.fixed_chars = first.fixed_chars
        seen = first.seen(expected)
        outcome = Outcome(
            labelled.request,
            expected,
            seen,
            alone.first_request(labelled.request).seen(expected) if alone else "unmeasured",
            ms,
        )
        if seen is None:  # say why: the catalog's cut and the block's ranking
            outcome = replace(
                outcome,
                fate=default.fate(expected),
                rank=default.rank(labelled.request, expected),
            )
        result.outcomes.append(outcome)
    return result


def fixed_cost(repo: Repository, settings: SkillSettings | None = None) -> int:
    """The fixed request cost (characters) of an agent over ``repo`` with ``settings``
    (default: the defaults)."""
    return Recorder(repo, settings or SkillSettings()).first_request("Hello.").fixed_chars


def padded_repo(root: Path, pad: Repository, *, cache_dir: Path) -> Repository:
    """The collection at ``root`` with the :data:`PAD_TO` generated skills of ``pad``."""
    return Repository([root, *pad.roots], max_dirs=PAD_TO * 2 + 10, cache_dir=cache_dir)


def generated_repo(base: Path, n: int, *, cache_dir: Path) -> Repository:
    """A repository of ``n`` generated skills under ``base`` (written on first use)."""
    root = base / f"generated-{n}"
    if not root.exists():
        generate_tree(root, n, SEED, guides=False)
    return Repository([root], max_dirs=n * 2 + 10, cache_dir=cache_dir)


# -- report --------------------------------------------------------------------------------------


@dataclass(slots=True)
class Report:
    measures: list[Measure]
    costs: dict[int, int]
    seconds: float


def run(
    names: Sequence[str], *, padded: bool, base: Path, settings: SkillSettings | None = None
) -> Report:
    """Measure ``names`` (and each padded, with ``padded``) and the fixed cost by size, with
    ``settings`` (default: the defaults)."""
    start = time.perf_counter()
    cache = base / "index-cache"
    requests = read_requests()
    measures: list[Measure] = []
    pad = generated_repo(base, PAD_TO, cache_dir=cache) if padded else None
    for name in names:
        mine = [r for r in requests if r.collection == name]
        root = materialise(name, base / "collections" / name)
        plain = Repository([root], cache_dir=cache)
        measures.append(measure(name, plain, mine, settings=settings))
        if pad is not None:
            repo = padded_repo(root, pad, cache_dir=cache)
            measures.append(measure(name, repo, mine, padded=True, settings=settings))
    costs: dict[int, int] = {}
    for n in COST_SIZES:
        repo = pad if n == PAD_TO and pad is not None else generated_repo(base, n, cache_dir=cache)
        costs[n] = fixed_cost(repo, settings)
    return Report(measures, costs, time.perf_counter() - start)


def format_table(report: Report, *, misses: bool) -> str:
    out = [
        f"{'collection':<30}{'skills':>8}{'requests':>10}{'visible':>9}{'catalog':>9}"
        f"{'fixed chars':>13}{'ms/req':>8}",
    ]
    for m in report.measures:
        label = f"{m.collection}{' +pad' if m.padded else ''}"
        alone = "-" if m.reference is None else f"{m.reference:.3f}"
        out.append(
            f"{label:<30}{m.skills:>8,}{len(m.outcomes):>10}{m.recall:>9.3f}{alone:>9}"
            f"{m.fixed_chars:>13,}{m.median_ms:>8.1f}"
        )
    total = [o for m in report.measures for o in m.outcomes]
    out += [
        "",
        f"all: {sum(o.seen is not None for o in total)}/{len(total)} visible "
        f"(catalog alone {sum(o.seen_catalog_only in ('catalog', 'relevant') for o in total)}"
        f"/{len(total)}); "
        f"target >= {TARGET_RECALL} on every row: "
        f"{'pass' if all(m.recall >= TARGET_RECALL for m in report.measures) else 'FAIL'}",
        "  visible: the expected skill with a description in the system prompt or the "
        "relevant block; catalog: the same with relevant_skills=0 (the reference)",
        "",
        "fixed request cost (system prompt + tool schemas as JSON, characters), generated "
        f"skills, target <= {TARGET_COST_CHARS:,}:",
    ]
    for n, chars in report.costs.items():
        verdict = "pass" if chars <= TARGET_COST_CHARS else "FAIL"
        out.append(f"  {n:>6,} skills: {chars:>8,}  {verdict}")
    if misses:
        out += ["", "misses (fate in the catalog; rank in the search the block runs):"]
        for m in report.measures:
            for o in m.misses:
                rank = o.rank if o.rank is not None else f">{_RANKED}"
                out.append(
                    f"  {m.collection}{' +pad' if m.padded else ''}: {o.expected} "
                    f"[{o.fate}, rank {rank}] {o.request[:90]!r}"
                )
    out.append(f"\n({report.seconds:.1f} s in all)")
    return "\n".join(out)


def to_json(report: Report) -> dict[str, Any]:
    return {
        "measures": [
            {
                "collection": m.collection,
                "padded": m.padded,
                "skills": m.skills,
                "requests": len(m.outcomes),
                "visible_recall": m.recall,
                "catalog_only_recall": m.reference,
                "fixed_chars": m.fixed_chars,
                "median_ms_per_request": m.median_ms,
                "misses": [asdict(o) for o in m.misses],
            }
            for m in report.measures
        ],
        "fixed_cost_chars": {str(n): chars for n, chars in report.costs.items()},
        "targets": {"visible_recall": TARGET_RECALL, "fixed_cost_chars": TARGET_COST_CHARS},
        "seconds": report.seconds,
    }


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--collection", action="append", choices=collection_names())
    parser.add_argument("--skip-padded", action="store_true", help="no 10,000-skill catalogs")
    parser.add_argument("--misses", action="store_true", help="list the requests not visible")
    parser.add_argument("--json", action="store_true", help="print a JSON object instead")
    # Variants of the defaults, to weigh a change (the figures then are not the defaults').
    parser.add_argument("--relevant-skills", type=int, help="SkillSettings.relevant_skills")
    parser.add_argument("--catalog-budget", type=int, help="SkillSettings.catalog_budget")
    parser.add_argument("--catalog-format", choices=("xml", "markdown"))
    return parser.parse_args(argv)


def variant(args: argparse.Namespace) -> SkillSettings:
    """The default settings with the options given on the command line."""
    settings = SkillSettings()
    if args.relevant_skills is not None:
        settings = settings.replace(relevant_skills=args.relevant_skills)
    if args.catalog_budget is not None:
        settings = settings.replace(catalog_budget=args.catalog_budget)
    if args.catalog_format is not None:
        settings = settings.replace(catalog_format=args.catalog_format)
    return settings


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    # The harness warns once per catalog the budget cuts: every catalog here is cut.
    logging.getLogger("skillshelf.harness").setLevel(logging.ERROR)
    names = args.collection or collection_names()
    with tempfile.TemporaryDirectory(prefix="skillshelf-bench-visible-") as tmp:
        base = Path(tmp)
        report = run(names, padded=not args.skip_padded, base=base, settings=variant(args))
    if args.json:
        json.dump(to_json(report), sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_table(report, misses=args.misses))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

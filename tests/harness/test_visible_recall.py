"""Visible recall on real collections (issue 29): the first request the model receives shows
the right skill with its description for at least 95% of the labelled requests, on every
collection and on each with 10,000 generated skills beside it; and the fixed part of every
request (system prompt and tool schemas) stays within 32,000 characters from 10 to 10,000
skills.

The collections and requests are ``tests/corpus/collections``; ``bench/visible_recall.py``
runs the same measure and prints the figures, the misses and the catalog-alone reference.
Rows measured below the floor are strict xfails: they say by how much, and fail as soon as a
change lifts them over it (then drop the mark). Another test holds each row at what was
measured when the set was labelled, so nothing falls further while the gap is open.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path
from typing import Final

import pytest
from bench.real_collections import (
    COLLECTIONS,
    LabelledRequest,
    collection_names,
    materialise,
    read_collection,
    read_requests,
)
from bench.visible_recall import (
    COST_SIZES,
    PAD_TO,
    TARGET_COST_CHARS,
    TARGET_RECALL,
    FirstRequest,
    Measure,
    described_skills,
    fixed_cost,
    generated_repo,
    measure,
    padded_repo,
)

from skillshelf.core.frontmatter import parse_frontmatter
from skillshelf.repository import Repository

# Visible requests per row (2026-12-03, default settings: catalog budget 12,000 XML, 10
# relevant skills). Issue 29's floor is 0.95 of each.
MEASURED: Final = {
    ("alirezarezvani-claude-skills", False): 36,
    ("alirezarezvani-claude-skills", True): 35,
    ("davila7-templates", False): 34,
    ("davila7-templates", True): 32,
    ("kdense-scientific", False): 34,
    ("kdense-scientific", True): 31,
    ("sickn33-antigravity", False): 31,
    ("sickn33-antigravity", True): 30,
    ("wshobson-agents", False): 33,
    ("wshobson-agents", True): 31,
}
ROWS: Final = [(name, padded) for name in collection_names() for padded in (False, True)]


def _row(name: str, padded: bool) -> object:
    requests = sum(r.collection == name for r in read_requests())
    floor = TARGET_RECALL * requests
    measured = MEASURED[(name, padded)]
    row_id = f"{name}{'-padded' if padded else ''}"
    if measured >= floor:
        return pytest.param(name, padded, id=row_id)
    reason = (
        f"issue 29: {measured}/{requests} visible ({measured / requests:.3f}) < {TARGET_RECALL}; "
        "the misses rank past the block's skills in lexical search (visible_recall.py --misses)"
    )
    return pytest.param(
        name, padded, id=row_id, marks=pytest.mark.xfail(strict=True, reason=reason)
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("visible-recall")


@pytest.fixture(scope="module")
def pad(base: Path) -> Repository:
    """10,000 generated skills, written once for the module (the index cache in tmp)."""
    return generated_repo(base, PAD_TO, cache_dir=base / "cache")


@pytest.fixture(scope="module")
def measures(base: Path, pad: Repository) -> dict[tuple[str, bool], Measure]:
    """Every row, measured once with default settings (no catalog-alone reference)."""
    out: dict[tuple[str, bool], Measure] = {}
    for name in collection_names():
        mine = [r for r in read_requests() if r.collection == name]
        root = materialise(name, base / "collections" / name)
        plain = Repository([root], cache_dir=base / "cache")
        out[(name, False)] = measure(name, plain, mine, reference=False)
        padded = padded_repo(root, pad, cache_dir=base / "cache")
        out[(name, True)] = measure(name, padded, mine, padded=True, reference=False)
    return out


# -- the floors ----------------------------------------------------------------------------------


@pytest.mark.parametrize(("name", "padded"), [_row(n, p) for n, p in ROWS])
def test_visible_recall_is_at_least_095(
    measures: dict[tuple[str, bool], Measure], name: str, padded: bool
) -> None:
    row = measures[(name, padded)]
    missed = [f"{o.expected} [{o.fate}, rank {o.rank}]" for o in row.misses]
    assert row.recall >= TARGET_RECALL, missed


@pytest.mark.parametrize(("name", "padded"), ROWS)
def test_visible_recall_falls_no_lower_than_measured(
    measures: dict[tuple[str, bool], Measure], name: str, padded: bool
) -> None:
    row = measures[(name, padded)]
    assert row.visible >= MEASURED[(name, padded)], [o.expected for o in row.misses]


def test_every_padded_row_shows_its_collection_and_10000_more(
    measures: dict[tuple[str, bool], Measure],
) -> None:
    for name in collection_names():
        assert measures[(name, True)].skills == measures[(name, False)].skills + PAD_TO


@pytest.mark.parametrize("size", COST_SIZES)
def test_the_fixed_request_cost_stays_within_32000_characters(
    base: Path, pad: Repository, size: int
) -> None:
    repo = pad if size == PAD_TO else generated_repo(base, size, cache_dir=base / "cache")
    assert fixed_cost(repo) <= TARGET_COST_CHARS


def test_the_fixed_request_cost_of_every_collection_stays_within_32000_characters(
    measures: dict[tuple[str, bool], Measure],
) -> None:
    assert max(m.fixed_chars for m in measures.values()) <= TARGET_COST_CHARS


# -- the labelled set ----------------------------------------------------------------------------


def test_five_collections_of_75_to_1000_skills_with_30_requests_each(base: Path) -> None:
    requests = read_requests()
    per_collection = Counter(r.collection for r in requests)
    assert len(requests) >= 150
    assert set(per_collection) == set(collection_names())
    assert len(per_collection) >= 5 and min(per_collection.values()) >= 30
    for name in collection_names():
        repo = Repository([materialise(name, base / "sizes" / name)], cache_dir=False)
        assert 75 <= len(repo) <= 1000, name


def test_each_collection_keeps_its_licence_and_source() -> None:
    for name in collection_names():
        source = (COLLECTIONS / name / "SOURCE.md").read_text(encoding="utf-8")
        assert (COLLECTIONS / name / "LICENSE").stat().st_size > 0
        assert "Origin repository: https://github.com/" in source and "Commit: `" in source


def test_no_request_names_its_skill_or_repeats_four_words_of_its_description() -> None:
    def words(text: str) -> list[str]:
        return re.findall(r"[a-z0-9]+", text.lower())

    descriptions = {
        (name, str(fm.data.get("name"))): words(str(fm.data.get("description", "")))
        for name in collection_names()
        for fm in (parse_frontmatter(c.skill_md()) for c in read_collection(name))
    }
    for labelled in read_requests():
        request = words(labelled.request)
        assert f" {' '.join(words(labelled.expected))} " not in f" {' '.join(request)} "
        description = descriptions[(labelled.collection, labelled.expected)]
        grams = {tuple(description[i : i + 4]) for i in range(len(description) - 3)}
        shared = [request[i : i + 4] for i in range(len(request) - 3)]
        assert not [g for g in shared if tuple(g) in grams], labelled


def test_labels_are_spread_over_each_collection_and_never_repeated() -> None:
    for name in collection_names():
        expected = [r.expected for r in read_requests() if r.collection == name]
        assert len(set(expected)) == len(expected), name
        initials = {e[0].lower() for e in expected}
        assert len(initials) >= 12, (name, sorted(initials))


# -- the measure itself --------------------------------------------------------------------------


def test_a_skill_counts_as_seen_only_with_its_description() -> None:
    catalog = (
        "<available_skills>\n<skill>\n<name>\nnamed\n</name>\n</skill>\n"
        "<skill>\n<name>\nshown\n</name>\n<description>\nDoes it.\n</description>\n</skill>\n"
        "</available_skills>"
    )
    # As render_catalog writes Markdown: under its heading (other list items are not skills).
    block = (
        "<system-reminder>\n## Available skills\n\n- **a&amp;b**: no, Markdown is not "
        "escaped\n- **md**: yes\n</system-reminder>"
    )
    first = FirstRequest(system=catalog, reminders=(block,), schemas="[]")
    assert described_skills(catalog) == {"shown"}
    assert (first.seen("shown"), first.seen("md"), first.seen("named")) == (
        "catalog",
        "relevant",
        None,
    )


def test_a_materialised_collection_reads_as_its_frontmatter(tmp_path: Path) -> None:
    name = "kdense-scientific"
    by_path = {c.path: c for c in read_collection(name)}
    repo = Repository([materialise(name, tmp_path)], cache_dir=False)
    assert len(repo) == len(by_path)
    for skill in repo:
        copy = by_path[Path(skill.directory).relative_to(tmp_path).joinpath("SKILL.md").as_posix()]
        written = parse_frontmatter(copy.skill_md()).data
        assert (skill.name, skill.description) == (written["name"], written["description"])


def test_a_request_for_a_skill_the_collection_lacks_is_refused(base: Path) -> None:
    name = collection_names()[0]
    repo = Repository([materialise(name, base / "refused")], cache_dir=False)
    with pytest.raises(ValueError, match="no loadable skill"):
        measure(name, repo, [LabelledRequest(name, "anything", "no-such-skill")], reference=False)

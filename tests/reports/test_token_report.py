"""The token report: per-skill costs, progressive disclosure against everything, budget effect."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from corpus_paths import ANTHROPIC
from skillshelf.core.catalog import CatalogEntry, render_catalog
from skillshelf.reports.tokenreport import (
    SkillTexts,
    catalog_fates,
    gather_skill_texts,
    report_for_repository,
    token_report,
)
from skillshelf.reports.tokens import TokenCounter, get_counter
from skillshelf.repository import Repository
from skillshelf.testing import make_skill
from skillshelf.tools import SkillTools

PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(64)


def words() -> TokenCounter:
    """A counter a person can follow: one token per whitespace-separated word."""
    return TokenCounter("o200k_base", "words", True, lambda text: len(text.split()))


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    skills = tmp_path / "skills"
    make_skill(
        skills,
        "alpha",
        "Does alpha things. Use when alpha.",
        body="one two three\n",
        files={
            "references/guide.md": "alpha beta",
            "notes.txt": "gamma",
            "scripts/run.py": "print('never inlined')\n",
            "assets/logo.png": PNG,
        },
    )
    make_skill(skills, "beta", "Does beta. Use when beta.", body="four five\n")
    make_skill(
        skills,
        "manual",
        "Only the user runs it. Use when asked.",
        body="six\n",
        frontmatter={"disable-model-invocation": True},
    )
    return Repository([skills], cache_dir=False)


def test_each_skill_counts_its_body_docs_and_files(repo: Repository) -> None:
    report = report_for_repository(repo, counter=words())
    alpha, beta, manual = report.skills

    assert (alpha.name, alpha.body, alpha.docs, alpha.doc_files) == ("alpha", 3, 3, 2)
    assert (alpha.binary_files, alpha.other_files) == (1, 1)  # logo.png; scripts/run.py
    assert (beta.body, beta.docs, beta.doc_files, beta.binary_files) == (2, 0, 0, 0)
    assert (manual.body, manual.catalog_entry, manual.catalog_fate) == (1, 0, "user_only")


def test_the_catalog_entry_is_what_the_skill_adds_to_the_rendered_catalog(
    repo: Repository,
) -> None:
    xml = report_for_repository(repo, counter=words(), format="xml")
    markdown = report_for_repository(repo, counter=words(), format="markdown")

    # <skill> <name> alpha </name> <description> …6 words… </description> <location> PATH
    # </location> </skill>: 10 tags and values + "Does alpha things. Use when alpha."
    assert xml.skills[0].catalog_entry == 10 + 6
    # "- **alpha**: Does alpha things. Use when alpha."
    assert markdown.skills[0].catalog_entry == 2 + 6
    # beta: 10 + "Does beta. Use when beta."; the wrapper: <available_skills> </available_skills>.
    assert xml.skills[1].catalog_entry == 10 + 5
    assert xml.budget.tokens_unbudgeted == 16 + 15 + 2
    assert xml.budget.tokens_unbudgeted == len(repo.catalog().split())


def test_on_load_is_what_skill_load_returns(repo: Repository) -> None:
    report = report_for_repository(repo, counter=words())
    loaded = SkillTools(repo).call("skill_load", {"skill": "alpha"})

    assert loaded.status == "ok"
    assert report.skills[0].on_load == len(loaded.content.split())
    assert report.skills[0].on_load > report.skills[0].body


def test_progressive_is_the_budgeted_catalog_and_everything_all_bodies_and_docs(
    repo: Repository,
) -> None:
    report = report_for_repository(repo, counter=words(), budget_chars=12_000)

    assert report.progressive == len(repo.catalog(budget_chars=12_000).split())
    assert report.everything == (3 + 3) + 2 + 1
    assert report.ratio == pytest.approx(report.everything / report.progressive)
    assert report.on_load == sum(s.on_load for s in report.skills)


def test_counts_match_the_exact_encoder_on_the_same_text(repo: Repository) -> None:
    counter = get_counter("cl100k_base", backend="tiktoken")

    report = report_for_repository(repo, counter=counter)

    assert report.skills[0].body == 4  # "one", " two", " three", "\n"
    assert report.skills[0].docs == counter.count("alpha beta") + counter.count("gamma")
    assert report.budget.tokens_unbudgeted == counter.count(repo.catalog())
    assert (report.encoding, report.backend, report.exact) == ("cl100k_base", "tiktoken", True)


def entries() -> list[CatalogEntry]:
    return [
        CatalogEntry("aa", "Short one. Use when short.", "/s/aa/SKILL.md"),
        CatalogEntry("bb", "A long description " * 10 + "Use when long.", "/s/bb/SKILL.md"),
        CatalogEntry("cc", "Another long one " * 10 + "Use when long too.", "/s/cc/SKILL.md"),
    ]


@pytest.mark.parametrize("fmt", ["xml", "markdown"])
def test_budget_fates_full_trimmed_names_only_and_omitted(fmt: str) -> None:
    items = entries()
    names_md = "## Available skills\n\n`aa`, `bb`, `cc`"

    def fates(budget: int | None) -> list[str]:
        found = catalog_fates(items, format=fmt, budget_chars=budget)  # type: ignore[arg-type]
        return [found[e.name] for e in items]

    assert fates(None) == ["full", "full", "full"]
    bare = render_catalog(
        [CatalogEntry(e.name, e.description, "") for e in items],
        format=fmt,  # type: ignore[arg-type]
    )
    assert fates(len(bare) - 100) == ["full", "trimmed", "trimmed"]
    if fmt == "markdown":
        assert fates(len(names_md)) == ["name_only", "name_only", "name_only"]
    assert fates(0) == ["omitted", "omitted", "omitted"]


def test_budget_effect_counts_fates_and_both_catalog_sizes() -> None:
    texts = [SkillTexts(e, True, "body", "load") for e in entries()]
    unbudgeted = render_catalog(entries())

    budget = len(unbudgeted) - 300  # locations dropped and descriptions shortened
    report = token_report(texts, words(), budget_chars=budget)

    effect = report.budget
    assert (effect.full, effect.trimmed, effect.name_only, effect.omitted) == (1, 2, 0, 0)
    assert effect.chars_unbudgeted == len(unbudgeted)
    assert effect.chars <= budget
    assert effect.tokens < effect.tokens_unbudgeted == len(unbudgeted.split())
    assert report.progressive == effect.tokens


def test_an_empty_repository_has_no_ratio(tmp_path: Path) -> None:
    report = report_for_repository(Repository([tmp_path], cache_dir=False), counter=words())

    assert report.skills == ()
    assert report.ratio is None
    assert report.to_dict()["ratio"] is None


def test_to_dict_carries_every_number_as_json(repo: Repository) -> None:
    data = json.loads(json.dumps(report_for_repository(repo, counter=words()).to_dict()))

    assert set(data) >= {"encoding", "backend", "exact", "format", "budget", "progressive"}
    assert data["skills"][0]["everything"] == 6
    assert data["budget"]["full"] == 2
    assert data["ratio"] == round(data["everything"] / data["progressive"], 3)


def test_gather_reads_documents_whole(tmp_path: Path) -> None:
    long_doc = "word " * 40_000
    make_skill(tmp_path, "big", files={"references/big.md": long_doc})
    skill = Repository([tmp_path], cache_dir=False).get("big")

    (texts,) = gather_skill_texts([skill])

    assert texts.docs == (("references/big.md", long_doc),)


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_the_anthropic_corpus_costs_far_more_injected_than_up_front(encoding: str) -> None:
    repo = Repository([ANTHROPIC], cache_dir=False)

    report = report_for_repository(repo, encoding=encoding, budget_chars=12_000)  # type: ignore[arg-type]

    assert len(report.skills) == 12
    assert report.budget.full == 12
    assert report.exact
    assert report.ratio is not None and report.ratio > 50


def test_names_that_fit_are_listed_and_the_rest_left_out_in_order() -> None:
    many = [
        CatalogEntry(f"s{i:03d}", "Does a thing. Use when.", f"/s/{i}/SKILL.md") for i in range(300)
    ]
    rendered = render_catalog(many, budget_chars=2_000)

    fates = catalog_fates(many, format="xml", budget_chars=2_000)

    listed = rendered.count("<name>")
    assert 0 < listed < 300
    assert [fates[e.name] for e in many] == ["name_only"] * listed + ["omitted"] * (300 - listed)
    assert f'<omitted count="{300 - listed}">' in rendered


def test_progress_is_reported_once_per_skill_in_order(repo: Repository) -> None:
    seen: list[str] = []
    report_for_repository(repo, counter=words(), on_skill=seen.append)
    assert seen == [s.name for s in repo.skills]


def _plain_report_numbers(
    texts: list[SkillTexts], counter: TokenCounter, budget_chars: int
) -> tuple[list[tuple[int, int, int, int]], int, int]:
    """What the report must say, each text counted alone with ``counter.count``."""
    entries = [t.entry for t in texts if t.model_invocable]
    head, tail = "<available_skills>\n", "</available_skills>"
    assert render_catalog([], format="xml") == head + tail
    rows = []
    for t in sorted(texts, key=lambda t: t.name):
        alone = render_catalog([t.entry], format="xml") if t.model_invocable else ""
        added = counter.count(alone.removeprefix(head).removesuffix(tail))
        docs = sum(counter.count(text) for _, text in t.docs)
        rows.append((added, counter.count(t.body), counter.count(t.on_load), docs))
    budgeted = render_catalog(entries, format="xml", budget_chars=budget_chars)
    return rows, counter.count(budgeted), counter.count(render_catalog(entries, format="xml"))


@pytest.mark.parametrize("encoding", ["o200k_base", "cl100k_base"])
def test_batched_and_cached_counts_equal_plain_per_text_counts_on_corpus_skills(
    encoding: str, tmp_path: Path
) -> None:
    repo = Repository([ANTHROPIC], cache_dir=False)
    texts = gather_skill_texts(repo.skills)
    counter = get_counter(encoding, backend="tiktoken")  # type: ignore[arg-type]
    rows, budgeted, unbudgeted = _plain_report_numbers(texts, counter, 4_000)

    for cache in (None, tmp_path, tmp_path):  # no cache, a cold one, then the warm one
        report = report_for_repository(repo, counter=counter, budget_chars=4_000, cache_dir=cache)
        assert [(s.catalog_entry, s.body, s.on_load, s.docs) for s in report.skills] == rows
        assert (report.budget.tokens, report.budget.tokens_unbudgeted) == (budgeted, unbudgeted)
    assert list(tmp_path.glob("tokens-*.bin"))


def test_a_document_reached_through_an_in_skill_link_is_read_whole(tmp_path: Path) -> None:
    skills = tmp_path / "skills"
    guide = "# Guide\n\n" + "a line of the guide\n" * 500
    make_skill(skills, "linked", "Has a linked doc. Use when linked.", files={"real.md": guide})
    (skills / "linked" / "alias.md").symlink_to("real.md")

    (texts,) = gather_skill_texts(Repository([skills], cache_dir=False).skills)

    assert dict(texts.docs) == {"alias.md": guide, "real.md": guide}

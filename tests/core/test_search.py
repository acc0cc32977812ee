"""Search: ranking tiers, BM25, tokenising, determinism and "did you mean" suggestions."""

from __future__ import annotations

import random
import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from search_stub import Skill
from skillshelf.core.search import SearchHit, SearchIndex, closest_names
from skillshelf.core.words import split_words
from skillshelf.errors import UsageError


def _names(hits: list[SearchHit]) -> list[str]:
    return [hit.name for hit in hits]


def _reasons(hits: list[SearchHit]) -> dict[str, str]:
    return {hit.name: hit.reason for hit in hits}


CATALOG = [
    Skill("pdf-tools", "Fill forms and merge PDF files.", triggers=("merge pdfs",), tags=("pdf",)),
    Skill("pdf-reader", "Extract text and tables from PDF documents.", tags=("pdf", "text")),
    Skill("excel", "Edit spreadsheets; pdf-tools can export them.", tags=("office",)),
    Skill("slides", "Build presentation decks.", triggers=("make a deck",), tags=("office",)),
    Skill("git-helper", "Review commits and branches in a git repository.", tags=("git",)),
    Skill("weather", "Look up the forecast for a city.", triggers=("is it raining",)),
]


@pytest.fixture
def index() -> SearchIndex:
    return SearchIndex(CATALOG)


def test_len_counts_indexed_skills(index: SearchIndex) -> None:
    assert len(index) == len(CATALOG)
    assert len(SearchIndex([])) == 0


def test_exact_name_outranks_description_match(index: SearchIndex) -> None:
    hits = index.search("pdf-tools")
    assert hits[0].name == "pdf-tools"
    assert hits[0].reason == "exact name"
    assert _reasons(hits)["excel"] == "description"  # mentions "pdf-tools" as a phrase


@pytest.mark.parametrize("query", ["PDF-Tools", "pdf tools", "pdf_tools", "  Pdf   Tools  "])
def test_exact_name_ignores_case_spaces_and_underscores(index: SearchIndex, query: str) -> None:
    assert index.search(query)[0].reason == "exact name"
    assert index.search(query)[0].name == "pdf-tools"


def test_trigger_phrase_equal_to_query_matches(index: SearchIndex) -> None:
    hits = index.search("Make a deck")
    assert hits[0].name == "slides"
    assert hits[0].reason == "trigger phrase"


def test_query_containing_trigger_phrase_matches(index: SearchIndex) -> None:
    hits = index.search("please, is it raining in Paris?")
    assert hits[0].name == "weather"
    assert hits[0].reason == "trigger phrase"


def test_trigger_phrase_matches_whole_words_only(index: SearchIndex) -> None:
    assert _reasons(index.search("make a decking"))["slides"] != "trigger phrase"


def test_stop_word_trigger_never_matches() -> None:
    index = SearchIndex([Skill("baker", "Bakes bread.", triggers=("how to",))])
    assert index.search("how to knit") == []


def test_trigger_phrase_outranks_name_contains(index: SearchIndex) -> None:
    hits = index.search("merge pdfs")
    assert hits[0].name == "pdf-tools"
    assert hits[0].reason == "trigger phrase"


def test_name_contains_query_outranks_tag(index: SearchIndex) -> None:
    hits = index.search("reader")
    assert hits[0].name == "pdf-reader"
    assert hits[0].reason == "name contains"


def test_query_containing_name_matches_name_tier(index: SearchIndex) -> None:
    hits = index.search("weather tomorrow")
    assert hits[0].name == "weather"
    assert hits[0].reason == "name contains"


def test_name_tier_outranks_a_tag() -> None:
    index = SearchIndex(
        [Skill("office-suite", "Documents."), Skill("writer", "Documents.", tags=("office",))]
    )
    assert _names(index.search("office")) == ["office-suite", "writer"]
    assert _reasons(index.search("office")) == {"office-suite": "name contains", "writer": "bm25"}


def test_a_tag_matches_like_a_description_word() -> None:
    index = SearchIndex([Skill("beta", "Plots.", tags=("charts",)), Skill("gamma", "Maps.")])
    assert _names(index.search("charts")) == ["beta"]
    assert index.search("charts")[0].reason == "bm25"


def test_a_generic_tag_does_not_outrank_text_relevance() -> None:
    # The case: "write a startup pitch deck" put a Writing-tagged style guide above pptx.
    index = SearchIndex(
        [
            Skill("style-guide", "House style for prose: tone and grammar.", tags=("Writing",)),
            Skill("pptx", "Create and edit slide decks: pitch decks, presentations, slides."),
            Skill("docx", "Create and edit Word documents."),
        ]
    )
    assert _names(index.search("write a startup pitch deck"))[0] == "pptx"


def test_repeated_tags_count_once() -> None:
    once = SearchIndex([Skill("a", "Plots.", tags=("charts",)), Skill("b", "Maps.")])
    many = SearchIndex(
        [Skill("a", "Plots.", tags=("charts", "Charts", "charts")), Skill("b", "Maps.")]
    )
    assert once.search("charts")[0].score == many.search("charts")[0].score


def test_a_keyword_stuffed_description_saturates() -> None:
    plain = "Review pull requests and comment on the diff."
    stuffed = "Review review review reviews reviewing reviewed review code review."
    index = SearchIndex(
        [Skill("reviewer", plain), Skill("stuffer", stuffed), Skill("other", "Draw maps.")]
    )
    scores = {hit.name: hit.score for hit in index.search("review a pull request")}
    assert _names(index.search("review a pull request"))[0] == "reviewer"
    # One word repeated eight times scores less than twice the same word said once.
    single = {hit.name: hit.score for hit in index.search("review")}
    assert single["stuffer"] < 2 * single["reviewer"]
    assert scores["reviewer"] > scores["stuffer"]


def test_description_phrase_outranks_scattered_words() -> None:
    index = SearchIndex(
        [
            Skill("alpha", "Report on sales figures. Merge tables for the report."),
            Skill("beta", "Create a sales report every week."),
        ]
    )
    hits = index.search("Sales Report")
    assert _names(hits) == ["beta", "alpha"]
    assert _reasons(hits) == {"beta": "description", "alpha": "bm25"}


def test_description_phrase_ignores_surrounding_punctuation() -> None:
    index = SearchIndex([Skill("beta", "Create a sales report every week.")])
    assert index.search("sales report?")[0].reason == "description"


def test_description_phrase_needs_whole_words() -> None:
    index = SearchIndex([Skill("alpha", "Uses sales reporting tools.")])
    assert index.search("sales report")[0].reason == "bm25"


def test_bm25_weights_name_above_description() -> None:
    index = SearchIndex(
        [
            Skill("image-resize", "Shrink pictures."),
            Skill("thumbnails", "Make small copies of an image quickly."),
        ]
    )
    hits = index.search("image cropping")
    assert _names(hits) == ["image-resize", "thumbnails"]
    assert {hit.reason for hit in hits} == {"bm25"}


def test_bm25_rarer_term_scores_higher() -> None:
    index = SearchIndex(
        [
            Skill("one", "Convert audio files."),
            Skill("two", "Convert video files."),
            Skill("three", "Convert image files."),
        ]
    )
    hits = index.search("convert audio clips")
    assert hits[0].name == "one"
    assert hits[1].score < hits[0].score


@pytest.mark.parametrize("size", [2, 5, 60])
def test_bm25_of_a_query_is_the_sum_of_its_words_scores(size: int) -> None:
    # Plural descriptions ("word3s"): a word matches by stemming only, so every hit is pure BM25.
    rng = random.Random(size)
    words = [f"word{i}" for i in range(100)]
    skills = [Skill(f"s{i}", " ".join(f"{w}s," for w in rng.sample(words, 2))) for i in range(200)]
    index = SearchIndex(skills)
    single = {
        (word, hit.name): hit.score for word in words for hit in index.search(word, limit=200)
    }
    query = rng.sample(words, size)
    hits = index.search(" ".join(query), limit=200)
    assert hits
    for hit in hits:
        assert hit.reason == "bm25"
        assert hit.score == pytest.approx(sum(single.get((w, hit.name), 0.0) for w in query))


def test_equal_scores_are_ordered_by_name() -> None:
    skills = [Skill(name, "Translate text between languages.") for name in ("cx", "ax", "bx")]
    hits = SearchIndex(skills).search("languages translation")
    assert _names(hits) == ["ax", "bx", "cx"]
    assert len({hit.score for hit in hits}) == 1


@pytest.mark.parametrize("query", ["parsing", "parsed", "parses", "parse"])
def test_stemming_matches_inflected_forms(query: str) -> None:
    index = SearchIndex([Skill("csv-kit", "Parses CSV files."), Skill("other", "Draws maps.")])
    assert _names(index.search(query)) == ["csv-kit"]


@pytest.mark.parametrize(
    ("query", "description"),
    [
        ("libraries", "Pin library versions."),
        ("running tests", "Run the test suite."),
        ("tested", "Test code."),
        ("PDFs", "Read a PDF."),
    ],
)
def test_stemming_applies_to_queries_and_documents(query: str, description: str) -> None:
    assert _names(SearchIndex([Skill("x", description)]).search(query)) == ["x"]


def test_stop_words_alone_match_nothing(index: SearchIndex) -> None:
    assert index.search("how to do it with the") == []


def test_stop_words_do_not_affect_ranking(index: SearchIndex) -> None:
    with_stop_words = index.search("the commits of a repository")
    assert _names(with_stop_words) == _names(index.search("commits repository"))


@pytest.mark.parametrize("query", ["", "   ", "\n\t", "?!", "--"])
def test_empty_or_punctuation_query_returns_nothing(index: SearchIndex, query: str) -> None:
    assert index.search(query) == []


def test_unrelated_skills_are_not_returned(index: SearchIndex) -> None:
    assert _names(index.search("forecast")) == ["weather"]
    assert index.search("kubernetes") == []


def test_unicode_words_match_case_insensitively() -> None:
    index = SearchIndex(
        [
            Skill("übersetzer", "Übersetzt Texte über Größe und Maße."),
            Skill("日本語", "テキストを翻訳する 日本語 ツール"),
            Skill("café", "Crème brûlée recipes."),
        ]
    )
    assert _names(index.search("GRÖSSE")) == ["übersetzer"]
    assert _names(index.search("ÜBERSETZER"))[0] == "übersetzer"
    assert index.search("日本語")[0].reason == "exact name"
    assert _names(index.search("brûlée")) == ["café"]


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_splits_words_like_the_unicode_path(text: str) -> None:
    assert split_words(text) == re.findall(r"[^\W_]+", text.casefold())


def test_limit_caps_the_number_of_hits(index: SearchIndex) -> None:
    assert len(index.search("pdf", limit=10)) == 3
    assert _names(index.search("pdf", limit=2)) == _names(index.search("pdf"))[:2]


@pytest.mark.parametrize("limit", [0, -1])
def test_limit_below_one_raises_usage_error(index: SearchIndex, limit: int) -> None:
    with pytest.raises(UsageError):
        index.search("pdf", limit=limit)


def test_query_is_capped_to_64_words(index: SearchIndex) -> None:
    filler = " ".join(["lorem"] * 63)
    assert _names(index.search(f"{filler} forecast")) == ["weather"]
    assert index.search(f"{filler} lorem forecast") == []
    assert index.search("forecast " + "lorem " * 10_000)[0].name == "weather"


def test_hit_carries_the_full_description() -> None:
    description = "Summarise long reports. " + "More detail. " * 100
    hit = SearchIndex([Skill("summariser", description)]).search("long reports")[0]
    assert hit == SearchHit("summariser", hit.score, description, "description")


def test_index_accepts_any_iterable() -> None:
    assert len(SearchIndex(skill for skill in CATALOG)) == len(CATALOG)


def test_results_do_not_depend_on_input_order() -> None:
    rng = random.Random(7)
    words = ["pdf", "merge", "split", "chart", "table", "image", "text", "audio", "video", "git"]
    skills = [
        Skill(
            f"{rng.choice(words)}-{i}",
            " ".join(rng.choices(words, k=8)),
            triggers=(" ".join(rng.sample(words, 2)),),
            tags=(rng.choice(words),),
        )
        for i in range(60)
    ]
    shuffled = skills[:]
    rng.shuffle(shuffled)
    first, second = SearchIndex(skills), SearchIndex(shuffled)
    for query in ["pdf", "merge pdf", "sales report chart", "image-7", "text audio video", "x"]:
        assert first.search(query, limit=60) == second.search(query, limit=60)


def test_duplicate_names_are_all_returned_deterministically() -> None:
    skills = [Skill("dup", "Second copy of charts."), Skill("dup", "First copy of charts.")]
    forward, backward = SearchIndex(skills), SearchIndex(skills[::-1])
    assert forward.search("charts") == backward.search("charts")
    assert len(forward.search("charts")) == 2


@given(st.text(max_size=200), st.integers(min_value=1, max_value=8))
def test_search_never_fails_and_returns_sorted_positive_hits(query: str, limit: int) -> None:
    hits = SearchIndex(CATALOG).search(query, limit=limit)
    assert len(hits) <= limit
    assert all(hit.score > 0 for hit in hits)
    keys = [(-hit.score, hit.name) for hit in hits]
    assert keys == sorted(keys)


def test_closest_names_suggests_the_name_for_a_typo() -> None:
    names = ["pdf-tools", "pdf-reader", "excel", "slides"]
    assert closest_names("pdf-tool", names)[0] == "pdf-tools"
    assert closest_names("exel", names) == ["excel"]
    assert closest_names("SLIDES", names) == ["slides"]


def test_closest_names_favours_prefix_and_substring_matches() -> None:
    names = ["git-helper", "gif-maker", "github-actions"]
    assert closest_names("git", names) == ["git-helper", "github-actions"]
    assert closest_names("helper", names) == ["git-helper"]


def test_closest_names_drops_unrelated_names() -> None:
    assert closest_names("weather", ["pdf-tools", "excel"]) == []
    assert closest_names("", ["pdf-tools"]) == []
    assert closest_names("pdf", []) == []


def test_closest_names_is_deterministic_and_limited() -> None:
    names = [f"skill-{letter}" for letter in "edcba"]
    assert closest_names("skill-x", names) == ["skill-a", "skill-b", "skill-c"]
    assert closest_names("skill-x", reversed(names), limit=5) == sorted(names)
    with pytest.raises(UsageError):
        closest_names("skill", names, limit=0)


ZH_CATALOG = [
    Skill(
        "meeting-minutes",
        "把会议录音的文字稿整理成会议纪要：议题、决议和待办事项。当用户要求整理纪要时使用。",
        triggers=("会议纪要",),
    ),
    Skill("weekly-report", "根据本周的工作记录撰写工作周报。当用户要求写周报、月报时使用。"),
    Skill("contract-review", "审阅中文商务合同，标出违约责任和付款条款的风险。"),
    Skill("pdf-tools", "Merge PDF files."),
]


def test_a_chinese_query_containing_a_declared_trigger_finds_the_skill() -> None:
    hits = SearchIndex(ZH_CATALOG).search("帮我把今天的会议纪要发给大家")
    assert hits[0].name == "meeting-minutes"
    assert hits[0].reason == "trigger phrase"


def test_a_word_inside_a_chinese_description_matches() -> None:
    index = SearchIndex(ZH_CATALOG)
    assert _names(index.search("周报"))[0] == "weekly-report"
    assert _names(index.search("这份租赁合同有没有风险"))[0] == "contract-review"
    assert _names(index.search("违约责任"))[0] == "contract-review"


def test_a_chinese_phrase_in_a_description_is_a_description_match() -> None:
    hits = SearchIndex(ZH_CATALOG).search("付款条款")
    assert hits[0].name == "contract-review"
    assert hits[0].reason == "description"


def test_mixed_chinese_and_latin_queries_match_both_scripts() -> None:
    assert _names(SearchIndex(ZH_CATALOG).search("合并两个PDF文件"))[0] == "pdf-tools"


def test_chinese_trigger_matches_only_its_run_of_characters() -> None:
    index = SearchIndex([Skill("minutes", "Takes notes.", triggers=("会议纪要",))])
    assert _reasons(index.search("会议的纪要"))["minutes"] == "bm25"  # 会议 and 纪要, not adjacent


@pytest.mark.parametrize(
    ("query", "expected"),
    [("翻訳してください", "ja-translate"), ("영어 번역을 부탁해요", "ko-translate")],
)
def test_japanese_and_korean_text_is_searchable(query: str, expected: str) -> None:
    index = SearchIndex(
        [
            Skill("ja-translate", "日本語のテキストを英語に翻訳する。"),
            Skill("ko-translate", "한국어 텍스트를 영어로 번역합니다."),
            Skill("other", "要約を作成する。"),
        ]
    )
    assert _names(index.search(query))[0] == expected


def test_a_long_chinese_query_is_capped_like_a_long_english_one() -> None:
    index = SearchIndex(ZH_CATALOG)
    assert _names(index.search("周报" + "的" * 100_000))[0] == "weekly-report"
    assert index.search("的" * 100 + "周报") == []  # past the first 64 words

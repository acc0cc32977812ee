"""The one tokenizer: words of space-separated scripts, CJK runs as overlapping bigrams."""

from __future__ import annotations

import re
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillshelf.core.words import _CJK, count_cjk_characters, count_words, split_words


def test_latin_words_are_case_folded_and_split_on_punctuation() -> None:
    assert split_words("Merge PDF-files, fast_and_SAFE!") == [
        "merge",
        "pdf",
        "files",
        "fast",
        "and",
        "safe",
    ]


def test_chinese_runs_become_overlapping_bigrams() -> None:
    assert split_words("会议纪要") == ["会议", "议纪", "纪要"]


def test_a_lone_cjk_character_is_a_word() -> None:
    assert split_words("表 和 图") == ["表", "和", "图"]


def test_cjk_runs_end_at_latin_letters_digits_and_punctuation() -> None:
    assert split_words("把PDF转成Word，共3页。") == ["把", "pdf", "转成", "word", "共", "3", "页"]


def test_japanese_kana_and_kanji_and_korean_hangul_are_bigrammed() -> None:
    assert split_words("翻訳する") == ["翻訳", "訳す", "する"]
    assert split_words("カタカナ") == ["カタ", "タカ", "カナ"]
    assert split_words("번역합니다") == ["번역", "역합", "합니", "니다"]


def test_other_scripts_keep_whole_words() -> None:
    assert split_words("Übersetzt Größe über привет") == ["übersetzt", "grösse", "über", "привет"]


@given(st.text())
def test_words_outside_cjk_match_the_word_regex(text: str) -> None:
    without_cjk = re.sub(f"[{_CJK}]", " ", text)
    normalised = unicodedata.normalize("NFKC", without_cjk)
    if re.search(f"[{_CJK}]", normalised):  # a compatibility character that NFKC makes CJK
        return
    assert split_words(without_cjk) == re.findall(r"[^\W_]+", normalised.casefold())


@given(st.text(alphabet=st.characters(max_codepoint=127)))
def test_ascii_fast_path_splits_words_like_the_unicode_path(text: str) -> None:
    assert split_words(text) == re.findall(r"[^\W_]+", text.casefold())
    assert count_words(text) == len(re.findall(r"[^\W_]+", text))


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Merges PDF files.", 3),
        ("会议纪要", 2),
        ("整理会议纪要", 3),
        ("表", 1),
        ("把 PDF 合并", 3),  # 把 (1) + pdf (1) + 合并 (1)
        ("", 0),
    ],
)
def test_count_words_counts_a_cjk_run_as_half_its_characters(text: str, count: int) -> None:
    assert count_words(text) == count


def test_full_width_latin_and_digits_match_their_ascii_forms() -> None:
    assert split_words("把ＰＤＦ转成Ｗｏｒｄ，２０２４年") == [
        "把",
        "pdf",
        "转成",
        "word",
        "2024",
        "年",
    ]


def test_count_cjk_characters_counts_han_kana_and_hangul_but_not_punctuation_or_latin() -> None:
    assert count_cjk_characters("会议纪要，PDF。") == 4
    assert count_cjk_characters("カタカナとひらがな") == 9
    assert count_cjk_characters("한국어 text") == 3
    assert count_cjk_characters("plain ASCII, café") == 0

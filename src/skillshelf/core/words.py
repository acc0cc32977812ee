"""Split text into words, in any script: the one tokenizer of search, baselines and lint.

Scripts that separate words with spaces (Latin, Cyrillic, Greek, …) give one word per run of
letters and digits; ``-``, ``_`` and every other non-word character separate words.

Chinese, Japanese and Korean runs (Han, Hiragana, Katakana, Hangul) are written without
spaces, so they are indexed as Lucene's ``CJKAnalyzer`` does: every overlapping pair of
characters is a word ("会议纪要" -> "会议", "议纪", "纪要") and a lone character is a word of
its own. A CJK word of two or more characters is then found, as a run of consecutive
bigrams, wherever it appears, with no dictionary to maintain. Measured against the ``jieba``
segmenter on the labelled Chinese queries of ``bench/data/search_queries.jsonl``, bigrams
rank as well (see docs/search.md), so no segmenter is needed.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["count_cjk_characters", "count_words", "split_words"]

# Han (with extensions A-G and compatibility ideographs), Hiragana, Katakana (with the
# phonetic extensions and half-width forms), Hangul syllables and jamo.
_CJK: Final = (
    "\u1100-\u11ff\u3040-\u30ff\u3130-\u318f\u31f0-\u31ff\u3400-\u4dbf\u4e00-\u9fff"
    "\ua960-\ua97f\uac00-\ud7af\ud7b0-\ud7ff\uf900-\ufaff\uff66-\uff9f"
    "\U00020000-\U0003134f"
)
_RUNS: Final = re.compile(f"([{_CJK}]+)|[^\\W_{_CJK}]+")
_CJK_CHARACTER: Final = re.compile(f"[{_CJK}]")
_ASCII_SEPARATORS: Final = str.maketrans({chr(c): " " for c in range(128) if not chr(c).isalnum()})
# Written Chinese averages about 1.7 characters a word (Japanese kana words run longer): a CJK
# run of n characters counts as n / 2 words, rounded up, when words are counted.
_CJK_CHARS_PER_WORD: Final = 2


def split_words(text: str) -> list[str]:
    """Case-folded words of ``text``, CJK runs as overlapping bigrams, in text order.

    Non-ASCII text is NFKC-normalised first, so full-width letters and digits typed with a CJK
    input method (``ＰＤＦ``, ``２０２４``) match their ASCII forms.
    """
    if text.isascii():  # same result as the regex, three times faster
        return text.lower().translate(_ASCII_SEPARATORS).split()
    out: list[str] = []
    for match in _RUNS.finditer(unicodedata.normalize("NFKC", text).casefold()):
        run = match[0]
        if match[1] is None or len(run) == 1:
            out.append(run)
        else:
            out.extend(map(str.__add__, run[:-1], run[1:]))
    return out


def count_words(text: str) -> int:
    """How many words ``text`` holds, for length checks: a CJK run of n characters is n / 2.

    Bigrams would count a CJK run of n characters as n - 1 words, about twice what a reader
    counts; this keeps length thresholds written for English meaningful for CJK text.
    """
    if text.isascii():
        return len(text.translate(_ASCII_SEPARATORS).split())
    count = 0
    for match in _RUNS.finditer(text):
        if match[1] is None:
            count += 1
        else:
            count += -(-len(match[0]) // _CJK_CHARS_PER_WORD)
    return count


def count_cjk_characters(text: str) -> int:
    """How many characters of ``text`` are Chinese, Japanese or Korean (Han, kana, Hangul:
    the characters :func:`split_words` indexes as bigrams)."""
    if text.isascii():
        return 0
    return len(_CJK_CHARACTER.findall(text))

"""Near-duplicate descriptions are found in Chinese text too (the one tokenizer's bigrams)."""

from __future__ import annotations

from skillshelf.lint._similar import description_tokens


def test_chinese_descriptions_are_compared_by_bigrams_not_as_one_run() -> None:
    a = description_tokens("整理会议录音并生成会议纪要，当用户需要会议总结时使用")
    b = description_tokens("整理会议录音并生成会议纪要，当用户需要会议记录时使用")
    assert len(a) > 10 and len(b) > 10
    overlap = len(a & b) / len(a | b)
    assert overlap > 0.7

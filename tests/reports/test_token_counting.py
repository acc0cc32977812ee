"""Token counting: exact offline counts from tiktoken or bpe-openai, and a labelled estimate."""

from __future__ import annotations

import dataclasses
import hashlib
import socket
from pathlib import Path
from typing import Any

import pytest

from corpus_paths import ANTHROPIC
from skillshelf.errors import ConfigError, UsageError
from skillshelf.reports import tokens
from skillshelf.reports.tokens import BACKEND_ENV, EncodingName, get_counter

ENCODINGS: list[EncodingName] = ["o200k_base", "cl100k_base"]
EXACT_BACKENDS = ["tiktoken", "bpe_openai"]
CHINESE = Path(__file__).resolve().parents[2] / "examples" / "skills-zh"
CL100K_URL = "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken"
CL100K_SHA256 = "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7"


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """Forget every built counter and encoder, with tiktoken's cache in an empty folder."""
    import tiktoken.registry

    cache = tmp_path / "tiktoken-cache"
    monkeypatch.setattr(tokens, "_COUNTERS", {})
    monkeypatch.setattr(tiktoken.registry, "ENCODINGS", {})
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(cache))
    monkeypatch.delenv(BACKEND_ENV, raising=False)
    return cache


@pytest.fixture
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: Any, **_kwargs: Any) -> None:
        raise AssertionError("token counting tried to open a network connection")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("backend", EXACT_BACKENDS)
@pytest.mark.parametrize(
    ("text", "expected"),
    [
        pytest.param("hello world", 2, id="hello-world"),  # "hello", " world"
        pytest.param("Hello, World!", 4, id="punctuation"),  # "Hello", ",", " World", "!"
        pytest.param("", 0, id="empty"),
    ],
)
def test_hand_checked_strings_count_exactly(
    encoding: EncodingName, backend: Any, text: str, expected: int
) -> None:
    counter = get_counter(encoding, backend=backend)

    assert counter.exact
    assert counter.count(text) == expected


@pytest.mark.parametrize("backend", EXACT_BACKENDS)
def test_special_token_text_counts_as_ordinary_text(backend: Any) -> None:
    counter = get_counter("cl100k_base", backend=backend)

    # One special token would be 1; as text it is "<|", "endo", "ft", "ext", "|>", " hi" and more.
    assert counter.count("<|endoftext|> hi") == 8


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_both_exact_backends_agree_on_corpus_markdown(encoding: EncodingName) -> None:
    first = get_counter(encoding, backend="tiktoken")
    second = get_counter(encoding, backend="bpe_openai")
    samples = sorted(ANTHROPIC.rglob("*.md"))[:40]

    assert samples
    for path in samples:
        text = path.read_text(encoding="utf-8")
        assert first.count(text) == second.count(text), path


def test_bpe_openai_counts_texts_longer_than_its_limit_in_safe_pieces() -> None:
    text = "\n".join(p.read_text(encoding="utf-8") for p in sorted(ANTHROPIC.rglob("*.md")))
    assert len(text) > 5 * tokens._CHUNK_CHARS

    exact = get_counter("o200k_base", backend="tiktoken").count(text)

    assert get_counter("o200k_base", backend="bpe_openai").count(text) == exact


def test_pieces_cut_only_after_a_newline_before_a_letter() -> None:
    text = ("word " * 30 + "\n") * 50 + "x" * 300

    pieces = list(tokens._pieces(text, limit=400))

    assert "".join(pieces) == text
    assert all(len(p) <= 400 for p in pieces[:-1])
    assert all(p.endswith("\n") for p in pieces[:-2])


def test_tiktoken_counts_exactly_offline_from_an_empty_cache(fresh: Path, no_network: None) -> None:
    counter = get_counter("cl100k_base")

    assert (counter.backend, counter.exact) == ("tiktoken", True)
    assert counter.count("hello world") == 2
    seeded = fresh / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    assert hashlib.sha256(seeded.read_bytes()).hexdigest() == CL100K_SHA256
    assert not list(fresh.glob("*.tmp"))


def test_a_corrupt_cached_rank_file_is_replaced_not_downloaded(
    fresh: Path, no_network: None
) -> None:
    fresh.mkdir()
    cached = fresh / hashlib.sha1(CL100K_URL.encode()).hexdigest()
    cached.write_bytes(b"not a rank file")

    counter = get_counter("cl100k_base")

    assert counter.backend == "tiktoken"
    assert counter.count("hello world") == 2
    assert hashlib.sha256(cached.read_bytes()).hexdigest() == CL100K_SHA256


def test_an_unwritable_tiktoken_cache_falls_back_to_bpe_openai(
    fresh: Path, no_network: None, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", str(blocker / "cache"))

    counter = get_counter("o200k_base")

    assert (counter.backend, counter.exact) == ("bpe_openai", True)
    assert "cannot write its cache" in counter.note
    assert counter.count("hello world") == 2


def test_a_disabled_tiktoken_cache_is_not_used_since_tiktoken_would_download(
    fresh: Path, no_network: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")

    counter = get_counter("o200k_base")

    assert counter.backend == "bpe_openai"
    assert "turned off" in counter.note


def test_asking_for_tiktoken_by_name_when_it_cannot_work_offline_is_a_config_error(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TIKTOKEN_CACHE_DIR", "")

    with pytest.raises(ConfigError, match="Cannot count o200k_base tokens with tiktoken"):
        get_counter("o200k_base", backend="tiktoken")


def test_the_estimate_is_labelled_and_forced_by_the_environment(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(BACKEND_ENV, "estimate")

    counter = get_counter("o200k_base")

    assert (counter.backend, counter.exact) == ("estimate", False)
    assert "estimate" in counter.label
    assert counter.count("hello world") == 2
    assert counter.count("") == 0


def test_without_either_package_the_estimate_says_why(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import sys

    monkeypatch.setitem(sys.modules, "tiktoken", None)
    monkeypatch.setitem(sys.modules, "bpe_openai", None)

    counter = get_counter("cl100k_base")

    assert counter.backend == "estimate"
    assert "tiktoken: not installed" in counter.note
    assert "bpe_openai: not installed" in counter.note


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_estimate_lands_near_the_exact_count_on_corpus_skills(encoding: EncodingName) -> None:
    exact = get_counter(encoding, backend="tiktoken")
    estimate = get_counter(encoding, backend="estimate")
    texts = [p.read_text(encoding="utf-8") for p in sorted(ANTHROPIC.glob("*/SKILL.md"))]

    total_exact = sum(exact.count(t) for t in texts)
    total_estimate = sum(estimate.count(t) for t in texts)

    assert abs(total_estimate - total_exact) / total_exact < 0.15


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_the_estimate_counts_chinese_skills_near_the_exact_count(encoding: EncodingName) -> None:
    exact = get_counter(encoding, backend="tiktoken")
    estimate = get_counter(encoding, backend="estimate")
    texts = [p.read_text(encoding="utf-8") for p in sorted(CHINESE.glob("*/SKILL.md"))]
    assert texts

    for text in texts:  # each within 10%; about half the exact count before CJK was weighed
        assert abs(estimate.count(text) - exact.count(text)) / exact.count(text) < 0.10


def test_counters_are_built_once_per_process() -> None:
    assert get_counter("o200k_base", backend="bpe_openai") is get_counter(
        "o200k_base", backend="bpe_openai"
    )


@pytest.mark.parametrize(
    ("encoding", "backend", "message"),
    [
        pytest.param("p50k_base", None, "Unknown encoding 'p50k_base'", id="encoding"),
        pytest.param("o200k_base", "sentencepiece", "Unknown token counting backend", id="backend"),
    ],
)
def test_unknown_encodings_and_backends_are_usage_errors(
    encoding: Any, backend: Any, message: str
) -> None:
    with pytest.raises(UsageError, match=message):
        get_counter(encoding, backend=backend)


@pytest.mark.parametrize("backend", [*EXACT_BACKENDS, "estimate"])
def test_count_many_gives_each_texts_own_count_and_encodes_repeats_once(backend: Any) -> None:
    counter = get_counter("o200k_base", backend=backend)
    texts = ["hello world", "", "Hello, World!", "hello world", "<|endoftext|> hi" * 50]
    seen: list[str] = []

    def one(text: str) -> int:
        seen.append(text)
        return counter.counter(text)

    def many(batch: list[str]) -> list[int]:
        seen.extend(batch)
        assert counter.batch is not None
        return counter.batch(batch)

    spy = dataclasses.replace(counter, counter=one, batch=many if counter.batch else None)

    assert spy.count_many(texts) == [counter.count(t) for t in texts]
    assert sorted(seen) == sorted({t for t in texts if t})


# Characters that decide where o200k_base and cl100k_base pieces end: newlines, other
# whitespace (Unicode too), '/', apostrophes, punctuation, digits, CJK, combining marks.
_TRICKY = [*"ab Z9/'.:-<>#\n\r\t", "\n\n", "//", "\n/", " \n", "'s", "\u3000", "会", "議", "한"]
_TRICKY += ["\u0301", "é", "\x85", "\u2028", "\x1c", "\xa0", "😀"]


@pytest.mark.parametrize("encoding", ENCODINGS)
def test_a_token_safe_cut_never_changes_the_count_of_random_texts(encoding: EncodingName) -> None:
    import random

    counter = get_counter(encoding, backend="tiktoken")
    rng = random.Random(17)
    checked = 0
    for _ in range(20_000):
        left = "".join(rng.choices(_TRICKY, k=rng.randint(1, 10)))
        right = "".join(rng.choices(_TRICKY, k=rng.randint(1, 10)))
        if tokens.token_safe_cuts(left, right):
            checked += 1
            assert counter.count(left + right) == counter.count(left) + counter.count(right), (
                left,
                right,
            )

    assert checked > 500


def test_cuts_before_whitespace_or_a_slash_or_after_no_newline_are_not_safe() -> None:
    assert tokens.token_safe_cuts("a\n", "b")
    assert tokens.token_safe_cuts("a\n", "<b>")
    assert not tokens.token_safe_cuts("a\n", "\nb")
    assert not tokens.token_safe_cuts("a\n", " b")
    assert not tokens.token_safe_cuts("a\n", "\u3000b")
    assert not tokens.token_safe_cuts("a.\n", "/b")
    assert not tokens.token_safe_cuts("a", "b")
    assert not tokens.token_safe_cuts("a\n", "")


def test_split_at_safe_cuts_rejoins_to_the_text_and_keeps_the_middle_of_a_quoted_text() -> None:
    body = "\n# Title\n\nSome text.\n- a list\n  indented\n\nLast line.\n"
    head, middle, tail = tokens.split_at_safe_cuts(body)

    assert head + middle + tail == body
    assert (head, tail) == ("\n", "Last line.\n")
    assert f'<skill_content name="x">\n{body.strip()}\n</skill_content>'.count(middle) == 1
    assert tokens.split_at_safe_cuts("no newline at all") == ("no newline at all", "", "")
    assert tokens.split_at_safe_cuts("one\ncut") == ("one\ncut", "", "")


def _corpus_texts() -> list[str]:
    paths = sorted(ANTHROPIC.glob("*/SKILL.md")) + sorted(ANTHROPIC.glob("*/reference*.md"))
    return [p.read_text(encoding="utf-8") for p in paths]


@pytest.mark.parametrize("encoding", ENCODINGS)
@pytest.mark.parametrize("backend", EXACT_BACKENDS)
def test_texts_given_as_parts_count_exactly_as_the_joined_text(
    encoding: EncodingName, backend: Any
) -> None:
    counter = get_counter(encoding, backend=backend)
    texts = _corpus_texts()
    as_parts = [tokens.split_at_safe_cuts(t) for t in texts]
    # Parts cut anywhere (between words, inside a line) must be joined again, not summed.
    blind = [(t[: len(t) // 3], t[len(t) // 3 : len(t) // 2], t[len(t) // 2 :]) for t in texts]

    assert counter.count_many(as_parts) == [counter.count(t) for t in texts]
    assert counter.count_many(blind) == [counter.count(t) for t in texts]


def test_the_estimate_counts_parts_as_their_joined_text() -> None:
    counter = get_counter("o200k_base", backend="estimate")
    text = "A line.\nAnother line of text.\n"

    assert counter.count_many([("A line.\n", "Another line of text.\n")]) == [counter.count(text)]


def _encoded(counter: tokens.TokenCounter) -> tuple[tokens.TokenCounter, list[str]]:
    seen: list[str] = []

    def one(text: str) -> int:
        seen.append(text)
        return counter.counter(text)

    return dataclasses.replace(counter, counter=one, batch=None), seen


def test_a_count_cache_answers_a_second_run_without_encoding(tmp_path: Path) -> None:
    counter, seen = _encoded(get_counter("o200k_base", backend="tiktoken"))
    texts = _corpus_texts()[:6]
    expected = [counter.count(t) for t in texts]
    first = tokens.CountCache(tmp_path)
    assert counter.count_many(texts, cache=first) == expected
    first.save()
    seen.clear()

    assert counter.count_many(texts, cache=tokens.CountCache(tmp_path)) == expected
    assert seen == []


def test_a_count_cache_is_per_encoding_and_encodes_only_new_texts(tmp_path: Path) -> None:
    o200k, seen = _encoded(get_counter("o200k_base", backend="tiktoken"))
    cl100k = get_counter("cl100k_base", backend="tiktoken")
    cache = tokens.CountCache(tmp_path)
    o200k.count_many(["old text"], cache=cache)
    cache.save()
    seen.clear()
    reopened = tokens.CountCache(tmp_path)

    assert o200k.count_many(["old text", "new text"], cache=reopened) == [2, 2]
    assert seen == ["new text"]
    assert cl100k.count_many(["old text"], cache=reopened) == [cl100k.count("old text")]


def test_a_corrupt_or_unwritable_count_cache_is_only_a_miss(tmp_path: Path) -> None:
    counter = get_counter("o200k_base", backend="tiktoken")
    (tmp_path / "tokens-o200k_base.bin").write_bytes(b"not marshal data")
    blocked = tmp_path / "a-file"
    blocked.write_text("a file where the cache folder would be")

    assert counter.count_many(["hello world"], cache=tokens.CountCache(tmp_path)) == [2]
    unwritable = tokens.CountCache(blocked / "cache")
    assert counter.count_many(["hello world"], cache=unwritable) == [2]
    unwritable.save()  # logged and ignored


def test_a_count_cache_with_foreign_values_is_only_a_miss(tmp_path: Path) -> None:
    import marshal

    counter = get_counter("o200k_base", backend="tiktoken")
    key = tokens._digest("hello world")
    for counts in ({key: "2"}, {key: -5}, {"hello": 2}, [key, 2]):
        (tmp_path / "tokens-o200k_base.bin").write_bytes(
            marshal.dumps((tokens._CACHE_FORMAT, counts))
        )
        assert counter.count_many(["hello world"], cache=tokens.CountCache(tmp_path)) == [2]

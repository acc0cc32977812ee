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

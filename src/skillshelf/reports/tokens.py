"""Token counting, exact and offline.

Counting never touches the network. :func:`get_counter` tries, in order:

1. ``tiktoken``, once its rank file is in tiktoken's own cache. When it is missing, the cache is
   seeded from the copy the ``bpe-openai`` package ships, after checking its SHA-256 against the
   hash tiktoken expects (an unwritable cache just skips this step).
2. ``bpe-openai``'s own encoder (the same counts, from a Rust implementation).
3. An estimate from a word/punctuation heuristic calibrated on real skills, with Chinese,
   Japanese and Korean characters weighed apart (:mod:`skillshelf.core.words` tells them);
   every output built from it says ``estimate``.

Special tokens in text (``<|endoftext|>``) are counted as ordinary text. Encoders are built once
per process. Both packages are optional (``skillshelf[tokens]``) and imported on first use. The
report built on these counts is :mod:`skillshelf.reports.tokenreport`.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import logging
import marshal
import os
import re
import threading
import warnings
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final, Literal, get_args

from skillshelf.core.words import count_cjk_characters
from skillshelf.errors import (
    ConfigError,
    MissingExtraError,
    SkillshelfError,
    UsageError,
    install_hint,
)
from skillshelf.skills.cache_files import default_cache_dir, read_cache_file, write_cache_file

__all__ = [
    "BACKEND_ENV",
    "BackendName",
    "CountCache",
    "EncodingName",
    "TokenCounter",
    "get_counter",
    "split_at_safe_cuts",
    "token_safe_cuts",
]

logger = logging.getLogger("skillshelf.reports")

EncodingName = Literal["o200k_base", "cl100k_base"]
BackendName = Literal["auto", "tiktoken", "bpe_openai", "estimate"]

BACKEND_ENV: Final = "SKILLSHELF_TOKENS_BACKEND"
# Where tiktoken fetches each rank file and the SHA-256 it insists on (tiktoken_ext.openai_public).
_RANK_FILES: Final[dict[str, tuple[str, str]]] = {
    "cl100k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/cl100k_base.tiktoken",
        "223921b76ee99bde995b7ff738513eef100fb51d18c93597a113bcffe865b2a7",
    ),
    "o200k_base": (
        "https://openaipublic.blob.core.windows.net/encodings/o200k_base.tiktoken",
        "446a9538cb6c348e3516120d7c08b09f57c36495e2acfffe59a5bf8b0cfb1a2d",
    ),
}
# bpe-openai refuses texts of a million characters and more than 200,000 tokens at once.
_CHUNK_CHARS: Final = 40_000


# -- counters ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, eq=False)
class TokenCounter:
    """Counts tokens of one encoding.

    Attributes:
        encoding: ``o200k_base`` or ``cl100k_base``.
        backend: ``tiktoken``, ``bpe_openai`` or ``estimate``.
        exact: False for the estimate.
        note: Why an earlier backend was not used (empty when the first one was).
    """

    encoding: EncodingName
    backend: str
    exact: bool
    counter: Callable[[str], int] = field(repr=False)
    note: str = ""
    batch: Callable[[list[str]], list[int]] | None = field(default=None, repr=False)

    def count(self, text: str) -> int:
        """Tokens in ``text`` (special-token text counts as ordinary text)."""
        return self.counter(text) if text else 0

    def count_many(
        self, texts: Sequence[str | tuple[str, ...]], *, cache: CountCache | None = None
    ) -> list[int]:
        """Tokens in each of ``texts``, exactly as :meth:`count` gives them.

        A text may be given as the parts it joins (``(header, *entries, footer)``): exact
        counts are then summed over the parts wherever :func:`token_safe_cuts` allows, so a
        part that recurs in other texts (a catalog entry, a body's middle) is encoded once.
        Each distinct text or part is encoded once, on every CPU when the backend can, after
        a look in ``cache``. The estimate counts each whole text (its rounding is per text).
        """
        if not self.exact:
            joined = [t if isinstance(t, str) else "".join(t) for t in texts]
            unique = list(dict.fromkeys(t for t in joined if t))
            known = dict(zip(unique, map(self.counter, unique), strict=True))
            return [known[t] if t else 0 for t in joined]
        plans = [_pieces_of(t) for t in texts]
        distinct = list(dict.fromkeys(piece for plan in plans for piece in plan))
        known = dict(zip(distinct, self._count_distinct(distinct, cache), strict=True))
        return [sum(known[piece] for piece in plan) for plan in plans]

    def _count_distinct(self, texts: list[str], cache: CountCache | None) -> list[int]:
        if cache is None:
            return self._encode(texts)
        return cache.counts(self.encoding, texts, self._encode)

    def _encode(self, texts: list[str]) -> list[int]:
        if self.batch is not None:
            return self.batch(texts)
        return [self.counter(t) for t in texts]

    @property
    def label(self) -> str:
        """``o200k_base (tiktoken)``, or ``… (estimate, not exact)``."""
        return f"{self.encoding} ({self.backend if self.exact else 'estimate, not exact'})"


def token_safe_cuts(left: str, right: str) -> bool:
    """Whether ``count(left + right) == count(left) + count(right)`` is certain.

    True when ``left`` ends with a newline and ``right`` starts with neither whitespace nor
    ``/``: the pre-tokenising patterns of o200k_base and cl100k_base (the ones tiktoken
    applies before byte-pair merging, which never crosses their pieces) can carry a piece
    across a newline only into more whitespace, or into ``/`` after punctuation, and they
    look neither behind nor, past whitespace, ahead. Checked against tiktoken on random
    texts in the tests.
    """
    return left.endswith("\n") and right[:1] != "/" and right[:1].strip() != ""


# A newline before a character that is neither whitespace nor "/": a cut no token crosses.
_SAFE_CUT: Final = re.compile(r"\n(?=[^\s/])")


def split_at_safe_cuts(text: str) -> tuple[str, str, str]:
    """``text`` as ``(head, middle, tail)`` cut at its first and last token-safe cut (see
    :func:`token_safe_cuts`); ``middle`` is empty when there are fewer than two.

    The cuts depend only on the characters either side, so a text quoted inside a longer
    one (a body inside its load text) has the same ``middle``, which is then counted once.
    """
    first = _SAFE_CUT.search(text)
    if first is None:
        return text, "", ""
    end = len(text)
    while (newline := text.rfind("\n", first.end(), end)) >= first.end():
        if token_safe_cuts("\n", text[newline + 1 : newline + 2]):
            return text[: first.end()], text[first.end() : newline + 1], text[newline + 1 :]
        end = newline
    return text, "", ""


def _pieces_of(text: str | tuple[str, ...]) -> list[str]:
    """``text``, or its parts joined where :func:`token_safe_cuts` does not allow a cut."""
    if isinstance(text, str):
        return [text] if text else []
    runs: list[list[str]] = []
    for part in text:
        if not part:
            continue
        if runs and not token_safe_cuts(runs[-1][-1], part):
            runs[-1].append(part)
        else:
            runs.append([part])
    return ["".join(run) for run in runs]


class CountCache:
    """Exact token counts of texts counted before, kept in a folder between runs.

    Keyed by each text's BLAKE2b digest and the encoding (exact counts depend on nothing
    else: every backend uses the same verified rank file). It is a cache: a missing,
    unreadable or corrupt file is an empty cache, and a failure to write it is ignored.
    """

    def __init__(self, directory: Path) -> None:
        self._directory = directory
        self._stored: dict[str, dict[bytes, int]] = {}
        self._used: dict[str, dict[bytes, int]] = {}
        self._new: set[str] = set()

    def counts(
        self, encoding: str, texts: list[str], count: Callable[[list[str]], list[int]]
    ) -> list[int]:
        """Each text's count: from the cache, else from ``count`` (given only the misses)."""
        stored = self._load(encoding)
        used = self._used.setdefault(encoding, {})
        keys = [_digest(text) for text in texts]
        found = [stored.get(key) for key in keys]
        missing = [i for i, c in enumerate(found) if c is None]
        if missing:
            self._new.add(encoding)
            for i, fresh in zip(missing, count([texts[i] for i in missing]), strict=True):
                found[i] = fresh
        counts = [c or 0 for c in found]
        used.update(zip(keys, counts, strict=True))
        return counts

    def save(self) -> None:
        """Write what this cache learnt: the counts used since it was opened, and the older
        ones while the file stays under its cap."""
        for encoding in sorted(self._new):
            used = self._used[encoding]
            stored = self._stored.get(encoding, {})
            kept = {**stored, **used} if len(stored) + len(used) <= _MAX_CACHED else used
            self._write(encoding, kept)
        self._new.clear()

    def _name(self, encoding: str) -> str:
        return f"tokens-{encoding}.bin"

    def _load(self, encoding: str) -> dict[bytes, int]:
        if encoding not in self._stored:
            self._stored[encoding] = {}
            name = self._name(encoding)
            data = read_cache_file(self._directory, name)
            try:
                payload = marshal.loads(data) if data is not None else None
            except (ValueError, EOFError, TypeError):
                logger.debug("token count cache %s not read", name, exc_info=True)
                payload = None
            if _well_formed(payload):
                self._stored[encoding] = payload[1]  # type: ignore[index]
            elif data is not None:
                logger.debug("token count cache %s ignored: not ours", name)
        return self._stored[encoding]

    def _write(self, encoding: str, counts: dict[bytes, int]) -> None:
        write_cache_file(
            self._directory, self._name(encoding), marshal.dumps((_CACHE_FORMAT, counts))
        )


# Bump when the stored form changes, so an old file is ignored rather than misread.
_CACHE_FORMAT: Final = "skillshelf-tokens-1"
# About 30 MB of file: counts of the paragraphs of some 100,000 skills.
_MAX_CACHED: Final = 1_000_000
_DIGEST_BYTES: Final = 16


def _well_formed(payload: object) -> bool:
    """A cache file's content as this module writes it: the format tag and digests to
    non-negative ints (anything else is a miss, never a wrong count or a crash)."""
    if type(payload) is not tuple or len(payload) != 2 or payload[0] != _CACHE_FORMAT:
        return False
    counts = payload[1]
    return type(counts) is dict and all(
        type(k) is bytes and len(k) == _DIGEST_BYTES and type(v) is int and v >= 0
        for k, v in counts.items()
    )


def _digest(text: str) -> bytes:
    return hashlib.blake2b(
        text.encode("utf-8", "surrogatepass"), digest_size=_DIGEST_BYTES
    ).digest()


_COUNTERS: dict[tuple[str, str], TokenCounter] = {}
_LOCK = threading.Lock()


def get_counter(
    encoding: EncodingName = "o200k_base", *, backend: BackendName | None = None
) -> TokenCounter:
    """The counter for ``encoding``, built once per process.

    Args:
        encoding: ``o200k_base`` (GPT-4o and later) or ``cl100k_base`` (GPT-4, GPT-3.5).
        backend: ``auto`` (the first that works: tiktoken, bpe_openai, estimate) or one of
            them; None reads ``$SKILLSHELF_TOKENS_BACKEND`` (default ``auto``).

    Raises:
        UsageError: An unknown encoding or backend.
        MissingExtraError: A backend asked for by name is not installed (the ``tokens`` extra).
        ConfigError: A backend asked for by name cannot count offline here.
    """
    if encoding not in get_args(EncodingName):
        raise UsageError(f"Unknown encoding {encoding!r}; use o200k_base or cl100k_base")
    chosen = backend or os.environ.get(BACKEND_ENV) or "auto"
    if chosen not in get_args(BackendName):
        raise UsageError(
            f"Unknown token counting backend {chosen!r}; use auto, tiktoken, bpe_openai "
            f"or estimate (${BACKEND_ENV})"
        )
    key = (encoding, chosen)
    with _LOCK:
        if key not in _COUNTERS:
            _COUNTERS[key] = _build(encoding, chosen)  # type: ignore[arg-type]
        return _COUNTERS[key]


def _build(encoding: EncodingName, backend: BackendName) -> TokenCounter:
    if backend == "estimate":
        return _estimate_counter(encoding, "")
    builders = {"tiktoken": _tiktoken_counter, "bpe_openai": _bpe_counter}
    order = list(builders) if backend == "auto" else [backend]
    problems: list[str] = []
    for name in order:
        try:
            counter = builders[name](encoding)
        except MissingExtraError as exc:
            if backend != "auto":
                raise
            problems.append(f"{name}: not installed ({install_hint(exc.extra)})")
            continue
        except _Unavailable as exc:
            problems.append(f"{name}: {exc}")
            continue
        return TokenCounter(
            encoding, name, True, counter.counter, "; ".join(problems), counter.batch
        )
    if backend != "auto":
        raise ConfigError(f"Cannot count {encoding} tokens with {backend}: {problems[0]}")
    return _estimate_counter(encoding, "; ".join(problems))


class _Unavailable(SkillshelfError):
    """A backend cannot count offline here (the message says why)."""


def _tiktoken_counter(encoding: EncodingName) -> TokenCounter:
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public  # type: ignore[import-untyped]
    except ImportError as exc:
        raise MissingExtraError("tokens", module="tiktoken", feature="Exact counting") from exc
    url, expected = _RANK_FILES[encoding]
    constants = getattr(getattr(public, encoding, None), "__code__", None)
    if constants is None or not {url, expected} <= set(constants.co_consts):
        # Another tiktoken release may fetch another file; seeding the cache would not stop
        # it from going to the network, so it is not used.
        raise _Unavailable("this tiktoken release loads its rank file from elsewhere")
    problem = _seed_tiktoken_cache(url, expected, encoding)
    if problem:
        raise _Unavailable(problem)
    try:
        with _own_tiktoken_cache():
            enc = tiktoken.get_encoding(encoding)
    except Exception as exc:  # broad on purpose: any failure here means use the next backend
        logger.debug("a token counting backend failed to load", exc_info=True)
        raise _Unavailable(f"failed to load: {exc}") from None
    encode = enc.encode_ordinary
    threads = max(1, os.cpu_count() or 1)

    def count_all(texts: list[str]) -> list[int]:
        return [len(encode(text)) for text in texts]

    def batch(texts: list[str]) -> list[int]:
        # tiktoken encodes with the GIL released, so a thread per CPU uses every CPU. Each
        # thread loops over a share of the texts: tiktoken's own encode_ordinary_batch makes
        # a future per text, which costs three times the encoding's own CPU time on short
        # texts. Counts are taken at once, so no token list outlives its text's turn.
        if threads == 1 or len(texts) < 4 * threads:
            return count_all(texts)
        shares = [texts[i::threads] for i in range(threads)]
        with ThreadPoolExecutor(threads, thread_name_prefix="skillshelf-tokens") as pool:
            counted = list(pool.map(count_all, shares))
        counts = [0] * len(texts)
        for i, share in enumerate(counted):
            counts[i::threads] = share
        return counts

    return TokenCounter(
        encoding, "tiktoken", True, lambda text: len(enc.encode_ordinary(text)), batch=batch
    )


def _tiktoken_cache_dir() -> str:
    """The folder tiktoken reads cached rank files from ('' means it caches nothing).

    Unless the user chose one, a folder of our own cache (:func:`_own_tiktoken_cache`), never
    tiktoken's default ``$TMPDIR/data-gym-cache``: any local user can create that shared path
    first, or make it a link to a place of their choosing.
    """
    for variable in ("TIKTOKEN_CACHE_DIR", "DATA_GYM_CACHE_DIR"):
        if variable in os.environ:
            return os.environ[variable]
    return str(default_cache_dir() / "tiktoken")


@contextlib.contextmanager
def _own_tiktoken_cache() -> Iterator[None]:
    """Point tiktoken at :func:`_tiktoken_cache_dir` while it loads an encoding (it reads the
    variable only then); a folder the user chose is left as it is."""
    if "TIKTOKEN_CACHE_DIR" in os.environ or "DATA_GYM_CACHE_DIR" in os.environ:
        yield
        return
    os.environ["TIKTOKEN_CACHE_DIR"] = _tiktoken_cache_dir()
    try:
        yield
    finally:
        os.environ.pop("TIKTOKEN_CACHE_DIR", None)


def _seed_tiktoken_cache(url: str, expected: str, encoding: str) -> str:
    """Make sure tiktoken finds a verified rank file in its cache; '' when it will.

    The file is read and written only in a folder of the running user's own, without
    following links (:mod:`skillshelf.skills.cache_files`).
    """
    directory = _tiktoken_cache_dir()
    if not directory:
        return "its cache is turned off (TIKTOKEN_CACHE_DIR is empty), so it would download"
    name = hashlib.sha1(url.encode()).hexdigest()
    cached = read_cache_file(Path(directory), name)
    if cached is not None and hashlib.sha256(cached).hexdigest() == expected:
        return ""
    data = _bundled_rank_file(encoding, expected)
    if data is None:
        return "its rank file is not cached and bpe-openai's copy is missing or does not verify"
    problem = write_cache_file(Path(directory), name, data)
    return "" if problem is None else f"cannot write its cache ({problem})"


def _bundled_rank_file(encoding: str, expected: str) -> bytes | None:
    # Found without importing bpe_openai: importing it parses a rank file straight away.
    spec = importlib.util.find_spec("bpe_openai")
    locations = list(spec.submodule_search_locations or ()) if spec is not None else []
    try:
        packed = Path(locations[0], "data", f"{encoding}.tiktoken.gz").read_bytes()
        data = gzip.decompress(packed)
    except (IndexError, OSError, EOFError):
        return None
    return data if hashlib.sha256(data).hexdigest() == expected else None


def _bpe_counter(encoding: EncodingName) -> TokenCounter:
    try:
        with warnings.catch_warnings():
            # bpe-openai 0.1.4 reads its data with a deprecated importlib.resources call.
            warnings.simplefilter("ignore", DeprecationWarning)
            import bpe_openai  # type: ignore[import-untyped]

            enc = bpe_openai.get_encoding(encoding)
    except ImportError as exc:
        raise MissingExtraError("tokens", module="bpe_openai", feature="Exact counting") from exc
    except Exception as exc:  # broad on purpose: any failure here means use the next backend
        logger.debug("a token counting backend failed to load", exc_info=True)
        raise _Unavailable(f"failed to load: {exc}") from None

    def count(text: str) -> int:
        return sum(len(enc.encode_ordinary(piece)) for piece in _pieces(text))

    return TokenCounter(encoding, "bpe_openai", True, count)


def _pieces(text: str, limit: int = _CHUNK_CHARS) -> Iterator[str]:
    """Split ``text`` where tokenisation cannot join across: after a newline before a letter."""
    start = 0
    while len(text) - start > limit:
        cut = _cut(text, start, start + limit)
        yield text[start:cut]
        start = cut
    yield text[start:]


def _cut(text: str, start: int, end: int) -> int:
    index = text.rfind("\n", start + 1, end)
    while index > start:
        following = text[index + 1]
        if following.isascii() and following.isalpha():
            return index + 1
        index = text.rfind("\n", start + 1, index)
    return end  # no safe point: the count may be off by a token at this cut


# Word, digit run, newline, blank run, non-ASCII character, anything else (punctuation).
_PIECE: Final = re.compile(r"([A-Za-z]+)|(\d+)|(\n)|([ \t]+)|([^\x00-\x7f])|(.)", re.DOTALL)
# Least-squares fit on the corpus's text files (about 300 files, 2 million characters):
# within 4% of the exact count for half of them, 10% for nine in ten; chars/4 is twice as far.
# CJK characters (core.words' class) have their own weight, fitted on examples/skills-zh
# (2,400 Chinese characters; CJK punctuation, a token each, is folded into it): the totals
# land within 3% of the exact count, each file within 6% (o200k_base) and 7% (cl100k_base).
# Weighed like other non-ASCII characters they came out at half the exact count.
_WEIGHTS: Final = {
    # word, per letter, per 3 digits, newline, blank run, non-ASCII character, punctuation,
    # CJK character
    "cl100k_base": (0.49, 0.10, 1.0, 0.75, 0.12, 0.6, 0.47, 1.2),
    "o200k_base": (0.47, 0.10, 1.0, 0.75, 0.12, 0.3, 0.47, 0.9),
}


def _estimate_counter(encoding: EncodingName, note: str) -> TokenCounter:
    weights = _WEIGHTS[encoding]

    def count(text: str) -> int:
        word, letter, digits, newline, blank, other, punctuation, cjk = weights
        # Each CJK character is also one of the non-ASCII pieces below.
        total = (cjk - other) * count_cjk_characters(text)
        for match in _PIECE.finditer(text):
            kind = match.lastindex
            if kind == 1:
                total += word + letter * len(match.group(1))
            elif kind == 2:
                total += digits * -(-len(match.group(2)) // 3)
            else:
                total += (newline, blank, other, punctuation)[(kind or 6) - 3]
        return max(1, round(total))

    return TokenCounter(encoding, "estimate", False, count, note)

"""Token counting (exact and offline) and the token report of a skills repository.

Counting never touches the network. :func:`get_counter` tries, in order:

1. ``tiktoken``, once its rank file is in tiktoken's own cache. When it is missing, the cache is
   seeded from the copy the ``bpe-openai`` package ships, after checking its SHA-256 against the
   hash tiktoken expects (an unwritable cache just skips this step).
2. ``bpe-openai``'s own encoder (the same counts, from a Rust implementation).
3. An estimate from a word/punctuation heuristic calibrated on real skills; every output built
   from it says ``estimate``.

Special tokens in text (``<|endoftext|>``) are counted as ordinary text. Encoders are built once
per process. Both packages are optional (``skillshelf[tokens]``) and imported on first use.

The report (:func:`token_report`) is pure: it takes the texts :func:`gather_skill_texts` read and
a counter, and compares what progressive disclosure puts up front (the catalog, as the agent
renders it within its budget) with injecting every body and document.
"""

from __future__ import annotations

import contextlib
import gzip
import hashlib
import importlib.util
import os
import re
import tempfile
import threading
import uuid
import warnings
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, get_args

from skillshelf.catalog import CatalogEntry, CatalogFormat, render_catalog
from skillshelf.errors import FileAccessError, UsageError

if TYPE_CHECKING:
    from skillshelf.repository import Repository
    from skillshelf.skill import Skill

__all__ = [
    "BACKEND_ENV",
    "BackendName",
    "BudgetEffect",
    "CatalogFate",
    "EncodingName",
    "SkillTexts",
    "SkillTokens",
    "TokenCounter",
    "TokenReport",
    "catalog_fates",
    "gather_skill_texts",
    "get_counter",
    "report_for_repository",
    "token_report",
]

EncodingName = Literal["o200k_base", "cl100k_base"]
BackendName = Literal["auto", "tiktoken", "bpe_openai", "estimate"]
CatalogFate = Literal["full", "trimmed", "name_only", "omitted", "user_only"]

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

    def count(self, text: str) -> int:
        """Tokens in ``text`` (special-token text counts as ordinary text)."""
        return self.counter(text) if text else 0

    @property
    def label(self) -> str:
        """``o200k_base (tiktoken)``, or ``… (estimate, not exact)``."""
        return f"{self.encoding} ({self.backend if self.exact else 'estimate, not exact'})"


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
        UsageError: An unknown encoding or backend, or a backend that was asked for by name
            and cannot count offline.
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
        except _Unavailable as exc:
            problems.append(f"{name}: {exc}")
            continue
        return TokenCounter(encoding, name, True, counter.counter, "; ".join(problems))
    if backend != "auto":
        raise UsageError(f"Cannot count {encoding} tokens with {backend}: {problems[0]}")
    return _estimate_counter(encoding, "; ".join(problems))


class _Unavailable(Exception):
    """A backend cannot count offline here (the message says why)."""


def _tiktoken_counter(encoding: EncodingName) -> TokenCounter:
    try:
        import tiktoken
        import tiktoken_ext.openai_public as public  # type: ignore[import-untyped]
    except ImportError:
        raise _Unavailable("not installed (pip install 'skillshelf[tokens]')") from None
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
        enc = tiktoken.get_encoding(encoding)
    except Exception as exc:  # any failure here means: use the next backend
        raise _Unavailable(f"failed to load: {exc}") from None
    return TokenCounter(encoding, "tiktoken", True, lambda text: len(enc.encode_ordinary(text)))


def _tiktoken_cache_dir() -> str:
    """The folder tiktoken reads cached rank files from ('' means it caches nothing)."""
    if "TIKTOKEN_CACHE_DIR" in os.environ:
        return os.environ["TIKTOKEN_CACHE_DIR"]
    if "DATA_GYM_CACHE_DIR" in os.environ:
        return os.environ["DATA_GYM_CACHE_DIR"]
    return os.path.join(tempfile.gettempdir(), "data-gym-cache")


def _seed_tiktoken_cache(url: str, expected: str, encoding: str) -> str:
    """Make sure tiktoken finds a verified rank file in its cache; '' when it will."""
    directory = _tiktoken_cache_dir()
    if not directory:
        return "its cache is turned off (TIKTOKEN_CACHE_DIR is empty), so it would download"
    path = Path(directory, hashlib.sha1(url.encode()).hexdigest())
    try:
        if hashlib.sha256(path.read_bytes()).hexdigest() == expected:
            return ""
    except OSError:
        pass
    data = _bundled_rank_file(encoding, expected)
    if data is None:
        return "its rank file is not cached and bpe-openai's copy is missing or does not verify"
    temporary = path.with_name(f"{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temporary.write_bytes(data)
        os.replace(temporary, path)  # atomic: a concurrent reader sees the old or the new file
    except OSError as exc:
        with contextlib.suppress(OSError):
            temporary.unlink(missing_ok=True)
        return f"cannot write its cache ({exc.strerror or exc})"
    return ""


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
    except ImportError:
        raise _Unavailable("not installed (pip install 'skillshelf[tokens]')") from None
    except Exception as exc:  # any failure here means: use the next backend
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
_WEIGHTS: Final = {
    # word, per letter, per 3 digits, newline, blank run, non-ASCII character, punctuation
    "cl100k_base": (0.49, 0.10, 1.0, 0.75, 0.12, 0.6, 0.47),
    "o200k_base": (0.47, 0.10, 1.0, 0.75, 0.12, 0.3, 0.47),
}


def _estimate_counter(encoding: EncodingName, note: str) -> TokenCounter:
    weights = _WEIGHTS[encoding]

    def count(text: str) -> int:
        word, letter, digits, newline, blank, other, punctuation = weights
        total = 0.0
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


# -- the report's inputs -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillTexts:
    """What a skill puts in front of a model, as text (read by :func:`gather_skill_texts`).

    Attributes:
        entry: Its catalog entry.
        model_invocable: False when only the user may invoke it (it is not in the catalog).
        body: The SKILL.md body.
        on_load: What ``skill_load`` returns without docs (body and load framing).
        docs: ``(path, text)`` of every text document ``skill_load`` can include.
        binary_files: Files skipped because they are binary (or unreadable).
        other_files: Text files that are not documents (scripts, …): never inlined.
    """

    entry: CatalogEntry
    model_invocable: bool
    body: str
    on_load: str
    docs: tuple[tuple[str, str], ...] = ()
    binary_files: int = 0
    other_files: int = 0

    @property
    def name(self) -> str:
        """The skill's name."""
        return self.entry.name


# Large enough to read any document whole: "inject everything" means all of it.
_WHOLE_FILE_CHARS: Final = 50_000_000


def gather_skill_texts(skills: Iterable[Skill]) -> list[SkillTexts]:
    """Read each skill's body, load text and documents.

    Raises:
        SkillshelfError: A SKILL.md vanished or no longer parses.
    """
    from skillshelf.content import list_docs, render_load
    from skillshelf.paths import file_tree, read_skill_file

    gathered: list[SkillTexts] = []
    for skill in skills:
        body = skill.body()
        docs: list[tuple[str, str]] = []
        binary = other = 0
        doc_paths = set(list_docs(skill))
        tree = file_tree(skill.path, max_depth=64, max_entries=100_000)
        for entry in tree.entries:
            if entry.is_dir or entry.path == skill.skill_md_name:
                continue
            limit = _WHOLE_FILE_CHARS if entry.path in doc_paths else 1
            try:
                content = read_skill_file(skill.path, entry.path, max_chars=limit)
            except FileAccessError:
                binary += 1
                continue
            if content.binary or content.text is None:
                binary += 1
            elif entry.path in doc_paths:
                docs.append((entry.path, content.text))
            else:
                other += 1
        gathered.append(
            SkillTexts(
                CatalogEntry.of(skill),
                skill.model_invocable,
                body,
                render_load(skill, body, ()),
                tuple(sorted(docs)),
                binary,
                other,
            )
        )
    return gathered


# -- the report ----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class SkillTokens:
    """One skill's token costs.

    Attributes:
        name: The skill.
        catalog_entry: Its catalog entry, unbudgeted (0 when it is not in the catalog).
        catalog_fate: What the catalog budget did to it: ``full``, ``trimmed`` (description
            cut), ``name_only``, ``omitted``, or ``user_only`` (never in the catalog).
        body: The SKILL.md body.
        on_load: What one ``skill_load`` without docs costs (body and framing).
        docs: All its text documents together.
        doc_files: How many text documents.
        binary_files: Files skipped as binary or unreadable.
        other_files: Text files that are not documents (scripts, …).
    """

    name: str
    catalog_entry: int
    catalog_fate: CatalogFate
    body: int
    on_load: int
    docs: int
    doc_files: int
    binary_files: int
    other_files: int

    @property
    def everything(self) -> int:
        """Body and all documents: this skill's share of injecting everything."""
        return self.body + self.docs


@dataclass(frozen=True, slots=True)
class BudgetEffect:
    """What the catalog budget did.

    Attributes:
        budget_chars: The budget (None: none).
        full: Skills listed with their whole description.
        trimmed: Skills whose description was cut.
        name_only: Skills listed by name only.
        omitted: Skills left out (counted in a closing line).
        tokens: Catalog tokens within the budget.
        tokens_unbudgeted: Catalog tokens without a budget.
        chars: Catalog characters within the budget.
        chars_unbudgeted: Catalog characters without a budget.
    """

    budget_chars: int | None
    full: int
    trimmed: int
    name_only: int
    omitted: int
    tokens: int
    tokens_unbudgeted: int
    chars: int
    chars_unbudgeted: int


@dataclass(frozen=True, slots=True)
class TokenReport:
    """Token costs of a repository's skills, progressive disclosure against everything.

    Attributes:
        encoding: The encoding counted in.
        backend: ``tiktoken``, ``bpe_openai`` or ``estimate``.
        exact: False when the counts are estimates.
        format: The catalog format.
        skills: One row per skill, sorted by name.
        budget: The catalog budget's effect.
        progressive: Tokens up front with progressive disclosure: the catalog as rendered
            within the budget, wrapper included.
        everything: Tokens when every body and document is injected.
        on_load: The sum of every skill's on-load cost.
    """

    encoding: str
    backend: str
    exact: bool
    format: CatalogFormat
    skills: tuple[SkillTokens, ...]
    budget: BudgetEffect
    progressive: int
    everything: int
    on_load: int

    @property
    def ratio(self) -> float | None:
        """``everything / progressive`` (None with an empty catalog)."""
        return self.everything / self.progressive if self.progressive else None

    def to_dict(self) -> dict[str, Any]:
        """Every number, for ``--json``."""
        data = asdict(self)
        data["ratio"] = None if self.ratio is None else round(self.ratio, 3)
        data["skills"] = [{**asdict(s), "everything": s.everything} for s in self.skills]
        return data


def token_report(
    texts: Sequence[SkillTexts],
    counter: TokenCounter,
    *,
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
) -> TokenReport:
    """Count what each skill costs and compare progressive disclosure with everything.

    Args:
        texts: The skills (the catalog lists the model-invocable ones in this order).
        counter: Counts the tokens.
        format: Catalog format.
        budget_chars: The catalog budget the agent uses (None: none).

    Raises:
        UsageError: An unknown format or a negative budget.
    """
    entries = [t.entry for t in texts if t.model_invocable]
    unbudgeted = render_catalog(entries, format=format)
    budgeted = render_catalog(entries, format=format, budget_chars=budget_chars)
    if not entries:  # with no skills to list, the agent leaves the catalog out altogether
        unbudgeted = budgeted = ""
    entry_texts = {e.name: _entry_text(e, format) for e in entries}
    fates = _fates(entries, list(entry_texts.values()), budgeted, format)
    rows = tuple(
        _row(t, counter, entry_texts.get(t.name, ""), fates)
        for t in sorted(texts, key=lambda t: t.name)
    )
    tally = Counter(fates.values())
    effect = BudgetEffect(
        budget_chars,
        full=tally["full"],
        trimmed=tally["trimmed"],
        name_only=tally["name_only"],
        omitted=tally["omitted"],
        tokens=counter.count(budgeted),
        tokens_unbudgeted=counter.count(unbudgeted),
        chars=len(budgeted),
        chars_unbudgeted=len(unbudgeted),
    )
    return TokenReport(
        counter.encoding,
        counter.backend,
        counter.exact,
        format,
        rows,
        effect,
        progressive=effect.tokens,
        everything=sum(r.everything for r in rows),
        on_load=sum(r.on_load for r in rows),
    )


def _row(
    texts: SkillTexts, counter: TokenCounter, entry_text: str, fates: dict[str, CatalogFate]
) -> SkillTokens:
    return SkillTokens(
        texts.name,
        counter.count(entry_text),
        fates.get(texts.name, "user_only"),
        counter.count(texts.body),
        counter.count(texts.on_load),
        sum(counter.count(text) for _, text in texts.docs),
        len(texts.docs),
        texts.binary_files,
        texts.other_files,
    )


def _entry_text(entry: CatalogEntry, format: CatalogFormat) -> str:
    """The text ``entry`` adds to a catalog: rendered alone, minus the empty catalog."""
    empty = render_catalog([], format=format)
    alone = render_catalog([entry], format=format)
    same = next(
        (i for i, (a, b) in enumerate(zip(empty, alone, strict=False)) if a != b), len(empty)
    )
    prefix = empty.rfind("\n", 0, same) + 1  # whole lines only
    rest = empty[prefix:]
    suffix = len(rest) if alone.endswith(rest) else 0
    return alone[prefix : len(alone) - suffix]


def catalog_fates(
    entries: Sequence[CatalogEntry], rendered: str, *, format: CatalogFormat
) -> dict[str, CatalogFate]:
    """What a budgeted catalog ``rendered`` (from ``entries``, in order) shows of each skill."""
    return _fates(entries, [_entry_text(e, format) for e in entries], rendered, format)


def _fates(
    entries: Sequence[CatalogEntry],
    entry_texts: Sequence[str],
    rendered: str,
    format: CatalogFormat,
) -> dict[str, CatalogFate]:
    haystack = f"\n{rendered}\n"
    # Entries keep their order, so each is looked for just after the previous one: linear
    # in the catalog's size even with 10,000 skills.
    slack = 256 + max((len(e.description) + len(e.location) for e in entries), default=0)
    fates: dict[str, CatalogFate] = {}
    position = 0
    for entry, text in zip(entries, entry_texts, strict=True):
        described, named = _markers(entry.name, format)
        targets: tuple[tuple[CatalogFate, str], ...] = (
            ("full", f"\n{text.strip()}\n"),
            ("trimmed", described),
            ("name_only", named),
        )
        fates[entry.name] = "omitted"
        for fate, target in targets:
            found = haystack.find(target, position, position + len(target) + slack)
            if found >= 0:
                fates[entry.name] = fate
                position = found + len(target) - 1  # the next entry may need that newline
                break
    return fates


def _markers(name: str, format: CatalogFormat) -> tuple[str, str]:
    """How a catalog shows ``name`` with a (trimmed) description, and by name only."""
    if format == "xml":
        import html

        shown = html.escape(name)
        return (
            f"<name>\n{shown}\n</name>\n<description>\n",
            f"<name>\n{shown}\n</name>\n</skill>",
        )
    return f"\n- **{name}**: ", f"`{name}`"


def report_for_repository(
    repo: Repository,
    *,
    encoding: EncodingName = "o200k_base",
    format: CatalogFormat = "xml",
    budget_chars: int | None = None,
    counter: TokenCounter | None = None,
) -> TokenReport:
    """The token report of every skill in ``repo``.

    Args:
        repo: The skills.
        encoding: Used when ``counter`` is None.
        format: Catalog format.
        budget_chars: The catalog budget (the agent's default is 12,000 characters).
        counter: Counts tokens (default: :func:`get_counter` for ``encoding``).

    Raises:
        UsageError: An unknown encoding or format, or a negative budget.
        SkillshelfError: A SKILL.md vanished or no longer parses.
    """
    texts = gather_skill_texts(repo.skills)
    return token_report(
        texts, counter or get_counter(encoding), format=format, budget_chars=budget_chars
    )

"""``baseline:search``: a deterministic, offline, lexical stand-in for a model.

It answers through the same agent loop as a real model, from exactly what a real model is sent
(:func:`~skillshelf.core.catalog_view.read_view`): the catalog in the system prompt or in a
``<system-reminder>`` message, in either format and whatever the budget left of it (whole,
trimmed, names only, a count of skills left out), the block of skills relevant to the user's
message, and the tools as offered in either tool style. It reads no repository.

On the user's message it ranks what it was shown with skillshelf's own search
(:class:`~skillshelf.core.search.SearchIndex`: name, phrase and BM25 matching). When the best
hit scores at least ``min_score`` it loads it with the load tool offered (``Skill`` with
``skill`` in the claude-code style, else ``skill_load``). Otherwise, when the catalog was cut
and ``skill_search`` is offered, it searches first, as the guidance tells a model to, and loads
the best search result that scores enough. After a load it answers with one short sentence. It
never reads documents or runs scripts.

When the request hides what it needs — no load tool, or skills without descriptions and no
``skill_search`` — it says so in its answer and logs a warning once per reason, instead of
quietly loading nothing.

It is a *baseline*, not a model: it tells a skill author whether the descriptions are
lexically distinguishable at all (a query that shares no words with the right description
will miss, a paraphrase a model would understand too). Use it to catch descriptions that
collide, and to run evals where no model is reachable; never read its numbers as a model's.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl

from skillshelf.core.catalog_view import CatalogView, read_view
from skillshelf.core.search import SearchHit, SearchIndex
from skillshelf.core.words import split_words
from skillshelf.errors import ConfigError, UsageError
from skillshelf.models.base import Message, ModelRequest, ModelResponse, TextSink, ToolCall

__all__ = ["DEFAULT_MIN_SCORE", "SearchBaselineModel"]

logger = logging.getLogger(__name__)

# A BM25 score (the weakest tier) this high needs more than one shared, fairly rare word;
# stronger tiers (name, trigger phrase, description phrase) add 1e6 and always pass.
DEFAULT_MIN_SCORE: Final = 2.0
# The load tool of each tool style, in the order preferred when a request offers both.
_LOAD_TOOLS: Final = ("Skill", "skill_load")
_SEARCH_TOOL: Final = "skill_search"
_QUERY_CHARS: Final = 1_000  # skill_search's own limit on a query
# A line of skill_search's answer: "- name: description".
_SEARCH_LINE: Final = re.compile(r"- (?P<name>[^:\n]+): (?P<description>.*)")
_DONE: Final = "Done: the skill is loaded (baseline:search stops here)."
# Left-out skills counted as empty entries, at most: past a thousand skills a rare word's
# weight hardly moves (log N), and each entry costs index time on every request.
_MAX_UNSEEN: Final = 1_000


@dataclass(frozen=True, slots=True)
class _Entry:
    """A shown skill in the shape :class:`SearchIndex` indexes."""

    name: str
    description: str
    triggers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


class SearchBaselineModel:
    """The lexical baseline (see the module docstring).

    Args:
        min_score: The best search hit must score at least this to be loaded.
    """

    def __init__(self, *, min_score: float = DEFAULT_MIN_SCORE) -> None:
        if min_score < 0:
            raise UsageError(f"min_score must not be negative, got {min_score}")
        self.min_score = min_score
        self._warned: set[str] = set()  # the reasons already logged (not conversation state)

    @classmethod
    def from_spec(cls, spec: str) -> SearchBaselineModel:
        """Build from the part after ``baseline:`` — ``search`` or ``search?min_score=X``.

        Raises:
            ConfigError: Another baseline, an unknown option or a bad number.
        """
        kind, _, query = spec.partition("?")
        if kind != "search":
            raise ConfigError(f"Unknown baseline {kind!r}; the only one is baseline:search")
        options = dict(parse_qsl(query, keep_blank_values=True))
        unknown = sorted(set(options) - {"min_score"})
        if unknown:
            raise ConfigError(f"Unknown baseline:search option {unknown[0]!r}; use min_score")
        if "min_score" not in options:
            return cls()
        try:
            min_score = float(options["min_score"])
        except ValueError:
            min_score = math.nan
        if not math.isfinite(min_score) or min_score < 0:
            raise ConfigError(
                f"min_score must be a number of 0 or more, got {options['min_score']!r}"
            )
        return cls(min_score=min_score)

    @property
    def name(self) -> str:
        return f"baseline:search?min_score={self.min_score:g}"

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        response = self._step(request)
        if on_text is not None and response.text:
            on_text(response.text)
        return response

    def _step(self, request: ModelRequest) -> ModelResponse:
        last = next(
            (m for m in reversed(request.messages) if m.get("role") in ("user", "tool")), None
        )
        if last is None:
            return self._answer("There is no user message to answer (baseline:search).")
        if last.get("role") == "tool":
            if _called(request.messages, last) != _SEARCH_TOOL:
                return self._answer(_DONE)
            return self._after_search(request, str(last.get("content") or ""))
        return self._first_step(request, read_view(request.messages))

    def _first_step(self, request: ModelRequest, view: CatalogView) -> ModelResponse:
        query = view.query or ""
        offered = {tool.name for tool in request.tools}
        load = _load_tool(offered)
        if load is None:
            return self._blind(
                "no_load_tool",
                "the request offers no tool to load a skill with (neither skill_load nor "
                "Skill), so it cannot load one",
            )
        best = _best(view, (), query)
        if best is not None and best.score >= self.min_score:
            return self._call(load, {"skill": best.name})
        if (view.cut or not view.skills) and _SEARCH_TOOL in offered and query.strip():
            return self._call(_SEARCH_TOOL, {"query": query[:_QUERY_CHARS].strip()})
        if not view.skills and not view.omitted:
            return self._blind(
                "no_catalog",
                "the request shows no skills catalog and offers no skill_search, so it "
                "cannot see any skill",
            )
        if view.cut:
            names_only = len(view.skills) - view.described
            return self._blind(
                "cut_no_search",
                f"the request shows {view.described} skills with a description, "
                f"{names_only} by name only and leaves {view.omitted} out, and offers no "
                "skill_search: it could only match names",
            )
        return self._no_match(best)

    def _after_search(self, request: ModelRequest, result: str) -> ModelResponse:
        found = [
            _Entry(m["name"].strip(), m["description"])
            for line in result.split("\n")
            if (m := _SEARCH_LINE.fullmatch(line)) is not None
        ]
        view = read_view(request.messages)
        best = _best(view, found, view.query or "") if found else None
        load = _load_tool({tool.name for tool in request.tools})
        if best is not None and best.score >= self.min_score and load is not None:
            return self._call(load, {"skill": best.name})
        return self._no_match(best)

    def _no_match(self, best: SearchHit | None) -> ModelResponse:
        if best is None:
            return self._answer("No skill matches this request (baseline:search).")
        return self._answer(
            f"No skill matches well enough: {best.name} scored {best.score:.2f}, below "
            f"{self.min_score:g} (baseline:search)."
        )

    def _blind(self, reason: str, text: str) -> ModelResponse:
        """Say that the request hides what the baseline needs, and warn once per reason."""
        if reason not in self._warned:
            self._warned.add(reason)
            logger.warning("baseline:search cannot decide: %s.", text)
        return self._answer(f"baseline:search cannot decide: {text}.")

    def _answer(self, text: str) -> ModelResponse:
        return ModelResponse(text, (), "stop", self.name)

    def _call(self, tool: str, arguments: dict[str, str]) -> ModelResponse:
        call = ToolCall(f"baseline_{tool.lower()}", tool, json.dumps(arguments))
        return ModelResponse("", (call,), "tool_calls", self.name)


def _load_tool(offered: set[str]) -> str | None:
    """The tool the request offers to load a skill with (``Skill`` in the claude-code style)."""
    return next((name for name in _LOAD_TOOLS if name in offered), None)


def _best(view: CatalogView, found: Sequence[_Entry], query: str) -> SearchHit | None:
    """The best match for ``query`` among the skills shown (``found`` by skill_search adding
    to them and replacing what the catalog showed of theirs); None when nothing matches.

    Word weights (BM25's IDF) depend on how many skills there are. The catalog says how many:
    those it lists and those it counts as left out; each left-out skill not seen anywhere
    else counts as an empty entry (up to :data:`_MAX_UNSEEN`), so a word is about as rare
    among a few skills shown beside a cut catalog as among the whole catalog. The skills
    picked *for* the message (the relevant block, or skill_search's answer) were picked
    because they share its words: a word every one of them shares cannot tell them apart, so
    it is not evidence for any of them.
    """
    entries = {s.name: _Entry(s.name, s.description or "") for s in view.skills}
    entries.update((e.name, e) for e in found)
    picked = list(found) or [entries[s.name] for s in view.skills if s.where == "relevant"]
    query = _without_shared_words(query, picked)
    if not query.strip():
        return None
    unseen = min(max(0, view.listed + view.omitted - len(entries)), _MAX_UNSEEN)
    items = [*entries.values(), *[_Entry("", "")] * unseen]
    return next((h for h in SearchIndex(items).search(query, limit=2) if h.name), None)


def _without_shared_words(query: str, picked: Sequence[_Entry]) -> str:
    """``query`` without the words every one of two or more ``picked`` skills contains."""
    if len(picked) < 2:
        return query
    shared = set.intersection(*(set(split_words(f"{e.name} {e.description}")) for e in picked))
    words = split_words(query)
    if not shared.intersection(words):
        return query
    return " ".join(word for word in words if word not in shared)


def _called(messages: Sequence[Message], result: Message) -> str | None:
    """The name of the tool whose result ``result`` is, from the assistant's calls before it."""
    call_id = result.get("tool_call_id")
    for message in reversed(messages):
        for call in message.get("tool_calls") or ():
            if isinstance(call, dict) and call.get("id") == call_id:
                function = call.get("function")
                return str(function.get("name")) if isinstance(function, dict) else None
    return None

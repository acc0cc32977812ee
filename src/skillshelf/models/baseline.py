"""``baseline:search``: a deterministic, offline, lexical stand-in for a model.

It answers through the same agent loop as a real model, from what a real model sees: the
catalog in the system prompt (names and descriptions, as trimmed by the catalog budget) and
the user's message. On the first step it ranks the catalog with skillshelf's own search
(:class:`~skillshelf.core.search.SearchIndex`: name, phrase and BM25 matching) and, when the best
hit scores at least ``min_score``, calls ``skill_load`` on it; otherwise it answers without a
skill. After a tool result it answers with one short sentence. It never reads documents or
runs scripts.

It is a *baseline*, not a model: it tells a skill author whether the descriptions are
lexically distinguishable at all (a query that shares no words with the right description
will miss, a paraphrase a model would understand too). Use it to catch descriptions that
collide, and to run evals where no model is reachable; never read its numbers as a model's.
"""

from __future__ import annotations

import html
import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final
from urllib.parse import parse_qsl

from skillshelf.core.search import SearchIndex
from skillshelf.errors import ConfigError, UsageError
from skillshelf.models.base import Message, ModelRequest, ModelResponse, TextSink, ToolCall

__all__ = ["DEFAULT_MIN_SCORE", "SearchBaselineModel", "catalog_from_prompt"]

# A BM25 score (the weakest tier) this high needs more than one shared, fairly rare word;
# stronger tiers (name, trigger phrase, description phrase) add 1e6 and always pass.
DEFAULT_MIN_SCORE: Final = 2.0

_XML_SKILL = re.compile(
    r"<skill>\n<name>\n(?P<name>.*?)\n</name>\n(?:<description>\n(?P<description>.*?)\n"
    r"</description>\n)?",
    re.DOTALL,
)
_MARKDOWN_SKILL = re.compile(r"^- \*\*(?P<name>[^*]+)\*\*: (?P<description>.*)$", re.MULTILINE)


@dataclass(frozen=True, slots=True)
class _Entry:
    """A catalog entry in the shape :class:`SearchIndex` indexes."""

    name: str
    description: str
    triggers: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()


def catalog_from_prompt(messages: Sequence[Message]) -> list[tuple[str, str]]:
    """The ``(name, description)`` pairs of the catalog in the system messages.

    Reads the XML and the Markdown catalog forms; a names-only catalog gives empty
    descriptions.
    """
    found: dict[str, str] = {}
    for message in messages:
        if message.get("role") != "system":
            continue
        text = str(message.get("content") or "")
        for match in _XML_SKILL.finditer(text):
            description = html.unescape(match["description"] or "")
            found.setdefault(html.unescape(match["name"]), description)
        for match in _MARKDOWN_SKILL.finditer(text):
            found.setdefault(match["name"], match["description"])
    return list(found.items())


class SearchBaselineModel:
    """The lexical baseline (see the module docstring).

    Args:
        min_score: The best search hit must score at least this to be loaded.
    """

    def __init__(self, *, min_score: float = DEFAULT_MIN_SCORE) -> None:
        if min_score < 0:
            raise UsageError(f"min_score must not be negative, got {min_score}")
        self.min_score = min_score

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
        last = next(
            (m for m in reversed(request.messages) if m.get("role") in ("user", "tool")), None
        )
        if last is None or last.get("role") == "tool":
            response = self._answer("Done: the skill is loaded (baseline:search stops here).")
        else:
            response = self._first_step(request, str(last.get("content") or ""))
        if on_text is not None and response.text:
            on_text(response.text)
        return response

    def _first_step(self, request: ModelRequest, query: str) -> ModelResponse:
        entries = [_Entry(n, d) for n, d in catalog_from_prompt(request.messages)]
        offered = {tool.name for tool in request.tools}
        hits = SearchIndex(entries).search(query, limit=1) if entries else []
        if not hits or "skill_load" not in offered:
            return self._answer("No skill matches this request (baseline:search).")
        best = hits[0]
        if best.score < self.min_score:
            return self._answer(
                f"No skill matches well enough: {best.name} scored {best.score:.2f}, below "
                f"{self.min_score:g} (baseline:search)."
            )
        call = ToolCall("baseline_load", "skill_load", json.dumps({"skill": best.name}))
        return ModelResponse("", (call,), "tool_calls", self.name)

    def _answer(self, text: str) -> ModelResponse:
        return ModelResponse(text, (), "stop", self.name)

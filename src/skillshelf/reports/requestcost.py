"""The fixed part of every model request: what the harness sends before the conversation —
the system prompt (instructions, catalog, guidance) and the skill tools' schemas — per model
family, and its share of the context window.

It is the cost paid on every request of every conversation, whatever the model does; the
catalog alone (what :mod:`skillshelf.reports.tokenreport` counts) is only part of it.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any, Final, Literal

from skillshelf.core.tooldef import ToolDef, to_anthropic, to_openai
from skillshelf.harness import Harness, SkillSettings
from skillshelf.reports.tokens import TokenCounter
from skillshelf.repository import Repository

__all__ = [
    "DEFAULT_CONTEXT_WINDOW",
    "DEFAULT_MAX_SHARE",
    "Family",
    "FamilyCost",
    "RequestCost",
    "request_cost",
]

Family = Literal["openai", "anthropic"]
DEFAULT_CONTEXT_WINDOW: Final = 128_000  # tokens: the smallest window of current models
DEFAULT_MAX_SHARE: Final = 0.05  # of the window the fixed part may take before a warning


@dataclass(frozen=True, slots=True)
class FamilyCost:
    """The fixed part of one family's request.

    Attributes:
        family: ``openai`` (Chat Completions / Responses function tools) or ``anthropic``
            (Messages API tools).
        system_chars: Characters of the system prompt.
        schema_chars: Characters of the tool schemas as the API receives them (JSON).
        system_tokens: Tokens of the system prompt.
        schema_tokens: Tokens of the schemas (the counter's encoding: an estimate for a
            family whose tokenizer is not public).
    """

    family: Family
    system_chars: int
    schema_chars: int
    system_tokens: int
    schema_tokens: int

    @property
    def chars(self) -> int:
        return self.system_chars + self.schema_chars

    @property
    def tokens(self) -> int:
        return self.system_tokens + self.schema_tokens


@dataclass(frozen=True, slots=True)
class RequestCost:
    """The fixed part of a request, per family, against a context window."""

    encoding: str
    exact: bool
    skills: int
    tools: tuple[str, ...]
    families: tuple[FamilyCost, ...]
    context_window: int
    max_share: float

    def share(self, family: FamilyCost) -> float:
        """The part of the context window ``family``'s fixed cost takes."""
        return family.tokens / self.context_window

    @property
    def over(self) -> tuple[FamilyCost, ...]:
        """The families whose fixed cost exceeds ``max_share`` of the window."""
        return tuple(f for f in self.families if self.share(f) > self.max_share)

    def warnings(self) -> list[str]:
        """One line per family over its share, with the figures and what to change."""
        return [
            f"the fixed part of every {f.family} request is {f.tokens:,} tokens, "
            f"{self.share(f):.1%} of a {self.context_window:,}-token context window (more "
            f"than {self.max_share:.0%}): lower the catalog budget or show fewer skills"
            for f in self.over
        ]

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["tools"] = list(self.tools)
        data["families"] = [
            {**asdict(f), "chars": f.chars, "tokens": f.tokens, "share": round(self.share(f), 4)}
            for f in self.families
        ]
        data["warnings"] = self.warnings()
        return data


_EXPORTERS: Final[tuple[tuple[Family, Callable[[list[ToolDef]], list[dict[str, Any]]]], ...]] = (
    ("openai", to_openai),
    ("anthropic", to_anthropic),
)


def request_cost(
    repo: Repository,
    counter: TokenCounter,
    *,
    settings: SkillSettings | None = None,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    max_share: float = DEFAULT_MAX_SHARE,
) -> RequestCost:
    """The fixed part of a request the harness would send with ``settings`` over ``repo``.

    Args:
        repo: The skills.
        counter: Counts the tokens.
        settings: The harness settings (default: the defaults: catalog budget, format,
            tool style).
        context_window: Tokens of the model's context window.
        max_share: The part of it beyond which :meth:`RequestCost.warnings` speaks.
    """
    harness = Harness(repo, settings)
    system = harness.instructions()
    definitions = harness.skill_definitions()
    families: list[FamilyCost] = []
    for family, export in _EXPORTERS:
        schemas = json.dumps(export(definitions), ensure_ascii=False, separators=(",", ":"))
        system_tokens, schema_tokens = counter.count_many([system, schemas])
        families.append(FamilyCost(family, len(system), len(schemas), system_tokens, schema_tokens))
    loadable = sum(1 for s in harness.visible_skills() if s.model_invocable)
    return RequestCost(
        counter.encoding,
        counter.exact,
        loadable,
        tuple(d.name for d in definitions),
        tuple(families),
        context_window,
        max_share,
    )

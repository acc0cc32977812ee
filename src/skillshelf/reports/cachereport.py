"""Prompt-cache report: how much of each model request is an unchanged prefix of the previous one.

Providers cache a prompt by its prefix, so a request that starts with the previous request's
bytes is mostly served from the cache. A scripted tool loop (load a skill, read one of its
documents, select it, answer) runs through the real :class:`~skillshelf.agent.loop.Agent`; every
request the model receives is serialised as an OpenAI Chat Completions provider sees it (the
tools, then the messages, as canonical JSON) and compared with the one before it. The loop runs
once per placement of loaded content (``tool_result``, ``system``; see
:mod:`skillshelf.harness`).

:func:`prefix_shares` and :func:`serialize_request` are pure; :func:`cache_report` runs the loop.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import TYPE_CHECKING, Any, Final, get_args

from skillshelf.errors import UsageError
from skillshelf.harness import Placement

if TYPE_CHECKING:
    from skillshelf.models import ModelRequest, ModelResponse, TextSink
    from skillshelf.repository import Repository
    from skillshelf.skills.skill import Skill

__all__ = [
    "CacheReport",
    "PlacementCache",
    "StepShare",
    "cache_report",
    "cache_script",
    "common_prefix",
    "prefix_shares",
    "serialize_request",
]

PLACEMENTS: Final[tuple[Placement, ...]] = get_args(Placement)
USER_MESSAGE: Final = "Use the {skill} skill for this task, and check its {doc} first."
_BLOCK: Final = 4096


def serialize_request(request: ModelRequest) -> bytes:
    """The request as an OpenAI-compatible server receives it: tools first, then messages.

    Canonical JSON (sorted keys, no spaces, UTF-8), so equal content gives equal bytes.
    """
    from skillshelf.core.tooldef import to_openai

    def dump(value: object) -> str:
        return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)

    # Providers render the tool definitions ahead of the conversation, so they lead here too.
    text = f'{{"tools":{dump(to_openai(request.tools))},"messages":{dump(request.messages)}}}'
    return text.encode("utf-8")


def common_prefix(first: bytes, second: bytes) -> int:
    """The number of leading bytes ``first`` and ``second`` share."""
    limit = min(len(first), len(second))
    start = 0
    while start < limit and first[start : start + _BLOCK] == second[start : start + _BLOCK]:
        start += _BLOCK
    end = min(start + _BLOCK, limit)
    while start < end and first[start] == second[start]:
        start += 1
    return min(start, limit)


@dataclass(frozen=True, slots=True)
class StepShare:
    """One request compared with the previous one.

    Attributes:
        step: The request's number (the first is 1, so steps start at 2).
        request_bytes: Its size.
        prefix_bytes: How many of its leading bytes equal the previous request's.
    """

    step: int
    request_bytes: int
    prefix_bytes: int

    @property
    def share(self) -> float:
        """``prefix_bytes / request_bytes``."""
        return self.prefix_bytes / self.request_bytes if self.request_bytes else 0.0


def prefix_shares(requests: Sequence[bytes]) -> tuple[StepShare, ...]:
    """Compare each request after the first with the one before it."""
    return tuple(
        StepShare(index + 1, len(current), common_prefix(previous, current))
        for index, (previous, current) in enumerate(pairwise(requests), start=1)
    )


@dataclass(frozen=True, slots=True)
class PlacementCache:
    """The loop's requests under one placement of loaded content.

    Attributes:
        placement: ``tool_result`` or ``system``.
        request_bytes: The size of every request, in order.
        steps: Each request after the first against its predecessor.
    """

    placement: Placement
    request_bytes: tuple[int, ...]
    steps: tuple[StepShare, ...]

    @property
    def overall(self) -> float:
        """Prefix bytes over request bytes across all steps (bytes-weighted)."""
        total = sum(s.request_bytes for s in self.steps)
        return sum(s.prefix_bytes for s in self.steps) / total if total else 0.0


@dataclass(frozen=True, slots=True)
class CacheReport:
    """Prefix shares of a scripted tool loop under each placement.

    Attributes:
        skill: The skill the loop loads.
        doc: The document it reads and selects.
        script: The tool calls, in order, then the final answer.
        placements: One result per placement.
    """

    skill: str
    doc: str
    script: tuple[str, ...]
    placements: tuple[PlacementCache, ...]

    def to_dict(self) -> dict[str, Any]:
        """Every number, for ``--json``."""
        return {
            "skill": self.skill,
            "doc": self.doc,
            "script": list(self.script),
            "placements": [
                {
                    "placement": p.placement,
                    "request_bytes": list(p.request_bytes),
                    "overall_share": round(p.overall, 4),
                    "steps": [
                        {
                            "step": s.step,
                            "request_bytes": s.request_bytes,
                            "prefix_bytes": s.prefix_bytes,
                            "share": round(s.share, 4),
                        }
                        for s in p.steps
                    ],
                }
                for p in self.placements
            ],
        }


def cache_script(skill: str, doc: str) -> list[ModelResponse]:
    """The model's replies: load ``skill``, read ``doc``, select it, then answer."""
    from skillshelf.models import ModelResponse, ToolCall

    def call(call_id: str, tool: str, arguments: dict[str, Any]) -> ModelResponse:
        calls = (ToolCall(call_id, tool, json.dumps(arguments)),)
        return ModelResponse(tool_calls=calls, finish_reason="tool_calls", model="scripted")

    return [
        call("call_load", "skill_load", {"skill": skill}),
        call("call_read", "skill_read_file", {"skill": skill, "path": doc}),
        call("call_select", "skill_select_docs", {"skill": skill, "docs": [doc], "mode": "add"}),
        ModelResponse("Done: followed the skill.", finish_reason="stop", model="scripted"),
    ]


class _Recorder:
    """Wraps a model and keeps each request's bytes as the model received it."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.requests: list[bytes] = []

    @property
    def name(self) -> str:
        return str(self.inner.name)

    async def complete(
        self, request: ModelRequest, *, on_text: TextSink | None = None
    ) -> ModelResponse:
        # Serialised now: the agent's history objects may change after the call.
        self.requests.append(serialize_request(request))
        response: ModelResponse = await self.inner.complete(request, on_text=on_text)
        return response


def record_requests(repo: Repository, skill: str, doc: str, placement: Placement) -> list[bytes]:
    """Run the scripted loop through the agent and return every request's bytes.

    Raises:
        UsageError: The loop did not run as scripted (a tool call failed).
    """
    from skillshelf.agent.loop import Agent
    from skillshelf.models.scripted import ScriptedModel

    recorder = _Recorder(ScriptedModel(cache_script(skill, doc)))
    agent = Agent(recorder, repo, placement=placement)
    result = agent.run_sync(USER_MESSAGE.format(skill=skill, doc=doc))
    failed = [r for r in result.tool_calls if r.status != "ok"]
    if failed:
        raise UsageError(
            f"The scripted loop's {failed[0].tool} call failed: {failed[0].content[:200]}"
        )
    return recorder.requests


def pick_skill(repo: Repository, name: str | None) -> tuple[Skill, str]:
    """The skill for the loop (``name``, else the first with documents) and its first document.

    Raises:
        SkillNotFoundError: No skill called ``name``.
        UsageError: The skill has no documents, or no skill has any.
    """
    from skillshelf.skills.content import list_docs

    if name is not None:
        skill = repo.get(name)
        docs = list_docs(skill)
        if not docs:
            raise UsageError(
                f"Skill {name!r} has no documents to read; the cache report needs one. Pick "
                "another skill."
            )
        return skill, _first_doc(docs)
    for candidate in repo.skills:
        docs = list_docs(candidate) if candidate.model_invocable else []
        if docs:
            return candidate, _first_doc(docs)
    raise UsageError("No skill has documents to read; the cache report needs one.")


def _first_doc(docs: Sequence[str]) -> str:
    # A Markdown reference is what a model reads; a LICENSE.txt often sorts first but is not.
    return min(docs, key=lambda d: ("license" in d.lower(), not d.lower().endswith(".md"), d))


def cache_report(
    repo: Repository,
    *,
    skill: str | None = None,
    placements: Sequence[Placement] = PLACEMENTS,
) -> CacheReport:
    """Run the scripted loop once per placement and measure the prefix shares.

    Args:
        repo: The skills (the agent sees all of them, as in real use).
        skill: The skill to load (default: the first, by name, with documents).
        placements: Where loaded content goes, one run each.

    Raises:
        SkillNotFoundError: No skill called ``skill``.
        UsageError: The skill has no documents, a placement is unknown, or the loop failed.
    """
    unknown = [p for p in placements if p not in PLACEMENTS]
    if unknown:
        raise UsageError(f"Unknown placement {unknown[0]!r}; use tool_result or system")
    chosen, doc = pick_skill(repo, skill)
    results = []
    for placement in placements:
        requests = record_requests(repo, chosen.name, doc, placement)
        results.append(
            PlacementCache(placement, tuple(len(r) for r in requests), prefix_shares(requests))
        )
    script = ("skill_load", "skill_read_file", "skill_select_docs", "final answer")
    return CacheReport(chosen.name, doc, script, tuple(results))

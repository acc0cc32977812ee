"""Asking a model for a better description of one skill (the prompt is pure; the call is not).

The proposer sees what a careful author would look at: the skill's name, description and the
start of its body, the other skills' names and descriptions (what it must be told apart
from), the training requests it missed and those it took wrongly, a few it already gets right,
and earlier proposals that were rejected, with why. It never sees a held-out request: those
judge the proposal. Every value from a skill or a cases file is escaped
(:func:`~skillshelf.core.markup.escape_xml`) in the XML-shaped prompt, so a description or a
request cannot close an element or forge an instruction.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

import anyio

from skillshelf.core.markup import escape_xml
from skillshelf.errors import SkillshelfError, UsageError, clip
from skillshelf.models import Model, ModelError, ModelRequest, TransientModelError

__all__ = [
    "MAX_DESCRIPTION_CHARS",
    "Example",
    "ProposalRequest",
    "ProposerError",
    "build_messages",
    "parse_description",
    "propose",
]

MAX_DESCRIPTION_CHARS: Final = 1024  # the specification's limit
_BODY_CHARS: Final = 2_000  # enough to say what the skill does; the rest is detail
_OTHER_CHARS: Final = 300
_MAX_OTHERS: Final = 100
_MAX_EXAMPLES: Final = 12
_TRANSIENT_RETRIES: Final = 2
_MAX_WAIT_S: Final = 30.0  # a provider asking for longer is better reported than waited on
_TAG: Final = re.compile(r"<description>(.*?)</description>", re.DOTALL | re.IGNORECASE)

SYSTEM_PROMPT: Final = """\
You improve the descriptions of Agent Skills. An agent sees only each skill's name and \
description in its catalog and decides from them alone whether to load a skill for a request. \
Rewrite the description of the skill you are given so that the agent loads it for the \
requests it missed, stops loading it for requests meant for other skills or for none, and \
keeps loading it for the requests it already gets right. Say what the skill does and when to \
use it (the kinds of request, file types and words users use), in the third person, in at most \
1024 characters. Do not copy the example requests word for word: describe the kind of request. \
Reply with the new description only, inside <description>...</description>."""


class ProposerError(SkillshelfError):
    """The proposer model failed (after retries of transient errors)."""


@dataclass(frozen=True, slots=True)
class Example:
    """A training request and what happened to it.

    Attributes:
        query: The user's request.
        expected: The skill that should answer it, None for no skill.
        loaded: The skill loaded first, None when none was.
    """

    query: str
    expected: str | None
    loaded: str | None


@dataclass(frozen=True, slots=True)
class ProposalRequest:
    """Everything the proposer is shown for one skill.

    Attributes:
        skill: The skill's name.
        description: Its current description.
        body: Its SKILL.md body (cut to a few thousand characters in the prompt).
        others: ``(name, description)`` of the other skills in the catalog.
        missed: Training requests for this skill that loaded another skill or none.
        wrong: Training requests for another skill (or none) that loaded this one.
        right: Training requests for this skill it already answers.
        rejected: Earlier proposals and why they were not kept.
    """

    skill: str
    description: str
    body: str
    others: Sequence[tuple[str, str]]
    missed: Sequence[Example]
    wrong: Sequence[Example]
    right: Sequence[Example]
    rejected: Sequence[tuple[str, str]] = ()


def build_messages(request: ProposalRequest) -> list[dict[str, str]]:
    """The system and user messages for ``request`` (pure)."""
    name = escape_xml(request.skill)
    parts = [
        f'<skill name="{name}">',
        f"<description>{escape_xml(request.description)}</description>",
        f"<body_start>{escape_xml(clip(request.body, _BODY_CHARS))}</body_start>",
        "</skill>",
        "<other_skills>",
        *(
            f'<skill name="{escape_xml(other)}">{escape_xml(clip(text, _OTHER_CHARS))}</skill>'
            for other, text in list(request.others)[:_MAX_OTHERS]
        ),
        "</other_skills>",
        _examples("missed", "requests for this skill that did not load it", request.missed),
        _examples("wrong", "requests for another skill or none that loaded it", request.wrong),
        _examples("right", "requests it already answers (keep these working)", request.right),
    ]
    if request.rejected:
        parts.append("<rejected_proposals>")
        parts.extend(
            f'<proposal reason="{escape_xml(reason)}">{escape_xml(text)}</proposal>'
            for text, reason in request.rejected
        )
        parts.append("</rejected_proposals>")
    parts.append(f'Write the new description of "{name}".')
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n".join(parts)},
    ]


def _examples(tag: str, what: str, examples: Sequence[Example]) -> str:
    lines = [f"<{tag}> <!-- {what} -->"]
    for example in list(examples)[:_MAX_EXAMPLES]:
        expected = escape_xml(example.expected or "(none)")
        loaded = escape_xml(example.loaded or "(none)")
        query = escape_xml(clip(example.query, _BODY_CHARS))
        lines.append(f'<request expected="{expected}" loaded="{loaded}">{query}</request>')
    lines.append(f"</{tag}>")
    return "\n".join(lines)


def parse_description(text: str) -> str | None:
    """The description in a proposer's reply: inside ``<description>`` if the tag is there,
    else the whole reply; whitespace collapsed to single spaces; None when empty."""
    match = _TAG.search(text)
    found = match.group(1) if match else text
    # The prompt shows values escaped; a reply that echoes an entity means the character.
    value = " ".join(html.unescape(found).split()).strip("\"'` ")
    return value or None


async def propose(model: Model, request: ProposalRequest) -> str | None:
    """Ask ``model`` for a new description; None when its reply holds none.

    Raises:
        ProposerError: The model failed (transient errors are retried twice first).
    """
    messages = build_messages(request)
    for attempt in range(_TRANSIENT_RETRIES + 1):
        try:
            response = await model.complete(ModelRequest(messages=messages))
        except TransientModelError as exc:
            if attempt == _TRANSIENT_RETRIES:
                raise _failed(model, request.skill, exc) from None
            wait = exc.retry_after if exc.retry_after is not None else 2.0**attempt
            await anyio.sleep(min(wait, _MAX_WAIT_S))
        except (ModelError, UsageError) as exc:  # UsageError: a scripted model ran out
            raise _failed(model, request.skill, exc) from None
        else:
            return parse_description(response.text)
    raise AssertionError("unreachable")  # pragma: no cover


def _failed(model: Model, skill: str, exc: Exception) -> ProposerError:
    return ProposerError(
        f"the proposer model {model.name} failed on skill {skill!r}: "
        f"{type(exc).__name__}: {clip(str(exc), 500)}"
    )

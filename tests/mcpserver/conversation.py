"""A model's load → select docs → read → unload sequence, as a client that follows the tools.

The "model" passes back the ``conversation`` handle a result gave it, as the tool descriptions
ask, and never invents one. Shared by the protocol-era, the many-worker and the soak tests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from mcp import Client

SKILL = "api-error-triage"
DOC = "references/http-status.md"
_HANDLE = re.compile(r"conversation: (c1\.\S+)")


@dataclass
class Model:
    """Calls tools the way a model told about ``conversation`` would."""

    client: Client
    conversation: str | None = None
    handles_seen: list[str] = field(default_factory=list)

    async def call(self, tool: str, arguments: dict[str, Any]) -> tuple[str, bool]:
        if self.conversation is not None:
            arguments = {**arguments, "conversation": self.conversation}
        result = await self.client.call_tool(tool, arguments)
        text = "".join(getattr(c, "text", "") for c in result.content)
        match = _HANDLE.search(text)
        if match:
            structured = result.structured_content or {}
            assert structured.get("conversation") == match.group(1)
            self.conversation = match.group(1)
            self.handles_seen.append(match.group(1))
        return text, bool(result.is_error)


async def load_select_read_unload(
    client: Client, *, one_handle: bool = True
) -> list[tuple[str, bool]]:
    """The sequence; returns each call's text (handles masked) and error flag."""
    model = Model(client)
    steps: list[tuple[str, dict[str, Any]]] = [
        ("skill_load", {"skill": SKILL}),
        ("skill_load", {"skill": SKILL}),
        ("skill_select_docs", {"skill": SKILL, "docs": [DOC]}),
        ("skill_read_file", {"skill": SKILL, "path": DOC}),
        ("skill_unload", {"skill": SKILL}),
        ("skill_unload", {"skill": SKILL}),
    ]
    out = []
    for tool, arguments in steps:
        text, is_error = await model.call(tool, arguments)
        out.append((_HANDLE.sub("conversation: <handle>", text), is_error))
    if one_handle:
        assert len(model.handles_seen) <= 1, "a handle was minted more than once"
    return out


def assert_state_spans_calls(results: list[tuple[str, bool]]) -> None:
    """The sequence saw one conversation: loaded once, docs selected, unloaded once."""
    (first, e1), (again, e2), (select, e3), (read, e4), (unload, e5), (twice, e6) = results
    assert not any((e1, e2, e3, e4, e5)), results
    assert "<skill_content" in first
    assert "already loaded" in again
    assert DOC in select and "not loaded" not in select
    assert "HTTP" in read or len(read) > 100
    assert "unloaded" in unload and "was not loaded" not in unload
    assert "was not loaded" in twice and not e6

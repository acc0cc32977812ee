"""Which conversation a sessionless (2026-07-28) tool call runs in: :class:`Conversations`.

A stateful call without a handle mints a conversation; a call with one continues it, once
the handle verifies. Each conversation is held by its client
(:func:`~skillshelf.mcpserver.handles.client_of`) in a :class:`~skillshelf.core.quota.FairPool`:
a client over ``conversations_per_client`` ends its own oldest, and at
``max_conversations`` the client holding the most does, so one client minting in a loop
cannot push out anyone else's. A call with the handle of an ended conversation is refused
with a fresh handle and the reason, like a handle that expired.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from mcp_types import CallToolResult, TextContent

from skillshelf.core.quota import FairPool
from skillshelf.mcpserver.handles import Handles, client_of, owner_of, passed_handle
from skillshelf.tools import STATEFUL_TOOLS

__all__ = ["Conversations", "Resolved"]

_WHY: Final = {
    "expired": "has expired",
    "outlives": "expires later than this server allows (it was minted with a longer lifetime)",
    "forged": "was not issued by this server to you",
    "malformed": "is not a conversation handle",
}


@dataclass(frozen=True, slots=True)
class Resolved:
    """Where a sessionless call runs: its state key, a handle minted for it, the
    conversations to end to make room, or the refusal to answer instead of running it."""

    key: str
    minted: str | None = None
    evicted: tuple[str, ...] = ()
    refused: CallToolResult | None = None


class Conversations:
    """Sessionless conversations: minted and verified by ``handles``, held in ``pool``."""

    def __init__(self, handles: Handles, pool: FairPool) -> None:
        self.handles = handles
        self.pool = pool

    def resolve(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        *,
        authorization: str | None,
        peer: str | None,
    ) -> Resolved:
        """The conversation of a call of ``tool`` with ``arguments`` from this client."""
        owner = owner_of(authorization)
        client = client_of(authorization, peer)
        given = passed_handle(arguments.get("conversation"))
        if given is not None:
            check = self.handles.verify(given, owner)
            if check.key is None:
                return self._refused(tool, _WHY.get(check.problem or "", "is not valid"), owner)
            if self.pool.was_evicted(check.key):
                return self._refused(tool, self._evicted_why(), owner)
            return Resolved(check.key, evicted=tuple(self.pool.touch(client, check.key)))
        if tool in STATEFUL_TOOLS:
            mint = self.handles.mint(owner)
            return Resolved(mint.key, mint.handle, tuple(self.pool.touch(client, mint.key)))
        # A call that keeps no state still has failures to count (the third identical one is
        # fatal): they are counted per owner, across its handle-less calls.
        return Resolved(self.handles.owner_key(owner))

    def _evicted_why(self) -> str:
        return (
            f"was closed to make room: a client keeps at most {self.pool.per_client} "
            f"conversations here ({self.pool.total} in all), the oldest closing first"
        )

    def _refused(self, tool: str, why: str, owner: str) -> Resolved:
        # The fresh handle holds nothing until it is used, and only then counts.
        fresh = self.handles.mint(owner)
        text = (
            f"The `conversation` handle you passed {why}, so nothing was done. Use this fresh "
            f"handle from now on; skills loaded under the old one are gone, so call skill_load "
            f"again with it before {tool} if you need them.\n\nconversation: {fresh.handle}"
        )
        result = CallToolResult(
            content=[TextContent(type="text", text=text)],
            structured_content={
                "status": "recoverable",
                "conversation": fresh.handle,
                "text": text,
            },
            is_error=True,
        )
        return Resolved(fresh.key, refused=result)

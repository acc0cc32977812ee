"""The MCP skills extension (SEP-2640): ``skills/list``, ``skills/get``, directory reads.

Specified by ``specification/stable/skills.mdx`` in modelcontextprotocol/ext-skills. Errors
follow it: ``-32602`` for a URI that names no served skill, file or directory, ``-32603``
for anything that goes wrong inside the server.
"""

from __future__ import annotations

import base64
import binascii
import json
import logging
from collections.abc import Callable, Sequence
from typing import Any, Final, TypeVar

import anyio.to_thread
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.shared.exceptions import MCPError
from mcp_types import INTERNAL_ERROR, INVALID_PARAMS, PaginatedRequestParams, RequestParams

from skillshelf.errors import clip
from skillshelf.mcpserver.files import (
    DIRECTORY_MIME,
    SKILL_MD,
    Child,
    UriError,
    directory_children,
    file_uri,
    parse_uri,
)
from skillshelf.mcpserver.shelf import SKILLS_EXTENSION, Shelf, Viewer

__all__ = ["SKILLS_EXTENSION", "SkillsExtension", "decode_cursor", "encode_cursor", "guarded"]

logger = logging.getLogger("skillshelf.mcp")

SKILLS_PAGE: Final = 100  # entries per skills/list page; an entry is never split
DIRECTORY_PAGE: Final = 200
# How long a host may treat a listing as current; list_changed notifications cut it short.
TTL_MS: Final = 60_000
MESSAGE_CHARS: Final = 600  # of an error message, whatever it echoes

_T = TypeVar("_T")


class GetSkillParams(RequestParams):
    """``skills/get`` params."""

    uri: str


class ReadDirectoryParams(PaginatedRequestParams):
    """``resources/directory/read`` params."""

    uri: str


def encode_cursor(kind: str, value: str | int) -> str:
    """An opaque cursor for page ``value`` of listing ``kind``."""
    raw = json.dumps([kind, value], separators=(",", ":")).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def decode_cursor(kind: str, cursor: str | None) -> Any:
    """The value :func:`encode_cursor` packed, or None for no cursor.

    Raises:
        MCPError: -32602 for a cursor this server did not hand out for ``kind``.
    """
    if cursor is None:
        return None
    try:
        padded = cursor + "=" * (-len(cursor) % 4)
        found, value = json.loads(base64.urlsafe_b64decode(padded.encode()))
    except (ValueError, TypeError, binascii.Error):
        found, value = None, None
    if found != kind:
        raise MCPError(code=INVALID_PARAMS, message=f"Invalid cursor for {kind}")
    return value


async def guarded(fn: Callable[[], _T]) -> _T:
    """Run ``fn`` in a worker thread, mapping our failures to JSON-RPC errors."""
    try:
        return await anyio.to_thread.run_sync(fn)
    except UriError as exc:
        # Every message is clipped once more here: whatever it echoes, the answer stays small.
        raise MCPError(code=INVALID_PARAMS, message=clip(str(exc), MESSAGE_CHARS)) from None
    except MCPError:
        raise
    except Exception as exc:  # broad on purpose: a bug answers one request, not the server
        logger.exception("internal error")
        raise MCPError(
            code=INTERNAL_ERROR, message=f"Internal error: {type(exc).__name__}"
        ) from exc


class SkillsExtension(Extension):
    """SEP-2640 over a :class:`Shelf`: ``skills/list``, ``skills/get`` and directory reads.

    Args:
        shelf: The skills and the visibility hook.
        viewer_of: Who sent a request.
    """

    identifier = SKILLS_EXTENSION

    def __init__(
        self, shelf: Shelf, viewer_of: Callable[[ServerRequestContext[Any, Any]], Viewer]
    ) -> None:
        self.shelf = shelf
        self.viewer_of = viewer_of

    def settings(self) -> dict[str, Any]:
        return {"directoryRead": True}

    def methods(self) -> Sequence[MethodBinding]:
        return (
            MethodBinding("skills/list", PaginatedRequestParams, self.list_skills),
            MethodBinding("skills/get", GetSkillParams, self.get_skill),
            MethodBinding("resources/directory/read", ReadDirectoryParams, self.read_directory),
        )

    def _complete(self, fields: dict[str, Any]) -> dict[str, Any]:
        """A result of any of the three methods: ``fields``, complete and cacheable.

        Every result carries ``ttlMs`` and ``cacheScope``: from 2026-07-28 they are required
        (clients such as the MCP Inspector reject a result without them), and a 2025-11-25
        client ignores them.
        """
        # A visibility hook makes answers depend on who asks: never share them.
        scope = "public" if self.shelf.visible is None else "private"
        return {"resultType": "complete", **fields, "ttlMs": TTL_MS, "cacheScope": scope}

    async def list_skills(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams
    ) -> dict[str, Any]:
        """``skills/list``: one page of entries, resumed after the last name sent."""
        after = decode_cursor("skills", params.cursor)
        if after is not None and not isinstance(after, str):
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor for skills")
        viewer = self.viewer_of(ctx)

        def page() -> dict[str, Any]:
            entries: list[dict[str, Any]] = []
            last: str | None = None
            more = False
            for skill in self.shelf.skills_after(after, viewer):
                if len(entries) == SKILLS_PAGE:
                    more = True
                    break
                last = skill.name
                try:
                    entries.append(self.shelf.entry(skill))
                except UriError:  # over the limits: reported at each scan, not served
                    continue
                except OSError as exc:  # vanished since the scan: one skill, not the listing
                    logger.warning("skipping %s in skills/list: %s", skill.name, exc)
            result: dict[str, Any] = {"skills": entries}
            if last is not None and more:
                result["nextCursor"] = encode_cursor("skills", last)
            return self._complete(result)

        return await guarded(page)

    async def get_skill(
        self, ctx: ServerRequestContext[Any, Any], params: GetSkillParams
    ) -> dict[str, Any]:
        """``skills/get``: the entry of the skill whose SKILL.md ``params.uri`` names."""
        viewer = self.viewer_of(ctx)

        def get() -> dict[str, Any]:
            parsed = parse_uri(params.uri)
            if parsed.path != SKILL_MD:
                raise UriError(f"No skill is served at {clip(params.uri)} (not a SKILL.md URI)")
            skill = self.shelf.skill(parsed.name, viewer)
            return self._complete({"skill": self.shelf.entry(skill, keep=True)})

        return await guarded(get)

    async def read_directory(
        self, ctx: ServerRequestContext[Any, Any], params: ReadDirectoryParams
    ) -> dict[str, Any]:
        """``resources/directory/read``: the direct children of a skill directory."""
        offset = decode_cursor("directory:" + params.uri, params.cursor) or 0
        if not isinstance(offset, int) or offset < 0:
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor for this directory")
        viewer = self.viewer_of(ctx)

        def read() -> dict[str, Any]:
            parsed = parse_uri(params.uri)
            skill = self.shelf.skill(parsed.name, viewer)
            children = directory_children(skill, parsed.path)
            shown = children[offset : offset + DIRECTORY_PAGE]
            resources = [_child_resource(skill.name, c) for c in shown]
            result: dict[str, Any] = {"resources": resources}
            if offset + DIRECTORY_PAGE < len(children):
                result["nextCursor"] = encode_cursor(
                    "directory:" + params.uri, offset + DIRECTORY_PAGE
                )
            return self._complete(result)

        return await guarded(read)


def _child_resource(skill_name: str, child: Child) -> dict[str, Any]:
    if child.is_dir:
        return {
            "uri": file_uri(skill_name, child.relative),
            "name": child.name,
            "mimeType": DIRECTORY_MIME,
        }
    return {
        "uri": file_uri(skill_name, child.relative),
        "name": child.name,
        "mimeType": child.mime,
        "size": child.size,
    }

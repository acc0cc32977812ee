"""What a :class:`~skillshelf.mcpserver.SkillServer` serves besides tools: the ``skill://``
resources (a page of whole skills at a time, read as text or base64), one prompt per
user-invocable skill (its body with the arguments substituted, as a slash command in ``chat``
renders it), and the reports of skills it does not serve."""

from __future__ import annotations

import base64
import logging
import os
from typing import Any, Final

from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    BlobResourceContents,
    GetPromptRequestParams,
    GetPromptResult,
    ListPromptsResult,
    ListResourcesResult,
    PaginatedRequestParams,
    Prompt,
    PromptArgument,
    PromptMessage,
    ReadResourceRequestParams,
    ReadResourceResult,
    Resource,
    TextContent,
    TextResourceContents,
)

from skillshelf.core.mime import SNIFF_BYTES, guess_mime
from skillshelf.core.slash import expand
from skillshelf.errors import SkillshelfError, clip
from skillshelf.mcpserver.extension import decode_cursor, encode_cursor, guarded
from skillshelf.mcpserver.files import (
    MAX_FILES,
    MAX_TOTAL_BYTES,
    SKILL_MD,
    file_uri,
    over_limit,
    parse_uri,
    read_bytes,
)
from skillshelf.mcpserver.shelf import Shelf, Viewer
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.tools import skill_uri

__all__ = ["PROMPTS_PAGE", "RESOURCES_PAGE", "ContentHandlers"]

logger = logging.getLogger("skillshelf.mcp")

# resources/list and prompts/list pages: whole skills, at least this many items a page (the
# last page excepted), so a page costs the same at 100 skills and at 100,000.
RESOURCES_PAGE: Final = 500
PROMPTS_PAGE: Final = 500


class ContentHandlers:
    """The resources and prompts handlers, mixed into the server (which gives ``shelf``,
    ``repo`` and ``viewer_of``)."""

    shelf: Shelf

    @property
    def repo(self) -> Repository:
        """The repository served."""
        return self.shelf.repo

    def viewer_of(self, ctx: ServerRequestContext[Any, Any]) -> Viewer:
        raise NotImplementedError

    # -- what is not served -------------------------------------------------------------

    def report_limits(self) -> list[str]:
        """Log (and return) the skills not served because they exceed the per-skill limits."""
        reports = []
        for skill in self.repo.skills:
            why = over_limit(skill)
            if why is not None:
                reports.append(f"{skill.name}: {why}")
                logger.warning(
                    "skill %r is not served over MCP: it has %s (the skills extension allows "
                    "%d files and %d bytes per skill)",
                    skill.name,
                    why,
                    MAX_FILES,
                    MAX_TOTAL_BYTES,
                )
        return reports

    def report_invalid(self) -> list[str]:
        """Log (and return) the skills no longer served: edited into an invalid state."""
        stale = self.repo.stale
        if not stale:
            return []
        why = {
            skipped.path: [d.message for d in skipped.diagnostics if d.severity == "error"]
            for skipped in self.repo.skipped
        }
        reports = sorted(stale)
        for name in reports:
            skill = self.repo.find(name)
            errors = why.get(os.fspath(skill.skill_md), []) if skill is not None else []
            logger.warning(
                "skill %r is not served until its SKILL.md is valid again (a restart would "
                "not serve it either): %s",
                clip(name),
                clip("; ".join(errors)),
            )
        return reports

    # -- resources -----------------------------------------------------------------------

    async def _list_resources(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListResourcesResult:
        after = decode_cursor("resources", params.cursor if params else None)
        if after is not None and not isinstance(after, str):
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor for resources/list")
        viewer = self.viewer_of(ctx)

        def listing() -> ListResourcesResult:
            # Whole skills, resumed after the last name sent: a page costs the skills it
            # holds, not a pass over every skill (and every skill's files) of the repository.
            page: list[Resource] = []
            last: str | None = None
            for skill in self.shelf.skills_after(after, viewer):
                if len(page) >= RESOURCES_PAGE:
                    return ListResourcesResult(
                        resources=page, next_cursor=encode_cursor("resources", str(last))
                    )
                last = skill.name
                page += self._resources_of(skill)
            return ListResourcesResult(resources=page)

        return await guarded(listing)

    def _resources_of(self, skill: Skill) -> list[Resource]:
        files = self.shelf.files(skill)
        if files.over_limit is not None:
            return []
        out = []
        for f in files.files:
            uri = file_uri(skill.name, f.relative)
            if f.relative == SKILL_MD:
                out.append(
                    Resource(
                        uri=uri,
                        name=skill.name,
                        description=skill.description,
                        mime_type="text/markdown",
                        size=f.size,
                    )
                )
            else:
                name = f"{skill.name}/{f.relative}"
                out.append(Resource(uri=uri, name=name, mime_type=f.mime, size=f.size))
        return out

    async def _read_resource(
        self, ctx: ServerRequestContext[Any, Any], params: ReadResourceRequestParams
    ) -> ReadResourceResult:
        viewer = self.viewer_of(ctx)
        uri = str(params.uri)

        def read() -> ReadResourceResult:
            parsed = parse_uri(uri)
            skill = self.shelf.skill(parsed.name, viewer)
            files = self.shelf.files(skill, keep=True)
            if files.over_limit is not None:
                self.shelf.entry(skill, keep=True)  # raises the "not served" error
            data = read_bytes(skill, parsed.path or SKILL_MD)
            mime = guess_mime(parsed.path or SKILL_MD, data[:SNIFF_BYTES])
            text = _as_text(data)
            if text is None:
                blob = base64.b64encode(data).decode()
                return ReadResourceResult(
                    contents=[BlobResourceContents(uri=uri, mime_type=mime, blob=blob)]
                )
            return ReadResourceResult(
                contents=[TextResourceContents(uri=uri, mime_type=mime, text=text)]
            )

        return await guarded(read)

    # -- prompts -------------------------------------------------------------------------

    async def _list_prompts(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListPromptsResult:
        after = decode_cursor("prompts", params.cursor if params else None)
        if after is not None and not isinstance(after, str):
            raise MCPError(code=INVALID_PARAMS, message="Invalid cursor for prompts/list")
        prompts: list[Prompt] = []
        for skill in self.shelf.skills_after(after, self.viewer_of(ctx)):
            if len(prompts) == PROMPTS_PAGE:
                cursor = encode_cursor("prompts", prompts[-1].name)
                return ListPromptsResult(prompts=prompts, next_cursor=cursor)
            if skill.manifest.user_invocable:
                prompts.append(_prompt(skill))
        return ListPromptsResult(prompts=prompts)

    async def _get_prompt(
        self, ctx: ServerRequestContext[Any, Any], params: GetPromptRequestParams
    ) -> GetPromptResult:
        viewer = self.viewer_of(ctx)
        arguments = (params.arguments or {}).get("arguments", "")

        def render() -> GetPromptResult:
            skill = self.repo.find(params.name)
            served = skill is not None and self.shelf.serves(skill, viewer)
            if skill is None or not served or not skill.manifest.user_invocable:
                raise MCPError(code=INVALID_PARAMS, message=f"Unknown prompt: {clip(params.name)}")
            try:
                body = skill.body()
            except SkillshelfError as exc:  # edited since the scan: a content problem
                raise MCPError(
                    code=INVALID_PARAMS, message=clip(f"Prompt {skill.name!r}: {exc}", 600)
                ) from None
            # The same substitution as a slash command in chat, so both render alike.
            where = skill_uri(skill.name) if viewer.remote else skill.directory
            text = expand(body, arguments, skill_dir=where)
            message = PromptMessage(role="user", content=TextContent(type="text", text=text))
            return GetPromptResult(description=skill.description, messages=[message])

        return await guarded(render)


def _prompt(skill: Skill) -> Prompt:
    hint = skill.manifest.argument_hint or "Text that replaces $ARGUMENTS in the skill."
    argument = PromptArgument(name="arguments", description=hint, required=False)
    return Prompt(name=skill.name, description=skill.description, arguments=[argument])


def _as_text(data: bytes) -> str | None:
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None

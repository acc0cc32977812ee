"""The MCP server for skills: resources, tools, prompts and the skills extension.

Built on the SDK's low-level :class:`mcp.server.lowlevel.server.Server` rather than
``MCPServer``: every list here is computed per request (the visibility hook sees who asks)
and per re-scan, which ``MCPServer``'s static registries do not model. The skills extension
is a real :class:`mcp.server.extension.Extension`, applied the way ``MCPServer`` applies one.
"""

from __future__ import annotations

import dataclasses
import logging
import os
import secrets
import uuid
from collections import OrderedDict
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

import anyio.to_thread
from mcp.server.context import CallNext, HandlerResult, ServerRequestContext
from mcp.server.extension import Extension
from mcp.server.lowlevel.server import Server
from mcp.server.session import ServerSession
from mcp.server.subscriptions import (
    InMemorySubscriptionBus,
    ListenHandler,
    PromptsListChanged,
    ResourcesListChanged,
    ToolsListChanged,
)
from mcp.shared.exceptions import MCPError
from mcp_types import (
    INVALID_PARAMS,
    CallToolRequestParams,
    CallToolResult,
    ListToolsResult,
    PaginatedRequestParams,
    TextContent,
    Tool,
)
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from skillshelf._version import __version__
from skillshelf.core.catalog import CatalogEntry, fit_catalog
from skillshelf.core.quota import FairPool
from skillshelf.core.session import LoadMode
from skillshelf.errors import UsageError, clip
from skillshelf.harness import SEARCH_FIRST, Harness, SkillSettings, ToolRecord
from skillshelf.mcpserver._content import ContentHandlers
from skillshelf.mcpserver._conversations import Conversations
from skillshelf.mcpserver._sessions import peer_of
from skillshelf.mcpserver.extension import (
    SkillsExtension,
)
from skillshelf.mcpserver.files import (
    file_uri,
)
from skillshelf.mcpserver.handles import HANDLE_LIFETIME_S, Handles
from skillshelf.mcpserver.limits import ServeLimits
from skillshelf.mcpserver.shelf import SKILLS_EXTENSION, Shelf, Viewer, Visibility
from skillshelf.repository import Changes, Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, StoreError
from skillshelf.stores.memory import MemoryStore
from skillshelf.tools import ALL_TOOLS, ENUM_LIMIT, SKILL_TOOLS, SkillTools

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager
    from skillshelf.harness import Trace

__all__ = ["SkillServer"]

logger = logging.getLogger("skillshelf.mcp")

INSTRUCTIONS_BUDGET: Final = 8_000  # characters of catalog in the server's instructions
MAX_TRACKED_SESSIONS: Final = 1_000  # legacy sessions told about list changes
# Every tool result's structuredContent: the text the model should read (exactly the text
# content), the status, and the tool's own fields (workspace_exec's exit_code, stdout, …).
OUTPUT_SCHEMA: Final[dict[str, Any]] = {
    "type": "object",
    "properties": {
        "text": {"type": "string", "description": "The result as the model should read it."},
        "status": {"type": "string", "enum": ["ok", "recoverable", "fatal"]},
    },
    "required": ["text", "status"],
    "additionalProperties": True,
}
# Tools whose calls always run in a worker thread: they wait on processes.
_THREADED_TOOLS: Final = frozenset({"workspace_exec"})
# Any viewer, for a server without a visibility hook (which then serves all alike).
_ANYONE: Final = Viewer()
_PREFACE: Final = (
    "This server provides Agent Skills. Each skill below has a name and a description; when "
    "one fits the task, call the skill_load tool with its name (or read its skill:// URI) and "
    "follow its instructions. Read the skill's other files with skill_read_file only when "
    "the instructions point to them.\n\n"
)


class SkillServer(ContentHandlers):
    """An MCP server over a repository of skills.

    Args:
        repo: The skills to serve.
        settings: The harness options (:class:`~skillshelf.harness.SkillSettings`) its tool
            calls run under: ``store``, ``agent``, ``load_mode``, ``max_loaded``,
            ``visible``, ``enforce_allowed_tools``, ``trace``, ``workspace``, ``executor``,
            ``exec_policy``, and ``instructions`` (put before the catalog in the server's
            instructions). A server runs no model and offers no user tools, so settings
            that say otherwise (``tools``, ``activations``, ``declared``, a ``tool_style``,
            ``placement`` or ``catalog_placement`` other than the default) are refused.
        store: Where per-session tool state lives (default: in memory); a shortcut over
            ``settings``, as are ``load_mode``, ``executor``, ``exec_policy``, ``trace`` and
            ``enforce_allowed_tools``.
        visible: Hides skills from some viewers, in every answer.
        load_mode: How long ``skill_load`` keeps a skill loaded in a session (the library's
            default, ``turn``; a server sees no user messages, so ``turn`` lasts until the
            skill is unloaded or evicted, like ``session``).
        enable_exec: Offer ``workspace_exec``: commands run in a per-session workspace.
        executor: Runs them (default: ``auto`` — bubblewrap where it works, else local).
        workspaces: Where the workspaces live (default: a folder in the temp dir).
        exec_policy: What ``workspace_exec`` may run.
        trace: Where each tool call's decision record goes (as ``chat --trace`` writes them).
        enforce_allowed_tools: While the active skill declares ``allowed-tools``, refuse a
            ``workspace_exec`` outside them.
        instructions_budget: Characters the server's instructions may take, preface and
            catalog (None: no limit); ``serve --catalog-budget`` sets it.
        enum_limit: Up to this many visible skills, the tools' ``skill`` argument is an enum
            of their names; above it, a plain string (every tool's schema would otherwise
            carry every name to the client's model on each request) that the server checks
            as before, answering an unknown name with the closest ones.
        name: The server's name in ``serverInfo``.
        handle_secret: Signs the conversation handles of sessionless (2026-07-28) requests;
            every worker behind one load balancer needs the same one. Default: a random
            secret, so handles verify only in this process.
        handle_lifetime_s: How long a conversation handle verifies after it was minted (at
            most :data:`~skillshelf.mcpserver.handles.MAX_HANDLE_LIFETIME_S`).
        limits: What one HTTP client may hold (:class:`~skillshelf.mcpserver.limits.ServeLimits`):
            conversations and sessions here, connections and read timeouts in :func:`serve`.
            The workspace manager's eviction is made fair over the same clients.
    """

    def __init__(
        self,
        repo: Repository,
        *,
        settings: SkillSettings | None = None,
        store: SessionStore | None = None,
        visible: Visibility | None = None,
        load_mode: LoadMode | None = None,
        enable_exec: bool = False,
        executor: Executor | None = None,
        workspaces: WorkspaceManager | None = None,
        exec_policy: ExecPolicy | None = None,
        trace: Trace | None = None,
        enforce_allowed_tools: bool | None = None,
        instructions_budget: int | None = INSTRUCTIONS_BUDGET,
        enum_limit: int = ENUM_LIMIT,
        name: str = "skillshelf",
        handle_secret: bytes | None = None,
        handle_lifetime_s: float = HANDLE_LIFETIME_S,
        limits: ServeLimits | None = None,
    ) -> None:
        self.handles = Handles(
            handle_secret if handle_secret is not None else secrets.token_bytes(32),
            lifetime_s=handle_lifetime_s,
        )
        self.limits = limits if limits is not None else ServeLimits()
        self.conversations = Conversations(
            self.handles,
            FairPool(
                per_client=self.limits.conversations_per_client,
                total=self.limits.max_conversations,
            ),
        )
        # Handshake-era sessions per client, kept by the HTTP layer (run.SessionQuota).
        self.sessions = FairPool(
            per_client=self.limits.sessions_per_client, total=self.limits.max_sessions
        )
        given = {
            "store": store,
            "load_mode": load_mode,
            "executor": executor,
            "workspace": workspaces,
            "exec_policy": exec_policy,
            "trace": trace,
            "enforce_allowed_tools": enforce_allowed_tools,
        }
        settings = SkillSettings.of(settings, **{k: v for k, v in given.items() if v is not None})
        _check_servable(settings)
        if enable_exec and settings.workspace is None:
            from skillshelf.exec.workspace import WorkspaceManager

            settings = settings.replace(workspace=WorkspaceManager())
        elif not enable_exec:
            settings = settings.replace(workspace=None)
        self.harness = Harness(repo, settings, source="serve")
        self.settings = self.harness.settings
        self.workspaces = self.settings.workspace
        if self.workspaces is not None:
            self.workspaces.client_of = self.client_of
        self.executor = self.settings.executor
        self.exec_policy = self.settings.exec_policy
        self.shelf = Shelf(repo, visible=_combined(visible, self.settings.visible))
        self.store = self.harness.store
        # A tool call that can wait on nothing but the local disk runs on the event loop: the
        # hop to a worker thread and back, and the two threads taking the GIL in turn, cost
        # more than such a call (skill_load over stdio: 1.26x the minimal SDK server through
        # a thread, 1.05-1.10x inline). workspace_exec runs processes, and a SQLite or Redis
        # store may wait on a lock or the network, so those calls take a thread; so do all
        # calls of a traced server (the trace writes to a file).
        self._inline_calls = isinstance(self.store, MemoryStore) and self.settings.trace is None
        self.load_mode: LoadMode = self.settings.load_mode
        self.instructions_budget = instructions_budget
        self.enum_limit = enum_limit
        self.tool_names: tuple[str, ...] = ALL_TOOLS if enable_exec else SKILL_TOOLS
        self.bus = InMemorySubscriptionBus()
        self._stdio_session = uuid.uuid4().hex
        self._sessions: OrderedDict[str, ServerSession] = OrderedDict()
        self._input_schemas: dict[str, dict[str, Any]] | None = None
        self.server: Server[Any] = Server(
            name,
            version=__version__,
            instructions=self.instructions(Viewer()),
            get_tool_input_schema=self._tool_input_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_resources=self._list_resources,
            on_read_resource=self._read_resource,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_subscriptions_listen=ListenHandler(self.bus),
        )
        self.extension = SkillsExtension(self.shelf, self.viewer_of)
        _apply_extension(self.server, self.extension)
        self.server.middleware.append(self._middleware)

    # -- who is asking -------------------------------------------------------------------

    def viewer_of(self, ctx: ServerRequestContext[Any, Any]) -> Viewer:
        """The viewer behind a request: client name, HTTP headers, session key."""
        return self._caller(ctx)[0]

    def _caller(self, ctx: ServerRequestContext[Any, Any]) -> tuple[Viewer, bool]:
        """The viewer, and whether its session key lives for this request only (one pass
        over the headers for both)."""
        params = ctx.session.client_params
        client = params.client_info.name if params is not None else None
        if client is None and ctx.method == "initialize":  # not committed to the session yet
            info = (ctx.params or {}).get("clientInfo")
            client = info.get("name") if isinstance(info, dict) else None
        request = ctx.request
        if request is None:
            return Viewer(client, {}, self._stdio_session), False
        headers = {k.lower(): v for k, v in getattr(request, "headers", {}).items()}
        # The SDK checks Mcp-Session-Id only on the handshake-era wire; on the sessionless
        # 2026-07-28 wire any value could be sent, so there state lives for one request.
        session = None
        if ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS:
            session = headers.get("mcp-session-id")
            scoped = session is None
        else:
            scoped = True
        key = "http:" + (session or uuid.uuid4().hex)
        return Viewer(client, headers, key, remote=True), scoped

    def client_of(self, key: str) -> str:
        """The client holding a state key (a conversation's or a session's), for fair
        eviction of workspaces; a key nobody holds (stdio's) is a client of its own."""
        return self.conversations.pool.client_of(key) or self.sessions.client_of(key) or key

    @property
    def stdio_session(self) -> str:
        """The session key of the stdio client (one per process)."""
        return self._stdio_session

    async def _middleware(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        result = await call_next(ctx)
        if ctx.method in ("initialize", "server/discover") and isinstance(result, dict):
            result = self._patch_handshake(result, self.viewer_of(ctx))
        # From notifications/initialized on (over HTTP, initialize's session id is only
        # assigned in its response), a handshake-era session is told about list changes.
        legacy = ctx.protocol_version not in MODERN_PROTOCOL_VERSIONS
        if legacy and ctx.method != "initialize":
            self._remember(ctx)
        return result

    def _patch_handshake(self, result: dict[str, Any], viewer: Viewer) -> dict[str, Any]:
        capabilities = dict(result.get("capabilities") or {})
        # The 2025-11-25 InitializeResult schema has no `extensions`, and the SDK sieves
        # unknown fields out: put the declaration back so legacy clients see it too.
        extensions = dict(capabilities.get("extensions") or {})
        extensions[SKILLS_EXTENSION] = self.extension.settings()
        capabilities["extensions"] = extensions
        if "protocolVersion" in result:  # the handshake era: changes arrive as notifications
            for kind in ("resources", "tools", "prompts"):
                capabilities[kind] = {**(capabilities.get(kind) or {}), "listChanged": True}
        return {**result, "capabilities": capabilities, "instructions": self.instructions(viewer)}

    def _remember(self, ctx: ServerRequestContext[Any, Any]) -> None:
        key = self._stdio_session if ctx.request is None else self.viewer_of(ctx).session
        self._sessions[key] = ctx.session
        self._sessions.move_to_end(key)
        while len(self._sessions) > MAX_TRACKED_SESSIONS:
            self._sessions.popitem(last=False)

    # -- instructions ----------------------------------------------------------------------

    def instructions(self, viewer: Viewer) -> str:
        """The catalog as server instructions, within the budget.

        Without a visibility hook every viewer reads the same text: it is rendered once per
        scan (every ``initialize`` sends it; at 100,000 skills a render takes seconds).
        """
        if self.shelf.visible is None:
            key = ("mcp.instructions", viewer.remote, self.instructions_budget)
            return self.repo.memo(key, lambda _skills: self._instructions(viewer))
        return self._instructions(viewer)

    def _instructions(self, viewer: Viewer) -> str:
        entries = [
            CatalogEntry(s.name, s.description, file_uri(s.name))
            for s in self.shelf.skills(viewer)
            if s.model_invocable
        ]
        if not entries:
            return self.no_skills_warning(shown_roots=not viewer.remote)
        own = self.settings.instructions.strip()
        preface = f"{own}\n\n{_PREFACE}" if own else _PREFACE
        # The search-first rule, when the catalog must list some skill by name only or leave
        # it out, comes after the catalog and is counted in the budget.
        rule = f"\n\n{SEARCH_FIRST}"
        whole = self.instructions_budget
        budget = None if whole is None else max(whole - len(preface), 200)
        fit = fit_catalog(entries, format=self.settings.catalog_format, budget_chars=budget)
        if not fit.cut or budget is None:
            return preface + fit.text
        fit = fit_catalog(
            entries,
            format=self.settings.catalog_format,
            budget_chars=max(budget - len(rule), 200),
        )
        return preface + fit.text + rule

    def no_skills_warning(self, *, shown_roots: bool = True) -> str:
        """What the server says when it has no skill to offer, naming the roots it read.

        A client starts the server from a working directory of its choosing, so a relative
        ``--root`` often names nothing; the absolute roots show where it looked.
        ``shown_roots=False`` leaves the (server-side) paths out, for remote clients.
        """
        text = (
            "WARNING: this skillshelf server has no skills to offer. The roots it looked at "
            "hold no valid skill"
        )
        if not shown_roots:
            return text + "; the server's operator must give it roots that do."
        roots = ", ".join(clip(_absolute(r)) for r in self.repo.roots) or "(none)"
        return (
            f"{text}: {roots}. Relative roots resolve against the working directory the "
            "client starts the server in; give absolute paths."
        )

    # -- tools ---------------------------------------------------------------------------

    def _tools_for(self, viewer: Viewer) -> SkillTools:
        visible: Callable[[Skill], bool]
        if self.shelf.visible is None:
            # One predicate object for every viewer: SkillTools keeps the names, enums and
            # schemas it derives per predicate and scan, so they are built once, not per call.
            visible = self._serves_anyone
        else:
            visible = lambda s: self.shelf.serves(s, viewer)  # noqa: E731
        return self.harness.skill_tools(
            viewer.session,
            visible=visible,
            # A local (stdio) client can use the server's paths with its own file tools; a
            # remote one gets skill:// URIs (skill_read_file accepts both forms).
            locations="uris" if viewer.remote else "paths",
            enum_limit=self.enum_limit,
        )

    def _serves_anyone(self, skill: Skill) -> bool:
        return self.shelf.serves(skill, _ANYONE)

    def _tool_input_schema(self, name: str) -> dict[str, Any] | None:
        # Streamable HTTP checks Mcp-Param headers against a tool's schema before every
        # tools/call; without this lookup it would run tools/list (1,000-name enums) each time.
        if self._input_schemas is None:
            schemas = self._schemas(Viewer())
            self._input_schemas = {s["name"]: s["inputSchema"] for s in schemas}
        return self._input_schemas.get(name)

    def _schemas(self, viewer: Viewer) -> list[dict[str, Any]]:
        # One tools/list for both eras: the conversation argument is always offered, and is
        # read only on requests without a protocol session.
        tools = self._tools_for(viewer)
        return tools.schemas("mcp", tools=self.tool_names, conversation=True)

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: PaginatedRequestParams | None
    ) -> ListToolsResult:
        schemas = self._schemas(self.viewer_of(ctx))
        tools = [
            Tool(
                name=s["name"],
                description=s["description"],
                input_schema=s["inputSchema"],
                output_schema=OUTPUT_SCHEMA,
            )
            for s in schemas
        ]
        return ListToolsResult(tools=tools)

    async def _call_tool(
        self, ctx: ServerRequestContext[Any, Any], params: CallToolRequestParams
    ) -> CallToolResult:
        if params.name not in self.tool_names:
            raise MCPError(code=INVALID_PARAMS, message=f"Unknown tool: {clip(params.name)}")
        viewer, sessionless = self._caller(ctx)
        arguments = dict(params.arguments or {})
        minted: str | None = None
        ended: tuple[str, ...] = ()
        if sessionless:
            # No protocol session: state that spans calls lives under a conversation handle.
            where = self.conversations.resolve(
                params.name,
                arguments,
                authorization=viewer.headers.get("authorization"),
                peer=None if ctx.request is None else peer_of(ctx.request.scope),
            )
            if where.refused is not None:
                return where.refused
            viewer = dataclasses.replace(viewer, session=where.key)
            minted, ended, sessionless = where.minted, where.evicted, False
        session = self.harness.session(viewer.session, tools=self._tools_for(viewer))
        call_id = str(ctx.request_id)

        def call() -> ToolRecord:
            for key in ended:  # conversations closed to make room for this one
                self._drop_state(key)
            try:
                return session.call_skill_tool(call_id, params.name, arguments)
            finally:
                if sessionless:
                    # Nothing can name this request's state again: it ends with the request,
                    # in the same worker thread (no second hop per call).
                    self._drop_state(viewer.session)

        if self._inline_calls and params.name not in _THREADED_TOOLS:
            return _tool_result(call(), minted)
        return _tool_result(await anyio.to_thread.run_sync(call), minted)

    async def end_session(self, key: str) -> None:
        """Forget a session: its tool state, its workspace, its list-change subscription."""
        self._sessions.pop(key, None)
        await anyio.to_thread.run_sync(self._drop_state, key)

    def _drop_state(self, key: str) -> None:
        try:
            self.store.delete_session(key)
        except StoreError:  # the state expires with the store's TTL anyway
            logger.warning("could not delete the state of an ended session", exc_info=True)
        if self.workspaces is not None:
            self.workspaces.close(key)

    # -- changes -------------------------------------------------------------------------

    async def refresh(self) -> Changes:
        """Re-scan the roots and tell connected clients what changed."""
        stale_before = self.repo.stale
        changes = await anyio.to_thread.run_sync(self.repo.refresh)
        self.shelf.forget()
        self._input_schemas = None
        await anyio.to_thread.run_sync(self.report_limits)
        self.report_invalid()
        self.server.instructions = self.instructions(Viewer())
        # A skill kept at its last good version is no change to the repository, but it
        # leaves (or, once fixed, rejoins) everything served here.
        await self.notify_changed(catalog=bool(changes) or self.repo.stale != stale_before)
        if changes:
            logger.info(
                "re-scanned: added %s, changed %s, removed %s",
                list(changes.added),
                list(changes.changed),
                list(changes.removed),
            )
        return changes

    async def notify_changed(self, *, catalog: bool) -> None:
        """Send resources (and, when the catalog changed, tools and prompts) list_changed."""
        events: list[Any] = [ResourcesListChanged()]
        if catalog:
            events += [ToolsListChanged(), PromptsListChanged()]
        for event in events:
            await self.bus.publish(event)
        for key, session in list(self._sessions.items()):
            try:
                await session.send_resource_list_changed()
                if catalog:
                    await session.send_tool_list_changed()
                    await session.send_prompt_list_changed()
            except Exception:  # a client that went away: stop telling it
                logger.debug("dropping session %s", key, exc_info=True)
                self._sessions.pop(key, None)


def _apply_extension(server: Server[Any], extension: Extension) -> None:
    """Register an extension's methods and advertise it, as ``MCPServer`` does."""
    for method in extension.methods():
        server.add_request_handler(method.method, method.params_type, method.handler)
    server.extensions[extension.identifier] = extension.settings()


def _tool_result(record: ToolRecord, minted: str | None) -> CallToolResult:
    text = record.content
    structured = {"status": record.status, **(record.data or {})}
    if minted is not None:
        text += (
            f"\n\nconversation: {minted}\n(Pass this handle as the `conversation` argument "
            "of every later skill_load, skill_select_docs, skill_unload and workspace_exec call.)"
        )
        structured["conversation"] = minted
    # Clients that read structuredContent (pydantic-ai, openai-agents with
    # use_structured_content) give the model that alone: it carries the same text.
    structured["text"] = text
    return CallToolResult(
        content=[TextContent(type="text", text=text)],
        structured_content=structured,
        is_error=record.status != "ok",
    )


# What a server cannot do with the harness's settings: it runs no model and offers the
# client's model no tools of its own.
_NOT_SERVABLE: Final = (
    "tools",
    "activations",
    "declared",
    "tool_style",
    "placement",
    "catalog_placement",
)


def _combined(
    visible: Visibility | None, shown: Callable[[Skill], bool] | None
) -> Visibility | None:
    """The server's visibility hook and the settings' filter as one hook."""
    if shown is None or visible is None:
        return visible if shown is None else (lambda skill, _viewer: shown(skill))
    return lambda skill, viewer: shown(skill) and visible(skill, viewer)


def _check_servable(settings: SkillSettings) -> None:
    defaults = SkillSettings()
    refused = [f for f in _NOT_SERVABLE if getattr(settings, f) != getattr(defaults, f)]
    if refused:
        raise UsageError(
            f"an MCP server cannot apply the settings {', '.join(refused)}: it runs no model "
            "and offers no tools of its own (leave them at their defaults)"
        )


def _absolute(root: str) -> str:
    if "://" in root:
        return root
    return os.path.abspath(os.path.expanduser(root))

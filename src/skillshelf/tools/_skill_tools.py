"""The model-facing skill tools, run against a repository and a session store.

Every call returns a graded :class:`ToolResult` — ``ok``, ``recoverable`` (the model may fix the
arguments and retry) or ``fatal`` (stop retrying; a standard message for the user) — and never
raises for anything the model sent. The same failing call is allowed two retries per session;
the third identical failure is answered as fatal.

Failures are graded by their type (see :mod:`skillshelf.errors`): :class:`ToolRetry` and other
library errors about the request are recoverable; :class:`ToolFailed` is fatal; a session store
that fails (down, or holding a corrupt document) is fatal with a standard message, and so is any
unexpected exception — both logged with their traceback on the ``skillshelf.tools`` logger.

Each tool's work is in a module of its own (``_catalog``, ``_load``, ``_read``, ``_exec_tool``);
this class reads the call, dispatches it and grades what comes back.
"""

from __future__ import annotations

import copy
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal

from skillshelf.core.search import SearchHit
from skillshelf.core.session import DEFAULT_MAX_LOADED, LoadMode, SessionState, grade_failure
from skillshelf.core.tooldef import to_anthropic, to_mcp, to_openai
from skillshelf.errors import SkillshelfError, ToolError, ToolRetry, UsageError
from skillshelf.repository import Repository
from skillshelf.skills.skill import Skill
from skillshelf.stores import SessionStore, StoreError, check_name, open_store
from skillshelf.tools._catalog import list_skills, search, visible_hits
from skillshelf.tools._exec_tool import choose_executor, run_command
from skillshelf.tools._load import list_skill_docs, load, resolve_docs, select_docs
from skillshelf.tools._parse import failure_signature, parse_arguments
from skillshelf.tools._problems import ArgumentProblem
from skillshelf.tools._read import Locations, read
from skillshelf.tools._record import SessionRecord
from skillshelf.tools._results import (
    FATAL_INTERNAL_MESSAGE,
    FATAL_STORE_MESSAGE,
    ErrorKind,
    ToolResult,
)
from skillshelf.tools._spec import ALL_TOOLS, ENUM_LIMIT, SKILL_TOOLS, tool_definitions
from skillshelf.tools._view import BY_USER, Names, SkillView, _UnknownSkill

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, WorkspaceManager

__all__ = ["DeclaredLoadError", "SchemaFormat", "SkillTools"]

logger = logging.getLogger("skillshelf.tools")

SchemaFormat = Literal["openai", "anthropic", "mcp"]
_EXPORTERS: Final = {"openai": to_openai, "anthropic": to_anthropic, "mcp": to_mcp}


class DeclaredLoadError(SkillshelfError):
    """A declared load names an unknown skill or doc; nothing was loaded."""


class SkillTools:
    """The skill tools for one session and one agent.

    Args:
        repo: Where the skills come from.
        store: Session store (default: in-memory).
        session_id: The conversation.
        agent: The agent within it; a sub-agent's loads never show in its parent's state.
            Both follow :data:`~skillshelf.stores.NAME_RULE` (:class:`UsageError` otherwise).
        load_mode: How long loads last (``once``, ``turn``, ``session``).
        max_loaded: Loaded skills kept before the least recently touched is evicted.
        visible: Per-request filter; hidden skills are absent from lists, enums and checks.
        max_file_chars: Cap on file text returned by ``skill_read_file`` and per doc.
        enum_limit: Above this many visible skills, ``skill`` is a plain string in schemas.
        workspace: Enables ``workspace_exec``: the session's workspace comes from here.
            Without it the tool is neither offered nor run.
        executor: Runs ``workspace_exec`` commands (default: ``auto`` — bubblewrap where it
            works, else local, which is not isolated, with a note in each result).
        exec_policy: What ``workspace_exec`` may run (default: :class:`ExecPolicy()`).
        locations: How results name a skill's directory: ``"paths"`` (its absolute path, for
            an agent in this process) or ``"uris"`` (``skill://name/``, for MCP clients, to
            whom a server path means nothing and would disclose the server's layout).
            ``skill_read_file`` accepts either in front of a relative path.
        offered: The tools to offer, a whitelist of :attr:`tool_names` (None: all); a call
            to another is answered as unavailable, a recoverable result.

    A call that names a skill checks that one skill (a dictionary lookup and one ``visible``
    call), whatever the size of the repository. What covers every visible skill (the names
    for suggestions and repairs, the schemas' enums, ``skill_list``) is computed once per
    repository scan (:attr:`Repository.version`) and ``visible`` predicate, and reused by
    every :class:`SkillTools` given the same predicate object: ``visible`` is taken to answer
    the same for a skill until the next refresh.
    """

    def __init__(
        self,
        repo: Repository,
        *,
        store: SessionStore | None = None,
        session_id: str = "default",
        agent: str = "main",
        load_mode: LoadMode = "turn",
        max_loaded: int = DEFAULT_MAX_LOADED,
        visible: Callable[[Skill], bool] | None = None,
        max_file_chars: int = 24_000,
        enum_limit: int = ENUM_LIMIT,
        workspace: WorkspaceManager | None = None,
        executor: Executor | None = None,
        exec_policy: ExecPolicy | None = None,
        locations: Locations = "paths",
        offered: Collection[str] | None = None,
    ) -> None:
        if max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
        check_name("session id", session_id)
        check_name("agent name", agent)
        self.repo = repo
        self.store = store if store is not None else open_store(None)
        self.session_id = session_id
        self.agent = agent
        self.load_mode: LoadMode = load_mode
        self.max_loaded = max_loaded
        self.visible = visible
        self.max_file_chars = max_file_chars
        self.enum_limit = enum_limit
        self.workspace = workspace
        self.executor = executor
        self.exec_policy = exec_policy
        self.locations: Locations = locations
        self.offered = None if offered is None else frozenset(offered)
        self._exec_warning: str | None = None
        self._view = SkillView(repo, visible)
        self._record = SessionRecord(self.store, session_id, agent)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools offered: the seven skill tools, plus ``workspace_exec`` when enabled,
        narrowed to ``offered`` when given (a call to another is answered as unavailable)."""
        names = ALL_TOOLS if self.workspace is not None else SKILL_TOOLS
        return names if self.offered is None else tuple(n for n in names if n in self.offered)

    # -- visibility and schemas ----------------------------------------------------------

    def visible_skills(self) -> list[Skill]:
        """Skills this session may see, sorted by name."""
        return list(self._view.skills())

    def matches(self, query: str, limit: int) -> list[SearchHit]:
        """The best ``limit`` matches for ``query`` among the skills the model may load (what
        ``skill_search`` ranks)."""
        return visible_hits(self._view, query, limit)

    def schemas(
        self,
        format: SchemaFormat = "openai",
        *,
        tools: Sequence[str] | None = None,
        conversation: bool = False,
    ) -> list[dict[str, Any]]:
        """Tool schemas in a provider's shape, with ``skill`` an enum of the visible names.

        ``conversation`` advertises the stateful tools' ``conversation`` handle argument (for
        a sessionless MCP server; this class itself never reads it).
        """
        if format not in _EXPORTERS:
            raise UsageError(f"Unknown schema format {format!r}; use openai, anthropic or mcp")
        offered = self.tool_names if tools is None else tools

        def build(skills: Sequence[Skill]) -> list[dict[str, Any]]:
            defs = tool_definitions(
                skill_names=[s.name for s in self._view.filter(skills) if s.model_invocable],
                tools=offered,
                enum_limit=self.enum_limit,
                conversation=conversation,
            )
            return _EXPORTERS[format](defs)

        shape = offered if isinstance(offered, str) else tuple(offered)
        key = ("skill_tools.schemas", self.visible, format, shape, self.enum_limit, conversation)
        # A copy: the caller may change what it is given (it is O(size of the schemas)).
        return copy.deepcopy(self.repo.memo(key, build))

    # -- state ---------------------------------------------------------------------------

    def state(self) -> SessionState:
        """The current state of this session and agent.

        Raises:
            StoreError: The store failed, or holds entries that are not a session state.
        """
        return self._record.state()

    def begin_turn(self) -> None:
        """The user sent a new message: ``turn`` and ``once`` loads end."""
        self._record.begin_turn()

    def after_request(self) -> None:
        """A model request was sent: ``once`` loads already delivered end."""
        self._record.after_request()

    def unload(self, name: str) -> bool:
        """Forget the load of skill ``name`` (whatever its visibility); returns whether it
        was loaded."""
        return self._record.unload(name)

    def tie_call_id(self, name: str, call_id: str) -> None:
        """Tie the load of ``name`` to the tool result that carries it (a load declared by
        the caller or the user has no call id of the model's)."""
        self._record.tie_call_id(name, call_id)

    def signature(self, tool: str, arguments: Mapping[str, Any] | str | None) -> str:
        """The key :meth:`record_failure` counts a call of a skill tool under: the call as
        validation reads it, so a respelt call is the same call
        (:func:`~skillshelf.tools.failure_signature`)."""
        names = Names(self._view, by_user=BY_USER.get())
        return failure_signature(tool, arguments, skill_names=names)

    def record_failure(self, signature: str) -> int:
        """Count one more failure of the call ``signature`` (:meth:`signature`, or
        :func:`~skillshelf.tools.failure_signature` for other tools) in this session;
        returns its count. The one counter of the skill tools and the agent's."""
        return self._record.record_failure(signature)

    def unload_all(self) -> None:
        """Forget every load of this session and agent."""
        self._record.unload_all()

    # -- calling -------------------------------------------------------------------------

    def call(
        self,
        tool: str,
        arguments: Mapping[str, Any] | str | None = None,
        *,
        call_id: str | None = None,
        history_call_ids: Collection[str] | None = None,
    ) -> ToolResult:
        """Run one tool exactly as a model would call it.

        Args:
            tool: The tool name.
            arguments: A mapping, a JSON string, or None.
            call_id: The model's tool call id (lets loaded content be tied to its result).
            history_call_ids: Tool call ids still present in the conversation; a load whose
                earlier result is gone is delivered again in full rather than as a stub.
        """
        try:
            return self._call(tool, arguments, call_id, history_call_ids)
        except StoreError:
            logger.exception("session store failed during %s (session %r)", tool, self.session_id)
            message = FATAL_STORE_MESSAGE.format(kind=self._record.store_kind())
            return ToolResult(tool, "fatal", message, kind="internal")

    def _call(
        self,
        tool: str,
        arguments: Mapping[str, Any] | str | None,
        call_id: str | None,
        history_call_ids: Collection[str] | None,
    ) -> ToolResult:
        names = Names(self._view, by_user=BY_USER.get())
        parsed = parse_arguments(tool, arguments, skill_names=names)
        if isinstance(parsed, ArgumentProblem):
            return self._grade(tool, arguments, parsed.message, parsed.kind)
        tool, args = parsed.tool, parsed.args
        notes = parsed.notes
        try:
            content, data = self._dispatch(tool, args, call_id, history_call_ids)
        except StoreError:
            raise  # graded in call(), the one place that answers for the store
        except ToolError as exc:
            if not exc.recoverable:
                return ToolResult(tool, "fatal", str(exc), kind="tool_error", notes=notes)
            kind: ErrorKind = "unknown_skill" if isinstance(exc, _UnknownSkill) else "tool_error"
            return self._grade(tool, arguments, str(exc), kind, notes)
        except SkillshelfError as exc:
            # A file that vanished or changed under us, a skill that stopped parsing: the model
            # may retry or move on.
            return self._grade(tool, arguments, str(exc), "tool_error", notes)
        except Exception as exc:  # broad on purpose: a bug of ours must not crash the agent
            logger.exception("internal error in %s (session %r)", tool, self.session_id)
            reason = f"{type(exc).__name__} (logged on skillshelf.tools)"
            message = FATAL_INTERNAL_MESSAGE.format(reason=reason)
            return ToolResult(tool, "fatal", message, kind="internal", notes=notes)
        if parsed.notes:
            content += "\n\n(Arguments adjusted: " + " ".join(parsed.notes) + ")"
        if parsed.ignored:
            content += "\n(Ignored unknown arguments: " + ", ".join(parsed.ignored) + ".)"
            notes += (f"Ignored unknown arguments: {', '.join(parsed.ignored)}.",)
        return ToolResult(tool, "ok", content, data, notes=notes)

    def _grade(
        self,
        tool: str,
        arguments: Mapping[str, Any] | str | None,
        message: str,
        kind: ErrorKind,
        notes: tuple[str, ...] = (),
    ) -> ToolResult:
        count = self.record_failure(self.signature(tool, arguments))
        status, text = grade_failure(tool, count, message)
        return ToolResult(tool, status, text, kind=kind, notes=notes)

    def _dispatch(
        self,
        tool: str,
        args: Any,
        call_id: str | None,
        history: Collection[str] | None,
    ) -> tuple[str, dict[str, Any] | None]:
        view = self._view
        if self.offered is not None and tool not in self.offered:
            raise ToolRetry(
                f"{tool!r} is not available here. Available tools: {', '.join(self.tool_names)}."
            )
        if tool == "skill_search":
            return search(view, args.query, args.limit)
        if tool == "skill_list":
            return list_skills(view, args.cursor)
        if tool == "skill_load":
            return load(
                view,
                self._record,
                args,
                call_id=call_id,
                history=history,
                mode=self.load_mode,
                max_loaded=self.max_loaded,
                max_doc_chars=self.max_file_chars,
                locations=self.locations,
            )
        if tool == "skill_list_docs":
            return list_skill_docs(view, args.skill)
        if tool == "skill_select_docs":
            return select_docs(view, self._record, args)
        if tool == "skill_read_file":
            return read(
                view, args.skill, args.path, max_chars=self.max_file_chars, locations=self.locations
            )
        if tool == "skill_unload":
            return self._unload(args.skill)
        if tool == "workspace_exec" and self.workspace is not None:
            return run_command(
                view,
                args,
                workspace=self.workspace,
                session_id=self.session_id,
                policy=self.exec_policy,
                sandbox=self._sandbox,
            )
        raise ToolRetry(
            f"{tool!r} is not available here. Available tools: {', '.join(self.tool_names)}."
        )

    def _unload(self, name: str) -> tuple[str, dict[str, Any]]:
        self._view.skill(name)
        was_loaded = self.unload(name)
        text = f"Skill {name!r} unloaded." if was_loaded else f"Skill {name!r} was not loaded."
        return text, {"skill": name, "was_loaded": was_loaded}

    def _sandbox(self) -> tuple[Executor, str | None]:
        """The executor of ``workspace_exec``, chosen on its first call when none was given."""
        if self.executor is None:
            self.executor, self._exec_warning = choose_executor()
        return self.executor, self._exec_warning

    # -- declared loads ------------------------------------------------------------------

    def declare(self, loads: Sequence[str | tuple[str, Sequence[str]]]) -> list[ToolResult]:
        """Load skills (and docs) before the first model request, all or nothing.

        Raises:
            DeclaredLoadError: A name or doc is unknown; nothing was loaded.
        """
        plan: list[tuple[str, list[str]]] = []
        problems: list[str] = []
        # A context variable, not an attribute: a model's call running at the same time in
        # another thread or task must not inherit the user's right to load user-only skills.
        token = BY_USER.set(True)
        try:
            for entry in loads:
                name, docs = (entry, []) if isinstance(entry, str) else (entry[0], list(entry[1]))
                try:
                    plan.append(
                        (name, resolve_docs(self._view, self._view.skill(name), docs, False))
                    )
                except ToolRetry as exc:
                    problems.append(str(exc))
            if problems:
                raise DeclaredLoadError("Declared skills cannot be loaded: " + " ".join(problems))
            return [self.call("skill_load", {"skill": n, "docs": d}) for n, d in plan]
        finally:
            BY_USER.reset(token)

"""The model-facing skill tools, run against a repository and a session store.

Every call returns a graded :class:`ToolResult` — ``ok``, ``recoverable`` (the model may fix the
arguments and retry) or ``fatal`` (stop retrying; a standard message for the user) — and never
raises for anything the model sent. The same failing call is allowed two retries per session;
the third identical failure is answered as fatal.

Failures are graded by their type (see :mod:`skillshelf.errors`): :class:`ToolRetry` and other
library errors about the request are recoverable; :class:`ToolFailed` is fatal; a session store
that fails (down, or holding a corrupt document) is fatal with a standard message, and so is any
unexpected exception — both logged with their traceback on the ``skillshelf.tools`` logger.
"""

from __future__ import annotations

import bisect
import copy
import dataclasses
import html
import logging
import os
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal
from urllib.parse import quote, unquote

from skillshelf.core.render import render_already_loaded
from skillshelf.core.search import closest_names
from skillshelf.core.session import (
    DEFAULT_MAX_LOADED,
    FAILURES_ENTRY,
    INDEX_ENTRY,
    SKILL_ENTRY_PREFIX,
    DocSelection,
    LoadedSkill,
    LoadMode,
    SessionIndex,
    SessionState,
    failures_from_doc,
    grade_failure,
    record_failure,
    skill_entry,
    trace_outcome,
)
from skillshelf.core.slash import expand
from skillshelf.errors import (
    SkillshelfError,
    ToolError,
    ToolFailed,
    ToolRetry,
    UsageError,
    clip,
    unknown_skill_message,
)
from skillshelf.repository import Repository
from skillshelf.skills.content import list_docs, render_load
from skillshelf.skills.skill import Skill
from skillshelf.skills.walk_cache import WalkCache
from skillshelf.stores import Doc, Entries, SessionStore, StoreError, open_store
from skillshelf.tools.spec import (
    ALL_TOOLS,
    SKILL_TOOLS,
    UNKNOWN_SKILL_ADVICE,
    failure_signature,
)

if TYPE_CHECKING:
    from skillshelf.exec.runner import Executor
    from skillshelf.exec.workspace import ExecPolicy, ExecResult, WorkspaceManager

__all__ = [
    "DeclaredLoadError",
    "ErrorKind",
    "SkillTools",
    "ToolResult",
    "ToolStatus",
]

logger = logging.getLogger("skillshelf.tools")

ToolStatus = Literal["ok", "recoverable", "fatal"]
# Why a call failed, for traces: the argument problems of tools.spec, a policy refusal, a
# timeout, an error the tool itself reported (file not found, ToolRetry/ToolFailed), or a bug.
ErrorKind = Literal[
    "missing",
    "invalid",
    "unknown_skill",
    "unknown_tool",
    "refused",
    "timeout",
    "tool_error",
    "internal",
]
SchemaFormat = Literal["openai", "anthropic", "mcp"]
_DESC_CHARS: Final = 200
# skill_list answers a page at a time: at most LIST_PAGE skills and LIST_CHARS characters
# (a page of long tags stops early), then a cursor for the next page. The catalog of a large
# repository is for skill_search; a page keeps every answer, and so every call, the same size
# at 100 skills as at 100,000, and nothing unbounded goes back to the model.
LIST_PAGE: Final = 100
LIST_CHARS: Final = 50_000
# True while a declared (user or harness) load runs: it may load user-only skills.
_BY_USER: ContextVar[bool] = ContextVar("skillshelf_declared_load", default=False)
_SHOWN_DOCS: Final = 5
FATAL_INTERNAL_MESSAGE: Final = (
    "The skill tools hit an internal error and cannot complete this call. Stop retrying and "
    "tell the user the skill system failed: {reason}"
)
# What the model reads when the session store fails: never the driver's own text, which may
# carry hosts, paths or document contents.
FATAL_STORE_MESSAGE: Final = (
    "The skill system's session store ({kind}) is unavailable or holds unreadable data, so this "
    "call could not complete. Stop retrying it and tell the user the session store failed."
)
# The shapes a JSON document of the wrong form makes the session state's from_doc fail with
# (OverflowError: int() of the Infinity that json.loads reads).
_WRONG_SHAPE: Final = (TypeError, ValueError, AttributeError, OverflowError)
# A change of the session state: the index and the entries read → the entries to write.
_Change = Callable[[SessionIndex, Entries], dict[str, Doc | None]]


class _Unmigrated(Exception):
    """A change found no index: the session may still hold skillshelf 0.1's one document."""


def _ended(index: SessionIndex, ended: list[str]) -> dict[str, Doc | None]:
    """The changes of a turn or request ending: the new index, the ended skills' entries gone."""
    return {INDEX_ENTRY: index.to_doc(), **{skill_entry(n): None for n in ended}}


_STORE_KINDS: Final = {"MemoryStore": "memory", "SQLiteStore": "SQLite", "RedisStore": "Redis"}


@dataclass(frozen=True, slots=True)
class ToolResult:
    """The graded outcome of one tool call.

    Attributes:
        tool: The tool called.
        status: ``ok``, ``recoverable`` or ``fatal``.
        content: The text the model sees.
        data: Structured form of the result, when there is one. Read it, do not change it:
            parts of it may be shared with later calls (``skill_list``'s rows and lists are
            kept per repository scan).
        kind: Why it failed (None when it did not).
        notes: The slips in the arguments that were forgiven ("arguments adjusted").
    """

    tool: str
    status: ToolStatus
    content: str
    data: dict[str, Any] | None = None
    kind: ErrorKind | None = None
    notes: tuple[str, ...] = ()

    @property
    def is_error(self) -> bool:
        """True unless the call succeeded."""
        return self.status != "ok"

    @property
    def exit_code(self) -> int | None:
        """The exit code of the command ``workspace_exec`` ran (None for any other call, and
        for a command that did not run)."""
        if self.tool != "workspace_exec" or self.status != "ok" or self.data is None:
            return None
        code = self.data.get("exit_code")
        return code if isinstance(code, int) else None

    @property
    def timed_out(self) -> bool:
        """The command ``workspace_exec`` ran was killed at its time limit."""
        return self.exit_code is not None and bool(self.data and self.data.get("timed_out"))

    def trace_fields(self) -> dict[str, Any]:
        """What the trace record of this call says of its outcome
        (:func:`~skillshelf.core.session.trace_outcome`)."""
        return trace_outcome(self.status, self.kind, self.exit_code, timed_out=self.timed_out)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``skillshelf call --json``."""
        return {"tool": self.tool, "status": self.status, "content": self.content}


class _UnknownSkill(ToolRetry):
    """The skill named is not one this session may use (graded ``unknown_skill``)."""


class DeclaredLoadError(SkillshelfError):
    """A declared load names an unknown skill or doc; nothing was loaded."""


class SkillTools:
    """The skill tools for one session and one agent.

    Args:
        repo: Where the skills come from.
        store: Session store (default: in-memory).
        session_id: The conversation.
        agent: The agent within it; a sub-agent's loads never show in its parent's state.
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
        enum_limit: int = 1000,
        workspace: WorkspaceManager | None = None,
        executor: Executor | None = None,
        exec_policy: ExecPolicy | None = None,
        locations: Literal["paths", "uris"] = "paths",
    ) -> None:
        if max_loaded < 1:
            raise UsageError("max_loaded must be at least 1")
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
        self.locations: Literal["paths", "uris"] = locations
        self._exec_warning: str | None = None
        self._no_legacy = False  # no skillshelf 0.1 state document to migrate (once seen)

    @property
    def tool_names(self) -> tuple[str, ...]:
        """The tools offered: the seven skill tools, plus ``workspace_exec`` when enabled."""
        return ALL_TOOLS if self.workspace is not None else SKILL_TOOLS

    # -- visibility and schemas ----------------------------------------------------------

    def visible_skills(self) -> list[Skill]:
        """Skills this session may see, sorted by name."""
        return list(self._visible_skills())

    def _visible_skills(self) -> tuple[Skill, ...]:
        return self.repo.memo(("skill_tools.skills", self.visible), self._filter)

    def _filter(self, skills: Sequence[Skill]) -> tuple[Skill, ...]:
        return tuple(skills) if self.visible is None else tuple(filter(self.visible, skills))

    def _visible_names(self, by_user: bool = False) -> tuple[str, ...]:
        """Names the model may pass (visible and not reserved for the user); with
        ``by_user``, every visible name."""
        return self.repo.memo(
            ("skill_tools.names", self.visible, by_user),
            lambda skills: tuple(
                s.name for s in self._filter(skills) if by_user or s.model_invocable
            ),
        )

    def _may_name(self, name: object, by_user: bool) -> bool:
        """Whether ``name`` is in :meth:`_visible_names`, without listing them."""
        skill = self.repo.find(name) if isinstance(name, str) else None
        if skill is None or (self.visible is not None and not self.visible(skill)):
            return False
        return by_user or skill.model_invocable

    def _walks(self) -> WalkCache:
        """The skill folders' walks, kept per scan while unchanged (tree, links, doc list)."""
        return self.repo.memo("skill_tools.walks", lambda _skills: WalkCache())

    def _skill(self, name: str) -> Skill:
        skill = self.repo.find(name)
        if skill is None or (self.visible is not None and not self.visible(skill)):
            suggestions = closest_names(name, self._visible_names())
            raise _UnknownSkill(
                f"{unknown_skill_message(name, suggestions)} {UNKNOWN_SKILL_ADVICE}"
            )
        if not skill.model_invocable and not _BY_USER.get():
            raise ToolRetry(
                f"Skill {name!r} can only be invoked by the user (as /{name}); "
                "do not load it yourself."
            )
        return skill

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
        from skillshelf.tools import spec as toolspec

        exporters = {
            "openai": toolspec.to_openai,
            "anthropic": toolspec.to_anthropic,
            "mcp": toolspec.to_mcp,
        }
        if format not in exporters:
            raise UsageError(f"Unknown schema format {format!r}; use openai, anthropic or mcp")
        offered = self.tool_names if tools is None else tools

        def build(skills: Sequence[Skill]) -> list[dict[str, Any]]:
            defs = toolspec.tool_definitions(
                skill_names=[s.name for s in self._filter(skills) if s.model_invocable],
                tools=offered,
                enum_limit=self.enum_limit,
                conversation=conversation,
            )
            return exporters[format](defs)

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
        entries = self._entries(None)
        try:
            return SessionState.from_entries(entries)
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc

    def _entries(self, names: Sequence[str] | None) -> Entries:
        """The index and the named entries of this session's state (all with None)."""
        wanted = None if names is None else [INDEX_ENTRY, *names]
        entries = self.store.get_entries(self.session_id, self.agent, wanted)
        if INDEX_ENTRY not in entries and self._migrate():
            entries = self.store.get_entries(self.session_id, self.agent, wanted)
        return entries

    def _change(self, names: Sequence[str], fn: _Change) -> None:
        """Apply ``fn`` to the index and the named entries, atomically (``fn`` may run more
        than once; the last run is the one stored). Every change of a skill's entry changes
        the index too, so that two changes of one skill always collide on the index."""

        def step(entries: Entries) -> dict[str, Doc | None]:
            if INDEX_ENTRY not in entries and not migrated:
                raise _Unmigrated  # nothing written: look for a 0.1 document first
            try:
                return fn(SessionIndex.from_doc(entries.get(INDEX_ENTRY)), entries)
            except _WRONG_SHAPE as exc:
                raise self._not_a_state(exc) from exc

        migrated = self._no_legacy
        names = [INDEX_ENTRY, *names]
        try:
            self.store.update_entries(self.session_id, self.agent, names, step)
        except _Unmigrated:
            self._migrate()
            migrated = True
            self.store.update_entries(self.session_id, self.agent, names, step)

    def _migrate(self) -> bool:
        """Turn the one state document of skillshelf 0.1 into entries, if there is one.

        Looked for until found absent once per instance: skillshelf never writes such a
        document any more, so one that is not there does not appear later (a call's read
        and its change ask once between them).
        """
        if self._no_legacy:
            return False
        legacy = self.store.get(self.session_id, self.agent)
        if legacy is None:
            self._no_legacy = True
            return False
        try:
            entries = SessionState.from_doc(legacy).to_entries()
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc
        self.store.update_entries(
            self.session_id,
            self.agent,
            [INDEX_ENTRY],
            lambda now: {} if INDEX_ENTRY in now else entries,
        )
        self.store.update(self.session_id, self.agent, lambda d: None if d == legacy else d)
        self._no_legacy = True
        return True

    def _loaded(self, name: str) -> LoadedSkill | None:
        """The session's entry for skill ``name``, reading the index and that entry only.

        Raises:
            StoreError: As :meth:`state`.
        """
        key = skill_entry(name)
        entries = self._entries([key])
        try:
            entry = entries.get(key)
            if entry is None or not SessionIndex.holds(entries.get(INDEX_ENTRY), name):
                return None
            return LoadedSkill.from_doc(name, entry)
        except _WRONG_SHAPE as exc:
            raise self._not_a_state(exc) from exc

    def _not_a_state(self, exc: Exception) -> StoreError:
        return StoreError(
            f"The {self._store_kind()} session state of session {self.session_id!r}, "
            f"agent {self.agent!r} is not a session state: {exc}"
        )

    def _store_kind(self) -> str:
        name = type(self.store).__name__
        return _STORE_KINDS.get(name, name)

    def begin_turn(self) -> None:
        """The user sent a new message: ``turn`` and ``once`` loads end."""
        self._change([], lambda index, _e: _ended(*index.begin_turn()))

    def after_request(self) -> None:
        """A model request was sent: ``once`` loads already delivered end."""
        self._change([], lambda index, _e: _ended(*index.after_request()))

    def unload(self, name: str) -> bool:
        """Forget the load of skill ``name`` (whatever its visibility); returns whether it
        was loaded."""
        was_loaded = [False]

        def drop(index: SessionIndex, _entries: Entries) -> dict[str, Doc | None]:
            was_loaded[0] = name in index.slots
            if not was_loaded[0]:
                return {}
            return {INDEX_ENTRY: index.unload(name).to_doc(), skill_entry(name): None}

        self._change([], drop)
        return was_loaded[0]

    def tie_call_id(self, name: str, call_id: str) -> None:
        """Tie the load of ``name`` to the tool result that carries it (a load declared by
        the caller or the user has no call id of the model's)."""
        self._change_loaded(name, lambda i, s: (i, dataclasses.replace(s, call_id=call_id)))

    def _change_loaded(
        self, name: str, fn: Callable[[SessionIndex, LoadedSkill], tuple[SessionIndex, LoadedSkill]]
    ) -> bool:
        """Apply ``fn`` to the index and the entry of ``name`` if it is loaded (atomically);
        returns whether it was."""
        key = skill_entry(name)
        loaded = [False]

        def change(index: SessionIndex, entries: Entries) -> dict[str, Doc | None]:
            doc = entries.get(key)
            loaded[0] = name in index.slots and doc is not None
            if doc is None or not loaded[0]:
                return {}
            index, entry = fn(index, LoadedSkill.from_doc(name, doc))
            return {INDEX_ENTRY: index.to_doc(), key: entry.to_doc()}

        self._change([key], change)
        return loaded[0]

    def signature(self, tool: str, arguments: Mapping[str, Any] | str | None) -> str:
        """The key :meth:`record_failure` counts a call of a skill tool under: the call as
        validation reads it, so a respelt call is the same call
        (:func:`~skillshelf.tools.spec.failure_signature`)."""
        names = _Names(self, by_user=_BY_USER.get())
        return failure_signature(tool, arguments, skill_names=names)

    def record_failure(self, signature: str) -> int:
        """Count one more failure of the call ``signature`` (:meth:`signature`, or
        :func:`~skillshelf.tools.spec.failure_signature` for other tools) in this session;
        returns its count. The one counter of the skill tools and the agent's."""
        counted = [1]

        def count(_index: SessionIndex, entries: Entries) -> dict[str, Doc | None]:
            failures, counted[0] = record_failure(
                failures_from_doc(entries.get(FAILURES_ENTRY)), signature
            )
            return {FAILURES_ENTRY: dict(failures)}

        self._change([FAILURES_ENTRY], count)
        return counted[0]

    def unload_all(self) -> None:
        """Forget every load of this session and agent."""
        # Only the skill state: other entries of the record (the history, activations) stay.
        held = [
            n
            for n in self.store.get_entries(self.session_id, self.agent)
            if n in (INDEX_ENTRY, FAILURES_ENTRY) or n.startswith(SKILL_ENTRY_PREFIX)
        ]

        def drop(now: Entries) -> dict[str, Doc | None]:
            # The index is read, and every write of a skill's entry changes it: so the skills
            # it holds now are all that a load since ``held`` was read can have added.
            slots = (now.get(INDEX_ENTRY) or {}).get("slots")
            added = [skill_entry(str(n)) for n in slots] if isinstance(slots, dict) else []
            return dict.fromkeys([*held, *(n for n in now if n in held), INDEX_ENTRY, *added])

        self.store.update_entries(self.session_id, self.agent, [INDEX_ENTRY, *held], drop)
        self.store.update(self.session_id, self.agent, lambda _d: None)

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
            message = FATAL_STORE_MESSAGE.format(kind=self._store_kind())
            return ToolResult(tool, "fatal", message, kind="internal")

    def _call(
        self,
        tool: str,
        arguments: Mapping[str, Any] | str | None,
        call_id: str | None,
        history_call_ids: Collection[str] | None,
    ) -> ToolResult:
        from skillshelf.tools import spec as toolspec

        names = _Names(self, by_user=_BY_USER.get())
        parsed = toolspec.parse_arguments(tool, arguments, skill_names=names)
        if isinstance(parsed, toolspec.ArgumentProblem):
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
        if tool == "skill_search":
            return self._search(args.query, args.limit)
        if tool == "skill_list":
            return self._list(args.cursor)
        if tool == "skill_load":
            return self._load(
                args.skill, args.docs, args.include_all_docs, call_id, history, args.args
            )
        if tool == "skill_list_docs":
            docs = list_docs(self._skill(args.skill), walks=self._walks())
            text = "\n".join(docs) if docs else "(this skill has no document files)"
            return text, {"skill": args.skill, "docs": docs}
        if tool == "skill_select_docs":
            return self._select(args.skill, args.docs, args.include_all_docs, args.mode)
        if tool == "skill_read_file":
            return self._read(args.skill, args.path)
        if tool == "skill_unload":
            return self._unload(args.skill)
        if tool == "workspace_exec" and self.workspace is not None:
            return self._exec(args)
        raise ToolRetry(
            f"{tool!r} is not available here. Available tools: {', '.join(self.tool_names)}."
        )

    # -- the tools -----------------------------------------------------------------------

    def _search(self, query: str, limit: int) -> tuple[str, dict[str, Any]]:
        names = _Names(self, by_user=False)
        # Hidden skills are filtered after ranking: fetch more until `limit` are left (the
        # ranking is a total order, so a longer fetch starts with the shorter one).
        fetch = max(limit, 1)
        while True:
            found = self.repo.search(query, limit=fetch)
            hits = [h for h in found if h.name in names][:limit]
            if len(hits) >= limit or len(found) < fetch:
                break
            fetch *= 4
        if not hits:
            text = f"No skill matches {query!r}. Call skill_list to see every skill."
            return text, {"results": []}
        lines = [f"- {h.name}: {_short(h.description)}" for h in hits]
        lines.append("\nTo use one, call skill_load with its name.")
        data = [{"name": h.name, "description": _short(h.description)} for h in hits]
        return "\n".join(lines), {"results": data}

    def _list(self, cursor: str | None) -> tuple[str, dict[str, Any]]:
        if cursor is None:
            # The first page, the usual call, is kept per scan and shared by every call (to be
            # read, never changed); later pages cost O(page + log N).
            text, data = self.repo.memo(
                ("skill_tools.list", self.visible),
                lambda skills: _list_page(*self._visible(skills), None),
            )
            return text, dict(data)
        skills, names = self.repo.memo(("skill_tools.visible", self.visible), self._visible)
        return _list_page(skills, names, cursor)

    def _visible(self, all_skills: Sequence[Skill]) -> tuple[tuple[Skill, ...], list[str]]:
        skills = self._filter(all_skills)
        return skills, [s.name for s in skills]

    def _resolve_docs(self, skill: Skill, docs: Sequence[str], include_all: bool) -> list[str]:
        if not docs and not include_all:
            return []  # nothing to check: the skill's folder need not be listed
        available = list_docs(skill, walks=self._walks())
        if include_all:
            return available
        unknown = [d for d in docs if _norm(d) not in available]
        if unknown:
            listing = ", ".join(available) if available else "none"
            # A model may send 50 entries of 10,000 characters: echo a bounded part of them.
            shown = ", ".join(clip(d) for d in unknown[:_SHOWN_DOCS])
            if len(unknown) > _SHOWN_DOCS:
                shown += f" and {len(unknown) - _SHOWN_DOCS} more"
            raise ToolRetry(
                f"Unknown doc(s) for skill {skill.name!r}: {shown}. Available docs: {listing}."
            )
        return list(dict.fromkeys(_norm(d) for d in docs))

    def _load(
        self,
        name: str,
        docs: Sequence[str],
        include_all: bool,
        call_id: str | None,
        history: Collection[str] | None,
        arguments: str | None = None,
    ) -> tuple[str, dict[str, Any]]:
        skill = self._skill(name)
        selected = self._resolve_docs(skill, docs, include_all)
        selection: DocSelection = "*" if include_all else selected
        digest = f"{skill.mtime_ns}:{skill.size}"
        before = self._loaded(name)
        wants_docs = include_all or bool(docs)
        # Arguments make a fresh invocation: delivered in full, never as the "already loaded" stub.
        fresh = arguments is not None
        if (
            not fresh
            and before is not None
            and _still_delivered(before, digest, selection, wants_docs, history)
        ):
            # Another call may have unloaded it since it was read: then load it in full.
            touch = self._change_loaded(name, lambda i, s: i.select_docs(s, s.docs))
            if touch:
                return render_already_loaded(name), {"skill": name, "already_loaded": True}
        directory = skill_uri(name) if self.locations == "uris" else None
        body = skill.body()
        if arguments is not None:
            where = skill_uri(name).rstrip("/") if self.locations == "uris" else skill.directory
            body = expand(body, arguments, skill_dir=where)
        content = render_load(
            skill,
            body,
            selected,
            max_doc_chars=self.max_file_chars,
            directory=directory,
            walks=self._walks(),
        )
        evicted: list[str] = []

        def apply(index: SessionIndex, _entries: Entries) -> dict[str, Doc | None]:
            index, entry, out = index.load(
                name,
                mode=self.load_mode,
                docs=selection,
                digest=digest,
                call_id=call_id,
                max_loaded=self.max_loaded,
            )
            evicted[:] = out
            changes: dict[str, Doc | None] = {skill_entry(n): None for n in out}
            changes |= {INDEX_ENTRY: index.to_doc(), skill_entry(name): entry.to_doc()}
            return changes

        self._change([], apply)
        if evicted:
            content += "\n\n(Unloaded to stay within the limit: " + ", ".join(evicted) + ".)"
        return content, {"skill": name, "docs": selected, "evicted": evicted}

    def _select(
        self, name: str, docs: Sequence[str], include_all: bool, mode: str
    ) -> tuple[str, dict[str, Any]]:
        skill = self._skill(name)
        current = self._loaded(name)
        if current is None:
            raise ToolRetry(f"Skill {name!r} is not loaded. Call skill_load first.")
        if mode == "clear":
            selection: DocSelection = []
        elif include_all:
            selection = "*"
        else:
            chosen = self._resolve_docs(skill, docs, False)
            if mode == "add" and current.docs != "*":
                chosen = list(dict.fromkeys([*current.docs, *chosen]))
            selection = "*" if mode == "add" and current.docs == "*" else chosen
        self._change_loaded(name, lambda i, s: i.select_docs(s, selection))
        shown = list_docs(skill, walks=self._walks()) if selection == "*" else selection
        text = f"Docs selected for {name!r}: " + (", ".join(shown) if shown else "none")
        return text, {"skill": name, "docs": shown}

    def _read(self, name: str, path: str) -> tuple[str, dict[str, Any]]:
        skill = self._skill(name)
        relative = _within(skill, path)
        content = self.repo.read_file(skill.name, relative, max_chars=self.max_file_chars)
        data = {
            "skill": name,
            "path": str(content.path) if self.locations == "paths" else content.relative,
            "size": content.size,
            "mime": content.mime,
            "binary": content.binary,
            "truncated": content.truncated,
        }
        return content.render(), data

    def _unload(self, name: str) -> tuple[str, dict[str, Any]]:
        self._skill(name)
        was_loaded = self.unload(name)
        text = f"Skill {name!r} unloaded." if was_loaded else f"Skill {name!r} was not loaded."
        return text, {"skill": name, "was_loaded": was_loaded}

    def _exec(self, args: Any) -> tuple[str, dict[str, Any]]:
        from skillshelf.exec.executors import select_executor
        from skillshelf.exec.runner import SandboxUnavailableError
        from skillshelf.exec.skill_limits import apply_skill_limits, read_skill_limits
        from skillshelf.exec.workspace import ExecPolicy, execute, shell_command

        assert self.workspace is not None
        skill = self._skill(args.skill) if args.skill else None
        policy, limit_notes = self.exec_policy or ExecPolicy(), list[str]()
        if skill is not None:  # the skill's own limits, never above the operator's
            limits = read_skill_limits(skill.manifest.metadata)
            policy, limit_notes = apply_skill_limits(policy, limits)
        if self.executor is None:
            try:
                self.executor, self._exec_warning = select_executor("auto")
            except SandboxUnavailableError as exc:
                raise ToolFailed(f"No sandbox is available to run commands: {exc}") from exc
        try:
            with self.workspace.use(self.session_id) as workspace:
                result = execute(
                    workspace,
                    self.executor,
                    shell_command(args.command),
                    skill=skill,
                    policy=policy,
                    # Not sent: the skill's or the policy's default, not the schema's.
                    timeout_s=args.timeout_s if "timeout_s" in args.model_fields_set else None,
                    collect=args.collect,
                    stdin=args.stdin,
                    pinned=self.repo.pinned_digest(skill.name) if skill is not None else None,
                )
        except OSError as exc:
            raise ToolFailed(f"The command could not be started: {exc}") from exc
        result.notes[:0] = limit_notes
        if self._exec_warning:
            result.notes.append(self._exec_warning)
        data = result.to_json() | {"run_id": result.run_id, "executor": result.executor}
        return _render_exec(result), data

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
        token = _BY_USER.set(True)
        try:
            for entry in loads:
                name, docs = (entry, []) if isinstance(entry, str) else (entry[0], list(entry[1]))
                try:
                    plan.append((name, self._resolve_docs(self._skill(name), docs, False)))
                except ToolRetry as exc:
                    problems.append(str(exc))
            if problems:
                raise DeclaredLoadError("Declared skills cannot be loaded: " + " ".join(problems))
            return [self.call("skill_load", {"skill": n, "docs": d}) for n, d in plan]
        finally:
            _BY_USER.reset(token)


class _Names(Collection[str]):
    """The names a call may pass, as argument parsing reads them: ``in`` checks the one
    skill named; iterating (repairs, suggestions) uses the list kept per scan."""

    __slots__ = ("_by_user", "_tools")

    def __init__(self, tools: SkillTools, *, by_user: bool) -> None:
        self._tools = tools
        self._by_user = by_user

    def __contains__(self, name: object) -> bool:
        return self._tools._may_name(name, self._by_user)

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools._visible_names(self._by_user))

    def __len__(self) -> int:
        return len(self._tools._visible_names(self._by_user))


def _render_exec(result: ExecResult) -> str:
    # Everything below but the status line comes from the sandbox: names arrive escaped to
    # one line (exec.workspace.escape_name) and every text is markup-escaped, so neither a
    # file name nor output can close a tag or start a line of harness text.
    status = "timed out and was killed" if result.timed_out else f"exit code {result.exit_code}"
    parts = [f"Command finished: {status} ({result.duration_s:.2f} s, {result.executor})."]
    for label, text, cut in (
        ("stdout", result.stdout, result.stdout_truncated),
        ("stderr", result.stderr, result.stderr_truncated),
    ):
        if text:
            note = " (truncated: head and tail kept)" if cut else ""
            parts.append(f"<{label}{note}>\n{_markup(text)}\n</{label}>")
    for file in result.files:
        path = _markup(file.path)
        parts.append(f"Collected {path} ({file.size} B, {file.mime}, sha256 {file.sha256})")
        if file.text is not None:
            parts.append(f'<file path="{path}">\n{_markup(file.text)}\n</file>')
    parts += [f"Note: {_markup(note)}" for note in result.notes]
    return "\n".join(parts)


def _markup(text: str) -> str:
    return html.escape(text, quote=True)


def _still_delivered(
    before: LoadedSkill,
    digest: str,
    selection: DocSelection,
    wants_docs: bool,
    history: Collection[str] | None,
) -> bool:
    if before.digest != digest or (wants_docs and before.docs != selection):
        return False
    if history is None or before.call_id is None:
        return True
    return before.call_id in history


def skill_uri(name: str) -> str:
    """``skill://name/``: the skill's directory as MCP clients name it."""
    return f"skill://{quote(name, safe='')}/"


def _within(skill: Skill, path: str) -> str:
    """``path`` relative to the skill: what ``skill_load`` advises, in either form, is accepted.

    The skill's ``skill://name/`` URI (segments percent-decoded one at a time) or its absolute
    directory in front of a path is removed; anything else goes to ``safe_join`` as sent,
    which refuses what would leave the skill.
    """
    uri = skill_uri(skill.name)
    if path.startswith(uri):
        return "/".join(unquote(part) for part in path[len(uri) :].split("/")) or "."
    for directory in dict.fromkeys((skill.directory, os.path.realpath(skill.directory))):
        if path == directory:
            return "."
        if path.startswith(directory + os.sep):
            return path[len(directory) + 1 :]
    return path


def _norm(path: str) -> str:
    return path.strip().replace("\\", "/").removeprefix("./")


def _list_page(
    skills: Sequence[Skill], names: Sequence[str], cursor: str | None
) -> tuple[str, dict[str, Any]]:
    """The page of ``skill_list`` after the skill named ``cursor`` (the first page with None)
    among the visible ``skills`` and their ``names``. Names are sorted, so a cursor whose skill
    has gone since still finds its place."""
    start = 0 if cursor is None else bisect.bisect_right(names, cursor)
    page = skills[start : start + LIST_PAGE]
    budget = LIST_CHARS
    text, data = _listing_within(page, budget, total=len(skills), start=start)
    # The slash-command heading and the note on what is left come on top of the lines counted:
    # shrink the room for lines until they fit too (a page always keeps its first skill).
    while len(text) > LIST_CHARS:
        budget -= len(text) - LIST_CHARS
        text, data = _listing_within(page, budget, total=len(skills), start=start)
    if cursor is not None and not page:
        text = f"No more skills after {clip(cursor)!r} ({len(skills)} in all)."
    return text, data


def _listing_within(
    skills: Sequence[Skill], budget: int, *, total: int, start: int
) -> tuple[str, dict[str, Any]]:
    """One page of ``skill_list``: the text and data of ``skills`` (the page's part of the
    ``total`` visible skills, from index ``start``), with at most ``budget`` characters of
    skill lines and slash commands."""
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    used = 0
    for skill in skills:
        line = ""
        if skill.model_invocable:  # user-only skills: listed below as slash commands only
            extras = [f"v{skill.version}"] if skill.version else []
            extras += [f"tags: {', '.join(skill.tags)}"] if skill.tags else []
            suffix = f" ({'; '.join(extras)})" if extras else ""
            line = f"- {skill.name}{suffix}: {_short(skill.description)}"
        command = len(skill.name) + 2 if skill.manifest.user_invocable else 0
        if rows and used + len(line) + 1 + command > budget:
            break
        used += (len(line) + 1 if line else 0) + command
        if line:
            lines.append(line)
        rows.append(
            {
                "name": skill.name,
                "version": skill.version,
                "tags": list(skill.tags),
                "description": _short(skill.description),
                "model_invocable": skill.model_invocable,
            }
        )
    shown = skills[: len(rows)]
    commands = [f"/{s.name}" for s in shown if s.manifest.user_invocable]
    if commands:
        lines.append("\nUser slash commands: " + " ".join(commands))
    left = total - start - len(rows)
    cursor = shown[-1].name if left > 0 and shown else None
    if cursor is not None:
        lines.append(
            f"\n[… {left} more skills after this page ({total} in all). Call skill_list with"
            f" cursor {cursor!r} for the next page, or skill_search with words from the task"
            " to find the right one.]"
        )
    if not lines:
        lines = ["No skills are available."]
    data = {
        "skills": rows,
        "commands": commands,
        "total": total,
        "start": start,
        "truncated": cursor is not None,
        "next_cursor": cursor,
    }
    return "\n".join(lines), data


def _short(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _DESC_CHARS else text[: _DESC_CHARS - 1] + "…"

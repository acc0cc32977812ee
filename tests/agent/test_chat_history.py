"""A chat's message history kept in the session store: trimming (pure), resuming a conversation
on each store, and ``skillshelf chat --session --store`` across two real processes against the
fake OpenAI-compatible server on 127.0.0.1."""

from __future__ import annotations

import contextlib
import functools
import json
import re
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from chat_cli import EXAMPLES
from chat_cli import chat as _chat
from chat_cli import chat_in_process as _chat_in_process
from fake_providers import FakeOpenAI

from skillshelf.agent.history import (
    HISTORY_ENTRY,
    HistoryError,
    HistoryLimit,
    clear_history,
    history_from_doc,
    history_to_doc,
    load_history,
    save_history,
    trim_history,
)
from skillshelf.agent.loop import Agent
from skillshelf.errors import UsageError
from skillshelf.harness import LOADED_CONTEXT_HEADER
from skillshelf.repository import Repository
from skillshelf.stores import NAME_RULE, SessionStore
from skillshelf.stores.memory import MemoryStore
from skillshelf.stores.sqlite import SQLiteStore
from skillshelf.testing import ScriptedModel, reply
from skillshelf.tools import SkillTools

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "stores"))
from redis_servers import free_port, redis_server_binary, running_redis

STUB = "already loaded and unchanged"
CONTENT = '<skill_content name="release-notes"'

Message = dict[str, Any]
# The history tests read whole replies, so the chats run without streaming.
chat = functools.partial(_chat, stream=False)
chat_in_process = functools.partial(_chat_in_process, stream=False)


# -- pure: trimming and the stored form ---------------------------------------------------------


def _exchange(call_id: str, result: str = "ok") -> list[Message]:
    call = {"id": call_id, "type": "function", "function": {"name": "t", "arguments": "{}"}}
    return [
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call_id, "content": result},
    ]


def _turn(n: int, *, tools: int = 1, result: str = "ok") -> list[Message]:
    middle = [m for i in range(tools) for m in _exchange(f"c{n}_{i}", result)]
    return [
        {"role": "user", "content": f"q{n}"},
        *middle,
        {"role": "assistant", "content": f"a{n}"},
    ]


def _chars(messages: list[Message]) -> int:
    return sum(len(json.dumps(m, ensure_ascii=False, separators=(",", ":"))) for m in messages)


def _pairs_intact(messages: list[Message]) -> bool:
    return history_from_doc(history_to_doc(messages)) == messages


def test_trim_drops_whole_turns_from_the_oldest_end() -> None:
    history = _turn(1) + _turn(2) + _turn(3)
    kept = trim_history(history, HistoryLimit(max_messages=8))
    assert kept == _turn(2) + _turn(3)
    assert trim_history(history, HistoryLimit()) == history


def test_trim_by_characters_never_separates_a_tool_call_from_its_result() -> None:
    history = _turn(1, tools=3) + _turn(2, tools=3)
    for limit in range(1, _chars(history) + 1, 7):
        kept = trim_history(history, HistoryLimit(max_chars=limit))
        assert _pairs_intact(kept), limit
        assert kept[0]["role"] == "user"


def test_an_oversized_newest_turn_keeps_its_question_and_answer() -> None:
    history = _turn(1) + _turn(2, tools=2, result="x" * 500)
    newest = _turn(2, tools=2, result="x" * 500)
    expected = [newest[0], *newest[3:]]  # the older of the two exchanges went
    kept = trim_history(history, HistoryLimit(max_chars=_chars(expected)))
    assert kept == expected
    assert kept[1:-1] == _exchange("c2_1", "x" * 500)
    assert trim_history(history, HistoryLimit(max_chars=1)) == [newest[0], newest[-1]]


def test_a_tool_call_without_its_result_is_not_kept() -> None:
    cut = [*_turn(1), {"role": "user", "content": "q2"}, _exchange("c2_0")[0]]
    kept = trim_history(cut, HistoryLimit())
    assert kept == [*_turn(1), {"role": "user", "content": "q2"}]


def test_a_history_limit_must_allow_something() -> None:
    with pytest.raises(UsageError):
        HistoryLimit(max_messages=0)


@pytest.mark.parametrize(
    ("doc", "reason"),
    [
        ([1, 2], "not a JSON object"),
        ({"v": 2, "messages": []}, "version 2"),
        ({"v": 1}, "no list of messages"),
        ({"v": 1, "messages": ["hi"]}, "not an object"),
        ({"v": 1, "messages": [{"role": "wizard", "content": "x"}]}, "unknown role"),
        ({"v": 1, "messages": [{"role": "user", "content": 3}]}, "not text"),
        ({"v": 1, "messages": [{"role": "tool", "content": "x"}]}, "tool_call_id"),
        ({"v": 1, "messages": [{"role": "assistant", "tool_calls": [{}]}]}, "tool_calls"),
        ({"v": 1, "messages": _exchange("c1")[:1]}, "do not pair up"),
        ({"v": 1, "messages": _exchange("c1")[1:]}, "do not pair up"),
    ],
)
def test_an_unreadable_stored_history_is_a_history_error(doc: Any, reason: str) -> None:
    with pytest.raises(HistoryError, match=reason):
        history_from_doc(doc)


# -- library: a conversation resumed on each store ----------------------------------------------

StoreFactory = Callable[[], SessionStore]


@pytest.fixture(params=["memory", "sqlite", "redis"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """Handles onto one fresh store, as two processes would open it (memory: one object,
    since that store lives in one process). All are closed after the test."""
    if request.param == "memory":
        shared = MemoryStore()
        yield lambda: shared
        shared.close()
        return
    with contextlib.ExitStack() as stack:
        if request.param == "sqlite":
            path = tmp_path / "sessions.db"
            yield lambda: stack.enter_context(contextlib.closing(SQLiteStore(path)))
            return
        from skillshelf.stores.redis import RedisStore

        port = free_port()
        stack.enter_context(running_redis(redis_server_binary(), tmp_path, port))
        url = f"redis://127.0.0.1:{port}/0"
        yield lambda: stack.enter_context(contextlib.closing(RedisStore(url)))


@pytest.fixture
def repo() -> Repository:
    return Repository([EXAMPLES], cache_dir=False)


def _agent(repo: Repository, store: SessionStore, script: list[Any], **options: Any) -> Agent:
    return Agent(ScriptedModel(script), repo, store=store, **options)


def _requests(agent: Agent) -> list[list[Message]]:
    model = agent.model
    assert isinstance(model, ScriptedModel)
    return [list(r.messages) for r in model.requests]


def test_a_resumed_conversation_sends_the_earlier_messages_on_every_store(
    repo: Repository, make_store: StoreFactory
) -> None:
    script = [reply(tools=[("skill_load", {"skill": "release-notes"})]), "Notes."]
    first = _agent(repo, make_store(), script)
    first.conversation("s1", persist=True).send_sync("write notes")
    second = _agent(repo, make_store(), ["Again."])
    conversation = second.conversation("s1", persist=True)
    assert conversation.restored == 4
    conversation.send_sync("and again")
    sent = _requests(second)[0]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "write notes" and sent[4]["content"] == "Notes."
    assert len(load_history(make_store(), "s1", "main")) == 6


def test_a_conversation_without_persist_stores_no_history(repo: Repository) -> None:
    store = MemoryStore()
    _agent(repo, store, ["Hi."]).conversation("s1").send_sync("hello")
    assert store.get_entries("s1", "main", [HISTORY_ENTRY]) == {}
    assert _agent(repo, store, []).conversation("s1", persist=True).restored == 0


def test_a_failed_turn_is_not_stored(repo: Repository) -> None:
    store = MemoryStore()
    agent = _agent(repo, store, ["First.", ""], max_steps=1)
    conversation = agent.conversation("s1", persist=True)
    conversation.send_sync("one")
    with pytest.raises(Exception, match=r"max_steps|nothing"):
        conversation.send_sync("two")
    assert [m["content"] for m in load_history(store, "s1", "main")] == ["one", "First."]


def test_an_unreadable_stored_history_starts_a_fresh_conversation(repo: Repository) -> None:
    store = MemoryStore()
    store.update_entries(
        "s1", "main", [HISTORY_ENTRY], lambda _n: {HISTORY_ENTRY: {"v": 1, "messages": "nope"}}
    )
    agent = _agent(repo, store, ["Fresh."])
    conversation = agent.conversation("s1", persist=True)
    assert conversation.restored == 0
    assert conversation.history_problem is not None and "no list" in conversation.history_problem
    conversation.send_sync("hello")
    assert len(load_history(store, "s1", "main")) == 2


def test_clear_history_forgets_the_messages_but_not_the_skill_state(repo: Repository) -> None:
    store = MemoryStore()
    script = [reply(tools=[("skill_load", {"skill": "release-notes"})]), "Done."]
    agent = _agent(repo, store, script, load_mode="session")
    agent.conversation("s1", persist=True).send_sync("notes")
    conversation = agent.conversation("s1", persist=True)
    conversation.clear_history()
    assert conversation.messages == [] and load_history(store, "s1", "main") == []
    assert "release-notes" in conversation.model_tools.state().loaded


def test_a_trimmed_load_result_reaches_the_model_through_the_system_message(
    repo: Repository, make_store: StoreFactory
) -> None:
    """The tool result that delivered a still-loaded skill was trimmed away: the resumed
    conversation carries the content in the system fallback, and loading it again gives the
    content in full instead of an "already loaded" stub."""
    script = [reply(tools=[("skill_load", {"skill": "release-notes"})]), "Notes.", "Short."]
    first = _agent(repo, make_store(), script, load_mode="session")
    conversation = first.conversation("s1", persist=True, history_limit=HistoryLimit(max_chars=60))
    conversation.send_sync("write notes")
    conversation.send_sync("thanks")
    stored = load_history(make_store(), "s1", "main")
    assert [m["content"] for m in stored] == ["thanks", "Short."]

    again = [reply(tools=[("skill_load", {"skill": "release-notes"})]), "Done."]
    second = _agent(repo, make_store(), again, load_mode="session")
    second.conversation("s1", persist=True).send_sync("once more")
    first_request, second_request = _requests(second)
    fallback = [m for m in first_request if m["role"] == "system"][1]["content"]
    assert fallback.startswith(LOADED_CONTEXT_HEADER) and CONTENT in fallback
    result = second_request[-1]
    assert result["role"] == "tool" and CONTENT in result["content"]
    assert STUB not in result["content"]


# -- the CLI: two real processes on one SQLite store --------------------------------------------


@pytest.fixture
def servers() -> Iterator[list[FakeOpenAI]]:
    started: list[FakeOpenAI] = []
    yield started
    for server in started:
        server.stop()


def _store_args(tmp_path: Path) -> tuple[str, ...]:
    return ("--session", "s1", "--store", f"sqlite:///{tmp_path / 'chat.db'}")


def test_a_second_chat_process_resumes_the_first_ones_history(
    servers: list[FakeOpenAI], tmp_path: Path
) -> None:
    load = reply(tools=[("skill_load", {"skill": "release-notes"})])
    out, _ = chat(servers, [load, reply("Notes: v1.")], "-m", "write notes", *_store_args(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "resumed" not in out.stderr

    out, server = chat(servers, [load, reply("Again.")], "-m", "again", *_store_args(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "resumed session s1: 4 earlier messages" in out.stderr
    assert out.stdout == "Again.\n"
    first, second = server.bodies()
    sent = first["messages"]
    assert [m["role"] for m in sent] == ["system", "user", "assistant", "tool", "assistant", "user"]
    assert sent[1]["content"] == "write notes" and sent[4]["content"] == "Notes: v1."
    # The turn-long load of process 1 ended with its turn: no stale content, and no stub.
    assert "no longer loaded" in sent[3]["content"]
    reloaded = second["messages"][-1]
    assert reloaded["role"] == "tool" and CONTENT in reloaded["content"]
    assert STUB not in reloaded["content"]
    calls = [c["id"] for m in second["messages"] for c in m.get("tool_calls") or ()]
    assert len(calls) == len(set(calls)) == 2


def test_a_chat_process_resumes_a_trimmed_history_with_pairs_intact_and_content_carried(
    servers: list[FakeOpenAI], tmp_path: Path, repo: Repository
) -> None:
    store = SQLiteStore(tmp_path / "chat.db")
    load = reply(tools=[("skill_load", {"skill": "release-notes"})])
    check = reply(tools=[("skill_list", {})])
    agent = _agent(repo, store, [load, "Notes.", check, "Listed."], load_mode="session")
    conversation = agent.conversation(
        "s1", persist=True, history_limit=HistoryLimit(max_messages=4)
    )
    conversation.send_sync("write notes")
    conversation.send_sync("list them")
    store.close()

    out, server = chat(servers, [reply("Resumed.")], "-m", "go on", *_store_args(tmp_path))
    assert out.returncode == 0, out.stderr
    assert "resumed session s1: 4 earlier messages" in out.stderr
    sent = server.bodies()[0]["messages"]
    assert [m["role"] for m in sent] == [
        "system",
        "system",
        "user",
        "assistant",
        "tool",
        "assistant",
        "user",
    ]
    assert sent[3]["tool_calls"][0]["id"] == sent[4]["tool_call_id"]
    assert sent[1]["content"].startswith(LOADED_CONTEXT_HEADER) and CONTENT in sent[1]["content"]


def test_new_starts_fresh_and_clears_the_stored_history(
    servers: list[FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    args = _store_args(tmp_path)
    out, _ = chat_in_process(servers, [reply("One.")], "-m", "one", *args, monkeypatch=monkeypatch)
    assert out.exit_code == 0, out.output
    out, server = chat_in_process(
        servers, [reply("Two.")], "-m", "two", "--new", *args, monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    assert "resumed" not in out.stderr
    assert [m["role"] for m in server.bodies()[0]["messages"]] == ["system", "user"]
    with contextlib.closing(SQLiteStore(tmp_path / "chat.db")) as store:
        assert [m["content"] for m in load_history(store, "s1", "main")] == ["two", "Two."]


def test_a_corrupt_stored_history_warns_and_starts_fresh(
    servers: list[FakeOpenAI], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with contextlib.closing(SQLiteStore(tmp_path / "chat.db")) as store:
        save_history(store, "s1", "main", [{"role": "user", "content": "old"}])
        corrupt = {HISTORY_ENTRY: {"v": 1, "messages": [{"x": 1}]}}
        store.update_entries("s1", "main", [HISTORY_ENTRY], lambda _n: corrupt)
    out, server = chat_in_process(
        servers, [reply("Fresh.")], "-m", "hi", *_store_args(tmp_path), monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    assert "warning: the stored history of session 's1' cannot be read" in out.stderr
    assert "starting a fresh conversation" in out.stderr
    assert [m["role"] for m in server.bodies()[0]["messages"]] == ["system", "user"]


def test_new_without_a_store_is_a_usage_error(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, server = chat_in_process(
        servers, [], "-m", "hi", "--new", "--session", "s1", monkeypatch=monkeypatch
    )
    assert out.exit_code == 2 and "--new needs --session and --store" in out.stderr
    assert server.requests == []


def test_a_session_without_a_store_keeps_no_history(
    servers: list[FakeOpenAI], monkeypatch: pytest.MonkeyPatch
) -> None:
    out, _ = chat_in_process(
        servers, [reply("Hi.")], "-m", "hi", "--session", "s1", monkeypatch=monkeypatch
    )
    assert out.exit_code == 0, out.output
    assert "resumed" not in out.stderr


def test_a_history_stored_by_0_1_under_the_suffixed_key_is_read_and_moved_into_its_entry(
    repo: Repository,
) -> None:
    store = MemoryStore()
    legacy = history_to_doc([{"role": "user", "content": "old"}])
    store.update("s1", "main#history", lambda _d: legacy)
    assert [m["content"] for m in load_history(store, "s1", "main")] == ["old"]
    save_history(store, "s1", "main", [{"role": "user", "content": "new"}])
    assert store.get("s1", "main#history") is None
    assert [m["content"] for m in load_history(store, "s1", "main")] == ["new"]


@pytest.mark.parametrize("name", ["main#history", "main#activations", "main#", "a\x00b"])
def test_an_agent_named_like_a_suffixed_key_is_refused_and_cannot_touch_another_agents_state(
    repo: Repository, make_store: StoreFactory, name: str
) -> None:
    store = make_store()
    legacy = history_to_doc([{"role": "user", "content": "mine, from 0.1"}])
    store.update("s1", "main#history", lambda _d: legacy)
    activations = {"session": [[0, "release-notes"]]}
    store.update_entries("s1", "main", ["activations"], lambda _e: {"activations": activations})
    refusals: list[Callable[[], object]] = [
        lambda: load_history(store, "s1", name),
        lambda: save_history(store, "s1", name, []),
        lambda: clear_history(store, "s1", name),
        lambda: _agent(repo, store, ["Hi."], name=name),
        lambda: SkillTools(repo, store=store, session_id="s1", agent=name),
    ]
    for refused in refusals:
        with pytest.raises(UsageError, match=re.escape(NAME_RULE)):
            refused()
    assert [m["content"] for m in load_history(store, "s1", "main")] == ["mine, from 0.1"]
    assert store.get_entries("s1", "main", ["activations"]) == {"activations": activations}


def test_unloading_every_skill_keeps_the_stored_history(repo: Repository) -> None:
    store = MemoryStore()
    save_history(store, "s1", "main", [{"role": "user", "content": "kept"}])
    SkillTools(repo, store=store, session_id="s1").unload_all()
    assert [m["content"] for m in load_history(store, "s1", "main")] == ["kept"]

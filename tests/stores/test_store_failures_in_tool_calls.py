"""A session store failing inside a tool call: fatal, logged, never raised, over once fixed."""

from __future__ import annotations

import logging
import sqlite3
import threading
from pathlib import Path

import anyio
import pytest

from redis_servers import RestartableRedis
from skillshelf.agent.loop import Agent
from skillshelf.repository import Repository
from skillshelf.stores.redis import RedisStore
from skillshelf.stores.sqlite import SQLiteStore
from skillshelf.testing import ScriptedModel, make_skill, reply
from skillshelf.tools import FATAL_STORE_MESSAGE, SkillTools, Tool


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    root = tmp_path / "skills"
    make_skill(root, "alpha", "Alpha things. Use for alpha.")
    make_skill(root, "beta", "Beta things. Use for beta.")
    return Repository([root], cache_dir=False)


def _store_failures(caplog: pytest.LogCaptureFixture) -> list[logging.LogRecord]:
    return [r for r in caplog.records if r.name == "skillshelf.tools" and r.exc_info]


def test_redis_stopped_mid_session_is_fatal_logged_and_the_next_call_works_once_it_is_back(
    repo: Repository, restartable_redis: RestartableRedis, caplog: pytest.LogCaptureFixture
) -> None:
    store = RedisStore(restartable_redis.url)
    tools = SkillTools(repo, store=store, session_id="s")
    try:
        assert tools.call("skill_load", {"skill": "alpha"}).status == "ok"
        restartable_redis.stop()
        with caplog.at_level(logging.ERROR, logger="skillshelf.tools"):
            down = tools.call("skill_load", {"skill": "beta"})
        assert down.status == "fatal"
        assert down.content == FATAL_STORE_MESSAGE.format(kind="Redis")
        assert "127.0.0.1" not in down.content  # the driver's text goes to the log only
        (record,) = _store_failures(caplog)
        assert record.exc_info is not None and "Redis" in str(record.exc_info[1])
        restartable_redis.restart()
        assert tools.call("skill_load", {"skill": "beta"}).status == "ok"
    finally:
        store.close()


@pytest.mark.parametrize(
    "stored",
    [
        '{"slots": ',
        "[1, 2]",
        '{"slots": [1, 2]}',
        '{"clock": "soon"}',
        '"text"',
        '{"clock": Infinity}',
        '{"slots": {"alpha": [1e999, "turn", 0]}}',
    ],
    ids=[
        "invalid-json",
        "a-list",
        "slots-not-a-map",
        "clock-not-a-number",
        "a-string",
        "clock-infinite",
        "slot-infinite",
    ],
)
def test_a_corrupt_sqlite_row_is_fatal_logged_and_the_next_call_works_once_it_is_repaired(
    repo: Repository, tmp_path: Path, caplog: pytest.LogCaptureFixture, stored: str
) -> None:
    path = tmp_path / "sessions.db"
    store = SQLiteStore(path)
    tools = SkillTools(repo, store=store, session_id="s")
    try:
        assert tools.call("skill_load", {"skill": "alpha"}).status == "ok"
        with sqlite3.connect(path) as conn:
            conn.execute(
                "UPDATE entries SET doc = ? WHERE session = 's' AND name = 'index'", (stored,)
            )
        with caplog.at_level(logging.ERROR, logger="skillshelf.tools"):
            for call in (("skill_load", {"skill": "beta"}), ("skill_unload", {"skill": "x"})):
                result = tools.call(*call)
                assert result.status == "fatal"
                assert result.content == FATAL_STORE_MESSAGE.format(kind="SQLite")
        assert len(_store_failures(caplog)) == 2
        store.delete_session("s")
        assert tools.call("skill_load", {"skill": "beta"}).status == "ok"
    finally:
        store.close()


def test_the_agent_loop_carries_on_after_a_store_failure_inside_a_tool_call(
    repo: Repository, restartable_redis: RestartableRedis, caplog: pytest.LogCaptureFixture
) -> None:
    # The calls of one model step run concurrently: stop_store (an async tool with no await)
    # finishes before the others start, and start_store waits until skill_load has met the
    # stopped store (its failure is logged), so the store is down exactly while it runs.
    failed = threading.Event()

    class _OnFailure(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if record.exc_info:
                failed.set()

    async def stop_store() -> str:
        restartable_redis.stop()
        return "stopped"

    async def start_store() -> str:
        await anyio.to_thread.run_sync(failed.wait, 30)
        restartable_redis.restart()
        return "started"

    handler = _OnFailure(logging.ERROR)
    logging.getLogger("skillshelf.tools").addHandler(handler)

    model = ScriptedModel(
        [
            reply(
                tools=[
                    ("stop_store", {}),
                    ("skill_load", {"skill": "alpha"}),
                    ("start_store", {}),
                ]
            ),
            reply(tools=[("skill_load", {"skill": "beta"})]),
            "done",
        ]
    )
    store = RedisStore(restartable_redis.url)
    tools = [Tool.from_function(stop_store), Tool.from_function(start_store)]
    agent = Agent(model, repo, store=store, tools=tools)
    try:
        with caplog.at_level(logging.ERROR, logger="skillshelf.tools"):
            result = agent.run_sync("go")
    finally:
        logging.getLogger("skillshelf.tools").removeHandler(handler)
        store.close()
    assert failed.is_set()
    statuses = [(r.tool, r.status) for r in result.tool_calls]
    assert statuses == [
        ("stop_store", "ok"),
        ("skill_load", "fatal"),
        ("start_store", "ok"),
        ("skill_load", "ok"),
    ]
    assert result.output == "done"
    assert len(_store_failures(caplog)) == 1

"""Session and agent ids are keys in every store: hostile ids never meet.

Session ids with path traversal, quotes, glob and LIKE characters, key separators, Unicode
look-alikes and the longest length allowed: each (session, agent) pair sees only its own
document, deleting one session deletes no other, and listing returns exactly what was stored.
Redis keys are also checked from outside: nothing is written outside the store's prefix.
Session ids that break the one name rule (``#``, control and format characters, past
``MAX_NAME_CHARS``) are refused by every store, naming the rule.
"""

from __future__ import annotations

import itertools
import re
from pathlib import Path
from typing import cast

import pytest

from skillshelf.errors import UsageError
from skillshelf.repository import Repository
from skillshelf.stores import MAX_NAME_CHARS, NAME_RULE, SessionStore
from skillshelf.stores.redis import RedisStore
from skillshelf.tools import SkillTools

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"

HOSTILE_IDS = [
    "plain",
    "../plain",
    "../../etc/passwd",
    "/abs/path",
    "a/../b",
    "it's",
    'say "hi"',
    "*",
    "?",
    "[a-z]",
    "plai?",
    "pl*",
    "%",
    "_",
    "pla_n",
    "p%",
    "\\",
    "a:b",
    "a:b:c",
    "1:a",
    "5:plain",
    "doc:5:plain:main",
    "sessions",
    "agents:plain",
    "plain ",
    " plain",
    "PLAIN",
    "plaın",  # dotless i
    "ｐｌａｉｎ",  # fullwidth: NFKC would fold it onto "plain"
    "e\u0301",
    "\u00e9",  # the precomposed form of the id above
    "x" * MAX_NAME_CHARS,
    "x" * (MAX_NAME_CHARS - 1),
    "x" * (MAX_NAME_CHARS - 1) + "y",
]
REFUSED_IDS = [
    "nul\x00byte",
    "line\nbreak",
    "line\rbreak",
    "tab\there",
    "\u202eevil",
    "zero\u200bwidth",
    "main#history",
    "#",
    " ",
    "x" * (MAX_NAME_CHARS + 1),
]
AGENTS = ["main", "main:x", "x", "*", "../main", "m\x00"]


def _doc(session: str, agent: str) -> dict[str, str]:
    return {"session": session, "agent": agent}


def _put(store: SessionStore, session: str, agent: str) -> None:
    store.update(session, agent, lambda _old: _doc(session, agent))


def test_hostile_ids_are_distinct_test_values() -> None:
    assert len(set(HOSTILE_IDS)) == len(HOSTILE_IDS)


def test_every_hostile_pair_sees_only_its_own_document(any_store: SessionStore) -> None:
    pairs = list(itertools.product(HOSTILE_IDS, AGENTS[:3]))
    for session, agent in pairs:
        _put(any_store, session, agent)
    for session, agent in pairs:
        assert any_store.get(session, agent) == _doc(session, agent)
    for session, agent in itertools.product(HOSTILE_IDS, AGENTS[3:]):
        assert any_store.get(session, agent) is None
    assert any_store.sessions() == sorted(HOSTILE_IDS)


@pytest.mark.parametrize("victim", ["plain", "*", "x" * (MAX_NAME_CHARS - 1), "it's", "a:b"])
def test_deleting_one_hostile_session_deletes_no_other(
    any_store: SessionStore, victim: str
) -> None:
    for session in HOSTILE_IDS:
        for agent in AGENTS:
            _put(any_store, session, agent)
    any_store.delete_session(victim)
    survivors = [s for s in HOSTILE_IDS if s != victim]
    assert any_store.sessions() == sorted(survivors)
    for agent in AGENTS:
        assert any_store.get(victim, agent) is None
    for session, agent in itertools.product(survivors, AGENTS):
        assert any_store.get(session, agent) == _doc(session, agent)


def test_deleting_an_unknown_glob_id_deletes_nothing(any_store: SessionStore) -> None:
    any_store.update("plain", "main", lambda _d: _doc("plain", "main"))
    for pattern in ("*", "?", "[p]*", "%", "_____", "pl*", ".."):
        any_store.delete_session(pattern)
    assert any_store.sessions() == ["plain"]
    assert any_store.get("plain", "main") == _doc("plain", "main")


@pytest.mark.parametrize("bad", REFUSED_IDS)
def test_a_session_id_breaking_the_name_rule_is_refused_by_every_store_naming_the_rule(
    any_store: SessionStore, bad: str
) -> None:
    for call in (
        lambda: any_store.update(bad, "main", lambda _d: {"x": "1"}),
        lambda: any_store.update_entries(bad, "main", ["e"], lambda _e: {"e": {"x": "1"}}),
        lambda: any_store.get(bad, "main"),
        lambda: any_store.get_entries(bad, "main"),
        lambda: any_store.delete_session(bad),
    ):
        with pytest.raises(UsageError, match=re.escape(NAME_RULE)):
            call()
    assert any_store.sessions() == []


@pytest.mark.parametrize("bad", ["", "\ud800", "lone\udfff"])
def test_unusable_ids_are_a_usage_error_in_every_store(any_store: SessionStore, bad: str) -> None:
    with pytest.raises(UsageError):
        any_store.update(bad, "main", lambda _d: {"x": "1"})
    with pytest.raises(UsageError):
        any_store.get("plain", bad)
    assert any_store.sessions() == []


def test_redis_keys_stay_under_the_prefix(adversarial_redis_url: str) -> None:
    import redis

    prefix = "test:prefix-check:"
    store = RedisStore(adversarial_redis_url, prefix=prefix)
    client = redis.Redis.from_url(adversarial_redis_url)

    def keys() -> set[bytes]:
        return set(cast("list[bytes]", client.keys("*")))

    try:
        before = keys()
        for session in HOSTILE_IDS:
            _put(store, session, "main")
        added = keys() - before
        assert added
        assert all(key.startswith(prefix.encode()) for key in added)
        for session in HOSTILE_IDS:
            store.delete_session(session)
        assert keys() - before == set()
    finally:
        store.close()
        client.close()


def test_model_tools_keep_hostile_sessions_apart(any_store: SessionStore) -> None:
    repo = Repository([EXAMPLES], cache_dir=False)
    sessions = ["*", "?", "[*]", "../*", "x" * MAX_NAME_CHARS, "a b", "a", "%", "_"]
    for session in sessions:
        tools = SkillTools(repo, store=any_store, session_id=session)
        assert tools.call("skill_load", {"skill": "release-notes"}).status == "ok"
        again = tools.call("skill_load", {"skill": "release-notes"})
        assert again.data == {"skill": "release-notes", "already_loaded": True}
    fresh = SkillTools(repo, store=any_store, session_id="*x")
    assert "already_loaded" not in (fresh.call("skill_load", {"skill": "release-notes"}).data or {})
    SkillTools(repo, store=any_store, session_id="*").unload_all()
    assert any_store.get("*", "main") is None
    assert any_store.sessions() == sorted([*sessions[1:], "*x"])
    for session in sessions[1:]:
        tools = SkillTools(repo, store=any_store, session_id=session)
        again = tools.call("skill_load", {"skill": "release-notes"})
        assert again.data == {"skill": "release-notes", "already_loaded": True}


@pytest.mark.parametrize("bad", REFUSED_IDS)
def test_skill_tools_refuse_a_session_id_or_agent_breaking_the_name_rule(bad: str) -> None:
    repo = Repository([EXAMPLES], cache_dir=False)
    with pytest.raises(UsageError, match=re.escape(NAME_RULE)):
        SkillTools(repo, session_id=bad)
    with pytest.raises(UsageError, match=re.escape(NAME_RULE)):
        SkillTools(repo, agent=bad)

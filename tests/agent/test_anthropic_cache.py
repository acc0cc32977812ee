"""Anthropic prompt caching: where ``cache_control`` breakpoints go and the cache usage read back.

The agent tests run through the real ``anthropic`` SDK against the fake Messages server on
127.0.0.1 and assert on the request bodies it recorded; the fake answers HTTP 400 to more than
four breakpoints or one on a blank text block, as the API does. The breakpoint placement itself
is a pure function, tested on plain request parameters.
"""

from __future__ import annotations

import copy
import io
import json
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from fake_providers import FakeAnthropic, Script

from skillshelf.agent.loop import Agent, RetryPolicy
from skillshelf.harness import LOADED_CONTEXT_HEADER, Trace
from skillshelf.models import ModelError, ModelRequest, Usage, open_model
from skillshelf.models.anthropic_messages import (
    MAX_BREAKPOINTS,
    AnthropicModel,
    with_cache_breakpoints,
)
from skillshelf.repository import Repository
from skillshelf.testing import reply

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
EPHEMERAL = {"type": "ephemeral"}
# Anthropic looks for an earlier cache entry at most this many blocks before a breakpoint.
LOOKBACK_BLOCKS = 20

Where = tuple[Any, ...]


# ---- fixtures and helpers -----------------------------------------------------------------


@pytest.fixture
def servers() -> Iterator[list[FakeAnthropic]]:
    started: list[FakeAnthropic] = []
    yield started
    for server in started:
        server.stop()


@pytest.fixture
def repo() -> Repository:
    return Repository([EXAMPLES], cache_dir=False)


def start(servers: list[FakeAnthropic], script: Script) -> FakeAnthropic:
    server = FakeAnthropic(script).start()
    servers.append(server)
    return server


async def no_wait(_seconds: float) -> None:
    pass


def agent_for(
    server: FakeAnthropic,
    repo: Repository,
    *,
    stream: bool = False,
    cache: bool = True,
    **kwargs: Any,
) -> Agent:
    model = AnthropicModel(
        "fake-claude", api_key="test-key", base_url=server.url, stream=stream, cache=cache
    )
    kwargs.setdefault("retry", RetryPolicy(sleep=no_wait))
    return Agent(model, repo, instructions="You are a helper.", **kwargs)


def breakpoints(body: dict[str, Any]) -> list[Where]:
    """Every block carrying ``cache_control``, in the order the API reads the prompt."""
    return [where for where, block in blocks(body) if "cache_control" in block]


def blocks(body: dict[str, Any]) -> list[tuple[Where, dict[str, Any]]]:
    """The prompt's blocks in reading order (tools, system, messages) with their places."""
    out: list[tuple[Where, dict[str, Any]]] = []
    out += [(("tools", i), tool) for i, tool in enumerate(body.get("tools", []))]
    out += [(("system", i), block) for i, block in enumerate(body.get("system", []))]
    for m, message in enumerate(body["messages"]):
        out += [(("messages", m, b), block) for b, block in enumerate(message["content"])]
    return out


def unmarked(value: Any) -> Any:
    """``value`` without any ``cache_control`` key, at any depth."""
    if isinstance(value, dict):
        return {k: unmarked(v) for k, v in value.items() if k != "cache_control"}
    if isinstance(value, list):
        return [unmarked(v) for v in value]
    return value


def prefix(body: dict[str, Any], upto: int) -> str:
    """The bytes of the prompt's first ``upto`` blocks, breakpoints left out (what is hashed)."""
    return json.dumps([unmarked(block) for _, block in blocks(body)[:upto]], sort_keys=True)


def index_of(body: dict[str, Any], where: Where) -> int:
    return [w for w, _ in blocks(body)].index(where)


def last_block(body: dict[str, Any]) -> Where:
    messages = body["messages"]
    return ("messages", len(messages) - 1, len(messages[-1]["content"]) - 1)


LOAD = [("skill_load", {"skill": "release-notes"})]
LOAD_THEN_ANSWER = [
    reply(tools=LOAD),
    reply("Here are your notes."),
]


# ---- through the fake server ----------------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True])
def test_breakpoints_go_on_the_last_tool_the_catalog_and_the_newest_message(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    server = start(servers, [reply("Hello.")])
    assert agent_for(server, repo, stream=stream).run_sync("hi").output == "Hello."
    (body,) = server.bodies()
    last_tool = ("tools", len(body["tools"]) - 1)
    assert breakpoints(body) == [last_tool, ("system", 0), ("messages", 0, 0)]
    assert body["tools"][-1]["cache_control"] == EPHEMERAL
    assert body["system"][0]["text"].startswith("You are a helper.")
    assert body["system"][0]["cache_control"] == EPHEMERAL
    assert body["messages"][0]["content"][0] == {
        "type": "text",
        "text": "hi",
        "cache_control": EPHEMERAL,
    }


@pytest.mark.parametrize("stream", [False, True])
def test_tool_loop_keeps_tools_and_system_byte_identical_and_reuses_the_previous_step(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    server = start(servers, LOAD_THEN_ANSWER)
    result = agent_for(server, repo, stream=stream).run_sync("write release notes")
    assert result.output == "Here are your notes."
    first, second = server.bodies()
    assert json.dumps(first["tools"]) == json.dumps(second["tools"])
    assert json.dumps(first["system"]) == json.dumps(second["system"])
    # The second step's newest block is the skill_load result, and it carries the breakpoint.
    newest = second["messages"][-1]["content"][-1]
    assert newest["type"] == "tool_result" and "cache_control" in newest
    assert breakpoints(second)[-1] == last_block(second)
    # Everything the first step marked for the cache is a prefix of the second step's prompt,
    # and close enough to the second step's last breakpoint for the API to find it.
    for where in breakpoints(first):
        upto = index_of(first, where) + 1
        assert prefix(second, upto) == prefix(first, upto)
    gap = index_of(second, last_block(second)) - index_of(first, last_block(first))
    assert 0 < gap < LOOKBACK_BLOCKS


@pytest.mark.parametrize("stream", [False, True])
def test_cache_off_sends_no_cache_control_and_otherwise_the_same_requests(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    cached = start(servers, LOAD_THEN_ANSWER)
    plain = start(servers, LOAD_THEN_ANSWER)
    agent_for(cached, repo, stream=stream).run_sync("write release notes")
    agent_for(plain, repo, stream=stream, cache=False).run_sync("write release notes")
    assert len(plain.bodies()) == 2
    assert all("cache_control" not in json.dumps(body) for body in plain.bodies())
    assert [unmarked(b) for b in cached.bodies()] == plain.bodies()


@pytest.mark.parametrize("stream", [False, True])
def test_loaded_context_system_message_leaves_the_catalog_breakpoint_in_place(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    server = start(servers, LOAD_THEN_ANSWER)
    agent = agent_for(server, repo, stream=stream, declared=["csv-insights"])
    assert agent.run_sync("write release notes").output == "Here are your notes."
    first, second = server.bodies()
    for body in (first, second):
        catalog, context = body["system"]
        assert "<available_skills>" in catalog["text"] and "cache_control" in catalog
        assert context["text"].startswith(LOADED_CONTEXT_HEADER) and "cache_control" in context
        assert len(breakpoints(body)) == MAX_BREAKPOINTS
    assert json.dumps(first["system"][0]) == json.dumps(second["system"][0])


def test_placement_system_caches_catalog_and_loaded_content_separately(
    servers: list[FakeAnthropic], repo: Repository
) -> None:
    server = start(servers, LOAD_THEN_ANSWER)
    agent_for(server, repo, placement="system").run_sync("write release notes")
    first, second = server.bodies()
    assert len(first["system"]) == 1 and len(second["system"]) == 2
    assert json.dumps(first["system"][0]) == json.dumps(second["system"][0])
    assert breakpoints(second) == [
        ("tools", len(second["tools"]) - 1),
        ("system", 0),
        ("system", 1),
        last_block(second),
    ]


@pytest.mark.parametrize("stream", [False, True])
def test_never_more_than_four_breakpoints_in_a_long_conversation(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    lists = [reply(tools=[("skill_list", {})]) for _ in range(6)]
    server = start(servers, [*lists, reply("Six lists."), reply("Again."), reply("Done.")])
    agent = agent_for(server, repo, stream=stream, declared=["csv-insights"])
    conversation = agent.conversation()
    assert conversation.send_sync("list the skills six times").output == "Six lists."
    assert conversation.send_sync("and again").output == "Again."
    assert conversation.send_sync("thanks").output == "Done."
    bodies = server.bodies()
    assert len(bodies) == 9 and len(bodies[-1]["messages"]) >= 15
    for body in bodies:
        assert len(breakpoints(body)) == MAX_BREAKPOINTS
        assert breakpoints(body)[-1] == last_block(body)


@pytest.mark.parametrize("stream", [False, True])
def test_cache_reads_and_writes_are_parsed_into_usage(
    servers: list[FakeAnthropic], repo: Repository, stream: bool
) -> None:
    server = start(
        servers,
        [
            reply(tools=LOAD, usage=Usage(1200, 20, cache_write_tokens=1100)),
            reply("Notes.", usage=Usage(2000, 30, cache_read_tokens=1100, cache_write_tokens=850)),
        ],
    )
    buffer = io.StringIO()
    result = agent_for(server, repo, stream=stream, trace=Trace(buffer)).run_sync("notes")
    assert result.usage == Usage(3200, 50, cache_read_tokens=1100, cache_write_tokens=1950)
    assert result.usage.uncached_input_tokens == 150
    records = [json.loads(line) for line in buffer.getvalue().splitlines()]
    assert [r["usage"] for r in records if r["type"] == "model"] == [
        {"input_tokens": 1200, "output_tokens": 20, "cache_write_tokens": 1100},
        {
            "input_tokens": 2000,
            "output_tokens": 30,
            "cache_read_tokens": 1100,
            "cache_write_tokens": 850,
        },
    ]


def test_fake_server_reports_cached_tokens_apart_from_input_tokens() -> None:
    rendered = FakeAnthropic([]).render(reply("x", usage=Usage(1200, 20, 300, 800)))
    assert rendered["usage"] == {
        "input_tokens": 100,
        "cache_creation_input_tokens": 800,
        "cache_read_input_tokens": 300,
        "output_tokens": 20,
    }


def test_breakpoints_the_caller_set_count_towards_the_limit(
    servers: list[FakeAnthropic], repo: Repository
) -> None:
    own = [{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(3)]
    server = start(servers, [reply("ok")])
    model = AnthropicModel("fake-claude", api_key="k", base_url=server.url)
    anyio_run(model.complete(ModelRequest([{"role": "user", "content": own}])))
    (body,) = server.bodies()
    assert breakpoints(body) == [("messages", 0, 0), ("messages", 0, 1), ("messages", 0, 2)]


def test_the_fake_server_rejects_a_fifth_breakpoint_as_the_api_does(
    servers: list[FakeAnthropic],
) -> None:
    own = [{"type": "text", "text": f"part {i}", "cache_control": EPHEMERAL} for i in range(5)]
    server = start(servers, [reply("never")])
    model = AnthropicModel("fake-claude", api_key="k", base_url=server.url)
    with pytest.raises(ModelError, match=r"HTTP 400.*maximum of 4 blocks with cache_control"):
        anyio_run(model.complete(ModelRequest([{"role": "user", "content": own}])))


def test_open_model_turns_caching_on_for_anthropic() -> None:
    model = open_model("anthropic:claude-x", base_url="http://127.0.0.1:9")
    assert isinstance(model, AnthropicModel) and model.cache is True


def anyio_run(awaitable: Any) -> Any:
    import anyio

    async def main() -> Any:
        return await awaitable

    return anyio.run(main)


# ---- the placement, as a pure function ------------------------------------------------------


def params(
    messages: list[dict[str, Any]],
    *,
    system: Sequence[str] = ("catalog",),
    tools: int = 2,
) -> dict[str, Any]:
    out: dict[str, Any] = {"model": "m", "max_tokens": 10, "messages": messages}
    if system:
        out["system"] = [{"type": "text", "text": text} for text in system]
    if tools:
        out["tools"] = [
            {"name": f"t{i}", "description": "d", "input_schema": {"type": "object"}}
            for i in range(tools)
        ]
    return out


def user(*texts: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": t} for t in texts]}


def test_placement_does_not_modify_its_input_and_is_deterministic() -> None:
    given = params([user("hello")], system=["catalog", "loaded"])
    before = copy.deepcopy(given)
    first = with_cache_breakpoints(given)
    assert given == before
    assert json.dumps(with_cache_breakpoints(given)) == json.dumps(first)
    assert unmarked(first) == given
    assert breakpoints(first) == [("tools", 1), ("system", 0), ("system", 1), ("messages", 0, 0)]


def test_blank_and_empty_blocks_pass_the_breakpoint_to_the_closest_earlier_block() -> None:
    messages = [
        user("first question"),
        {
            "role": "assistant",
            "content": [{"type": "tool_use", "id": "c1", "name": "t0", "input": {}}],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": ""},
                {"type": "text", "text": "  \n"},
            ],
        },
    ]
    out = with_cache_breakpoints(params(messages, system=["   ", "catalog"]))
    assert breakpoints(out) == [("tools", 1), ("system", 1), ("messages", 1, 0)]


def test_thinking_blocks_never_carry_a_breakpoint() -> None:
    thinking = {"type": "thinking", "thinking": "hmm", "signature": "s"}
    messages = [user("q"), {"role": "assistant", "content": [thinking]}]
    out = with_cache_breakpoints(params(messages, system=[], tools=0))
    assert breakpoints(out) == [("messages", 0, 0)]


def test_a_request_without_tools_or_system_gets_only_the_message_breakpoint() -> None:
    out = with_cache_breakpoints(params([user("a", "b")], system=[], tools=0))
    assert breakpoints(out) == [("messages", 0, 1)]
    assert "system" not in out and "tools" not in out


def test_a_string_system_prompt_is_left_as_it_is() -> None:
    given = {**params([user("q")], tools=0), "system": "plain string"}
    out = with_cache_breakpoints(given)
    assert out["system"] == "plain string"
    assert breakpoints({**out, "system": []}) == [("messages", 0, 0)]


def test_caller_breakpoints_are_kept_and_lower_priorities_dropped() -> None:
    marked = {"type": "text", "text": "mine", "cache_control": EPHEMERAL}
    messages = [{"role": "user", "content": [marked, marked]}, user("latest")]
    out = with_cache_breakpoints(params(messages, system=["catalog", "loaded"]))
    assert breakpoints(out) == [
        ("tools", 1),
        ("system", 0),
        ("messages", 0, 0),
        ("messages", 0, 1),
    ]


def test_a_place_the_caller_already_marked_is_not_marked_twice() -> None:
    given = params([user("q")], tools=1)
    given["tools"][0]["cache_control"] = {"type": "ephemeral", "ttl": "1h"}
    out = with_cache_breakpoints(given)
    assert out["tools"][0]["cache_control"] == {"type": "ephemeral", "ttl": "1h"}
    assert breakpoints(out) == [("tools", 0), ("system", 0), ("messages", 0, 0)]


# ---- Usage ----------------------------------------------------------------------------------


def test_usage_without_cache_fields_keeps_its_json_shape() -> None:
    assert Usage(5, 2).to_json() == {"input_tokens": 5, "output_tokens": 2}
    assert Usage(5, 2) == Usage(5, 2, 0, 0)


def test_usage_sums_and_round_trips_the_cache_split() -> None:
    total = Usage(100, 5, 60, 30) + Usage(50, 1, 0, 40)
    assert total == Usage(150, 6, cache_read_tokens=60, cache_write_tokens=70)
    assert total.uncached_input_tokens == 20
    assert Usage.from_json(total.to_json()) == total
    assert Usage.from_json({"input_tokens": 3, "output_tokens": 4}) == Usage(3, 4)

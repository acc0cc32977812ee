"""The agent end to end through the real ``openai`` and ``anthropic`` SDKs against fake servers.

Every assertion is on the requests the fake server recorded: what the model was really sent.
"""

from __future__ import annotations

import io
import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from fake_providers import Fail, FakeAnthropic, FakeOpenAI, FakeServer, Script

from skillshelf.agent.loop import Agent, RepeatedToolFailureError, RetryPolicy
from skillshelf.harness import Trace
from skillshelf.models import Model, ModelAuthError, Usage
from skillshelf.models.anthropic_messages import AnthropicModel
from skillshelf.models.openai_chat import OpenAIChatModel
from skillshelf.repository import Repository
from skillshelf.testing import reply
from skillshelf.tools import Activation, Tool

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
StartServer = Callable[[Script], FakeServer]


@pytest.fixture(params=["openai", "anthropic"])
def provider(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def start_server(provider: str) -> Iterator[StartServer]:
    servers: list[FakeServer] = []

    def start(script: Script) -> FakeServer:
        server = (FakeOpenAI if provider == "openai" else FakeAnthropic)(script).start()
        servers.append(server)
        return server

    yield start
    for server in servers:
        server.stop()


@pytest.fixture
def repo() -> Repository:
    return Repository([EXAMPLES], cache_dir=False)


def model_for(server: FakeServer, *, stream: bool = False) -> Model:
    if isinstance(server, FakeOpenAI):
        return OpenAIChatModel(
            "fake-model", api_key="sk-test", base_url=server.url + "/v1", stream=stream
        )
    return AnthropicModel("fake-claude", api_key="test-key", base_url=server.url, stream=stream)


async def no_wait(_seconds: float) -> None:
    pass


def agent_for(
    server: FakeServer, repo: Repository, *, stream: bool = False, **kwargs: Any
) -> Agent:
    kwargs.setdefault("retry", RetryPolicy(sleep=no_wait))
    return Agent(model_for(server, stream=stream), repo, instructions="You are a helper.", **kwargs)


# ---- reading recorded requests in either protocol -----------------------------------------


def system_of(body: dict[str, Any]) -> str:
    if "system" in body:
        return "".join(block["text"] for block in body["system"])
    return "".join(m["content"] for m in body["messages"] if m["role"] == "system")


def first_system(body: dict[str, Any]) -> str:
    if "system" in body:
        return str(body["system"][0]["text"])
    return str(body["messages"][0]["content"])


def tool_results(body: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for message in body["messages"]:
        if message["role"] == "tool":
            out[message["tool_call_id"]] = message["content"]
        elif isinstance(message["content"], list):
            for block in message["content"]:
                if block.get("type") == "tool_result":
                    out[block["tool_use_id"]] = block["content"]
    return out


def last_result(body: dict[str, Any]) -> str:
    return list(tool_results(body).values())[-1]


def tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] if "function" in t else t["name"] for t in body.get("tools", [])]


def user_texts(body: dict[str, Any]) -> list[str]:
    texts = []
    for message in body["messages"]:
        if message["role"] != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            texts.append(content)
        else:
            texts += [b["text"] for b in content if b.get("type") == "text"]
    return texts


# ---- the tests ----------------------------------------------------------------------------


def test_catalog_and_guidance_are_in_the_system_prompt(
    start_server: StartServer, repo: Repository
) -> None:
    server = start_server([reply("Hello.")])
    result = agent_for(server, repo).run_sync("hi")
    assert result.output == "Hello."
    system = first_system(server.bodies()[0])
    assert system.startswith("You are a helper.")
    assert "<available_skills>" in system
    for name in ("api-error-triage", "commit-message", "csv-insights", "release-notes"):
        assert f"<name>\n{name}\n</name>" in system
    assert "skill_load" in system
    assert "skill_load" in tool_names(server.bodies()[0])
    assert "workspace_exec" not in tool_names(server.bodies()[0])


@pytest.mark.parametrize("stream", [False, True])
def test_loaded_body_is_in_the_tool_result_and_system_prompt_bytes_stay(
    start_server: StartServer, repo: Repository, stream: bool
) -> None:
    server = start_server(
        [
            reply(tools=[("skill_load", {"skill": "release-notes"})]),
            reply("Here are your notes."),
        ]
    )
    agent = agent_for(server, repo, stream=stream)
    result = agent.conversation().send_sync("write release notes")
    assert result.output == "Here are your notes."
    first, second = server.bodies()
    assert system_of(first) == system_of(second)
    body_line = "Turn a range of commits into release notes in two passes"
    assert body_line not in json.dumps(first)
    results = tool_results(second)
    assert body_line in results["call_1"]
    assert results["call_1"].startswith('<skill_content name="release-notes">')
    assert body_line not in system_of(second)
    assert [r.tool for r in result.tool_calls] == ["skill_load"]


def test_streamed_text_reaches_the_sink(start_server: StartServer, repo: Repository) -> None:
    server = start_server([reply("A fairly long answer, streamed in pieces.")])
    pieces: list[str] = []
    agent = agent_for(server, repo, stream=True)
    result = anyio_run(agent.run("hi", on_text=pieces.append))
    assert result.output == "A fairly long answer, streamed in pieces."
    assert len(pieces) > 1 and "".join(pieces) == result.output
    assert server.bodies()[0]["stream"] is True


def test_slash_command_puts_the_body_in_before_the_first_request(
    start_server: StartServer, repo: Repository, tmp_path: Path
) -> None:
    from skillshelf.testing import make_skill

    make_skill(
        tmp_path,
        "greet",
        body="Greet $0 from ${SKILL_DIR}; all: $ARGUMENTS.\n",
        frontmatter={"disable-model-invocation": True},
    )
    repo = Repository([tmp_path, EXAMPLES], cache_dir=False)
    server = start_server([reply("Hi Ada!")])
    result = agent_for(server, repo).run_sync("/greet Ada Lovelace")
    assert result.output == "Hi Ada!"
    body = server.bodies()[0]
    assert len(server.requests) == 1
    expected = f"Greet Ada from {tmp_path / 'greet'}; all: Ada Lovelace."
    assert any(expected in text for text in tool_results(body).values())
    assert "<name>\ngreet\n</name>" not in system_of(body)  # user-only: not in the catalog
    assert "/greet Ada Lovelace" in user_texts(body)


def test_activated_tools_appear_only_after_the_load(
    start_server: StartServer, repo: Repository
) -> None:
    def git_log(rev_range: str) -> str:
        return f"log of {rev_range}"

    tool = Tool.from_function(git_log, description="Show the git log of a range.")
    server = start_server(
        [
            reply(tools=[("skill_load", {"skill": "release-notes"})]),
            reply(tools=[("git_log", {"rev_range": "v1..v2"})]),
            reply("Done."),
        ]
    )
    agent = agent_for(server, repo, activations=[Activation([tool], skill="release-notes")])
    assert agent.run_sync("notes please").output == "Done."
    first, second, third = server.bodies()
    assert "git_log" not in tool_names(first)
    assert "git_log" in tool_names(second)
    assert last_result(third) == "log of v1..v2"


def test_call_outside_allowed_tools_is_refused_under_enforcement(
    start_server: StartServer, repo: Repository
) -> None:
    ran: list[str] = []

    def Bash(command: str) -> str:
        ran.append(command)
        return "ok"

    server = start_server(
        [
            reply(tools=[("skill_load", {"skill": "commit-message"})]),
            reply(tools=[("Bash", {"command": "git commit -am wip"})]),
            reply(tools=[("Bash", {"command": "git diff --staged"})]),
            reply("feat: something"),
        ]
    )
    agent = agent_for(server, repo, tools=[Tool.from_function(Bash)], enforce_allowed_tools=True)
    result = agent.run_sync("write a commit message")
    assert ran == ["git diff --staged"]
    refused = last_result(server.bodies()[2])
    assert refused.startswith("Refused")
    assert "Bash(git diff:*)" in refused
    assert [r.status for r in result.tool_calls] == ["ok", "recoverable", "ok"]


def test_trace_file_has_a_line_per_model_step_and_tool_call(
    start_server: StartServer, repo: Repository, tmp_path: Path
) -> None:
    server = start_server(
        [reply(tools=[("skill_load", {"skill": "csv-insights"})]), reply("Summary.")]
    )
    path = tmp_path / "trace.jsonl"
    trace = Trace(path)
    agent_for(server, repo, trace=trace).run_sync("what is in data.csv?", session_id="s1")
    trace.close()
    records = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["turn", "model", "tool", "model", "run"]
    turn, step1, call, step2, totals = records
    assert {r["session"] for r in records} == {"s1"}
    assert {r["agent"] for r in records} == {"main"}
    assert len({r["user_digest"] for r in records}) == 1
    assert step1["tool_calls"] == ["skill_load"] and step2["tool_calls"] == []
    assert step1["finish_reason"] in ("tool_calls", "tool_use")
    assert step2["finish_reason"] in ("stop", "end_turn")
    assert call["tool"] == "skill_load" and call["status"] == "ok"
    assert call["arguments"] == {"skill": "csv-insights", "docs": [], "include_all_docs": False}
    assert call["retry_count"] == 0 and call["duration_ms"] >= 0
    assert call["error_kind"] is None and call["message"] is None
    assert totals["tool_calls"] == {"ok": 1} and totals["loaded"] == ["csv-insights"]
    assert "ts" in turn


def test_malformed_json_arguments_get_a_recoverable_result(
    start_server: StartServer, repo: Repository, provider: str
) -> None:
    if provider == "anthropic":
        pytest.skip("Anthropic sends tool input as a JSON object; it cannot be malformed")

    def lookup(term: str) -> str:
        return term

    server = start_server([reply(tools=[("lookup", '{"term": "x"')]), reply("Sorry.")])
    agent = agent_for(server, repo, tools=[Tool.from_function(lookup)])
    result = agent.run_sync("look it up")
    assert result.output == "Sorry."
    text = tool_results(server.bodies()[1])["call_1"]
    assert "not valid JSON" in text
    assert result.tool_calls[0].status == "recoverable"


def test_unknown_tool_gets_a_recoverable_result(
    start_server: StartServer, repo: Repository
) -> None:
    server = start_server([reply(tools=[("launch_rockets", {})]), reply("I cannot.")])
    result = agent_for(server, repo).run_sync("launch")
    assert result.output == "I cannot."
    text = tool_results(server.bodies()[1])["call_1"]
    assert text.startswith("Unknown tool 'launch_rockets'") and "skill_load" in text
    assert result.tool_calls[0].status == "recoverable"


def test_empty_response_is_asked_again(start_server: StartServer, repo: Repository) -> None:
    server = start_server([reply(""), reply("Now with text.")])
    result = agent_for(server, repo).run_sync("hi")
    assert result.output == "Now with text."
    first, second = server.bodies()
    assert "Your last reply was empty" not in json.dumps(first)
    assert "Your last reply was empty" in user_texts(second)[-1]


def test_http_500_is_retried_with_backoff(start_server: StartServer, repo: Repository) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    server = start_server([Fail(500), Fail(503), reply("Recovered.")])
    policy = RetryPolicy(base_delay=0.25, sleep=record)
    result = agent_for(server, repo, retry=policy).run_sync("hi")
    assert result.output == "Recovered."
    assert len(server.requests) == 3
    assert waits == [0.25, 0.5]


def test_http_429_honours_retry_after(start_server: StartServer, repo: Repository) -> None:
    waits: list[float] = []

    async def record(seconds: float) -> None:
        waits.append(seconds)

    server = start_server([Fail(429, retry_after="2"), reply("Fine.")])
    agent = agent_for(server, repo, retry=RetryPolicy(sleep=record))
    assert agent.run_sync("hi").output == "Fine."
    assert waits == [2.0]


def test_http_401_is_a_clear_fatal_error(start_server: StartServer, repo: Repository) -> None:
    server = start_server([Fail(401, "invalid x-api-key"), reply("never")])
    with pytest.raises(ModelAuthError, match=r"rejected the API key \(HTTP 401\)"):
        agent_for(server, repo).run_sync("hi")
    assert len(server.requests) == 1


def test_a_model_looping_on_a_failing_call_is_stopped(
    start_server: StartServer, repo: Repository
) -> None:
    call = reply(tools=[("skill_read_file", {"skill": "csv-insights", "path": "nope.md"})])
    server = start_server(lambda _body: call)
    trace = io.StringIO()
    with pytest.raises(RepeatedToolFailureError, match="skill_read_file"):
        agent_for(server, repo, max_steps=10, trace=Trace(trace)).run_sync("read it")
    error, totals = [json.loads(line) for line in trace.getvalue().splitlines()[-2:]]
    assert (error["type"], error["error"]) == ("error", "RepeatedToolFailureError")
    assert (totals["type"], totals["outcome"]) == ("run", "error")
    statuses = [json.loads(line).get("status") for line in trace.getvalue().splitlines()]
    assert [s for s in statuses if s] == ["recoverable", "recoverable", "fatal"]
    assert len(server.requests) == 4
    results = [last_result(b) for b in server.bodies()[1:]]
    assert "Stop retrying" not in str(results[0])
    assert "Stop retrying" in str(results[2])


def anyio_run(awaitable: Any) -> Any:
    import anyio

    async def main() -> Any:
        return await awaitable

    return anyio.run(main)


def test_parallel_calls_go_back_together(start_server: StartServer, repo: Repository) -> None:
    server = start_server(
        [
            reply(
                tools=[
                    ("skill_load", {"skill": "csv-insights"}),
                    ("skill_load", {"skill": "api-error-triage"}),
                ]
            ),
            reply("Both loaded."),
        ]
    )
    assert agent_for(server, repo).run_sync("csv and api").output == "Both loaded."
    second = server.bodies()[1]
    results = tool_results(second)
    assert set(results) == {"call_1", "call_2"}
    assert "# CSV Insights" in results["call_1"] and "# API Error Triage" in results["call_2"]
    if "system" in second:  # Anthropic: both results in the one user turn after the calls
        roles = [m["role"] for m in second["messages"]]
        assert roles == ["user", "assistant", "user"]
        assert [b["type"] for b in second["messages"][2]["content"]] == ["tool_result"] * 2


def test_api_key_comes_from_the_named_variable(
    start_server: StartServer, repo: Repository, provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.models import open_model

    server = start_server([reply("ok")])
    monkeypatch.setenv("MY_PROVIDER_KEY", "secret-123")
    base = server.url + "/v1" if provider == "openai" else server.url
    model = open_model(f"{provider}:m", base_url=base, api_key_env="MY_PROVIDER_KEY")
    Agent(model, repo, retry=RetryPolicy(sleep=no_wait)).run_sync("hi")
    headers = {k.lower(): v for k, v in server.requests[0].headers.items()}
    if provider == "openai":
        assert headers["authorization"] == "Bearer secret-123"
    else:
        assert headers["x-api-key"] == "secret-123"


def test_missing_api_key_without_base_url_is_an_auth_error(
    provider: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from skillshelf.models import open_model

    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    with pytest.raises(ModelAuthError, match="API_KEY"):
        open_model(f"{provider}:m")


def test_declared_loads_follow_the_stable_system_prompt(
    start_server: StartServer, repo: Repository
) -> None:
    server = start_server([reply("ok")])
    agent = agent_for(server, repo, declared=["csv-insights"])
    agent.run_sync("hi")
    body = server.bodies()[0]
    assert first_system(body) == agent.system_prompt()
    assert "# CSV Insights" not in first_system(body)
    assert "# CSV Insights" in system_of(body)


def test_sub_agent_steps_are_traced_under_its_own_name(
    start_server: StartServer, repo: Repository
) -> None:
    server = start_server(
        [
            reply(tools=[("helper", {"task": "say hi"})]),
            reply("hi from the helper"),
            reply("The helper said hi."),
        ]
    )
    stream = io.StringIO()
    helper = agent_for(server, repo, name="helper", description="Says hi.")
    main = agent_for(server, repo, tools=[helper.as_tool()], trace=Trace(stream))
    assert main.run_sync("ask the helper", session_id="s").output == "The helper said hi."
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    assert [(r["type"], r["agent"]) for r in records if r["type"] != "turn"] == [
        ("model", "main"),
        ("model", "helper"),
        ("run", "helper"),
        ("tool", "main"),
        ("model", "main"),
        ("run", "main"),
    ]
    assert {r["session"] for r in records} == {"s"}
    assert "helper" in tool_names(server.bodies()[0])
    assert server.bodies()[1]["messages"][-1]["content"] in (
        "say hi",
        [{"type": "text", "text": "say hi"}],
        [{"type": "text", "text": "say hi", "cache_control": {"type": "ephemeral"}}],  # Anthropic
    )


@pytest.mark.parametrize("stream", [False, True])
def test_usage_with_cache_reads_reaches_the_run_result(
    start_server: StartServer, repo: Repository, stream: bool
) -> None:
    server = start_server(
        [
            reply(tools=[("skill_load", {"skill": "csv-insights"})], usage=Usage(900, 12)),
            reply("Done.", usage=Usage(1500, 8, cache_read_tokens=896)),
        ]
    )
    result = agent_for(server, repo, stream=stream).run_sync("profile data.csv")
    assert result.usage == Usage(2400, 20, cache_read_tokens=896)


def test_failed_tool_results_carry_is_error_only_where_the_protocol_has_it(
    provider: str, start_server: StartServer, repo: Repository
) -> None:
    server = start_server(
        [
            reply(tools=[("skill_load", {"skill": "csv-insights"}), ("no_such_tool", {})]),
            reply("Done."),
        ]
    )
    agent_for(server, repo).run_sync("profile my csv")
    second = server.bodies()[1]
    if provider == "anthropic":
        results = [
            block
            for message in second["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert [b.get("is_error", False) for b in results] == [False, True]
        assert "Unknown tool" in json.dumps(results[1]["content"])
    else:
        results = [m for m in second["messages"] if m["role"] == "tool"]
        assert len(results) == 2
        assert all("is_error" not in m for m in results)  # not part of Chat Completions

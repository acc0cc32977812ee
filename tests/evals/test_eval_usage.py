"""Token usage: reported by the providers (fake servers on 127.0.0.1, streamed and not),
summed on RunResult and written in the trace's model records."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from eval_fakes import FakeAnthropic, FakeOpenAI, FakeServer

from skillshelf.agent.loop import Agent
from skillshelf.harness import Trace
from skillshelf.models import Model, ModelResponse, Usage
from skillshelf.models.anthropic_messages import AnthropicModel
from skillshelf.models.openai_chat import OpenAIChatModel
from skillshelf.repository import Repository
from skillshelf.testing import ScriptedModel, make_skill, reply


@pytest.fixture
def repo(tmp_path: Path) -> Repository:
    make_skill(tmp_path / "skills", "alpha", "Alpha things. Use for alpha.")
    return Repository([tmp_path / "skills"], cache_dir=False)


@pytest.fixture
def servers() -> Iterator[list[FakeServer]]:
    started: list[FakeServer] = []
    yield started
    for server in started:
        server.stop()


SCRIPT = [
    reply(tools=[("skill_load", {"skill": "alpha"})], usage=(120, 9)),
    reply("done", usage=(180, 4)),
]


def _model(server: FakeServer, stream: bool) -> Model:
    if isinstance(server, FakeOpenAI):
        return OpenAIChatModel("m", api_key="k", base_url=server.url + "/v1", stream=stream)
    return AnthropicModel("m", api_key="k", base_url=server.url, stream=stream)


@pytest.mark.parametrize("provider", [FakeOpenAI, FakeAnthropic])
@pytest.mark.parametrize("stream", [False, True])
def test_providers_report_usage_and_the_run_sums_it(
    servers: list[FakeServer],
    repo: Repository,
    provider: type[FakeServer],
    stream: bool,
) -> None:
    server = provider(SCRIPT).start()
    servers.append(server)
    buffer = io.StringIO()
    agent = Agent(_model(server, stream), repo, trace=Trace(buffer))
    result = agent.run_sync("do alpha")
    assert result.usage == Usage(300, 13)
    records = [json.loads(line) for line in buffer.getvalue().splitlines()]
    usages = [r["usage"] for r in records if r["type"] == "model"]
    assert usages == [
        {"input_tokens": 120, "output_tokens": 9},
        {"input_tokens": 180, "output_tokens": 4},
    ]
    if stream and provider is FakeOpenAI:
        assert server.bodies()[0]["stream_options"] == {"include_usage": True}


def test_usage_is_none_when_no_reply_reports_it(repo: Repository) -> None:
    buffer = io.StringIO()
    agent = Agent(ScriptedModel(["plain answer"]), repo, trace=Trace(buffer))
    assert agent.run_sync("hi").usage is None
    (model_record,) = [json.loads(x) for x in buffer.getvalue().splitlines() if '"model"' in x]
    assert model_record["usage"] is None


def test_scripted_replies_from_a_file_may_carry_usage(tmp_path: Path, repo: Repository) -> None:
    script = tmp_path / "replies.json"
    script.write_text(
        json.dumps([{"text": "hi", "usage": {"input_tokens": 5, "output_tokens": 2}}])
    )
    agent = Agent(ScriptedModel.from_file(script), repo)
    assert agent.run_sync("hello").usage == Usage(5, 2)


def test_model_response_without_usage_stays_backwards_compatible() -> None:
    assert ModelResponse("x").usage is None
    assert Usage(1, 2) + Usage(3, 4) == Usage(4, 6)

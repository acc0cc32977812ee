"""examples/openai_agents_agent.py runs against an OpenAI-compatible endpoint (a fake on
127.0.0.1 answering from a script), end to end through the SDK's chat-completions model."""

from __future__ import annotations

import argparse
import importlib.util
import json
import sys
from pathlib import Path
from types import ModuleType
from typing import Any

import anyio
import pytest

pytest.importorskip("agents")

from skillshelf.testing import reply

REPO = Path(__file__).resolve().parents[2]


def _load(path: Path, monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    monkeypatch.setitem(sys.modules, path.stem, module)  # dataclasses look their module up
    spec.loader.exec_module(module)
    return module


def test_the_example_loads_a_skill_over_chat_completions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from agents import set_tracing_disabled

    set_tracing_disabled(True)
    fakes = _load(REPO / "tests" / "agent" / "fake_providers.py", monkeypatch)
    example = _load(REPO / "examples" / "openai_agents_agent.py", monkeypatch)
    script = [reply(tools=[("skill_load", {"skill": "csv-insights"})]), reply("Summarised.")]
    server: Any = fakes.FakeOpenAI(script).start()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    args = argparse.Namespace(
        message="Summarise sales.csv",
        base_url=server.url + "/v1",
        model="fake-model",
        root=str(REPO / "examples" / "skills"),
        session="s1",
        exec=False,
    )
    try:
        anyio.run(example.main, args)
    finally:
        server.stop()
    assert capsys.readouterr().out.strip() == "Summarised."
    first, second = server.bodies()
    assert "csv-insights" in first["messages"][0]["content"]  # the catalog, as the system message
    results = [m["content"] for m in second["messages"] if m["role"] == "tool"]
    assert "scripts/summarize_csv.py" in results[0]  # the skill's body
    records = [json.loads(line) for line in (tmp_path / "trace.jsonl").read_text().splitlines()]
    assert [r["type"] for r in records] == ["turn", "model", "tool", "model"]

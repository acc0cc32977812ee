"""examples/langchain_agent.py runs against an OpenAI-compatible server (a fake on 127.0.0.1)."""

from __future__ import annotations

import runpy
from pathlib import Path

import pytest
from fake_providers import FakeOpenAI

from skillshelf.testing import reply

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "langchain_agent.py"


def test_the_example_loads_a_skill_through_langchain_openai(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    server = FakeOpenAI(
        [reply(tools=[("skill_load", {"skill": "csv-insights"})]), reply("It has 3 columns.")]
    ).start()
    try:
        argv = [
            "langchain_agent.py",
            "Summarise sales.csv",
            "--model=fake-model",
            f"--base-url={server.url}/v1",
            f"--store=sqlite:///{tmp_path / 'skills.db'}",
        ]
        monkeypatch.setattr("sys.argv", argv)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        runpy.run_path(str(EXAMPLE), run_name="__main__")
    finally:
        server.stop()
    assert capsys.readouterr().out.strip() == "It has 3 columns."
    first, second = (r.body for r in server.requests)
    assert "csv-insights" in first["messages"][0]["content"]
    assert "skill_load" in [t["function"]["name"] for t in first["tools"]]
    result = next(m for m in second["messages"] if m["role"] == "tool")
    assert result["content"].startswith("<skill_content")

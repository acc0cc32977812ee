"""Running ``skillshelf chat`` against a fake OpenAI-compatible server, for the chat tests.

A plain module (not a conftest) so that test files import it by name, as they do
``fake_providers``.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from fake_providers import FakeOpenAI, Script

from skillshelf.cli import main

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "skills"
# A chat through the CLI starts Python, imports the SDK and makes a few local requests.
CLI_TIMEOUT_S = 120


def chat_arguments(server: FakeOpenAI, args: tuple[str, ...], *, stream: bool = True) -> list[str]:
    """``chat`` over the bundled examples, talking to ``server``, then ``args``."""
    command = ["chat", "--root", str(EXAMPLES), "--no-cache", "--model", "openai:any"]
    command += ["--base-url", f"{server.url}/v1"]
    return [*command, *([] if stream else ["--no-stream"]), *args]


def chat(
    servers: list[FakeOpenAI], script: Script, *args: str, stream: bool = True
) -> tuple[subprocess.CompletedProcess[str], FakeOpenAI]:
    """Run the real command in a subprocess (what a user runs)."""
    server = FakeOpenAI(script).start()
    servers.append(server)
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    command = [sys.executable, "-c", "from skillshelf.cli import main; main()"]
    out = subprocess.run(
        [*command, *chat_arguments(server, args, stream=stream)],
        capture_output=True,
        text=True,
        env=env,
        timeout=CLI_TIMEOUT_S,
    )
    return out, server


def chat_in_process(
    servers: list[FakeOpenAI],
    script: Script,
    *args: str,
    monkeypatch: pytest.MonkeyPatch,
    stdin: str | None = None,
    stream: bool = True,
) -> tuple[Result, FakeOpenAI]:
    """The same command through click's runner (faster: no interpreter start)."""
    server = FakeOpenAI(script).start()
    servers.append(server)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = CliRunner().invoke(main, chat_arguments(server, args, stream=stream), input=stdin)
    return result, server

"""The fake model providers of the agent tests (tests/agent/fake_providers.py), importable
from the eval tests however pytest is started."""

from __future__ import annotations

import sys
from pathlib import Path

_AGENT_TESTS = str(Path(__file__).resolve().parents[1] / "agent")
if _AGENT_TESTS not in sys.path:
    sys.path.insert(0, _AGENT_TESTS)

from fake_providers import Fail, FakeAnthropic, FakeOpenAI, FakeServer, Scripted  # noqa: E402

__all__ = ["Fail", "FakeAnthropic", "FakeOpenAI", "FakeServer", "Scripted"]

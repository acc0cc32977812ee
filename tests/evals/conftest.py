"""The eval tests use the fake model providers of the agent tests (tests/agent)."""

from __future__ import annotations

import sys
from pathlib import Path

_AGENT_TESTS = str(Path(__file__).resolve().parents[1] / "agent")
if _AGENT_TESTS not in sys.path:
    sys.path.insert(0, _AGENT_TESTS)

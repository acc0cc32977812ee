"""The fake model providers of tests/agent (fake_providers.py) serve the example tests here too."""

from __future__ import annotations

import sys
from pathlib import Path

_AGENT_TESTS = str(Path(__file__).resolve().parents[1] / "agent")
if _AGENT_TESTS not in sys.path:
    sys.path.append(_AGENT_TESTS)

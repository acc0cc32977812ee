"""Reports: token counting, the token report and the prompt-cache report.

Names are imported lazily: the ``tokens`` command must not pay for the agent loop the cache
report drives.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Final

__all__ = ["CacheReport", "TokenCounter", "TokenReport", "cache_report", "get_counter"]

_LAZY: Final = {
    "CacheReport": "skillshelf.reports.cachereport",
    "cache_report": "skillshelf.reports.cachereport",
    "TokenCounter": "skillshelf.reports.tokens",
    "get_counter": "skillshelf.reports.tokens",
    "TokenReport": "skillshelf.reports.tokenreport",
}

if TYPE_CHECKING:
    from skillshelf.reports.cachereport import CacheReport, cache_report
    from skillshelf.reports.tokenreport import TokenReport
    from skillshelf.reports.tokens import TokenCounter, get_counter


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'skillshelf.reports' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(__all__)

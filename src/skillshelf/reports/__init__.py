"""Reports: token counting, the token report and the prompt-cache report.

Names are imported lazily: the ``tokens`` command must not pay for the agent loop the cache
report drives.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from skillshelf._lazy import lazy_attributes

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


__getattr__ = lazy_attributes("skillshelf.reports", _LAZY, globals())


def __dir__() -> list[str]:
    return sorted(__all__)

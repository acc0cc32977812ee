"""Fixtures every test folder may use."""

from __future__ import annotations

import pytest

from skillshelf.skills import cache_files


@pytest.fixture
def settled_stamps(monkeypatch: pytest.MonkeyPatch) -> None:
    """Trust stamps taken a moment after they were set, as caches trust an older tree's.

    ``age_tree`` puts modification times back, but no call puts a status-change time back,
    and :func:`~skillshelf.skills.cache_files.settled` checks both.
    """
    monkeypatch.setattr(cache_files, "RACY_NS", 1)

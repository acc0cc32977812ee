"""Recent: the one bounded map of per-conversation things the faces keep."""

from __future__ import annotations

from skillshelf.harness import Recent


def test_one_more_than_the_limit_drops_the_least_recently_used() -> None:
    recent: Recent[str, int] = Recent(2)
    recent.put("a", 1)
    recent.put("b", 2)
    assert recent.get("a") == 1  # a is now the newest
    recent.put("c", 3)
    assert recent.get("b") is None
    assert (recent.get("a"), recent.get("c"), len(recent)) == (1, 3, 2)


def test_make_builds_an_entry_once_and_pop_forgets_it() -> None:
    recent: Recent[str, list[int]] = Recent(4)
    built: list[int] = []

    def build() -> list[int]:
        built.append(1)
        return [len(built)]

    first = recent.make("k", build)
    assert recent.make("k", build) is first and built == [1]
    assert recent.pop("k") is first
    assert recent.pop("k") is None and recent.get("k") is None

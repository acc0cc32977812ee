"""Fair eviction (core.quota): a client over its cap loses its own oldest; at the total the
client holding the most does."""

from __future__ import annotations

import pytest

from skillshelf.core.quota import FORGOTTEN_EVICTIONS, FairPool, fair_victim
from skillshelf.errors import UsageError


def test_a_client_over_its_cap_loses_its_own_oldest() -> None:
    pool = FairPool(per_client=2, total=10)
    assert pool.touch("alice", "a1") == []
    assert [pool.touch("mallory", f"m{i}") for i in range(4)] == [[], [], ["m0"], ["m1"]]
    assert pool.held_by("alice") == 1 and pool.held_by("mallory") == 2
    assert pool.was_evicted("m0") and not pool.was_evicted("a1")


def test_a_touch_makes_a_key_the_newest() -> None:
    pool = FairPool(per_client=2, total=10)
    pool.touch("c", "old")
    pool.touch("c", "new")
    pool.touch("c", "old")
    assert pool.touch("c", "third") == ["new"]


def test_at_the_total_the_largest_holder_gives_way() -> None:
    pool = FairPool(per_client=3, total=5)
    pool.touch("alice", "a1")
    for i in range(3):
        pool.touch("mallory", f"m{i}")
    pool.touch("carol", "c1")
    assert pool.touch("carol", "c2") == ["m0"]  # mallory holds the most
    assert pool.touch("carol", "c3") == ["c1"]  # a tie: the one asking gives way
    assert len(pool) == 5 and pool.client_of("a1") == "alice"


def test_an_evicted_key_used_again_is_held_again_and_no_longer_evicted() -> None:
    pool = FairPool(per_client=1, total=1)
    pool.touch("c", "k1")
    pool.touch("c", "k2")
    assert pool.was_evicted("k1")
    assert pool.touch("c", "k1") == ["k2"] and not pool.was_evicted("k1")


def test_a_key_that_ends_by_itself_is_forgotten_not_evicted() -> None:
    pool = FairPool(per_client=2, total=2)
    pool.touch("c", "k")
    pool.discard("k")
    assert len(pool) == 0 and not pool.was_evicted("k") and pool.client_of("k") is None


def test_evictions_are_remembered_within_a_bound() -> None:
    pool = FairPool(per_client=1, total=1)
    for i in range(FORGOTTEN_EVICTIONS + 2):
        pool.touch("c", str(i))
    assert not pool.was_evicted("0") and pool.was_evicted(str(FORGOTTEN_EVICTIONS))


@pytest.mark.parametrize(("per_client", "total"), [(0, 5), (6, 5)])
def test_caps_that_cannot_work_are_refused(per_client: int, total: int) -> None:
    with pytest.raises(UsageError, match="per-client cap"):
        FairPool(per_client=per_client, total=total)


def test_fair_victim_picks_the_largest_then_the_asker_then_the_first_listed() -> None:
    assert fair_victim({"a": 1, "b": 3, "c": 2}, "c") == "b"
    assert fair_victim({"a": 2, "b": 2}, "b") == "b"
    assert fair_victim({"a": 2, "b": 2}, "z") == "a"
    assert fair_victim({"a": 0}, "a") is None and fair_victim({}, "a") is None

"""Fair eviction: bounded per-client holdings where a flood evicts its own first.

A server keeps things per client (conversations, protocol sessions, workspaces). Capping only
the total lets one client push every other client out; capping each client alone lets many
clients exhaust the total. :class:`FairPool` does both: a client over its own cap loses its
own oldest, and at the total cap the client holding the most loses its oldest (the one asking,
on a tie). :func:`fair_victim` is that choice alone, for holders that keep their own records
(the workspace manager, which must skip busy workspaces).

Pure values: no clock, no I/O. "Oldest" is least recently touched.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from typing import Final

from skillshelf.errors import UsageError

__all__ = ["FORGOTTEN_EVICTIONS", "FairPool", "fair_victim"]

# Keys remembered as evicted, so the next use of one is told why its state is gone rather
# than finding it empty; the oldest are forgotten first.
FORGOTTEN_EVICTIONS: Final = 10_000


def fair_victim(held: Mapping[str, int], asking: str) -> str | None:
    """The client that gives up its oldest key to make room for ``asking``: the one holding
    the most (``asking`` itself on a tie, else the first in ``held``'s order), or None when
    nothing is held.

    Args:
        held: How many evictable keys each client holds; list the client with the oldest
            key first, so that a tie evicts the oldest.
        asking: The client that needs room.
    """
    best: tuple[int, bool] = (0, False)
    chosen: str | None = None
    for client, count in held.items():
        rank = (count, client == asking)
        if count and rank > best:
            best, chosen = rank, client
    return chosen


class FairPool:
    """Keys held per client, at most ``per_client`` each and ``total`` in all.

    Args:
        per_client: Keys one client may hold; one more evicts that client's oldest.
        total: Keys all clients may hold; one more evicts the oldest of the largest holder.

    Raises:
        UsageError: A cap below 1, or ``per_client`` above ``total``.
    """

    def __init__(self, *, per_client: int, total: int) -> None:
        if per_client < 1 or total < per_client:
            raise UsageError("a per-client cap must be at least 1 and at most the total cap")
        self.per_client = per_client
        self.total = total
        self._by_client: dict[str, OrderedDict[str, None]] = {}
        self._client_of: dict[str, str] = {}
        self._evicted: OrderedDict[str, None] = OrderedDict()

    def __len__(self) -> int:
        return len(self._client_of)

    def held_by(self, client: str) -> int:
        """How many keys ``client`` holds."""
        return len(self._by_client.get(client, ()))

    def touch(self, client: str, key: str) -> list[str]:
        """Record a use of ``key`` by ``client`` (adding it when new); the keys evicted to
        keep within the caps, which the caller must end."""
        if self._client_of.get(key) not in (None, client):
            self.discard(key)  # used from elsewhere now: it counts where it is used
        keys = self._by_client.setdefault(client, OrderedDict())
        if key in keys:
            keys.move_to_end(key)
            return []
        self._evicted.pop(key, None)
        evicted = self.make_room(client)
        self._by_client.setdefault(client, OrderedDict())[key] = None
        self._client_of[key] = client
        return evicted

    def make_room(self, client: str) -> list[str]:
        """Evict until ``client`` can add one key within both caps; the evicted keys."""
        evicted: list[str] = []
        while self.held_by(client) >= self.per_client or len(self) >= self.total:
            loser = client if self.held_by(client) >= self.per_client else None
            if loser is None:
                loser = fair_victim({c: len(k) for c, k in self._by_client.items()}, client)
            if loser is None:  # pragma: no cover - the caps are at least 1
                break
            victim = next(iter(self._by_client[loser]))
            self._evict(victim)
            evicted.append(victim)
        return evicted

    def discard(self, key: str) -> None:
        """Forget ``key`` (it ended by itself), without remembering it as evicted."""
        client = self._client_of.pop(key, None)
        if client is None:
            return
        keys = self._by_client[client]
        keys.pop(key, None)
        if not keys:
            del self._by_client[client]

    def client_of(self, key: str) -> str | None:
        """The client that holds ``key`` (None when nobody does)."""
        return self._client_of.get(key)

    def was_evicted(self, key: str) -> bool:
        """True when ``key`` was evicted and not used since."""
        return key in self._evicted

    def _evict(self, key: str) -> None:
        self.discard(key)
        self._evicted[key] = None
        while len(self._evicted) > FORGOTTEN_EVICTIONS:
            self._evicted.popitem(last=False)

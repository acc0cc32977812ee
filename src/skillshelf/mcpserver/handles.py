"""Conversation handles: tool state that spans calls on the sessionless 2026-07-28 protocol.

That revision has no protocol sessions, so state that must outlive one request travels in a
handle the server mints and the client passes back as an ordinary tool argument
(``conversation``). A handle is ``c1.<id>.<expiry>.<mac>``: a random id, an expiry (Unix
seconds) and an HMAC-SHA256 over (owner, id, expiry) with the server's secret. The owner is
who asked: a digest of the bearer credential over HTTP with a token, a constant otherwise. A
handle is therefore useless to another owner, cannot be forged or extended without the secret,
and verifies on every worker that shares the secret.

The state key a handle names is derived from (owner, id), never from the handle text, so a
handle's state is reachable only through a handle that verifies.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from dataclasses import dataclass
from typing import Final, Literal

from skillshelf.errors import UsageError

__all__ = [
    "HANDLE_LIFETIME_S",
    "MAX_HANDLE_LIFETIME_S",
    "NO_HANDLE",
    "HandleCheck",
    "HandleMint",
    "Handles",
    "client_of",
    "derive_secret",
    "owner_of",
    "passed_handle",
]

HANDLE_LIFETIME_S: Final = 24 * 3600  # a working day's conversation; state TTL is separate
# No handle verifies longer than this after it was minted, whatever a server is configured
# with: a leaked handle stops working within a week.
MAX_HANDLE_LIFETIME_S: Final = 7 * 24 * 3600
_CLOCK_SKEW_S: Final = 300  # workers' clocks may disagree by this much
ANONYMOUS: Final = "anonymous"  # stdio, and HTTP without a token (loopback only)
_VERSION: Final = "c1"
_MAC_BYTES: Final = 16  # 128-bit tag: forging stays out of reach, the handle stays short
_ID_BYTES: Final = 16
_MAX_HANDLE: Final = 200  # a longer value is no handle of ours; not worth parsing
# What models write for "no handle" when a strict schema (the OpenAI Agents SDK's) makes the
# optional argument required. Every handle starts with "c1.", so none is mistaken for one.
NO_HANDLE: Final = frozenset({"", "none", "null", "nil", "undefined", "n/a"})
_LONGEST_PLACEHOLDER: Final = max(map(len, NO_HANDLE))


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode("ascii")


def derive_secret(token: str) -> bytes:
    """A handle secret derived from the bearer token (workers sharing a token agree on it)."""
    return hmac.new(token.encode(), b"skillshelf conversation handles v1", "sha256").digest()


def owner_of(authorization: str | None) -> str:
    """The owner principal of a request: a digest of its credential, or the anonymous owner."""
    if not authorization:
        return ANONYMOUS
    return "bearer:" + hashlib.sha256(authorization.encode("utf-8", "replace")).hexdigest()[:32]


def client_of(authorization: str | None, peer: str | None) -> str:
    """The client a limit counts: the request's owner, and the address it came from.

    The owner alone would make every holder of one shared token a single client; the address
    tells them apart (behind a proxy, all have the proxy's address and only the owner counts).
    """
    return f"{owner_of(authorization)}@{peer or '-'}"


def passed_handle(value: object) -> str | None:
    """The handle a tool call's ``conversation`` argument passes, or None when it passes none.

    Absent (None) and the placeholders of :data:`NO_HANDLE` (``""``, ``"none"``, ``"null"``,
    ``"nil"``, ``"undefined"``, ``"n/a"``; any case, blanks around them ignored) mean no
    handle: the call starts or stays stateless as if the argument were left out. Any other
    string is returned to be verified, so a forged or garbled handle is still refused. A value
    of another type is no handle either; the tool's own argument check refuses it.
    """
    if not isinstance(value, str):
        return None
    blank = value.strip()
    if len(blank) <= _LONGEST_PLACEHOLDER and blank.casefold() in NO_HANDLE:
        return None
    return value


@dataclass(frozen=True, slots=True)
class HandleMint:
    """A freshly minted handle and the state key it names."""

    handle: str
    key: str


@dataclass(frozen=True, slots=True)
class HandleCheck:
    """The outcome of verifying a handle: its state key, or why it was refused."""

    key: str | None
    problem: Literal["malformed", "forged", "expired", "outlives"] | None = None


class Handles:
    """Mints and verifies conversation handles with one secret.

    Args:
        secret: The HMAC key; every worker behind one load balancer needs the same one.
        lifetime_s: How long a handle verifies after it was minted, at most
            :data:`MAX_HANDLE_LIFETIME_S`. A handle that expires further ahead than this (one
            minted by a worker configured otherwise) is refused as ``outlives``.

    Raises:
        UsageError: A secret under 16 bytes, or a lifetime out of range.
    """

    def __init__(self, secret: bytes, *, lifetime_s: float = HANDLE_LIFETIME_S) -> None:
        if len(secret) < 16:
            raise UsageError("a handle secret needs at least 16 bytes")
        if not 0 < lifetime_s <= MAX_HANDLE_LIFETIME_S:
            raise UsageError(
                f"a handle lifetime must be positive and at most {MAX_HANDLE_LIFETIME_S} s "
                f"(7 days), not {lifetime_s:g}"
            )
        self._secret = secret
        self.lifetime_s = lifetime_s

    def mint(self, owner: str, *, now: float | None = None) -> HandleMint:
        """A new handle for ``owner``."""
        ident = _b64(secrets.token_bytes(_ID_BYTES))
        expiry = str(int((time.time() if now is None else now) + self.lifetime_s))
        handle = f"{_VERSION}.{ident}.{expiry}.{self._mac(owner, ident, expiry)}"
        return HandleMint(handle, self._key(owner, ident))

    def verify(self, handle: str, owner: str, *, now: float | None = None) -> HandleCheck:
        """The state key of a handle ``owner`` may use, or why it may not."""
        parts = handle.strip().split(".") if len(handle) <= _MAX_HANDLE else []
        if len(parts) != 4 or parts[0] != _VERSION or not parts[2].isdigit():
            return HandleCheck(None, "malformed")
        _version, ident, expiry, mac = parts
        if not hmac.compare_digest(mac, self._mac(owner, ident, expiry)):
            return HandleCheck(None, "forged")
        at = time.time() if now is None else now
        if int(expiry) <= at:
            return HandleCheck(None, "expired")
        if int(expiry) > at + self.lifetime_s + _CLOCK_SKEW_S:
            return HandleCheck(None, "outlives")
        return HandleCheck(self._key(owner, ident))

    def owner_key(self, owner: str) -> str:
        """The state key of ``owner``'s calls that carry no handle and keep no state: only
        their failure counts live there (no handle ident is ``*``)."""
        return self._key(owner, "*")

    def _mac(self, owner: str, ident: str, expiry: str) -> str:
        message = f"{_VERSION}\n{owner}\n{ident}\n{expiry}".encode()
        return _b64(hmac.new(self._secret, message, "sha256").digest()[:_MAC_BYTES])

    @staticmethod
    def _key(owner: str, ident: str) -> str:
        digest = hashlib.sha256(owner.encode()).hexdigest()[:16]
        return f"h:{digest}:{ident}"

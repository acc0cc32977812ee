"""Conversation handles: owner-bound, signed, with a lifetime."""

from __future__ import annotations

import pytest

from skillshelf.mcpserver.handles import (
    MAX_HANDLE_LIFETIME_S,
    Handles,
    client_of,
    derive_secret,
    owner_of,
    passed_handle,
)

SECRET = b"k" * 32


def test_a_handle_verifies_for_its_owner_and_names_one_stable_key() -> None:
    handles = Handles(SECRET)
    mint = handles.mint("alice")
    assert handles.verify(mint.handle, "alice").key == mint.key
    assert Handles(SECRET).verify(mint.handle, "alice").key == mint.key  # another worker


def test_a_handle_of_another_owner_or_secret_is_refused_as_forged() -> None:
    mint = Handles(SECRET).mint("alice")
    assert Handles(SECRET).verify(mint.handle, "bob").problem == "forged"
    assert Handles(b"x" * 32).verify(mint.handle, "alice").problem == "forged"


def test_a_handle_with_an_extended_expiry_is_refused_as_forged() -> None:
    handles = Handles(SECRET)
    version, ident, expiry, mac = handles.mint("alice").handle.split(".")
    later = ".".join((version, ident, str(int(expiry) + 10**6), mac))
    assert handles.verify(later, "alice").problem == "forged"


def test_a_handle_expires_after_its_lifetime() -> None:
    handles = Handles(SECRET, lifetime_s=60)
    mint = handles.mint("alice", now=1000.0)
    assert handles.verify(mint.handle, "alice", now=1059.0).key == mint.key
    assert handles.verify(mint.handle, "alice", now=1060.0).problem == "expired"


@pytest.mark.parametrize("text", ["", "c1", "c1.a.b.c", "x" * 10_000, "c2.a.1.b", "c1.a.1.b.c"])
def test_text_that_is_no_handle_is_refused_as_malformed_or_forged(text: str) -> None:
    assert Handles(SECRET).verify(text, "alice").key is None


def test_owners_are_digests_of_the_credential_and_secrets_derive_from_the_token() -> None:
    assert owner_of(None) == owner_of("") == "anonymous"
    assert owner_of("Bearer a") != owner_of("Bearer b")
    assert "Bearer" not in owner_of("Bearer a")
    assert derive_secret("t") == derive_secret("t") != derive_secret("u")


def test_a_short_secret_is_refused() -> None:
    with pytest.raises(ValueError, match="16 bytes"):
        Handles(b"short")


@pytest.mark.parametrize(
    "value", [None, "", "  ", "none", "None", "NONE", " null ", "Null", "nil", "undefined", "N/A"]
)
def test_a_placeholder_a_model_fills_in_passes_no_handle(value: str | None) -> None:
    assert passed_handle(value) is None


@pytest.mark.parametrize("value", ["nonesuch", "none.none", "null-handle", "c1.none", "hello"])
def test_text_that_only_resembles_a_placeholder_is_a_handle_to_verify(value: str) -> None:
    assert passed_handle(value) == value
    assert Handles(SECRET).verify(value, "alice").key is None


def test_a_real_handle_passes_through_unchanged() -> None:
    handle = Handles(SECRET).mint("alice").handle
    assert passed_handle(handle) == handle


@pytest.mark.parametrize("lifetime_s", [0, -1, MAX_HANDLE_LIFETIME_S + 1, 10 * 365 * 24 * 3600])
def test_a_handle_lifetime_out_of_range_is_refused(lifetime_s: float) -> None:
    with pytest.raises(ValueError, match="at most 604800 s"):
        Handles(SECRET, lifetime_s=lifetime_s)


def test_a_handle_minted_to_outlive_this_server_s_lifetime_is_refused() -> None:
    longer = Handles(SECRET, lifetime_s=MAX_HANDLE_LIFETIME_S).mint("alice", now=1000).handle
    shorter = Handles(SECRET, lifetime_s=3600)
    assert shorter.verify(longer, "alice", now=1000).problem == "outlives"
    assert Handles(SECRET, lifetime_s=MAX_HANDLE_LIFETIME_S).verify(longer, "alice", now=1000).key


def test_clients_are_told_apart_by_credential_and_address() -> None:
    assert client_of("Bearer a", "127.0.0.1") != client_of("Bearer a", "127.0.0.2")
    assert client_of("Bearer a", "127.0.0.1") != client_of("Bearer b", "127.0.0.1")
    assert client_of(None, None) == client_of("", None)
    assert "Bearer" not in client_of("Bearer a", "127.0.0.1")

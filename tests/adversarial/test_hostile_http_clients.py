"""Hostile HTTP clients of ``skillshelf serve --transport http``: DNS rebinding, bad Origin,
OAuth-hungry clients, and hostile archive roots behind a running server.

Every case runs against a real server subprocess and raw httpx requests, so what is tested
is what a browser or the MCP Inspector sees on the wire.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlsplit

import anyio
import httpx
import pytest

pytest.importorskip("mcp", reason="the mcp extra is not installed")

from mcp import Client

from adversarial.archives import zip_of
from mcpserver.helpers import (
    INITIALIZE_REQUEST,
    HttpServer,
    all_skills,
    server_env,
    start_http_server,
)
from skillshelf.testing import make_skill

TOKEN = "adversarial-test-token"
_INIT = INITIALIZE_REQUEST
_TIMEOUT_S = 30.0


def _post(url: str, **headers: str) -> httpx.Response:
    sent = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    return httpx.post(url, content=json.dumps(_INIT), headers=sent, timeout=_TIMEOUT_S)


def _port(server: HttpServer) -> int:
    port = urlsplit(server.url).port
    assert port is not None
    return port


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    skills = tmp_path_factory.mktemp("skills")
    make_skill(skills, "alpha", "A good skill. Use when checking the server answers.")
    return skills


@pytest.fixture(scope="module")
def open_server(root: Path) -> Iterator[HttpServer]:
    """No token (allowed: 127.0.0.2 is loopback), one extra allowed name."""
    server = start_http_server(
        ["--root", str(root), "--host", "127.0.0.2", "--allow-host", "skills.internal"]
    )
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def token_server(root: Path) -> Iterator[HttpServer]:
    server = start_http_server(
        ["--root", str(root), "--token-env", "SKILLSHELF_ADV_TOKEN"],
        env=server_env(SKILLSHELF_ADV_TOKEN=TOKEN),
    )
    try:
        yield server
    finally:
        server.stop()


# -- DNS rebinding: Host and Origin -------------------------------------------------------


@pytest.mark.parametrize("host", ["evil.example", "evil.example:{port}", "localhost.evil.example"])
def test_rebound_host_is_refused_with_421(open_server: HttpServer, host: str) -> None:
    response = _post(open_server.url, host=host.format(port=_port(open_server)))
    assert response.status_code == 421
    assert "Host" in response.json()["error_description"]


def test_rebound_host_is_refused_on_every_path(open_server: HttpServer) -> None:
    base = open_server.url.rsplit("/mcp", 1)[0]
    for path in ("/mcp", "/", "/.well-known/oauth-protected-resource", "/anything"):
        response = httpx.get(base + path, headers={"host": "evil.example"}, timeout=_TIMEOUT_S)
        assert response.status_code == 421, path


@pytest.mark.parametrize(
    "origin", ["http://evil.example", "https://evil.example:8443", "null", "file://"]
)
def test_foreign_origin_is_refused_with_403(open_server: HttpServer, origin: str) -> None:
    response = _post(open_server.url, origin=origin)
    assert response.status_code == 403
    assert "Origin" in response.json()["error_description"]


@pytest.mark.parametrize(
    ("host", "origin"),
    [
        ("127.0.0.2:{port}", None),
        ("127.0.0.2", None),
        ("localhost:{port}", "http://localhost:6274"),  # the MCP Inspector's own page
        ("skills.internal:{port}", "https://skills.internal"),  # --allow-host
        ("SKILLS.INTERNAL", None),
    ],
)
def test_the_server_s_own_names_are_answered(
    open_server: HttpServer, host: str, origin: str | None
) -> None:
    headers = {"host": host.format(port=_port(open_server))}
    if origin is not None:
        headers["origin"] = origin
    response = _post(open_server.url, **headers)
    assert response.status_code == 200, response.text


def test_the_sdk_client_still_works_over_loopback(open_server: HttpServer) -> None:
    async def check() -> None:
        async with Client(open_server.url) as client:
            assert [entry["frontmatter"]["name"] for entry in await all_skills(client)] == ["alpha"]

    anyio.run(check)


def test_rebound_host_is_refused_even_with_the_right_token(token_server: HttpServer) -> None:
    response = _post(token_server.url, authorization=f"Bearer {TOKEN}", host="evil.example")
    assert response.status_code == 421


# -- a static bearer token, not OAuth ------------------------------------------------------


@pytest.mark.parametrize("authorization", [None, "Bearer wrong", "Basic dXNlcjpwYXNz"])
def test_401_says_static_bearer_token_without_oauth_metadata(
    token_server: HttpServer, authorization: str | None
) -> None:
    headers = {} if authorization is None else {"authorization": authorization}
    response = _post(token_server.url, **headers)
    assert response.status_code == 401
    challenge = response.headers["www-authenticate"]
    assert challenge.startswith('Bearer realm="skillshelf"')
    assert 'error="invalid_token"' in challenge
    assert "resource_metadata" not in challenge
    assert response.json()["error"] == "invalid_token"


@pytest.mark.parametrize(
    "path",
    [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-authorization-server",
        "/.well-known/openid-configuration",
    ],
)
def test_no_oauth_discovery_document_is_offered(token_server: HttpServer, path: str) -> None:
    base = token_server.url.rsplit("/mcp", 1)[0]
    response = httpx.get(base + path, timeout=_TIMEOUT_S)
    assert response.status_code == 404


def test_the_right_token_is_answered(token_server: HttpServer) -> None:
    assert _post(token_server.url, authorization=f"Bearer {TOKEN}").status_code == 200


# -- hostile archive roots behind a running server -----------------------------------------


def test_server_with_a_malformed_archive_root_serves_the_other_skills(tmp_path: Path) -> None:
    bad = tmp_path / "bad.zip"
    bad.write_bytes(zip_of([("demo/x", "file", b"a"), ("demo/x/y", "file", b"b")]))
    good = tmp_path / "good"
    make_skill(good, "alpha", "A good skill. Use when checking the server answers.")
    server = start_http_server(["--root", str(bad), "--root", str(good)])
    try:

        async def check() -> None:
            async with Client(server.url) as client:
                assert [entry["frontmatter"]["name"] for entry in await all_skills(client)] == [
                    "alpha"
                ]

        anyio.run(check)
    finally:
        server.stop()
    log = "".join(server.stderr)
    assert "Traceback" not in log

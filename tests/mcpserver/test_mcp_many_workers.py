"""Many workers: two ``serve`` processes on one Redis store behind a round-robin proxy.

One 2026-07-28 client's load → select docs → read → unload sequence alternates between the
two processes (the proxy sends each HTTP request to the next one) and must read exactly as
against a single process: the conversation handle verifies on both (shared secret) and the
state lives in Redis.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client

from mcpserver.conversation import assert_state_spans_calls, load_select_read_unload
from mcpserver.helpers import HttpServer, server_env, start_http_server
from redis_servers import free_port, redis_server_binary, running_redis

SECRET = "a-shared-handle-secret-for-tests"
# What a proxy strips: hop-by-hop headers, and framing it sets itself.
_HOP = {"connection", "keep-alive", "transfer-encoding", "content-length", "content-encoding"}
_HOP |= {"host", "upgrade", "proxy-connection", "te", "trailer"}
PROXY_TIMEOUT_S = 60.0


class RoundRobinProxy:
    """A tiny HTTP/1.1 reverse proxy: each request goes to the next upstream in turn."""

    def __init__(self, upstreams: list[str]) -> None:
        self.upstreams = upstreams
        self.sent: list[str] = []
        self._http = httpx2.AsyncClient(timeout=PROXY_TIMEOUT_S)

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while await self._one(reader, writer):
                pass
        finally:
            writer.close()

    async def _one(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> bool:
        line = await reader.readline()
        if not line.strip():
            return False
        method, target, _version = line.decode("latin-1").split(" ", 2)
        headers: list[tuple[str, str]] = []
        while (raw := await reader.readline()) not in (b"\r\n", b"\n", b""):
            name, value = raw.decode("latin-1").split(":", 1)
            headers.append((name.strip(), value.strip()))
        length = int({k.lower(): v for k, v in headers}.get("content-length", "0"))
        body = await reader.readexactly(length) if length else b""
        upstream = self.upstreams[len(self.sent) % len(self.upstreams)]
        self.sent.append(upstream)
        forwarded = [(k, v) for k, v in headers if k.lower() not in _HOP]
        response = await self._http.request(
            method, upstream + target, headers=forwarded, content=body
        )
        head = [f"HTTP/1.1 {response.status_code} {response.reason_phrase}"]
        head += [f"{k}: {v}" for k, v in response.headers.items() if k.lower() not in _HOP]
        head += [f"content-length: {len(response.content)}", "", ""]
        writer.write("\r\n".join(head).encode("latin-1") + response.content)
        await writer.drain()
        return True

    async def close(self) -> None:
        await self._http.aclose()


@pytest.fixture(scope="module")
def redis_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    with running_redis(redis_server_binary(), tmp_path_factory.mktemp("redis"), port):
        yield f"redis://127.0.0.1:{port}/0"


@contextmanager
def _workers(root: Path, store: str, secrets: list[str]) -> Iterator[list[HttpServer]]:
    servers: list[HttpServer] = []
    try:
        for i, secret in enumerate(secrets):
            env = server_env(**{f"HS{i}": secret})
            args = ["--root", str(root), "--store", store, "--handle-secret-env", f"HS{i}"]
            servers.append(start_http_server(args, env=env))
        yield servers
    finally:
        for server in servers:
            server.stop()


async def _through_proxy(
    servers: list[HttpServer], one_handle: bool = True
) -> tuple[list[tuple[str, bool]], list[str]]:
    bases = [s.url.removesuffix("/mcp") for s in servers]
    proxy = RoundRobinProxy(bases)
    listener = await asyncio.start_server(proxy.serve, "127.0.0.1", 0)
    port = listener.sockets[0].getsockname()[1]
    try:
        async with Client(f"http://127.0.0.1:{port}/mcp") as client:
            results = await load_select_read_unload(client, one_handle=one_handle)
    finally:
        listener.close()
        await proxy.close()
    return results, proxy.sent


def test_two_workers_on_one_redis_answer_like_one_process(
    skills_root: Path, redis_url: str
) -> None:
    with _workers(skills_root, redis_url, [SECRET, SECRET]) as servers:
        results, sent = anyio.run(_through_proxy, servers, backend="asyncio")

        async def alone() -> list[tuple[str, bool]]:
            async with Client(servers[0].url) as client:
                return await load_select_read_unload(client)

        single = anyio.run(alone)
    assert_state_spans_calls(results)
    assert results == single
    tool_calls = len(results)
    assert len(set(sent)) == 2 and len(sent) >= tool_calls  # both workers answered


def test_workers_with_different_secrets_refuse_each_others_handles(
    skills_root: Path, redis_url: str
) -> None:
    with _workers(skills_root, redis_url, [SECRET, SECRET[::-1]]) as servers:
        results, _sent = anyio.run(_through_proxy, servers, False, backend="asyncio")
    assert any(is_error and "not issued" in text for text, is_error in results)

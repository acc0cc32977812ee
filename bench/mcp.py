"""Benchmark ``skillshelf serve``: ``skills/list`` over 1,000 skills and ``skill_load`` round trips.

Starts real server processes (stdio, and streamable HTTP on a free loopback port) over a
generated root of N skills (3 files each) and measures with the SDK's own client:

* ``skills/list``: a full paged enumeration of every entry (with sha256 digests of every
  file), cold (first listing, digests computed) and warm (digests cached), p50/p99;
* ``skill_load``: tool-call round trips per second with p50/p99, cycling through the skills
  so every call delivers a full body.

With ``--watch`` the servers run with ``--watch``: listings are then cached until a file
changes instead of re-checking every file's size and mtime on every request.

Usage: ``python bench/mcp.py [--skills 1000] [--rounds 300] [--lists 20] [--watch] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path, where this very file would
# shadow the MCP SDK's ``mcp`` package: drop the folder before anything imports the SDK.
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != HERE]
sys.path.insert(0, str(ROOT / "src"))

# The server announces its URL on stderr; it starts in about a second.
_READY = re.compile(r"skillshelf: serving \d+ skills on (\S+)")
_START_TIMEOUT_S = 60.0
_STOP_TIMEOUT_S = 10.0


def make_root(directory: Path, count: int) -> Path:
    """Write ``count`` skills (SKILL.md, a reference, a script) under ``directory``."""
    for i in range(count):
        skill = directory / f"skill-{i:04d}"
        (skill / "references").mkdir(parents=True)
        (skill / "scripts").mkdir()
        body = "\n".join(f"Step {n}: do part {n} of task {i}." for n in range(40))
        (skill / "SKILL.md").write_text(
            f"---\nname: skill-{i:04d}\ndescription: Handles task {i} of the benchmark. "
            f"Use when the user asks about task {i}.\nmetadata:\n  version: '1.{i}'\n---\n"
            f"# Task {i}\n\n{body}\n"
        )
        (skill / "references" / "guide.md").write_text(f"# Guide {i}\n\n" + "text " * 400)
        (skill / "scripts" / "run.py").write_text(f"print({i})\n")
    return directory


_SERVE_ARGS: list[str] = []  # extra ``serve`` options (--watch)


def _command(root: Path, *args: str) -> list[str]:
    code = "from skillshelf.cli import main; main()"
    serve = ["serve", "--no-cache", "--root", str(root), *_SERVE_ARGS, *args]
    return [sys.executable, "-c", code, *serve]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


class _HttpServer:
    def __init__(self, root: Path) -> None:
        self.process = subprocess.Popen(
            _command(root, "--transport", "http", "--port", "0"),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=_env(),
        )
        found = threading.Event()
        self.url = ""

        def read() -> None:
            assert self.process.stderr is not None
            for line in self.process.stderr:
                match = _READY.search(line)
                if match and not found.is_set():
                    self.url = match.group(1)
                    found.set()
            found.set()

        self.reader = threading.Thread(target=read, daemon=True)
        self.reader.start()
        if not found.wait(_START_TIMEOUT_S) or not self.url:
            self.stop()
            raise RuntimeError("the HTTP server did not start")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(_STOP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(_STOP_TIMEOUT_S)
        self.reader.join(_STOP_TIMEOUT_S)
        if self.process.stderr is not None:
            self.process.stderr.close()


@asynccontextmanager
async def _client(transport: str, root: Path) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    if transport == "stdio":
        command = _command(root)
        params = StdioServerParameters(command=command[0], args=command[1:], env=_env())
        async with Client(params) as client:
            yield client
        return
    server = _HttpServer(root)
    try:
        async with Client(server.url) as client:
            yield client
    finally:
        server.stop()


def _stats(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
    }


async def _list_all(client: Any) -> int:
    import mcp_types as types
    from pydantic import BaseModel, ConfigDict

    class Raw(BaseModel):
        model_config = ConfigDict(extra="allow")

    count = 0
    params: dict[str, Any] = {}
    while True:
        message = types.Request[dict[str, Any], str](method="skills/list", params=params)
        page = dict((await client.session.send_request(message, Raw)).model_extra or {})
        count += len(page["skills"])
        if "nextCursor" not in page:
            return count
        params = {"cursor": page["nextCursor"]}


async def bench_transport(
    transport: str, root: Path, skills: int, rounds: int, lists: int
) -> dict[str, Any]:
    async with _client(transport, root) as client:
        start = time.perf_counter()
        listed = await _list_all(client)
        cold = time.perf_counter() - start
        if listed != skills:
            raise RuntimeError(f"skills/list returned {listed} skills, expected {skills}")
        warm: list[float] = []
        for _ in range(lists):
            start = time.perf_counter()
            await _list_all(client)
            warm.append(time.perf_counter() - start)
        loads: list[float] = []
        begin = time.perf_counter()
        for i in range(rounds):
            start = time.perf_counter()
            result = await client.call_tool("skill_load", {"skill": f"skill-{i % skills:04d}"})
            loads.append(time.perf_counter() - start)
            if result.is_error:
                raise RuntimeError(f"skill_load failed: {result.content}")
        elapsed = time.perf_counter() - begin
    return {
        "transport": transport,
        "skills_list_cold_ms": cold * 1000,
        "skills_list_warm": _stats(warm),
        "skill_load_per_s": rounds / elapsed,
        "skill_load": _stats(loads),
    }


def main(argv: list[str] | None = None) -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=1000)
    parser.add_argument("--rounds", type=int, default=300)
    parser.add_argument("--lists", type=int, default=20)
    parser.add_argument("--watch", action="store_true", help="serve with --watch")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.watch:
        _SERVE_ARGS.append("--watch")
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(Path(tmp) / "skills", args.skills)
        for transport in ("stdio", "http"):

            def run(t: str = transport) -> Callable[[], Any]:
                return lambda: bench_transport(t, root, args.skills, args.rounds, args.lists)

            results.append(anyio.run(run()))
    if args.json:
        print(json.dumps(results, indent=2))
        return 0
    mode = " (--watch)" if args.watch else ""
    print(f"skillshelf serve{mode} — {args.skills:,} skills, {args.rounds} skill_load round trips")
    header = f"{'transport':<10}{'list cold':>12}{'list p50':>11}{'list p99':>11}"
    header += f"{'load/s':>10}{'load p50':>11}{'load p99':>11}"
    print(header)
    for r in results:
        print(
            f"{r['transport']:<10}{r['skills_list_cold_ms']:>10.1f}ms"
            f"{r['skills_list_warm']['p50_ms']:>9.1f}ms{r['skills_list_warm']['p99_ms']:>9.1f}ms"
            f"{r['skill_load_per_s']:>10.0f}{r['skill_load']['p50_ms']:>9.2f}ms"
            f"{r['skill_load']['p99_ms']:>9.2f}ms"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())

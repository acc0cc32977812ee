"""Benchmark ``skillshelf serve`` per call, beside a minimal server written with the official SDK.

Starts real server processes (stdio, and streamable HTTP on a free loopback port) over a
generated root of N skills (3 files each) and measures with the SDK's own client:

* ``skills/list``: a full paged enumeration of every entry (with sha256 digests of every
  file), cold (first listing, digests computed) and warm (digests cached), p50/p95;
* per call, p50/p95 and calls/s, cycling through the skills: ``skill_load`` (a full body;
  the client passes back a ``conversation`` handle as a model would), ``skill_read_file``
  of ``SKILL.md``, and ``resources/read`` of ``skill://<name>/SKILL.md``;
* the same file read from ``bench/minimal_mcp_server.py`` (an SDK ``MCPServer`` with one
  tool and one resource template that return the file, no checks) in the same run, and the
  ratio serve / minimal of each p50.

With ``--watch`` the servers run with ``--watch``: listings are then cached until a file
changes instead of re-checking every file's size and mtime on every request.

Usage: ``python bench/mcp.py [--skills 1000] [--rounds 300] [--lists 20] [--watch] [--json]``
(``--skills 10000`` works; ``--lists 0`` skips the listings.)
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
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
HERE = Path(__file__).resolve().parent
# Run as a script, this file's folder comes first on sys.path, where this very file would
# shadow the MCP SDK's ``mcp`` package: drop the folder before anything imports the SDK.
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != HERE]
sys.path.insert(0, str(ROOT / "src"))

# The servers announce their URL on stderr; skillshelf starts in about a second with 1,000
# skills, longer with 10,000 (discovery reads every SKILL.md).
_READY = re.compile(r"(?:skillshelf: serving \d+ skills|minimal: serving) on (\S+)")
_START_TIMEOUT_S = 60.0
_START_TIMEOUT_PER_SKILL_S = 0.01
_STOP_TIMEOUT_S = 10.0
_HANDLE = re.compile(r"conversation: (c1\.\S+)")
_MINIMAL = HERE / "minimal_mcp_server.py"


def skill_name(i: int) -> str:
    return f"skill-{i:05d}"


def make_root(directory: Path, count: int) -> Path:
    """Write ``count`` skills (SKILL.md, a reference, a script) under ``directory``."""
    for i in range(count):
        name = skill_name(i)
        skill = directory / name
        (skill / "references").mkdir(parents=True)
        (skill / "scripts").mkdir()
        body = "\n".join(f"Step {n}: do part {n} of task {i}." for n in range(40))
        (skill / "SKILL.md").write_text(
            f"---\nname: {name}\ndescription: Handles task {i} of the benchmark. "
            f"Use when the user asks about task {i}.\nmetadata:\n  version: '1.{i}'\n---\n"
            f"# Task {i}\n\n{body}\n"
        )
        (skill / "references" / "guide.md").write_text(f"# Guide {i}\n\n" + "text " * 400)
        (skill / "scripts" / "run.py").write_text(f"print({i})\n")
    return directory


_SERVE_ARGS: list[str] = []  # extra ``serve`` options (--watch)


def _command(server: str, root: Path, *args: str) -> list[str]:
    if server == "minimal":
        return [sys.executable, str(_MINIMAL), str(root), *args]
    code = "from skillshelf.cli import main; main()"
    serve = ["serve", "--no-cache", "--root", str(root), *_SERVE_ARGS, *args]
    return [sys.executable, "-c", code, *serve]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT / "src"), env.get("PYTHONPATH")) if p)
    return env


class _HttpServer:
    def __init__(self, server: str, root: Path, skills: int) -> None:
        port = [] if server == "minimal" else ["--port", "0"]  # minimal: always a free port
        self.process = subprocess.Popen(
            _command(server, root, "--transport", "http", *port),
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
        timeout = _START_TIMEOUT_S + skills * _START_TIMEOUT_PER_SKILL_S
        if not found.wait(timeout) or not self.url:
            self.stop()
            raise RuntimeError(f"the {server} HTTP server did not start")

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
async def _client(server: str, transport: str, root: Path, skills: int) -> AsyncIterator[Any]:
    from mcp import Client, StdioServerParameters

    if transport == "stdio":
        command = _command(server, root)
        params = StdioServerParameters(command=command[0], args=command[1:], env=_env())
        async with Client(params) as client:
            yield client
        return
    http = _HttpServer(server, root, skills)
    try:
        async with Client(http.url) as client:
            yield client
    finally:
        http.stop()


def _stats(samples: list[float], elapsed: float | None = None) -> dict[str, float]:
    ordered = sorted(samples)
    stats = {
        "p50_ms": statistics.median(ordered) * 1000,
        "p95_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.95))] * 1000,
    }
    if elapsed is not None:
        stats["per_s"] = len(samples) / elapsed
    return stats


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


async def _timed(
    rounds: int, skills: int, call: Callable[[str], Awaitable[str]]
) -> dict[str, float]:
    """Call ``call(skill)`` ``rounds`` times, cycling through the skills; check each text."""
    samples: list[float] = []
    begin = time.perf_counter()
    for i in range(rounds):
        name = skill_name(i % skills)
        start = time.perf_counter()
        text = await call(name)
        samples.append(time.perf_counter() - start)
        if f"# Task {i % skills}\n" not in text and "already loaded" not in text:
            raise RuntimeError(f"{name}: unexpected answer {text[:200]!r}")
    return _stats(samples, time.perf_counter() - begin)


async def _tool_text(client: Any, tool: str, arguments: dict[str, Any]) -> str:
    result = await client.call_tool(tool, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    if result.is_error:
        raise RuntimeError(f"{tool} failed: {text[:300]}")
    return text


async def _resource_text(client: Any, name: str) -> str:
    result = await client.read_resource(f"skill://{name}/SKILL.md")
    return "".join(getattr(c, "text", "") for c in result.contents)


async def bench_serve(
    transport: str, root: Path, skills: int, rounds: int, lists: int
) -> dict[str, Any]:
    async with _client("serve", transport, root, skills) as client:
        out: dict[str, Any] = {"server": "serve", "transport": transport}
        if lists:
            start = time.perf_counter()
            listed = await _list_all(client)
            out["skills_list_cold_ms"] = (time.perf_counter() - start) * 1000
            if listed != skills:
                raise RuntimeError(f"skills/list returned {listed} skills, expected {skills}")
            warm: list[float] = []
            for _ in range(lists):
                start = time.perf_counter()
                await _list_all(client)
                warm.append(time.perf_counter() - start)
            out["skills_list_warm"] = _stats(warm)
        handle: list[str] = []

        async def load(name: str) -> str:
            arguments: dict[str, Any] = {"skill": name}
            if handle:  # passed back, as the tool description asks a model to
                arguments["conversation"] = handle[0]
            text = await _tool_text(client, "skill_load", arguments)
            if not handle and (match := _HANDLE.search(text)):
                handle.append(match.group(1))
            return text

        async def read_file(name: str) -> str:
            return await _tool_text(client, "skill_read_file", {"skill": name, "path": "SKILL.md"})

        out["skill_load"] = await _timed(rounds, skills, load)
        out["skill_read_file"] = await _timed(rounds, skills, read_file)
        out["resources_read"] = await _timed(
            rounds, skills, lambda name: _resource_text(client, name)
        )
    return out


async def bench_minimal(transport: str, root: Path, skills: int, rounds: int) -> dict[str, Any]:
    async with _client("minimal", transport, root, skills) as client:
        return {
            "server": "minimal",
            "transport": transport,
            "tool": await _timed(
                rounds, skills, lambda name: _tool_text(client, "read_skill", {"skill": name})
            ),
            "resources_read": await _timed(
                rounds, skills, lambda name: _resource_text(client, name)
            ),
        }


# serve's call -> the minimal server's call it is compared with
_PAIRS = {"skill_load": "tool", "skill_read_file": "tool", "resources_read": "resources_read"}


def _print(results: list[dict[str, Any]], args: argparse.Namespace) -> None:
    mode = " (--watch)" if args.watch else ""
    print(f"skillshelf serve{mode} — {args.skills:,} skills, {args.rounds} calls of each kind")
    if args.lists:
        print(f"{'transport':<10}{'list cold':>12}{'list p50':>11}{'list p95':>11}")
        for r in results:
            if r["server"] == "serve":
                warm = r["skills_list_warm"]
                print(
                    f"{r['transport']:<10}{r['skills_list_cold_ms']:>10.1f}ms"
                    f"{warm['p50_ms']:>9.1f}ms{warm['p95_ms']:>9.1f}ms"
                )
    print(f"{'transport':<10}{'server':<9}{'call':<17}{'calls/s':>8}{'p50':>10}{'p95':>10}"
          f"{'p50 / minimal':>15}")  # fmt: skip
    minimal = {r["transport"]: r for r in results if r["server"] == "minimal"}
    for r in results:
        calls = _PAIRS if r["server"] == "serve" else {"tool": "", "resources_read": ""}
        for call, reference in calls.items():
            s = r[call]
            ratio = ""
            if reference:
                ratio = f"{s['p50_ms'] / minimal[r['transport']][reference]['p50_ms']:.2f}x"
            label = {"tool": "read_skill tool", "resources_read": "resources/read"}.get(call, call)
            print(
                f"{r['transport']:<10}{r['server']:<9}{label:<17}{s['per_s']:>8.0f}"
                f"{s['p50_ms']:>8.2f}ms{s['p95_ms']:>8.2f}ms{ratio:>15}"
            )


def main(argv: list[str] | None = None) -> int:
    import anyio

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--skills", type=int, default=1000, help="generated skills (10,000 works)")
    parser.add_argument("--rounds", type=int, default=300, help="calls of each kind")
    parser.add_argument("--lists", type=int, default=20, help="warm skills/list runs (0: none)")
    parser.add_argument("--watch", action="store_true", help="serve with --watch")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    if args.watch:
        _SERVE_ARGS.append("--watch")
    # Discovery stops after 2,000 folders by default (a scan cap with a warning): raise it.
    _SERVE_ARGS.extend(["--max-dirs", str(max(2000, 4 * args.skills))])
    results: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        root = make_root(Path(tmp) / "skills", args.skills)
        for transport in ("stdio", "http"):
            results.append(
                anyio.run(bench_serve, transport, root, args.skills, args.rounds, args.lists)
            )
            results.append(anyio.run(bench_minimal, transport, root, args.skills, args.rounds))
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        _print(results, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())

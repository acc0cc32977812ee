"""Benchmark the model-facing tools and the session stores.

Measures, in one run:

* a ``skill_load`` + ``skill_read_file`` round trip through :class:`SkillTools` on the SQLite
  store (a fresh session per round trip, so every load delivers full content);
* session-state operations per second (one ``update`` = an atomic read-modify-write of one
  session document) for the memory, SQLite and Redis stores, spread over 1,000 sessions, from
  one thread and from 8 threads.

Redis is measured when ``redis-server`` is installed (a private one is started on a free
loopback port and stopped afterwards).

Usage: ``python bench/tools.py [--rounds 300] [--ops 5000] [--sessions 1000] [--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from skillshelf.repository import Repository  # noqa: E402
from skillshelf.stores import SessionStore, open_store  # noqa: E402
from skillshelf.tools import SkillTools  # noqa: E402

EXAMPLES = ROOT / "examples" / "skills"


def _percentiles(samples: list[float]) -> dict[str, float]:
    ordered = sorted(samples)
    return {
        "p50_ms": statistics.median(ordered) * 1000,
        "p99_ms": ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))] * 1000,
    }


def bench_round_trip(rounds: int, db: Path) -> dict[str, float]:
    repo = Repository([EXAMPLES], cache_dir=False)
    store = open_store(f"sqlite:{db}")
    samples: list[float] = []
    try:
        for i in range(rounds):
            tools = SkillTools(repo, store=store, session_id=f"rt-{i}")
            start = time.perf_counter()
            loaded = tools.call("skill_load", {"skill": "csv-insights"})
            read = tools.call(
                "skill_read_file", {"skill": "csv-insights", "path": "scripts/sample.csv"}
            )
            samples.append(time.perf_counter() - start)
            assert loaded.status == "ok" and read.status == "ok", (loaded, read)
    finally:
        store.close()
    return _percentiles(samples)


def _increment(doc: dict[str, Any] | None) -> dict[str, Any]:
    doc = dict(doc or {"loaded": {}, "clock": 0})
    doc["clock"] = int(doc.get("clock", 0)) + 1
    return doc


def bench_store(store: SessionStore, *, ops: int, sessions: int, threads: int) -> float:
    """Atomic updates per second, spread round-robin over ``sessions`` sessions."""
    per_thread = ops // threads

    def work(offset: int) -> None:
        for i in range(per_thread):
            store.update(f"s{(offset + i * threads) % sessions}", "main", _increment)

    workers = [threading.Thread(target=work, args=(t,)) for t in range(threads)]
    start = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return per_thread * threads / (time.perf_counter() - start)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextmanager
def redis_server() -> Iterator[str | None]:
    binary = shutil.which("redis-server")
    if binary is None:
        yield None
        return
    port = _free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                    break
            except OSError:
                time.sleep(0.05)
        yield f"redis://127.0.0.1:{port}/0"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def run(args: argparse.Namespace) -> dict[str, Any]:
    results: dict[str, Any] = {"sessions": args.sessions, "ops": args.ops}
    with tempfile.TemporaryDirectory() as tmp:
        results["round_trip_sqlite"] = bench_round_trip(args.rounds, Path(tmp, "rt.db"))
        with redis_server() as redis_url:
            factories: dict[str, Callable[[], SessionStore]] = {
                "memory": lambda: open_store(None),
                "sqlite": lambda: open_store(f"sqlite:{Path(tmp, 'ops.db')}"),
            }
            if redis_url:
                factories["redis"] = lambda: open_store(redis_url)
            for name, factory in factories.items():
                store = factory()
                try:
                    results[f"{name}_ops_1_thread"] = bench_store(
                        store, ops=args.ops, sessions=args.sessions, threads=1
                    )
                    results[f"{name}_ops_8_threads"] = bench_store(
                        store, ops=args.ops, sessions=args.sessions, threads=8
                    )
                finally:
                    store.close()
    return results


def print_table(results: dict[str, Any]) -> None:
    rt = results["round_trip_sqlite"]
    print(f"skillshelf tools benchmark (CPython {sys.version.split()[0]}, {os.cpu_count()} CPUs)")
    print(
        f"skill_load + skill_read_file round trip, SQLite store: "
        f"p50 {rt['p50_ms']:.2f} ms, p99 {rt['p99_ms']:.2f} ms"
    )
    print(f"state updates/s over {results['sessions']:,} sessions ({results['ops']:,} ops):")
    for store in ("memory", "sqlite", "redis"):
        if f"{store}_ops_1_thread" not in results:
            print(f"  {store:7} not measured (redis-server not installed)")
            continue
        one, eight = results[f"{store}_ops_1_thread"], results[f"{store}_ops_8_threads"]
        print(f"  {store:7} {one:10,.0f} /s (1 thread)   {eight:10,.0f} /s (8 threads)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=300, help="load+read round trips")
    parser.add_argument("--ops", type=int, default=5000, help="state updates per store and mode")
    parser.add_argument("--sessions", type=int, default=1000, help="distinct sessions")
    parser.add_argument("--json", action="store_true", help="print JSON")
    args = parser.parse_args()
    results = run(args)
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print_table(results)


if __name__ == "__main__":
    main()

"""Benchmark workspace execution.

Measures:

* per-call wall time of each workload through each executor against a plain
  ``subprocess.run`` of the same program, in one run with the calls interleaved (the
  difference is the executor's overhead). Workloads: a trivial script (``sh -c 'echo ok'``)
  and ``python3 -c 'import yaml'`` (the plain run and ``local`` start ``sys.executable``; a
  sandbox starts ``python3``, its shim to ``sys.executable``, as scripts do).
* staging a 1 MB / 200-file skill into a fresh workspace, and re-staging it unchanged
  (the content digest only).

Executors come from :data:`EXECUTORS` (name → factory); one that is not available here is
skipped with its reason. Adding an executor is one entry. A container costs about a second, so
docker runs ``--docker-calls`` times (default 10), interleaved with its own plain reference; the
docker executor uses the engine at ``DOCKER_HOST`` and the image ``$SKILLSHELF_TEST_IMAGE``
(default ``skillshelf-test:bookworm``, see ``.ci/docker-engine``).

Usage: ``python bench/exec.py [--calls 100] [--docker-calls 10] [--executors local,bwrap,docker]
[--json]``
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))

from skillshelf.exec.executors import select_executor  # noqa: E402
from skillshelf.exec.runner import (  # noqa: E402
    Executor,
    LocalExecutor,
    RunSpec,
    SandboxUnavailableError,
)
from skillshelf.exec.workspace import Workspace  # noqa: E402
from skillshelf.repository import Repository  # noqa: E402
from skillshelf.testing import make_skill  # noqa: E402

PYTHON = "@python@"  # sys.executable for the plain run and local, python3 inside a sandbox


def _selected(name: str) -> Executor:
    executor, _warning = select_executor(name)  # type: ignore[arg-type]
    return executor


def _docker() -> Executor:
    from skillshelf.exec.container import DockerExecutor, docker_available

    image = os.environ.get("SKILLSHELF_TEST_IMAGE", "skillshelf-test:bookworm")
    problem = docker_available(image=image)
    if problem is not None:
        raise SandboxUnavailableError(problem)
    return DockerExecutor(image=image)


SLOW = {"docker"}  # a new container per call: measured --docker-calls times

EXECUTORS: dict[str, Callable[[], Executor]] = {
    "local": LocalExecutor,
    "bwrap": lambda: _selected("bwrap"),
    "docker": lambda: _docker(),
}
WORKLOADS: dict[str, list[str]] = {
    "trivial script (sh -c 'echo ok')": ["/bin/sh", "-c", "echo ok"],
    "python3 -c 'import yaml'": [PYTHON, "-c", "import yaml"],
}


def _argv(argv: list[str], *, isolated: bool) -> list[str]:
    python = "python3" if isolated else sys.executable
    return [python if word == PYTHON else word for word in argv]


def _plain(argv: list[str]) -> Callable[[], object]:
    command = _argv(argv, isolated=False)
    return lambda: subprocess.run(command, check=True, stdout=subprocess.DEVNULL)


def _through(executor: Executor, argv: list[str], root: Path) -> Callable[[], object]:
    command = _argv(argv, isolated=executor.isolated)
    spec = RunSpec(command, root=root, cwd=root, timeout_s=60)

    def once() -> None:
        result = executor.run(spec)
        if result.exit_code != 0:
            raise SystemExit(f"{executor.name}: {command} failed: {result.stderr[-500:]}")

    return once


def _interleaved_medians(runs: dict[str, Callable[[], object]], calls: int) -> dict[str, float]:
    """Median ms of each callable, calling them in turn so a load swing hits all alike."""
    times: dict[str, list[float]] = {name: [] for name in runs}
    for fn in runs.values():
        fn()  # warm up
    for _ in range(calls):
        for name, fn in runs.items():
            started = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - started)
    return {name: statistics.median(values) * 1000 for name, values in times.items()}


def _staging_ms(base: Path) -> tuple[float, float]:
    files = {f"scripts/f{i:03}.txt": "x" * 5000 for i in range(199)}
    make_skill(base / "skills", "big", files=files)
    skill = Repository([base / "skills"], cache_dir=False).find("big")
    assert skill is not None
    workspace = Workspace(base / "ws")
    started = time.perf_counter()
    workspace.stage(skill)
    first = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    workspace.stage(skill)
    again = (time.perf_counter() - started) * 1000
    return first, again


def _measure(names: list[str], calls: int, docker_calls: int, base: Path) -> dict[str, Any]:
    figures: dict[str, Any] = {
        "calls": calls,
        "docker_calls": docker_calls,
        "workloads": {},
        "skipped": {},
    }
    executors: dict[str, Executor] = {}
    for name in names:
        try:
            executors[name] = EXECUTORS[name]()
        except SandboxUnavailableError as exc:
            figures["skipped"][name] = str(exc)
    for label, argv in WORKLOADS.items():
        runs = {"plain": _plain(argv)}
        slow_rows: dict[str, float] = {}
        for name, executor in executors.items():
            root = base / f"ws-{name}"
            root.mkdir(exist_ok=True)
            if name in SLOW:  # its own interleaved reference, fewer calls
                slow = {"plain": _plain(argv), name: _through(executor, argv, root)}
                medians = _interleaved_medians(slow, docker_calls)
                slow_rows |= {name: medians[name], f"{name}_plain": medians["plain"]}
            else:
                runs[name] = _through(executor, argv, root)
        figures["workloads"][label] = _interleaved_medians(runs, calls) | slow_rows
    figures["stage_first_ms"], figures["stage_unchanged_ms"] = _staging_ms(base)
    return figures


def _print(figures: dict[str, Any]) -> None:
    print(f"medians of {figures['calls']} calls; overhead = executor - plain subprocess.run")
    for label, row in figures["workloads"].items():
        plain = row["plain"]
        print(f"{label}:")
        print(f"  plain subprocess   {plain:8.2f} ms")
        for name, value in row.items():
            if name.endswith("_plain"):
                continue
            if name in SLOW:
                own = row[f"{name}_plain"]
                print(
                    f"  {name:<18} {value:8.2f} ms  (+{value - own:.2f} ms over its own plain "
                    f"run, {value / own:.1f}x; median of {figures['docker_calls']})"
                )
            elif name != "plain":
                print(
                    f"  {name:<18} {value:8.2f} ms  (+{value - plain:.2f} ms, {value / plain:.1f}x)"
                )
    for name, reason in figures["skipped"].items():
        print(f"{name}: skipped ({reason})")
    print(
        f"stage 1 MB / 200-file skill: {figures['stage_first_ms']:.2f} ms first, "
        f"{figures['stage_unchanged_ms']:.2f} ms unchanged (digest only)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument(
        "--executors", default=",".join(EXECUTORS), help="comma-separated names from EXECUTORS"
    )
    parser.add_argument("--docker-calls", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    names = [n for n in args.executors.split(",") if n]
    unknown = [n for n in names if n not in EXECUTORS]
    if unknown:
        parser.error(f"unknown executors {unknown}; known: {', '.join(EXECUTORS)}")
    with tempfile.TemporaryDirectory() as tmp:
        figures = _measure(names, args.calls, args.docker_calls, Path(tmp))
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        _print(figures)


if __name__ == "__main__":
    main()

"""Benchmark workspace execution.

Measures:

* per-call wall time of ``true`` through the bwrap and local executors against a bare
  ``subprocess.run(["true"])`` (the difference is the executor's overhead);
* staging a 1 MB / 200-file skill into a fresh workspace, and re-staging it unchanged
  (the content digest only);
* the docker executor (a new container per call): ``true`` and ``python3 -c 'import yaml'``
  against the same commands as bare subprocesses, on the engine at ``DOCKER_HOST`` with the
  image ``$SKILLSHELF_TEST_IMAGE`` (default ``skillshelf-test:bookworm``, see
  ``.ci/docker-engine``), ``--docker-calls`` times (a container costs about a second).

bwrap and docker are skipped (and said so) where they do not work.

Usage: ``python bench/exec.py [--calls 100] [--docker-calls 10] [--json]``
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

from skillshelf.exec.container import DockerExecutor, docker_available  # noqa: E402
from skillshelf.exec.runner import (  # noqa: E402
    BwrapExecutor,
    Executor,
    LocalExecutor,
    RunSpec,
    bwrap_available,
)
from skillshelf.exec.workspace import Workspace  # noqa: E402
from skillshelf.repository import Repository  # noqa: E402
from skillshelf.testing import make_skill  # noqa: E402


def _median_ms(fn: Callable[[], object], calls: int) -> float:
    fn()  # warm up
    times = []
    for _ in range(calls):
        started = time.perf_counter()
        fn()
        times.append(time.perf_counter() - started)
    return statistics.median(times) * 1000


def _executor_ms(executor: Executor, root: Path, calls: int) -> float:
    spec = RunSpec(["true"], root=root, cwd=root, timeout_s=30)

    def once() -> None:
        if executor.run(spec).exit_code != 0:
            raise SystemExit(f"{executor.name}: `true` failed")

    return _median_ms(once, calls)


def _docker_figures(root: Path, calls: int) -> dict[str, Any]:
    """The docker executor's medians, with the bare subprocess references of the same run."""
    image = os.environ.get("SKILLSHELF_TEST_IMAGE", "skillshelf-test:bookworm")
    problem = docker_available(image=image)
    if problem is not None:
        return {"docker_skipped": problem}
    commands = {"true": ["true"], "yaml": ["python3", "-c", "import yaml"]}
    figures: dict[str, Any] = {}
    executor = DockerExecutor(image=image)
    try:
        for key, argv in commands.items():
            spec = RunSpec(argv, root=root, cwd=root, timeout_s=60)

            def bare(spec: RunSpec = spec) -> None:
                subprocess.run(list(spec.argv), check=True)

            figures[f"docker_bare_{key}_ms"] = _median_ms(bare, calls)

            def once(spec: RunSpec = spec) -> None:
                if executor.run(spec).exit_code != 0:
                    raise SystemExit(f"docker: {spec.argv} failed")

            figures[f"docker_{key}_ms"] = _median_ms(once, calls)
    finally:
        executor.close()
    return figures


def _print_docker(figures: dict[str, Any], calls: int) -> None:
    if "docker_skipped" in figures:
        print(f"docker executor: skipped ({figures['docker_skipped']})")
        return
    for key, label in (("true", "`true`"), ("yaml", "`python3 -c 'import yaml'`")):
        bare, boxed = figures[f"docker_bare_{key}_ms"], figures[f"docker_{key}_ms"]
        print(
            f"docker executor {label}: {boxed:7.2f} ms vs bare {bare:.2f} ms "
            f"(+{boxed - bare:.2f} ms, x{boxed / bare:.0f}; median of {calls})"
        )


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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100)
    parser.add_argument("--docker-calls", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    figures: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp, "root")
        root.mkdir()
        figures["bare_subprocess_ms"] = _median_ms(
            lambda: subprocess.run(["true"], check=True), args.calls
        )
        figures["local_ms"] = _executor_ms(LocalExecutor(), root, args.calls)
        problem = bwrap_available()
        figures["bwrap_ms"] = None if problem else _executor_ms(BwrapExecutor(), root, args.calls)
        figures["stage_first_ms"], figures["stage_unchanged_ms"] = _staging_ms(Path(tmp))
        figures |= _docker_figures(root, args.docker_calls)
    if args.json:
        print(json.dumps(figures, indent=2))
        return
    bare = figures["bare_subprocess_ms"]
    print(f"bare subprocess.run(['true']): {bare:7.2f} ms (median of {args.calls})")
    print(
        f"local executor `true`:         {figures['local_ms']:7.2f} ms "
        f"(+{figures['local_ms'] - bare:.2f} ms)"
    )
    if figures["bwrap_ms"] is None:
        print(f"bwrap executor: skipped ({problem})")
    else:
        print(
            f"bwrap executor `true`:         {figures['bwrap_ms']:7.2f} ms "
            f"(+{figures['bwrap_ms'] - bare:.2f} ms)"
        )
    print(
        f"stage 1 MB / 200-file skill:   {figures['stage_first_ms']:7.2f} ms first, "
        f"{figures['stage_unchanged_ms']:.2f} ms unchanged (digest only)"
    )
    _print_docker(figures, args.docker_calls)


if __name__ == "__main__":
    main()
